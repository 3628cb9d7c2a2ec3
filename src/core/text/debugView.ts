/**
 * The debug view of the scheduler cache: each node's NodeInfo with its reservations, as plain data
 * (GET /debug/nodes and /debug/nodes/NAME). Read-only: it copies what it shows. Nodes are sorted by
 * name in natural order (`node-16` before `node-64` before `node-192`), or by current pressure,
 * highest first. A node whose allocatable the model does not know says why (`allocatableUnknown`),
 * and one the model knows only by name, with no Node object, says so (`hasNode: false`).
 */
import type { NodeLocalityView } from '../objects/templateLocality.js';
import { currentPressure, type NodeInfo } from '../cache/nodeInfo.js';
import { byPressureDescending, maxPressure } from '../objects/pressure.js';
import type { SchedulerCacheView } from '../cache/cacheView.js';

export type PerResource = Record<string, number>;

export interface ReservationView {
  readonly uid: string;
  readonly pod: string;
  readonly request: PerResource;
  readonly ageSeconds: number;
  /** The bind verb created the Binding; waiting for the watch to show the pod bound. */
  readonly bindingFinished: boolean;
  readonly expiresInSeconds: number;
}

export interface NodeView {
  readonly name: string;
  /**
   * Whether a Node object of this name is in the extender's model (NodeInfo.hasNode). False: the model
   * knows the name only from the pods bound to it or the reservations held on it, e.g. a node
   * kube-scheduler sent as a full Node object (nodeCacheCapable: false) that the extender's lists or
   * snapshot do not have: that object's allocatable counted for that request's decision only.
   */
  readonly hasNode: boolean;
  /** null: the node's capacity is unknown to the model; `allocatableUnknown` says why. */
  readonly allocatable: PerResource | null;
  /** Present only when `allocatable` is null: why, in words ({@link NO_NODE_OBJECT} or {@link NO_ALLOCATABLE}). */
  readonly allocatableUnknown?: string;
  readonly allocated: PerResource;
  readonly paused: PerResource;
  readonly reserved: PerResource;
  /** (allocated + paused + reserved) / allocatable per resource; absent where allocatable is 0 or unknown. */
  readonly pressure: PerResource;
  /** The highest of `pressure`; null (JSON has no NaN) when the node has no pressure. */
  readonly maxPressure: number | null;
  /**
   * Sandbox counts: `starting` bound and not Ready, `reserved` reservations held (each one more
   * starting sandbox for placement: the starting limit compares starting + reserved with
   * `startingLimit`, null when no limit applies).
   */
  readonly sandboxes: {
    readonly starting: number;
    readonly running: number;
    readonly paused: number;
    readonly reserved: number;
    readonly startingLimit: number | null;
  };
  /**
   * The agent-sandbox pods among the starting, running and paused ones (agentSandboxPods.ts): `warmPool` a
   * SandboxWarmPool's not yet claimed, `claimed` a SandboxClaim's (cold, or adopted from a pool),
   * `standalone` a Sandbox created directly. All 0 on a node without any.
   */
  readonly agentSandboxes: { readonly warmPool: number; readonly claimed: number; readonly standalone: number };
  readonly reservations: readonly ReservationView[];
  /**
   * Locality on (absent when off): the node's status.images as kept (at most maxImagesPerNode, the
   * largest first), and the template keys seen starting on it within the TTL, the most recent first
   * (at most {@link RECENT_TEMPLATES_SHOWN}; `recentTemplateCount` says how many the memory holds).
   */
  readonly locality?: NodeLocalityView;
}

/** `allocatableUnknown` of a node without a Node object in the model. */
export const NO_NODE_OBJECT =
  "no Node object of this name in the extender's model: only the pods bound to it and the reservations held on it are counted " +
  '(a Node object sent in a request, nodeCacheCapable: false, counts for that request only)';

/** `allocatableUnknown` of a Node object without usable allocatable (missing, or zero in every dimension). */
export const NO_ALLOCATABLE =
  'the Node object has no usable status.allocatable (missing, or zero in every dimension): capacity unknown, ranked after every node of known capacity';

/** Template keys shown per node in the debug view, at most. */
export const RECENT_TEMPLATES_SHOWN = 20;

/** Order of the node list: by name (natural order) or by current max pressure, highest first (unknown last). */
export type NodeOrder = 'name' | 'pressure';

