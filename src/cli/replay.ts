/**
 * The heterogeneous replay (`replay`: docs/cli.md): place N identical pods one after another on a fixed set of
 * nodes with one strategy, each placement reserved at once in a scheduler cache of its own (a burst with no
 * binding feedback), and report the peak allocation pressure max_n max_r (Σ requests_r on n) / allocatable_r.
 * With `honourCapacity` false the capacity filter is ignored, as in the load-aware placement model this project
 * comes from (the README's quick start shows that replay). {@link discreteOptimum} computes the best peak any
 * placement can reach, independently of the strategies and of the cache. With `sampling`, each pod is offered
 * only kube-scheduler's sampled window ({@link SampledWindow}).
 */
import { dimensionFit } from '../core/fit/evaluation.js';
import { numFeasibleNodesToFind } from '../core/fit/kubeSchedulerSampling.js';
import { currentPressure, inUse, type NodeInfo } from '../core/cache/nodeInfo.js';
import { Placer } from '../core/fit/placer.js';
import { maxPressure, pressureRatio } from '../core/objects/pressure.js';
import type { Dimensions, NodeRecord, PodRecord } from '../core/objects/records.js';
import { CandidateScan } from '../core/fit/scan.js';
import { SchedulerCache } from '../core/cache/schedulerCache.js';
import type { Strategy } from '../core/fit/strategies/index.js';

export interface ReplaySpec {
  readonly dims: Dimensions;
  /** Nodes with known allocatable (scheduler units per dimension). */
  readonly nodes: readonly (NodeRecord & { readonly allocatable: readonly number[] })[];
  /** Request of every pod, per dimension. */
  readonly podRequest: readonly number[];
  readonly podCount: number;
  readonly honourCapacity: boolean;
  /** Pods already on the nodes (e.g. paused or running sandboxes) before the replay places any; counted in every figure. */
  readonly existingPods?: readonly PodRecord[];
  /** Absent: every pod is offered every node (percentageOfNodesToScore 100). */
  readonly sampling?: Sampling;
}

/** kube-scheduler's sampling of the nodes it filters and sends the extender. */
export interface Sampling {
  /** percentageOfNodesToScore, 0–100; 0 is kube-scheduler's adaptive default (50 − nodes/125 %, at least 5 %). */
  readonly percentageOfNodesToScore: number;
  /** Zone of each node (topology.kubernetes.io/zone), in the order of `spec.nodes`; absent: one zone. */
  readonly zones?: readonly string[];
}

export interface ReplayResult {
  readonly strategy: Strategy;
  readonly placed: number;
  readonly unplaced: number;
  readonly peakPressure: number;
  /** The first node at the peak (null when every node is empty). */
  readonly peakNode: string | null;
  /** Pods placed per node, in spec order. */
  readonly podsPerNode: readonly number[];
  /** With sampling: the nodes offered per pod, smallest and largest. */
  readonly offered?: { readonly min: number; readonly max: number };
}

/**
 * kube-scheduler's node order: zones in order of first appearance, one node of each in turn; within a zone, the
 * given order (the order nodes joined the scheduler: effectively random for the nodes present when it starts, whose
 * initial list client-go streams through a map; in order of arrival for nodes added while it runs, as a node pool's
 * scale-up adds them). Mirrors Kubernetes v1.36
 * pkg/scheduler/backend/cache/node_tree.go `list`. Returns indices into `zones`.
 */
export function nodeTreeOrder(zones: readonly string[]): number[] {
  const byZone = new Map<string, number[]>();
  zones.forEach((zone, i) => {
    const list = byZone.get(zone);
    if (list) list.push(i);
    else byZone.set(zone, [i]);
  });
  const lists = [...byZone.values()];
  const order: number[] = [];
  for (let k = 0; order.length < zones.length; k++) {
    for (const list of lists) if (k < list.length) order.push(list[k]!);
  }
  return order;
}

/** kube-scheduler's resource fit (NodeResourcesFit): every requested dimension fits beside what is in use. */
function fitsNode(info: NodeInfo, request: readonly number[]): boolean {
  for (let r = 0; r < request.length; r++) {
    if (dimensionFit(request[r]!, inUse(info, r) + request[r]!, info.allocatable?.[r] ?? Infinity) !== 0) return false;
  }
  return true;
}

