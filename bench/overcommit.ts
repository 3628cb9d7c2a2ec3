/**
 * Over-commit of nodes that two schedulers share, replayed from one pod watch in resourceVersion order:
 * the pure half of `npm run bench -- shared` (bench/sharedNodes.ts) and of `test/e2e/sharedNodes.e2e.test.ts`.
 * No I/O, no clock. KWOK admits any pod a scheduler binds (a kubelet would reject the last with OutOfcpu /
 * OutOfmemory / OutOfpods), so a node over its allocatable stays so: per node, the requests of the pods bound
 * there and not terminal are checked against allocatable (cpu, memory, pod count) after every change the API
 * server made, every state the cluster went through, and the binding that took it over is recorded.
 * resourceVersions are compared as integers: opaque by contract, they are etcd revisions in every API server this
 * runs against (the e2e control plane's).
 */
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import { nodeAllocatable, podRequests } from '../src/core/objects/podRequests.js';

/** One change of a pod, as a watch (or a list) delivered it. */
export interface PodChange {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly pod: Pod;
}

/** What the extender had seen when it placed `pod` (namespace/name) on `node`. */
export interface Placement {
  readonly pod: string;
  readonly node: string;
  /**
   * The pods' resourceVersion its model reflected then (SchedulerCache.podsResourceVersion): when the bind verb
   * checked the node, or when Filter chose it where kube-scheduler binds.
   */
  readonly resourceVersion: string;
}