/** Natural order of names: digit runs compare as numbers (`node-16` < `node-64` < `node-192`). */
const compareNames = new Intl.Collator('en', { numeric: true }).compare;

/** A pressure as JSON shows it: NaN (no value, pressure.ts) as null. */
function noValueAsNull(p: number): number | null {
  return Number.isNaN(p) ? null : p;
}

function perResource(names: readonly string[], values: readonly number[]): PerResource {
  return Object.fromEntries(names.map((n, i) => [n, values[i]!]));
}

/** Reservations grouped by node (only the node `only`, when given), each list sorted by pod. */
function reservationsByNode(cache: SchedulerCacheView, nowMs: number, only?: string): Map<string, ReservationView[]> {
  const byNode = new Map<string, ReservationView[]>();
  for (const r of cache.reservations()) {
    if (only !== undefined && r.nodeName !== only) continue;
    const list = byNode.get(r.nodeName) ?? [];
    list.push({
      uid: r.uid,
      pod: r.podKey,
      request: perResource(cache.dims.names, r.request),
      ageSeconds: Math.max(0, (nowMs - r.reservedAtMs) / 1000),
      bindingFinished: r.bindingFinished,
      expiresInSeconds: Math.max(0, (r.expiresAtMs - nowMs) / 1000),
    });
    byNode.set(r.nodeName, list);
  }
  for (const list of byNode.values())
    list.sort((a, b) => compareNames(a.pod, b.pod) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  return byNode;
}

/** Every node the cache knows (a Node object, bound pods or reservations), in `order`. */
export function debugNodes(cache: SchedulerCacheView, nowMs: number, order: NodeOrder = 'name'): NodeView[] {
  const byNode = reservationsByNode(cache, nowMs);
  const infos = [...cache.nodeInfos()];
  const locality = cache.locality?.nodesLocality(new Set(infos.map((info) => info.id)), nowMs, RECENT_TEMPLATES_SHOWN);
  const views = infos.map((info) => nodeView(cache, info, byNode.get(info.name) ?? [], locality?.get(info.id)));
  if (order === 'pressure')
    return views.sort(
      (a, b) => byPressureDescending(a.maxPressure ?? NaN, b.maxPressure ?? NaN) || compareNames(a.name, b.name),
    );
  return views.sort((a, b) => compareNames(a.name, b.name));
}

/** One node's view, or null if the cache knows nothing of it. */
export function debugNode(cache: SchedulerCacheView, name: string, nowMs: number): NodeView | null {
  const info = cache.nodeInfo(name);
  if (!info) return null;
  const locality = cache.locality?.nodesLocality(new Set([info.id]), nowMs, RECENT_TEMPLATES_SHOWN).get(info.id);
  return nodeView(cache, info, reservationsByNode(cache, nowMs, name).get(name) ?? [], locality);
}

function nodeView(
  cache: SchedulerCacheView,
  info: NodeInfo,
  reservations: ReservationView[],
  locality: NodeLocalityView | undefined,
): NodeView {
  const dims = cache.dims.names;
  const pressure = currentPressure(info);
  return {
    name: info.name,
    hasNode: info.hasNode,
    allocatable: info.allocatable && perResource(dims, info.allocatable),
    ...(info.allocatable ? {} : { allocatableUnknown: info.hasNode ? NO_ALLOCATABLE : NO_NODE_OBJECT }),
    allocated: perResource(dims, info.allocated),
    paused: perResource(dims, info.paused),
    reserved: perResource(dims, info.reserved),
    pressure: Object.fromEntries(dims.map((d, i) => [d, pressure[i]!]).filter(([, p]) => !Number.isNaN(p))),
    maxPressure: noValueAsNull(maxPressure(pressure)),
    sandboxes: {
      starting: info.starting,
      running: info.running,
      paused: info.pausedCount,
      reserved: info.reservedCount,
      startingLimit: info.startingLimit === undefined || info.startingLimit === Infinity ? null : info.startingLimit,
    },
    agentSandboxes: {
      warmPool: info.warmPoolSandboxes,
      claimed: info.claimedSandboxes,
      standalone: info.standaloneSandboxes,
    },
    reservations,
    ...(locality ? { locality } : {}),
  };
}
