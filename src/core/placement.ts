/**
 * Placement: the capacity filter, projected pressure, candidate order, strategies and scores.
 *
 * For a pod with request q on a node with allocatable A, per dimension r with A_r > 0:
 *
 *     projected_r = (allocated_r + paused_r + reserved_r + q_r) / A_r        pressure = max_r projected_r
 *
 * Filter (mirrors kube-scheduler NodeResourcesFit fitsRequest, with paused and reserved counted as
 * in use): for every r with q_r > 0, the node fails if q_r > A_r (unresolvable) or if
 * allocated_r + paused_r + reserved_r + q_r > A_r. Dimensions the pod does not request are not checked.
 * A node of unknown capacity passes (fail-open: kube-scheduler's own NodeResourcesFit still runs)
 * and is ranked after every node of known capacity.
 *
 * Candidate order (least_loaded): known capacity first; lower projected pressure; fewer starting
 * sandboxes (a pending reservation counts as one); fewer running; fewer paused; exact equals are
 * taken round-robin so that a burst does not pile onto one node. most_loaded (bin-packing) reverses
 * the pressure comparison only. round_robin cycles through the feasible nodes by name; random draws
 * uniformly from them with the caller's random source.
 */
import type { NodeTotals } from './clusterModel.js';
import type { FitFailure } from './reasons.js';
import type { Dimensions } from './records.js';
import type { NodeReservations } from './reservations.js';