/** The dimensions checked: cpu (millicores), memory (bytes), pods (count). */
export const DIMENSIONS = ['cpu', 'memory', 'pods'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** A binding that took a node over its allocatable. */
export interface Overflow {
  readonly node: string;
  readonly resourceVersion: bigint;
  /** The pod whose binding it was, and its scheduler. */
  readonly pod: string;
  readonly schedulerName: string;
  /** The dimensions over allocatable right after it. */
  readonly over: readonly Dimension[];
}

/**
 * A pod the extender placed on a node that, in its own model at that moment, could not hold it. The pods bound at
 * or below the {@link Placement}'s resourceVersion were in its model: if they and the pod already exceed the node,
 * the extender placed the pod after the conflicting pods were visible to it. Pods bound above it were not visible
 * yet, a race the extender cannot see. Its reservations only add to what it counted, so a violation found is
 * certain, and none is missed, since the model held exactly the changes up to that version.
 */
export interface Violation {
  readonly pod: string;
  readonly node: string;
  readonly resourceVersion: bigint;
  readonly dimension: Dimension;
  /** Bound there (and counting) at that resourceVersion, without the pod; the pod's own request; allocatable. */
  readonly inUse: number;
  readonly requested: number;
  readonly allocatable: number;
}

export interface NodeOver {
  readonly node: string;
  readonly used: Readonly<Record<Dimension, number>>;
  readonly allocatable: Readonly<Record<Dimension, number>>;
}

export interface OvercommitReport {
  /** Nodes over allocatable once every change is applied. */
  readonly overAtEnd: readonly NodeOver[];
  /** Distinct nodes that were over allocatable at some point. */
  readonly nodesEverOver: number;
  /** The most nodes over allocatable at the same time. */
  readonly peakOverAtOnce: number;
  /** Every binding that took a node over, in resourceVersion order. */
  readonly overflows: readonly Overflow[];
  /** Placements of the extender made while its model already showed the node unable to hold the pod. */
  readonly violations: readonly Violation[];
  /** Placements whose pod was never seen bound to that node (a bind that was refused or failed), or not seen at all. */
  readonly placementsNotBound: number;
  /** Pods bound / not bound at the end, by scheduler name. */
  readonly bound: ReadonlyMap<string, number>;
  readonly unbound: ReadonlyMap<string, number>;
}

/** Integer form of a resourceVersion. @throws Error when it is not a decimal integer. */
export function resourceVersionOf(text: string | undefined): bigint {
  if (!text || !/^[0-9]+$/.test(text))
    throw new Error(`resourceVersion ${JSON.stringify(text)} is not an integer (an etcd revision)`);
  return BigInt(text);
}

const keyOf = (pod: Pod) => `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? ''}`;
const zero = (): Record<Dimension, number> => ({ cpu: 0, memory: 0, pods: 0 });

/** A pod's requests in the dimensions (pods: 1). */
function requestOf(pod: Pod): Record<Dimension, number> {
  const r = podRequests(pod);
  return { cpu: r.get('cpu') ?? 0, memory: r.get('memory') ?? 0, pods: 1 };
}

interface Tracked {
  readonly schedulerName: string;
  request: Record<Dimension, number>;
  /** The node it counts on, or null (unbound, terminal or deleted). */
  countsOn: string | null;
  boundTo: string | null;
}

/**
 * Replays `changes` (any order; applied by resourceVersion) over `nodes` and judges the extender's
 * `placements` against what its model held at each one.
 * @throws Error when a change or a placement has no integer resourceVersion, or a node no allocatable.
 */
export function replayOvercommit(
  nodes: readonly Node[],
  changes: readonly PodChange[],
  placements: readonly Placement[] = [],
): OvercommitReport {
  const allocatable = new Map<string, Record<Dimension, number>>();
  for (const n of nodes) {
    const a = nodeAllocatable(n);
    const name = n.metadata?.name;
    if (!a || !name) throw new Error(`node ${name ?? '<unnamed>'} has no allocatable`);
    allocatable.set(name, { cpu: a.get('cpu') ?? 0, memory: a.get('memory') ?? 0, pods: a.get('pods') ?? Infinity });
  }
  const used = new Map<string, Record<Dimension, number>>([...allocatable.keys()].map((n) => [n, zero()]));
  const overNow = new Set<string>();
  const everOver = new Set<string>();
  let peakOverAtOnce = 0;
  const overflows: Overflow[] = [];
  const violations: Violation[] = [];
  const pods = new Map<string, Tracked>();

  const overDims = (node: string): Dimension[] => {
    const u = used.get(node);
    const a = allocatable.get(node);
    return u && a ? DIMENSIONS.filter((d) => u[d] > a[d]) : [];
  };
  const add = (node: string, request: Record<Dimension, number>, sign: 1 | -1) => {
    let u = used.get(node);
    if (!u) used.set(node, (u = zero()));
    for (const d of DIMENSIONS) u[d] += sign * request[d];
  };

  const ordered = changes.map((c, i) => ({ c, i, rv: resourceVersionOf(c.pod.metadata?.resourceVersion) }));
  ordered.sort((a, b) => (a.rv < b.rv ? -1 : a.rv > b.rv ? 1 : a.i - b.i));
  // Each pod's request from its first change, so a placement can be judged before the pod's own changes come.
  const firstRequest = new Map<string, Record<Dimension, number>>();
  for (const { c } of ordered) if (!firstRequest.has(keyOf(c.pod))) firstRequest.set(keyOf(c.pod), requestOf(c.pod));
  const checks = placements
    .map((p) => ({ p, rv: resourceVersionOf(p.resourceVersion) }))
    .sort((a, b) => (a.rv < b.rv ? -1 : a.rv > b.rv ? 1 : 0));
  let nextCheck = 0;

  const judge = (upTo: bigint | null) => {
    while (nextCheck < checks.length && (upTo === null || checks[nextCheck]!.rv < upTo)) {
      const { p, rv } = checks[nextCheck++]!;
      const pod = pods.get(p.pod);
      const request = pod?.request ?? firstRequest.get(p.pod);
      const a = allocatable.get(p.node);
      if (!request || !a) continue;
      const u = used.get(p.node) ?? zero();
      const own = pod?.countsOn === p.node ? request : zero(); // already counted there: leave it out
      for (const d of DIMENSIONS) {
        const inUse = u[d] - own[d];
        if (request[d] > 0 && inUse + request[d] > a[d]) {
          violations.push({
            pod: p.pod,
            node: p.node,
            resourceVersion: rv,
            dimension: d,
            inUse,
            requested: request[d],
            allocatable: a[d],
          });
          break;
        }
      }
    }
  };

  for (const { c, rv } of ordered) {
    judge(rv); // placements made at a version below this change saw everything before it
    const key = keyOf(c.pod);
    let pod = pods.get(key);
    if (!pod) {
      pod = {
        schedulerName: c.pod.spec?.schedulerName || 'default-scheduler',
        request: requestOf(c.pod),
        countsOn: null,
        boundTo: null,
      };
      pods.set(key, pod);
    }
    const phase = c.pod.status?.phase;
    const nodeName = c.pod.spec?.nodeName || null;
    const countsOn = c.type !== 'DELETED' && nodeName && phase !== 'Succeeded' && phase !== 'Failed' ? nodeName : null;
    if (nodeName) pod.boundTo = nodeName;
    if (pod.countsOn !== countsOn) {
      if (pod.countsOn) add(pod.countsOn, pod.request, -1);
      if (countsOn) {
        pod.request = requestOf(c.pod);
        add(countsOn, pod.request, +1);
      }
      for (const node of new Set([pod.countsOn, countsOn])) {
        if (!node) continue;
        const over = overDims(node);
        if (over.length > 0 && !overNow.has(node)) {
          overNow.add(node);
          everOver.add(node);
          if (node === countsOn)
            overflows.push({ node, resourceVersion: rv, pod: key, schedulerName: pod.schedulerName, over });
        } else if (over.length === 0) overNow.delete(node);
      }
      peakOverAtOnce = Math.max(peakOverAtOnce, overNow.size);
      pod.countsOn = countsOn;
    }
  }
  judge(null);

  const bound = new Map<string, number>();
  const unbound = new Map<string, number>();
  for (const pod of pods.values()) {
    const into = pod.countsOn ? bound : unbound;
    into.set(pod.schedulerName, (into.get(pod.schedulerName) ?? 0) + 1);
  }
  const placementsNotBound = placements.filter((p) => pods.get(p.pod)?.boundTo !== p.node).length;
  const overAtEnd = [...overNow]
    .sort()
    .map((node) => ({ node, used: { ...used.get(node)! }, allocatable: allocatable.get(node)! }));
  return {
    overAtEnd,
    nodesEverOver: everOver.size,
    peakOverAtOnce,
    overflows,
    violations,
    placementsNotBound,
    bound,
    unbound,
  };
}

/**
 * The extender's placements from its log (pino JSON lines at level debug): each pod's last successful
 * `bind` line (bind verb on), or, for pods with none, its last `filter` line that reserved a node
 * (kube-scheduler binds). Lines that are not JSON or not of these kinds are skipped.
 */
export function placementsFromLog(text: string): Placement[] {
  const binds = new Map<string, Placement>();
  const filters = new Map<string, Placement>();
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: unknown; pod?: unknown; node?: unknown; reserved?: unknown; podsResourceVersion?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (
      typeof entry.pod !== 'string' ||
      typeof entry.podsResourceVersion !== 'string' ||
      entry.podsResourceVersion === ''
    )
      continue;
    if (entry.msg === 'bind' && typeof entry.node === 'string')
      binds.set(entry.pod, { pod: entry.pod, node: entry.node, resourceVersion: entry.podsResourceVersion });
    else if (entry.msg === 'filter' && typeof entry.reserved === 'string')
      filters.set(entry.pod, { pod: entry.pod, node: entry.reserved, resourceVersion: entry.podsResourceVersion });
  }
  for (const [pod, placement] of filters) if (!binds.has(pod)) binds.set(pod, placement);
  return [...binds.values()];
}
