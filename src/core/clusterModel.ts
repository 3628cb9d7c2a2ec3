/**
 * The incremental cluster model: node capacity, per-node totals of the pods bound there, and the
 * reservation ledger. Every change (a pod or node added, updated or deleted) updates the totals in
 * O(dimensions); nothing is recomputed per request, so the same model can be fed by a snapshot file
 * diff or by API watches up to Kubernetes' limits (5,000 nodes, 150,000 pods).
 *
 * Node totals, per dimension r (scheduler units):
 *   allocated_r = Σ request_r of pods bound to the node in state starting or running
 *   paused_r    = Σ request_r of pods bound to the node in state paused (whatever their phase)
 *   reserved_r  = Σ request_r of the reservations held on the node (see reservations.ts)
 * plus the counts of starting, running and paused sandboxes. Totals are kept by node *name*, so
 * pods bound to a node the model has not seen yet are counted and show up once the node arrives.
 */
import type { Dimensions, NodeRecord, PodRecord } from './records.js';
import { ReservationLedger, type Release, type Reservation } from './reservations.js';

/** Totals of the pods bound to one node (see the module header). */
export interface NodeTotals {
  readonly allocated: readonly number[];
  readonly paused: readonly number[];
  readonly starting: number;
  readonly running: number;
  readonly pausedCount: number;
}

interface MutableTotals {
  allocated: number[];
  paused: number[];
  starting: number;
  running: number;
  pausedCount: number;
}

/** What a caller learns from applying a pod change. */
export interface PodChange {
  /** Reservation released by this change (pod seen bound, moved or deleted), if any. */
  readonly release: Release | null;
}

export class ClusterModel {
  readonly nodes = new Map<string, NodeRecord>();
  readonly pods = new Map<string, PodRecord>();
  readonly ledger: ReservationLedger;
  private readonly totals = new Map<string, MutableTotals>();
  private readonly zero: NodeTotals;

  /** Called for every reservation released (bound, moved, deleted, expired), e.g. to count it. */
  onRelease: (release: Release) => void = () => {};

  /** @param ttlMs placementReservationTtl in milliseconds. */
  constructor(readonly dims: Dimensions, ttlMs: number) {
    this.ledger = new ReservationLedger(dims.names.length, ttlMs);
    const zeros = new Array<number>(dims.names.length).fill(0);
    this.zero = { allocated: zeros, paused: zeros, starting: 0, running: 0, pausedCount: 0 };
  }

  upsertNode(node: NodeRecord): void {
    this.nodes.set(node.name, node);
  }

  /** Forgets a node's capacity; pods still bound to it keep counting under its name. */
  deleteNode(name: string): void {
    this.nodes.delete(name);
  }

  /** Totals of the pods bound to `nodeName` (a shared zero record when none; do not mutate). */
  totalsOf(nodeName: string): NodeTotals {
    return this.totals.get(nodeName) ?? this.zero;
  }

  /**
   * Adds or replaces a pod. When the pod is seen bound, its reservation (if any) is released in the
   * same call, as `bound` or `moved`, so its requests move from `reserved` to `allocated` at once.
   * When an unbound pod shows a scheduling failure other than the one it had when reserved,
   * kube-scheduler has given up on that cycle: the reservation is released as `unschedulable`.
   * Any other update (labels, status) leaves the reservation and its age as they are.
   */
  upsertPod(pod: PodRecord): PodChange {
    const previous = this.pods.get(pod.uid);
    if (previous) this.account(previous, -1);
    this.pods.set(pod.uid, pod);
    this.account(pod, +1);
    const release = pod.nodeName ? this.ledger.confirm(pod.uid, pod.nodeName) : this.releaseIfFailed(pod);
    if (release) this.onRelease(release);
    return { release };
  }

  private releaseIfFailed(pod: PodRecord): Release | null {
    const reservation = this.ledger.get(pod.uid);
    if (!reservation || pod.schedulingFailure === null || pod.schedulingFailure === reservation.failureMark) return null;
    return this.ledger.forget(pod.uid, 'unschedulable');
  }

  /** Removes a pod (deleted, or absent from a new snapshot) and releases its reservation. */
  deletePod(uid: string): PodChange {
    const previous = this.pods.get(uid);
    if (previous) {
      this.account(previous, -1);
      this.pods.delete(uid);
    }
    const release = this.ledger.forget(uid, 'deleted');
    if (release) this.onRelease(release);
    return { release };
  }

  /**
   * Records a placement decision for `pod` on `nodeName` at `nowMs`. Skipped (returns false) when
   * the model already sees the pod bound: its requests count through the pod then.
   */
  reserve(pod: Pick<PodRecord, 'uid' | 'key' | 'request'> & Partial<Pick<PodRecord, 'schedulingFailure'>>, nodeName: string, nowMs: number): boolean {
    if (this.pods.get(pod.uid)?.nodeName) return false;
    this.ledger.reserve(pod.uid, pod.key, nodeName, pod.request, nowMs, pod.schedulingFailure ?? null);
    return true;
  }

  /** Releases reservations older than the TTL. */
  expire(nowMs: number): Release[] {
    const released = this.ledger.expire(nowMs);
    for (const release of released) this.onRelease(release);
    return released;
  }

  /** Reservation held for `uid`, if any. */
  reservationOf(uid: string): Reservation | undefined {
    return this.ledger.get(uid);
  }

  private account(pod: PodRecord, sign: 1 | -1): void {
    if (!pod.nodeName || pod.state === 'pending' || pod.state === 'inactive') return;
    let totals = this.totals.get(pod.nodeName);
    if (!totals) {
      const n = this.dims.names.length;
      totals = { allocated: new Array<number>(n).fill(0), paused: new Array<number>(n).fill(0), starting: 0, running: 0, pausedCount: 0 };
      this.totals.set(pod.nodeName, totals);
    }
    const target = pod.state === 'paused' ? totals.paused : totals.allocated;
    for (let i = 0; i < pod.request.length; i++) target[i]! += sign * pod.request[i]!;
    if (pod.state === 'starting') totals.starting += sign;
    else if (pod.state === 'running') totals.running += sign;
    else totals.pausedCount += sign;
  }
}