export const STRATEGIES = ['least_loaded', 'most_loaded', 'round_robin', 'random'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** kube-scheduler's MaxExtenderPriority: prioritize scores are integers in 0..10. */
export const MAX_EXTENDER_PRIORITY = 10;

/** One candidate node as the model sees it for this pod. */
export interface NodeView {
  readonly name: string;
  /** Per dimension, scheduler units; null = unknown capacity. */
  readonly allocatable: readonly number[] | null;
  readonly totals: NodeTotals;
  /** Reservations on the node, excluding the pod's own earlier reservation. */
  readonly reserved: NodeReservations;
}

export interface Evaluation {
  readonly name: string;
  readonly known: boolean;
  /** Projected pressure per dimension; NaN where the node has none of that resource or capacity is unknown. */
  readonly projected: readonly number[];
  /** max over dimensions of `projected`; NaN when capacity is unknown. */
  readonly pressure: number;
  /** Starting sandboxes, including pending reservations. */
  readonly starting: number;
  readonly running: number;
  readonly paused: number;
  /** Why the pod does not fit; empty when it fits. */
  readonly failures: readonly FitFailure[];
}

/** Evaluates `view` for a pod requesting `request` (per dimension, scheduler units). O(dimensions). */
export function evaluate(view: NodeView, request: readonly number[], dims: Dimensions): Evaluation {
  const { totals, reserved, allocatable } = view;
  const starting = totals.starting + reserved.count;
  if (!allocatable) {
    return { name: view.name, known: false, projected: dims.names.map(() => NaN), pressure: NaN, starting, running: totals.running, paused: totals.pausedCount, failures: [] };
  }
  const projected: number[] = [];
  const failures: FitFailure[] = [];
  let pressure = 0;
  for (let r = 0; r < dims.names.length; r++) {
    const a = allocatable[r]!;
    const q = request[r]!;
    const allocated = totals.allocated[r]!;
    const paused = totals.paused[r]!;
    const held = reserved.request[r]!;
    const total = allocated + paused + held + q;
    const p = a > 0 ? total / a : NaN;
    projected.push(p);
    if (p > pressure) pressure = p;
    if (q <= 0) continue;
    const resource = dims.names[r]!;
    if (q > a) failures.push({ code: 'RequestExceedsAllocatable', resource, requested: q, allocatable: a });
    else if (total > a) failures.push({ code: 'InsufficientResource', resource, requested: q, allocated, paused, reserved: held, allocatable: a });
  }
  return { name: view.name, known: true, projected, pressure, starting, running: totals.running, paused: totals.pausedCount, failures };
}

/** Whether the pod fits the node (no failures). */
export function fits(e: Evaluation): boolean {
  return e.failures.length === 0;
}

/**
 * Candidate order: negative when `a` should be chosen before `b`, 0 for exact equals.
 * `pressureSign` is +1 for least_loaded (lower first) and -1 for most_loaded (higher first).
 */
export function compareCandidates(a: Evaluation, b: Evaluation, pressureSign: 1 | -1 = 1): number {
  if (a.known !== b.known) return a.known ? -1 : 1;
  if (a.known && a.pressure !== b.pressure) return pressureSign * (a.pressure - b.pressure);
  return a.starting - b.starting || a.running - b.running || a.paused - b.paused;
}

export interface Decision {
  /** Index into the evaluations of the chosen node, or -1 when no node fits. */
  readonly chosen: number;
  /** Index of the best node after the chosen one in candidate order, or -1. */
  readonly runnerUp: number;
  readonly feasible: number;
}

/**
 * Chooses among evaluations with the configured strategy. Holds the only state of a placement:
 * the round-robin cursors. Pure: randomness comes from the `random` function passed in (values in [0, 1)).
 */
export class Placer {
  private tieCursor = 0;
  private lastRoundRobin: string | null = null;

  constructor(readonly strategy: Strategy, private readonly random: () => number) {}

  choose(evaluations: readonly Evaluation[]): Decision {
    const feasible: number[] = [];
    for (let i = 0; i < evaluations.length; i++) if (fits(evaluations[i]!)) feasible.push(i);
    if (feasible.length === 0) return { chosen: -1, runnerUp: -1, feasible: 0 };
    const sign = this.strategy === 'most_loaded' ? -1 : 1;
    const chosen = this.pick(evaluations, feasible, sign);
    const runnerUp = best(evaluations, feasible.filter((i) => i !== chosen), sign);
    return { chosen, runnerUp, feasible: feasible.length };
  }

  private pick(evaluations: readonly Evaluation[], feasible: readonly number[], sign: 1 | -1): number {
    switch (this.strategy) {
      case 'random':
        return feasible[Math.min(feasible.length - 1, Math.floor(this.random() * feasible.length))]!;
      case 'round_robin':
        return this.nextByName(evaluations, feasible);
      default:
        return this.bestWithTies(evaluations, feasible, sign);
    }
  }

  /** The best candidate; among exact equals, the next one in turn. */
  private bestWithTies(evaluations: readonly Evaluation[], feasible: readonly number[], sign: 1 | -1): number {
    const top = best(evaluations, feasible, sign);
    const ties = feasible.filter((i) => compareCandidates(evaluations[i]!, evaluations[top]!, sign) === 0);
    if (ties.length === 1) return top;
    return ties[this.tieCursor++ % ties.length]!;
  }

  /** The feasible node whose name follows the last round-robin pick, wrapping around. */
  private nextByName(evaluations: readonly Evaluation[], feasible: readonly number[]): number {
    let next = -1;
    let first = -1;
    for (const i of feasible) {
      const name = evaluations[i]!.name;
      if (first < 0 || name < evaluations[first]!.name) first = i;
      if (this.lastRoundRobin !== null && name > this.lastRoundRobin && (next < 0 || name < evaluations[next]!.name)) next = i;
    }
    const chosen = next >= 0 ? next : first;
    this.lastRoundRobin = evaluations[chosen]!.name;
    return chosen;
  }
}

function best(evaluations: readonly Evaluation[], indices: readonly number[], sign: 1 | -1): number {
  let top = -1;
  for (const i of indices) {
    if (top < 0 || compareCandidates(evaluations[i]!, evaluations[top]!, sign) < 0) top = i;
  }
  return top;
}

/**
 * Prioritize scores (integers 0..10, kube-scheduler's MaxExtenderPriority). The chosen node gets 10;
 * every other node at most 9, so the strategy's pick is the extender's single best answer:
 * - least_loaded: floor(9 × (1 − min(1, pressure))), the free share after placing the pod;
 * - most_loaded: floor(9 × min(1, pressure));
 * - round_robin, random: 0.
 * Nodes that do not fit or whose capacity is unknown get 0.
 */
export function scoreEvaluations(evaluations: readonly Evaluation[], chosen: number, strategy: Strategy): number[] {
  return evaluations.map((e, i) => {
    if (i === chosen) return MAX_EXTENDER_PRIORITY;
    if (!fits(e) || !e.known) return 0;
    const p = Math.min(1, Math.max(0, e.pressure));
    if (strategy === 'least_loaded') return Math.floor(9 * (1 - p));
    if (strategy === 'most_loaded') return Math.floor(9 * p);
    return 0;
  });
}