/** Runs one strategy. `random` returns values in [0, 1) (only the random strategy uses it). */
export function replay(spec: ReplaySpec, strategy: Strategy, random: () => number): ReplayResult {
  const cache = new SchedulerCache(spec.dims, { ttlMs: Number.MAX_SAFE_INTEGER });
  for (const node of spec.nodes) cache.upsertNode(node);
  for (const pod of spec.existingPods ?? []) cache.upsertPod(pod);
  const names = spec.nodes.map((n) => n.name);
  const scan = new CandidateScan(
    (name) => cache.nodeInfo(name),
    spec.dims,
    () => cache.nodeSetVersion,
  );
  const placer = new Placer(strategy, random);
  const counts = new Map(names.map((name) => [name, 0]));
  const window = spec.sampling ? new SampledWindow(spec, cache) : null;
  let unplaced = 0;
  for (let i = 0; i < spec.podCount; i++) {
    const offered = window ? window.next(spec.podRequest) : names;
    const { chosen } = placer.choose(scan.run(spec.podRequest, offered, { ignoreCapacity: !spec.honourCapacity }));
    if (chosen < 0) {
      unplaced++;
      continue;
    }
    cache.assume({ uid: `replay-${i}`, key: `replay/pod-${i}`, request: spec.podRequest }, offered[chosen]!, 0);
    counts.set(offered[chosen]!, counts.get(offered[chosen]!)! + 1);
  }
  const podsPerNode = spec.nodes.map((n) => counts.get(n.name)!);
  let peakPressure = 0;
  let peakNode: string | null = null;
  for (const name of names) {
    const p = maxPressure(currentPressure(cache.nodeInfo(name)!));
    if (p > peakPressure) [peakPressure, peakNode] = [p, name];
  }
  const result = { strategy, placed: spec.podCount - unplaced, unplaced, peakPressure, peakNode, podsPerNode };
  return window ? { ...result, offered: { min: window.minOffered, max: window.maxOffered } } : result;
}

/**
 * The windows kube-scheduler offers one pod after another when `percentageOfNodesToScore` is below 100: starting
 * where the previous pod's search stopped, walk the nodes in kube-scheduler's node-tree order (zones interleaved,
 * within a zone the given order) until {@link numFeasibleNodesToFind} nodes fit, skipping the ones that do not (its
 * NodeResourcesFit), and advance the start by the nodes walked. Mirrors Kubernetes v1.36
 * pkg/scheduler/schedule_one.go `findNodesThatFitPod`, `findNodesThatPassFilters` and `numFeasibleNodesToFind`, and
 * backend/cache/node_tree.go `list`, walked in order (kube-scheduler checks the window with 16 goroutines, so its
 * window may differ by a few nodes).
 */
class SampledWindow {
  private readonly infos: NodeInfo[];
  private readonly toFind: number;
  private readonly ignoreCapacity: boolean;
  private start = 0;
  private readonly offered: string[] = [];
  minOffered = Infinity;
  maxOffered = 0;

  constructor(spec: ReplaySpec, cache: SchedulerCache) {
    const sampling = spec.sampling!;
    const zones = sampling.zones ?? spec.nodes.map(() => '');
    if (zones.length !== spec.nodes.length)
      throw new RangeError(`sampling.zones has ${zones.length} entries for ${spec.nodes.length} nodes`);
    this.infos = nodeTreeOrder(zones).map((i) => cache.nodeInfo(spec.nodes[i]!.name)!);
    this.toFind = numFeasibleNodesToFind(sampling.percentageOfNodesToScore, spec.nodes.length);
    this.ignoreCapacity = !spec.honourCapacity;
  }

