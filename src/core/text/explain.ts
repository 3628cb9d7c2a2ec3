/**
 * Human-readable explanations of placement decisions, for the pod's Events (`kubectl describe pod`).
 * Pure: text from evaluations (whose integers say exactly what was in use before the pod), no I/O.
 */
import { agentSandboxOf, describeAgentSandbox, type AgentSandboxPod } from '../objects/agentSandboxPods.js';
import type { Evaluation } from '../fit/evaluation.js';
import type { Pod } from '../objects/kubeObjects.js';
import type { DecisionLocality, DecisionWindow } from '../decide/placementService.js';
import { pressureRatio } from '../objects/pressure.js';
import { formatFailures, type FitFailure } from '../fit/reasons.js';
import { PODS_RESOURCE, type Dimensions, type PodRecord } from '../objects/records.js';

function fixed(p: number): string {
  return Number.isNaN(p) ? 'n/a' : p.toFixed(3);
}

/**
 * Pressure per dimension before and after the pod: `cpu 0.125→0.135, memory 0.063→0.068`, where
 * before = inUse_r / allocatable_r and after = (inUse_r + request_r) / allocatable_r.
 */
function pressureChange(e: Evaluation, dims: Dimensions): string {
  const allocatable = e.allocatable;
  if (!e.capacityKnown || !allocatable) return 'capacity unknown';
  return dims.names
    .map((name, r) =>
      Number.isNaN(e.projected[r]!)
        ? null
        : `${name} ${fixed(pressureRatio(e.inUse[r]!, allocatable[r]!))}→${fixed(e.projected[r]!)}`,
    )
    .filter((s) => s !== null)
    .join(', ');
}

/** What a placement message says: the chosen node, the runner-up and how many candidates there were. */
export interface PlacementSummary {
  readonly chosen: Evaluation;
  readonly runnerUp: Evaluation | null;
  readonly candidates: number;
  readonly feasible: number;
  /** Locality on: the pod's signal on the chosen node and the candidates in the band (absent or null: off). */
  readonly locality?: DecisionLocality | null;
  /** Chosen from a window kube-scheduler sampled: what the model says of the nodes outside it (absent or null: not sampled). */
  readonly window?: DecisionWindow | null;
  /** What to say of the pod's request, e.g. {@link zeroRequestNote} (absent or null: nothing). */
  readonly podNote?: string | null;
  /** An agent-sandbox pod (agentSandboxPods.ts): what it is; absent or null: a pod of any other origin, of which nothing more is said. */
  readonly agentSandbox?: AgentSandboxPod | null;
}

/**
 * Says plainly that a pod is ranked as requesting nothing, when its request is zero in every
 * dimension of the model (the pods dimension aside: it counts the pod itself): `the pod has no containers: ranked as zero requests` (spec.containers
 * missing or empty: the API server refuses such a pod, so it comes from a hand-made request or pod
 * file) or `the pod requests no cpu or memory: ranked as zero requests` (containers without requests,
 * a BestEffort pod). kube-scheduler's NodeResourcesFit counts it so too (component-helpers
 * `PodRequests` sums nothing); only its score plugins put defaults in for containers without requests
 * (`NonMissingContainerRequests`, not modelled: podRequests.ts).
 * @param request the pod's request over `dims` (scheduler units), as the placement reads it.
 * @returns the note, or null when the pod requests anything of a dimension.
 */
export function zeroRequestNote(pod: Pod, request: readonly number[], dims: Dimensions): string | null {
  // The pods dimension counts the pod itself (1 for every pod): it says nothing of what the pod requests.
  const tracked = dims.names.filter((name) => name !== PODS_RESOURCE);
  if (tracked.length === 0 || request.some((amount, r) => dims.names[r] !== PODS_RESOURCE && amount !== 0)) return null;
  const containers = pod.spec?.containers;
  const what =
    Array.isArray(containers) && containers.length > 0
      ? `the pod requests no ${tracked.join(' or ')}`
      : 'the pod has no containers';
  return `${what}: ranked as zero requests`;
}

/**
 * The locality clause of a placement message: `template warm on this node`, `partial: some of its
 * images are on this node`, or `cold: no node within the band has it` (the ranking puts a warm or
 * partial node of the band first, so a cold choice means the band had none). A choice that was not
 * ranked (one feasible node, a strategy that ignores load) says only the signal.
 */
export function explainLocality(locality: DecisionLocality): string {
  const ranked = locality.inBand > 0;
  switch (locality.signal) {
    case 'warm':
      return 'template warm on this node';
    case 'partial':
      return ranked
        ? 'partial: some of its images are on this node, no node within the band has them all'
        : 'partial: some of its images are on this node';
    case 'cold':
      return ranked
        ? `cold: no node within the band has it (${locality.inBand} in the band)`
        : 'cold: the template is not known on this node';
  }
}

/**
 * The window clause of a placement message, for a choice from a window kube-scheduler cut short by sampling
 * (DecisionWindow), with pressures as the rest of the message prints them:
 * `kube-scheduler sampled 420 of 1000 nodes; best in the extender's model outside them: node-9 at 0.100, 0.150 lower`
 * when a node outside the window fits better (`higher` for a strategy that prefers the highest pressure; no gap
 * when the chosen node's capacity is unknown), `kube-scheduler sampled 420 of 1000 nodes; none better in the
 * extender's model outside them` when none does, and `kube-scheduler sampled 420 of 1000 nodes` alone for a
 * strategy that ignores load. "In the extender's model": kube-scheduler's own filters (taints, affinity) may
 * exclude the node named.
 */
