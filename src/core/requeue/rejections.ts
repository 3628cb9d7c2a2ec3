/**
 * The pods this extender rejected for capacity that may still be waiting, and which of them to requeue once
 * capacity frees where kube-scheduler does not move them (docs/adr/0006-requeue-nudge.md). kube-scheduler
 * moves a pod an extender rejected back on any cluster event it receives (Kubernetes v1.36
 * pkg/scheduler/framework/runtime/framework.go: NewFramework, a defaultEnqueueExtension with no queueing
 * hint), else at its unschedulable pool's 5-minute flush. Which freed capacity it sees, which pods are
 * remembered and which are nudged: docs/cluster-mode.md#what-frees-capacity-and-what-kube-scheduler-sees-of-it.
 */
import { dimensionFit } from '../fit/evaluation.js';
import { atStartingLimit, inUse } from '../cache/nodeInfo.js';
import { addToOfferSet, emptyOfferSet, offerIncludes } from '../fit/offers.js';
import type { FitFailure } from '../fit/reasons.js';
import type { PodRecord } from '../objects/records.js';
import type { CapacityFreed, SchedulerCacheView } from '../cache/cacheView.js';

/**
 * Whether kube-scheduler sees the change that freed capacity (an event of it reaches its queue): the table in
 * docs/cluster-mode.md. A terminal pod is not in its informer (pkg/scheduler/scheduler.go: newPodInformer).
 */
export function seenByScheduler(freed: CapacityFreed): boolean {
  switch (freed.cause) {
    case 'pod-deleted':
    case 'pod-updated':
      return !freed.podTerminal;
    case 'bound':
    case 'moved':
    case 'binding-started':
    case 'binding-finished':
    case 'node-added':
    case 'node-grown':
      return true;
    case 'pod-started':
    case 'deleted':
    case 'unschedulable':
    case 'unreserved':
    case 'expired':
    case 'reassumed':
      return false;
  }
}

export interface RejectedPodsOptions {
  /** How many rejected pods are remembered (> 0); the oldest rejection is dropped first. */
  readonly maxPods: number;
  /** Told of each pod dropped to stay within maxPods (never nudged unless rejected again). */
  readonly dropped?: () => void;
  /** How long before the extender applied a change kube-scheduler saw a rejection may be and still be nudged (ms). */
  readonly raceWindowMs: number;
}

/** A remembered pod picked for a requeue, with the freed node it fits now. */
export interface NudgeTarget {
  readonly uid: string;
  /** `namespace/name`. */
  readonly key: string;
  readonly nodeName: string;
}

interface Rejection {
  readonly uid: string;
  readonly key: string;
  readonly request: readonly number[];
  /** Candidates that failed only with InsufficientResource or StartingLimit (NodeInfo ids). */
  readonly candidates: Uint32Array;
  readonly rejectedAtMs: number;
  /** Picked by takeNudges since this rejection. */
  nudged: boolean;
}

interface Freed {
  /** Some change on the node since the last takeNudges was hidden from kube-scheduler. */
  hidden: boolean;
  /** When the extender applied the earliest change kube-scheduler saw (ms), or Infinity. */
  seenAtMs: number;
  /** The node appeared or grew: it counts for every remembered pod, not only those it was a candidate of. */
  anyPod: boolean;
}

export class RejectedPods {
  private readonly byUid = new Map<string, Rejection>();
  private readonly freed = new Map<string, Freed>();

  /** @throws RangeError when maxPods is not a positive integer or raceWindowMs is negative. */
  constructor(
    private readonly cache: SchedulerCacheView,
    private readonly options: RejectedPodsOptions,
  ) {
    if (!(Number.isInteger(options.maxPods) && options.maxPods > 0))
      throw new RangeError(`maxPods must be a positive integer, got ${options.maxPods}`);
    if (!(options.raceWindowMs >= 0)) throw new RangeError(`raceWindowMs must be ≥ 0, got ${options.raceWindowMs}`);
  }

  /** Pods remembered (some may already be bound or deleted until the next takeNudges). */
  get size(): number {
    return this.byUid.size;
  }

  /** Nodes with capacity freed since the last takeNudges. */
  get pendingFrees(): number {
    return this.freed.size;
  }

  has(uid: string): boolean {
    return this.byUid.has(uid);
  }

