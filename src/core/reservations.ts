/**
 * The reservation ledger: placements decided but not yet visible as a bound pod.
 *
 * kube-scheduler assumes a pod on its chosen node at once and binds it asynchronously; the
 * extender's view (a snapshot file, later an API watch) shows the binding only later. Until then
 * the decision is held here, keyed by pod UID, so that the next decision already sees it: a
 * reservation adds its pod's request to its node's `reserved` total and counts as one starting
 * sandbox there. This mirrors kube-scheduler's assume cache (pkg/scheduler/backend/cache:
 * AssumePod / FinishBinding / ForgetPod / expiry), with the clock passed in as `now` (ms).
 *
 * States and transitions of one pod UID:
 *
 *                 reserve(uid, node)                      confirm(uid, node)        release reason
 *     (absent) ───────────────────────► Reserved ───────────────────────────────►  bound   (same node)
 *        ▲                              │   │  ▲                                  moved   (other node)
 *        │                              │   │  └── reserve(uid, node') again:
 *        │                              │   │      replaces the entry (new node, new age), never doubles it
 *        │                              │   ├── forget(uid)            ─────────►  deleted (pod gone)
 *        │                              │   ├── forget(uid, reason)    ─────────►  unschedulable (the cycle
 *        │                              │   │       failed: the pod shows a scheduling failure other than
 *        │                              │   │       `failureMark`, the one it had when reserved)
 *        │                              │   └── expire(now), age ≥ ttl ─────────►  expired
 *        └──────────────────────────────┴── (every release returns the UID to absent)
 *
 * Invariants: at most one reservation per UID; `reservedOn(node)` always equals the sum of the
 * requests of the reservations on that node; release is idempotent (releasing an absent UID is a
 * no-op that returns null). All operations are O(dimensions), `expire` is O(expired): entries are
 * kept in reservation order (a replaced entry moves to the end), so the oldest are at the front.
 */

export type ReleaseReason = 'bound' | 'moved' | 'deleted' | 'unschedulable' | 'expired';

export interface Reservation {
  readonly uid: string;
  /** `namespace/name` of the pod, for logs and the debug view. */
  readonly podKey: string;
  readonly nodeName: string;
  /** Request per dimension, scheduler units. */
  readonly request: readonly number[];
  /** When the decision was made (ms since the epoch, caller's clock). */
  readonly reservedAtMs: number;
  /** The pod's scheduling failure (PodRecord.schedulingFailure) when it was reserved; a different one later means this cycle failed. */
  readonly failureMark: string | null;
}

export interface Release {
  readonly reservation: Reservation;
  readonly reason: ReleaseReason;
}

/** Totals of the reservations on one node. */
export interface NodeReservations {
  readonly request: readonly number[];
  readonly count: number;
}

interface MutableTotals {
  request: number[];
  count: number;
}

export class ReservationLedger {
  private readonly byUid = new Map<string, Reservation>();
  private readonly byNode = new Map<string, MutableTotals>();
  private readonly empty: NodeReservations;

  /**
   * @param dimensionCount length of every request vector.
   * @param ttlMs reservation lifetime (placementReservationTtl); must be > 0.
   */
  constructor(private readonly dimensionCount: number, readonly ttlMs: number) {
    if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be > 0, got ${ttlMs}`);
    this.empty = { request: new Array<number>(dimensionCount).fill(0), count: 0 };
  }

  get size(): number {
    return this.byUid.size;
  }

  get(uid: string): Reservation | undefined {
    return this.byUid.get(uid);
  }

  /** Reservations in the order they were made (oldest first). */
  all(): IterableIterator<Reservation> {
    return this.byUid.values();
  }

  /** Totals reserved on `nodeName` (a shared zero vector when there are none; do not mutate). */
  reservedOn(nodeName: string): NodeReservations {
    return this.byNode.get(nodeName) ?? this.empty;
  }

  /**
   * Reserves `request` on `nodeName` for pod `uid`, replacing any earlier reservation of that UID.
   * @returns the replaced reservation, if any.
   */
  reserve(uid: string, podKey: string, nodeName: string, request: readonly number[], nowMs: number, failureMark: string | null = null): Reservation | undefined {
    if (request.length !== this.dimensionCount) {
      throw new RangeError(`request has ${request.length} dimensions, expected ${this.dimensionCount}`);
    }
    const previous = this.remove(uid);
    const reservation: Reservation = { uid, podKey, nodeName, request: [...request], reservedAtMs: nowMs, failureMark };
    this.byUid.set(uid, reservation);
    this.add(nodeName, reservation.request, +1);
    return previous;
  }

  /**
   * The pod is now seen bound to `boundNode`: its requests count through the pod from now on, so the
   * reservation goes (`bound`, or `moved` if it was held on another node). Call it in the same update
   * that adds the bound pod to the node totals, so there is neither a gap nor a double count.
   */
  confirm(uid: string, boundNode: string): Release | null {
    const reservation = this.remove(uid);
    if (!reservation) return null;
    return { reservation, reason: reservation.nodeName === boundNode ? 'bound' : 'moved' };
  }

  /** Releases the reservation of `uid` (pod deleted by default). Idempotent. */
  forget(uid: string, reason: ReleaseReason = 'deleted'): Release | null {
    const reservation = this.remove(uid);
    return reservation ? { reservation, reason } : null;
  }

  /** Releases every reservation whose age is ≥ ttl at `nowMs`, oldest first. */
  expire(nowMs: number): Release[] {
    const released: Release[] = [];
    for (const reservation of this.byUid.values()) {
      if (nowMs - reservation.reservedAtMs < this.ttlMs) break;
      this.remove(reservation.uid);
      released.push({ reservation, reason: 'expired' });
    }
    return released;
  }

  private remove(uid: string): Reservation | undefined {
    const reservation = this.byUid.get(uid);
    if (!reservation) return undefined;
    this.byUid.delete(uid);
    this.add(reservation.nodeName, reservation.request, -1);
    return reservation;
  }

  private add(nodeName: string, request: readonly number[], sign: 1 | -1): void {
    let totals = this.byNode.get(nodeName);
    if (!totals) {
      totals = { request: new Array<number>(this.dimensionCount).fill(0), count: 0 };
      this.byNode.set(nodeName, totals);
    }
    for (let i = 0; i < request.length; i++) totals.request[i]! += sign * request[i]!;
    totals.count += sign;
    if (totals.count === 0) this.byNode.delete(nodeName);
  }
}