export function explainWindow(window: DecisionWindow): string {
  const { clusterBest, pressureGap } = window;
  const sampled = `kube-scheduler sampled ${window.offered} of ${window.nodes} nodes`;
  if (window.pressureSign === null) return sampled;
  if (clusterBest === null) return `${sampled}; none better in the extender's model outside them`;
  const gap = Number.isNaN(pressureGap)
    ? ''
    : `, ${fixed(pressureGap)} ${window.pressureSign > 0 ? 'lower' : 'higher'}`;
  return `${sampled}; best in the extender's model outside them: ${clusterBest.name} at ${fixed(clusterBest.projectedPressure)}${gap}`;
}

/**
 * The message of a ProjectedPlacement event, e.g.
 * `placed on node-a by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135);
 * 3 candidates, 3 fit; runner-up node-b at 0.250`; then the window clause ({@link explainWindow}: only when
 * kube-scheduler cut the window short by sampling), the locality clause (locality on) and the agent-sandbox
 * clause (an agent-sandbox pod: `; agent-sandbox pod of template 9f8e7d6c, warm pool`).
 * A pod of any other origin with locality off, from a window not sampled, gets exactly the first part.
 */
export function explainPlacement(summary: PlacementSummary, dims: Dimensions, strategy: string): string {
  const { chosen, runnerUp } = summary;
  const next = runnerUp ? `runner-up ${runnerUp.name} at ${fixed(runnerUp.pressure)}` : 'no runner-up';
  return (
    `placed on ${chosen.name} by ${strategy}: projected pressure ${pressureChange(chosen, dims)} ` +
    `(max ${fixed(chosen.pressure)}); ${summary.candidates} candidates, ${summary.feasible} fit; ${next}` +
    (summary.window ? `; ${explainWindow(summary.window)}` : '') +
    (summary.locality ? `; ${explainLocality(summary.locality)}` : '') +
    (summary.agentSandbox ? `; ${describeAgentSandbox(summary.agentSandbox)}` : '') +
    (summary.podNote ? `; ${summary.podNote}` : '')
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
    case 'StartingLimit':
      return 'at the starting limit';
  }
}

/**
 * The message of a failed placement, in the shape of kube-scheduler's FailedScheduling message:
 * `0/3 nodes fit projected capacity: 2 Insufficient cpu (projected), 1 cpu request exceeds allocatable.`
 * followed by the first node's full reason; `podNote` (e.g. {@link zeroRequestNote}) comes before the example:
 * `0/2 nodes fit projected capacity: 2 at the starting limit; the pod has no containers: ranked as zero requests. e.g. …`.
 * @param failed each node that does not fit, with its failures, in input order.
 */
export function explainNoFit(
  candidates: number,
  failed: readonly (readonly [string, readonly FitFailure[]])[],
  podNote?: string | null,
): string {
  const counts = new Map<string, number>();
  for (const [, failures] of failed) {
    for (const label of new Set(failures.map(failureLabel))) counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  const summary = [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([label, n]) => `${n} ${label}`);
  const first = failed[0];
  const example = first ? ` e.g. ${first[0]}: ${formatFailures(first[1])}` : '';
  return `0/${candidates} nodes fit projected capacity: ${summary.join(', ')}${podNote ? `; ${podNote}` : ''}.${example}`;
}

/**
 * What the Event of a decision says, as data (a Filter or Prioritize reply carries it: PlacementService.filterReply,
 * prioritizeReply); {@link explainDecision} words it, only when an Event is recorded.
 */
export type DecisionExplanation = PlacementExplanation | NoFitExplanation;

/** A pod placed: the chosen node and the runner-up as they were before its reservation. */
export interface PlacementExplanation {
  readonly result: 'placed';
  readonly pod: Pod;
  /** The pod's record (its request over `dims`, and whether it is an agent-sandbox pod). */
  readonly record: PodRecord;
  readonly chosen: Evaluation;
  readonly runnerUp: Evaluation | null;
  readonly candidates: number;
  readonly feasible: number;
  readonly locality: DecisionLocality | null;
  readonly window: DecisionWindow | null;
  readonly dims: Dimensions;
  /** The placement strategy's name (config `strategy`). */
  readonly strategy: string;
}

/** A pod that fits none of its candidates: each node that does not fit, with its failures, in input order. */
export interface NoFitExplanation {
  readonly result: 'no_fit';
  readonly pod: Pod;
  readonly record: PodRecord;
  readonly candidates: number;
  readonly failed: readonly (readonly [string, readonly FitFailure[]])[];
  readonly dims: Dimensions;
}

/**
 * The message of a decision's Event: {@link explainPlacement} for a pod placed (an agent-sandbox pod named with its
 * kind and template, and told to set requests in its SandboxTemplate when it requests nothing), {@link explainNoFit}
 * for one that fits nowhere; both with the {@link zeroRequestNote} of a pod that requests nothing.
 */
export function explainDecision(explanation: DecisionExplanation): string {
  const { pod, record, dims } = explanation;
  const zero = zeroRequestNote(pod, record.request, dims);
  if (explanation.result === 'no_fit') return explainNoFit(explanation.candidates, explanation.failed, zero);
  // An agent-sandbox pod (its record says so) is named in the message: its kind and template, read from the pod.
  const agentSandbox = record.agentSandbox ? agentSandboxOf(pod) : null;
  const summary: PlacementSummary = {
    chosen: explanation.chosen,
    runnerUp: explanation.runnerUp,
    candidates: explanation.candidates,
    feasible: explanation.feasible,
    locality: explanation.locality,
    window: explanation.window,
    agentSandbox,
    podNote: zero && agentSandbox ? `${zero} (set requests in its SandboxTemplate)` : zero,
  };
  return explainPlacement(summary, dims, explanation.strategy);
}