  /**
   * A Filter found no node for `pod` at `nowMs`; `failed` is its list of candidates and their failures.
   * @returns whether the pod is remembered (some candidate failed only with InsufficientResource or StartingLimit).
   */
  remember(
    pod: Pick<PodRecord, 'uid' | 'key' | 'request'>,
    failed: readonly (readonly [string, readonly FitFailure[]])[],
    nowMs: number,
  ): boolean {
    this.byUid.delete(pod.uid);
    let candidates: Uint32Array | null = null;
    for (const [name, failures] of failed) {
      if (
        failures.length === 0 ||
        !failures.every((f) => f.code === 'InsufficientResource' || f.code === 'StartingLimit')
      )
        continue;
      const info = this.cache.nodeInfo(name);
      if (!info) continue;
      candidates ??= emptyOfferSet(this.cache.nodeIdBound);
      addToOfferSet(candidates, info.id);
    }
    if (!candidates) return false;
    this.byUid.set(pod.uid, {
      uid: pod.uid,
      key: pod.key,
      request: [...pod.request],
      candidates,
      rejectedAtMs: nowMs,
      nudged: false,
    });
    if (this.byUid.size > this.options.maxPods) {
      this.byUid.delete(this.byUid.keys().next().value!);
      this.options.dropped?.();
    }
    return true;
  }

  /** The pod was placed (or is no longer of interest). */
  forget(uid: string): void {
    this.byUid.delete(uid);
  }

  /** Capacity freed in the cache (SchedulerCache's capacityFreed listener), applied by the extender at `nowMs`. O(1). */
  capacityFreed(freed: CapacityFreed, nowMs: number): void {
    let entry = this.freed.get(freed.nodeName);
    if (!entry) this.freed.set(freed.nodeName, (entry = { hidden: false, seenAtMs: Infinity, anyPod: false }));
    if (freed.cause === 'node-added' || freed.cause === 'node-grown') entry.anyPod = true;
    if (!seenByScheduler(freed)) entry.hidden = true;
    else entry.seenAtMs = Math.min(entry.seenAtMs, nowMs);
  }

  /**
   * The remembered pods to requeue for the capacity freed since the last call (see the module
   * header), oldest rejection first; each is marked so that it is not picked again before it is
   * rejected again. Forgets pods the cache sees bound or deleted.
   */
  takeNudges(): NudgeTarget[] {
    if (this.freed.size === 0) return [];
    const nodes: { readonly name: string; readonly id: number; readonly freed: Freed }[] = [];
    for (const [name, freed] of this.freed) {
      const info = this.cache.nodeInfo(name);
      if (info?.hasNode && info.allocatable) nodes.push({ name, id: info.id, freed });
    }
    this.freed.clear();
    const targets: NudgeTarget[] = [];
    if (nodes.length === 0) return targets;
    for (const pod of this.byUid.values()) {
      if (pod.nudged) continue;
      if (this.cache.pod(pod.uid)?.nodeName || this.cache.wasDeleted(pod.uid)) {
        this.byUid.delete(pod.uid);
        continue;
      }
      for (const node of nodes) {
        if (!node.freed.anyPod && !offerIncludes(pod.candidates, node.id)) continue;
        if (!node.freed.hidden && pod.rejectedAtMs < node.freed.seenAtMs - this.options.raceWindowMs) continue;
        if (!this.fitsNow(pod.request, node.name)) continue;
        pod.nudged = true;
        targets.push({ uid: pod.uid, key: pod.key, nodeName: node.name });
        break;
      }
    }
    return targets;
  }

  /** The requeue of `targets` failed: they may be picked again when capacity frees next. */
  nudgeFailed(targets: readonly Pick<NudgeTarget, 'uid'>[]): void {
    for (const t of targets) {
      const pod = this.byUid.get(t.uid);
      if (pod) pod.nudged = false;
    }
  }

  /** The extender's fit rule and starting limit on the node's current totals (no own reservation: the pod was rejected). */
  private fitsNow(request: readonly number[], nodeName: string): boolean {
    const info = this.cache.nodeInfo(nodeName)!;
    if (atStartingLimit(info)) return false;
    const allocatable = info.allocatable!;
    for (let r = 0; r < request.length; r++) {
      if (dimensionFit(request[r]!, inUse(info, r) + request[r]!, allocatable[r]!) !== 0) return false;
    }
    return true;
  }
}
