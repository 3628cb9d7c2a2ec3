/**
 * Human-readable explanations of placement decisions, for the pod's Events (`kubectl describe pod`)
 * and the debug view. Pure: text from evaluations, no I/O.
 */
import type { Evaluation } from './placement.js';
import type { FilterOutcome, PrioritizeOutcome } from './placementService.js';
import { formatFailure, type FitFailure } from './reasons.js';
import type { Dimensions } from './records.js';

function fixed(p: number): string {
  return Number.isNaN(p) ? 'n/a' : p.toFixed(3);
}

/**
 * Pressure per dimension before and after the pod: `cpu 0.125→0.135, memory 0.063→0.068`.
 * "Before" is (in use after − request_r) / allocatable_r, i.e. (allocated + paused + reserved) / allocatable.
 */
export function pressureChange(e: Evaluation, request: readonly number[], allocatable: readonly number[] | null, dims: Dimensions): string {
  if (!e.known || !allocatable) return 'capacity unknown';
  return dims.names
    .map((name, r) => {
      const after = e.projected[r]!;
      if (Number.isNaN(after)) return null;
      // after × allocatable is the integer amount in use after the pod (up to rounding): recover it exactly.
      const before = (Math.round(after * allocatable[r]!) - request[r]!) / allocatable[r]!;
      return `${name} ${fixed(before)}→${fixed(after)}`;
    })
    .filter((s) => s !== null)
    .join(', ');
}

/**
 * The message of a ProjectedPlacement event, e.g.
 * `placed on node-a by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135);
 * 3 candidates, 3 fit; runner-up node-b at 0.250`.
 */
export function explainPlacement(
  outcome: Pick<PrioritizeOutcome, 'chosen' | 'runnerUp' | 'feasible' | 'evaluations'>,
  request: readonly number[],
  allocatableOf: (node: string) => readonly number[] | null,
  dims: Dimensions,
  strategy: string,
): string {
  const chosen = outcome.chosen!;
  const runnerUp = outcome.runnerUp ? `runner-up ${outcome.runnerUp.name} at ${fixed(outcome.runnerUp.pressure)}` : 'no runner-up';
  return (
    `placed on ${chosen.name} by ${strategy}: projected pressure ${pressureChange(chosen, request, allocatableOf(chosen.name), dims)} ` +
    `(max ${fixed(chosen.pressure)}); ${outcome.evaluations.length} candidates, ${outcome.feasible} fit; ${runnerUp}`
  );
}

function failureLabel(f: FitFailure): string {
  switch (f.code) {
    case 'InsufficientResource':
      return `Insufficient ${f.resource} (projected)`;
    case 'RequestExceedsAllocatable':
      return `${f.resource} request exceeds allocatable`;
    case 'NodeNotInSnapshot':
      return 'not in the extender’s snapshot';
  }
}

/**
 * The message of a failed placement, in the shape of kube-scheduler's FailedScheduling message:
 * `0/3 nodes fit projected capacity: 2 Insufficient cpu (projected), 1 cpu request exceeds allocatable.`
 * followed by the first node's full reason.
 */
export function explainNoFit(outcome: Pick<FilterOutcome, 'evaluations' | 'failed'>): string {
  const counts = new Map<string, number>();
  for (const failures of outcome.failed.values()) {
    for (const label of new Set(failures.map(failureLabel))) counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  const summary = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([label, n]) => `${n} ${label}`);
  const first = [...outcome.failed][0];
  const example = first ? ` e.g. ${first[0]}: ${first[1].map(formatFailure).join('; ')}` : '';
  return `0/${outcome.evaluations.length} nodes fit projected capacity: ${summary.join(', ')}.${example}`;
}
