/**
 * The heterogeneous replay: place N identical pods one after another on a fixed set of nodes with
 * one strategy, each placement reserved at once (a burst with no binding feedback), and report the
 * peak allocation pressure  max_n max_r (Σ requests_r on n) / allocatable_r.
 *
 * With `honourCapacity` false (the overcommit replay) the capacity filter is ignored, as in the
 * load-aware placement model this project comes from: on nodes of 16/64/192 CPUs with 4 GiB per CPU
 * and 300 pods of 2 CPU / 4 GiB, round_robin peaks at 12.5 and least_loaded at 2.21875.
 *
 * The peak is read from the scheduler cache the replay fills (NodeInfo, as everywhere else).
 * {@link discreteOptimum} computes the best peak any placement can reach, independently of the
 * strategies and of the cache: the smallest P such that Σ_n k_n(P) ≥ N, where k_n(P) is how many pods node n takes
 * without its pressure exceeding P (found by bisection on P, then read back exactly).
 */
import { currentPressure } from './nodeInfo.js';
import { Placer } from './placement.js';
import { maxPressure, pressureRatio } from './pressure.js';
import type { Dimensions, NodeRecord } from './records.js';
import { CandidateScan } from './scan.js';
import { SchedulerCache } from './schedulerCache.js';
import type { Strategy } from './strategies/index.js';

export interface ReplaySpec {
  readonly dims: Dimensions;
  /** Nodes with known allocatable (scheduler units per dimension). */
  readonly nodes: readonly (NodeRecord & { readonly allocatable: readonly number[] })[];
  /** Request of every pod, per dimension. */
  readonly podRequest: readonly number[];
  readonly podCount: number;
  readonly honourCapacity: boolean;
}

export interface ReplayResult {
  readonly strategy: Strategy;
  readonly placed: number;
  readonly unplaced: number;
  readonly peakPressure: number;
  /** Pods placed per node, in spec order. */
  readonly podsPerNode: readonly number[];
}

/** Runs one strategy. `random` returns values in [0, 1) (only the random strategy uses it). */
export function replay(spec: ReplaySpec, strategy: Strategy, random: () => number): ReplayResult {
  const cache = new SchedulerCache(spec.dims, { ttlMs: Number.MAX_SAFE_INTEGER });
  for (const node of spec.nodes) cache.upsertNode(node);
  const names = spec.nodes.map((n) => n.name);
  const scan = new CandidateScan((name) => cache.nodeInfo(name), spec.dims);
  const placer = new Placer(strategy, random);
  const counts = new Map(names.map((name) => [name, 0]));
  let unplaced = 0;
  for (let i = 0; i < spec.podCount; i++) {
    const { chosen } = placer.choose(scan.run(spec.podRequest, names, { ignoreCapacity: !spec.honourCapacity }));
    if (chosen < 0) {
      unplaced++;
      continue;
    }
    cache.assume({ uid: `replay-${i}`, key: `replay/pod-${i}`, request: spec.podRequest }, names[chosen]!, 0);
    counts.set(names[chosen]!, counts.get(names[chosen]!)! + 1);
  }
  const podsPerNode = spec.nodes.map((n) => counts.get(n.name)!);
  const peakPressure = maxPressure([0, ...names.map((name) => maxPressure(currentPressure(cache.nodeInfo(name)!)))]);
  return { strategy, placed: spec.podCount - unplaced, unplaced, peakPressure, podsPerNode };
}

/** Pressure of a node of `allocatable` holding `k` pods of `request`: max_r k·q_r / A_r (A_r > 0). */
export function pressureWith(allocatable: readonly number[], request: readonly number[], k: number): number {
  let p = 0;
  for (let r = 0; r < allocatable.length; r++) {
    const ratio = pressureRatio(k * request[r]!, allocatable[r]!);
    if (ratio > p) p = ratio;
  }
  return p;
}

/** Most pods of `request` that fit in `allocatable` (Infinity when nothing is requested). */
function capacityFor(allocatable: readonly number[], request: readonly number[]): number {
  let k = Infinity;
  for (let r = 0; r < allocatable.length; r++) {
    if (request[r]! > 0) k = Math.min(k, Math.floor(allocatable[r]! / request[r]!));
  }
  return k;
}

/** Largest k with pressureWith(k) ≤ P, capped at `cap`. */
function podsWithin(allocatable: readonly number[], request: readonly number[], P: number, cap: number): number {
  const unit = pressureWith(allocatable, request, 1);
  if (unit === 0) return cap;
  let k = Math.min(cap, Math.floor(P / unit));
  while (k < cap && pressureWith(allocatable, request, k + 1) <= P) k++;
  while (k > 0 && pressureWith(allocatable, request, k) > P) k--;
  return k;
}

/**
 * The lowest peak pressure any placement of `spec.podCount` pods can reach, or null when they
 * cannot all be placed within capacity (only when `honourCapacity`).
 */
export function discreteOptimum(spec: ReplaySpec): number | null {
  const { nodes, podRequest: q, podCount: n } = spec;
  const caps = nodes.map((node) => (spec.honourCapacity ? capacityFor(node.allocatable, q) : Infinity));
  if (caps.reduce((a, b) => a + b, 0) < n) return null;
  const count = (P: number) => nodes.reduce((sum, node, i) => sum + podsWithin(node.allocatable, q, P, Math.min(caps[i]!, n)), 0);
  let lo = 0;
  let hi = Math.max(...nodes.map((node) => pressureWith(node.allocatable, q, n)));
  for (let i = 0; i < 200 && hi - lo > 0; i++) {
    const mid = (lo + hi) / 2;
    if (mid === lo || mid === hi) break;
    if (count(mid) >= n) hi = mid;
    else lo = mid;
  }
  return Math.max(0, ...nodes.map((node, i) => pressureWith(node.allocatable, q, podsWithin(node.allocatable, q, hi, Math.min(caps[i]!, n)))));
}