  /** The names offered for a pod of `request`; valid until the next call. */
  next(request: readonly number[]): readonly string[] {
    const n = this.infos.length;
    this.offered.length = 0;
    let walked = 0;
    while (walked < n && this.offered.length < this.toFind) {
      const info = this.infos[(this.start + walked) % n]!;
      walked++;
      if (this.ignoreCapacity || fitsNode(info, request)) this.offered.push(info.name);
    }
    this.start = (this.start + walked) % n;
    this.minOffered = Math.min(this.minOffered, this.offered.length);
    this.maxOffered = Math.max(this.maxOffered, this.offered.length);
    return this.offered;
  }
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

/** Pressure of a node of `allocatable` with `base` in use and `k` more pods of `request`: max_r (base_r + k·q_r) / A_r. */
function pressureOn(
  allocatable: readonly number[],
  base: readonly number[],
  request: readonly number[],
  k: number,
): number {
  let p = 0;
  for (let r = 0; r < allocatable.length; r++) {
    const ratio = pressureRatio(base[r]! + k * request[r]!, allocatable[r]!);
    if (ratio > p) p = ratio;
  }
  return p;
}

/** Most pods of `request` that fit in `allocatable` beside `base` (Infinity when nothing is requested). */
function capacityFor(allocatable: readonly number[], base: readonly number[], request: readonly number[]): number {
  let k = Infinity;
  for (let r = 0; r < allocatable.length; r++) {
    if (request[r]! > 0) k = Math.min(k, Math.max(0, Math.floor((allocatable[r]! - base[r]!) / request[r]!)));
  }
  return k;
}

/** Largest k with pressureOn(k) ≤ P, capped at `cap` (0 when even `base` is above P). */
function podsWithin(
  allocatable: readonly number[],
  base: readonly number[],
  request: readonly number[],
  P: number,
  cap: number,
): number {
  const unit = pressureWith(allocatable, request, 1);
  if (unit === 0) return pressureOn(allocatable, base, request, 0) <= P ? cap : 0;
  let k = Math.max(0, Math.min(cap, Math.floor(P / unit)));
  while (k < cap && pressureOn(allocatable, base, request, k + 1) <= P) k++;
  while (k > 0 && pressureOn(allocatable, base, request, k) > P) k--;
  return k;
}

/** What `spec.existingPods` hold on each node, in spec order (every state but pending and inactive counts). */
function baseUsage(spec: ReplaySpec): number[][] {
  const index = new Map(spec.nodes.map((n, i) => [n.name, i]));
  const base = spec.nodes.map(() => spec.dims.names.map(() => 0));
  for (const pod of spec.existingPods ?? []) {
    const i = pod.nodeName === null ? undefined : index.get(pod.nodeName);
    if (i === undefined || pod.state === 'pending' || pod.state === 'inactive') continue;
    pod.request.forEach((q, r) => (base[i]![r]! += q));
  }
  return base;
}

/**
 * Pods that sit above `level` on their node: Σ_n max(0, podsPerNode_n − k_n(level)), the pods a placement would
 * have to move for no node to exceed `level` (with `level` the optimum: how far a placement is from the best).
 */
export function podsAbove(spec: ReplaySpec, podsPerNode: readonly number[], level: number): number {
  const base = baseUsage(spec);
  let above = 0;
  spec.nodes.forEach((node, i) => {
    const k = podsPerNode[i] ?? 0;
    above += Math.max(0, k - podsWithin(node.allocatable, base[i]!, spec.podRequest, level + 1e-12, k));
  });
  return above;
}

/**
 * The lowest peak pressure any placement of `spec.podCount` pods can reach, or null when they
 * cannot all be placed within capacity (only when `honourCapacity`). Pods in `spec.existingPods` stay where they are.
 * The smallest P such that Σ_n k_n(P) ≥ N, where k_n(P) is how many pods node n takes without its pressure
 * exceeding P: found by bisection on P, then read back exactly.
 */
export function discreteOptimum(spec: ReplaySpec): number | null {
  const { nodes, podRequest: q, podCount: n } = spec;
  const base = baseUsage(spec);
  const caps = nodes.map((node, i) => (spec.honourCapacity ? capacityFor(node.allocatable, base[i]!, q) : Infinity));
  if (caps.reduce((a, b) => a + b, 0) < n) return null;
  const within = (P: number, i: number) => podsWithin(nodes[i]!.allocatable, base[i]!, q, P, Math.min(caps[i]!, n));
  const count = (P: number) => nodes.reduce((sum, _, i) => sum + within(P, i), 0);
  let lo = 0;
  let hi = Math.max(...nodes.map((node, i) => pressureOn(node.allocatable, base[i]!, q, n)));
  for (let i = 0; i < 200 && hi - lo > 0; i++) {
    const mid = (lo + hi) / 2;
    if (mid === lo || mid === hi) break;
    if (count(mid) >= n) hi = mid;
    else lo = mid;
  }
  // The peak is the fullest node that takes pods, or one that already stands above it with its existing pods.
  const peaks = nodes.map((node, i) => pressureOn(node.allocatable, base[i]!, q, within(hi, i)));
  return Math.max(0, ...peaks);
}
