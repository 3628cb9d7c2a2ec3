/**
 * The reservation ledger: placements decided but not yet visible as a bound pod, keyed by pod UID,
 * each with its own deadline. It is the bookkeeping behind SchedulerCache's assume / finishBinding /
 * forget / expire (see the state diagram in schedulerCache.ts); only the cache uses it, and the cache
 * keeps each node's reserved totals in its NodeInfo.
 *
 * Invariants: at most one reservation per UID; removing an absent UID is a no-op. `put` and `remove`
 * are O(log n): deadlines sit in a binary min-heap, so `takeExpired` costs O(expired · log n) whatever
 * the mix of lifetimes (entries of replaced or released reservations are skipped when they surface).
 */

export type ReleaseReason = 'bound' | 'moved' | 'deleted' | 'unschedulable' | 'expired' | 'unreserved';

export interface Reservation {
  readonly uid: string;
  /** `namespace/name` of the pod, for logs and the debug view. */
  readonly podKey: string;
  readonly nodeName: string;
  /** Request per dimension, scheduler units. */
  readonly request: readonly number[];
  /** When the decision was made (ms since the epoch, caller's clock). */
  readonly reservedAtMs: number;
  /** When it lapses unless released before (ms, same clock). */
  readonly expiresAtMs: number;
  /**
   * The bind verb authorized the pod's Binding to this node (SchedulerCache.startBinding; true as well once
   * bindingFinished): the pod's cycle passed, so no scheduling failure seen from now on releases it.
   */
  readonly bindingStarted: boolean;
  /** The bind verb created the pod's Binding; the reservation now waits for the watch to show it bound. */
  readonly bindingFinished: boolean;
  /** Whether the cache had seen the pod (through the watch or a snapshot) when, or since, it was reserved. */
  readonly podSeen: boolean;
  /** The pod's scheduling failure (PodRecord.schedulingFailure) when it was reserved; a different new one later means this cycle failed (until the bind starts). */
  readonly failureMark: string | null;
}

export interface Release {
  readonly reservation: Reservation;
  readonly reason: ReleaseReason;
}

interface HeapEntry {
  readonly uid: string;
  readonly expiresAtMs: number;
  /** The reservation this entry was pushed for; a stale entry (replaced or released) is skipped. */
  readonly reservation: Reservation;
}

export class ReservationLedger {
  private readonly byUid = new Map<string, Reservation>();
  private readonly heap: HeapEntry[] = [];

  get size(): number {
    return this.byUid.size;
  }

  get(uid: string): Reservation | undefined {
    return this.byUid.get(uid);
  }

  /** Reservations in the order they were last written (oldest first). */
  all(): IterableIterator<Reservation> {
    return this.byUid.values();
  }

  /** Writes the reservation of `reservation.uid`, replacing any earlier one of that UID. @returns the replaced one, if any. */
  put(reservation: Reservation): Reservation | undefined {
    const previous = this.remove(reservation.uid);
    this.byUid.set(reservation.uid, reservation);
    this.push({ uid: reservation.uid, expiresAtMs: reservation.expiresAtMs, reservation });
    return previous;
  }

  /** Removes the reservation of `uid`. @returns it, or undefined when there was none. */
  remove(uid: string): Reservation | undefined {
    const reservation = this.byUid.get(uid);
    if (!reservation) return undefined;
    this.byUid.delete(uid);
    return reservation;
  }

  /** Removes and returns every reservation whose deadline is ≤ `nowMs`, earliest deadline first. */
  takeExpired(nowMs: number): Reservation[] {
    const expired: Reservation[] = [];
    while (this.heap.length > 0 && this.heap[0]!.expiresAtMs <= nowMs) {
      const entry = this.pop();
      if (this.byUid.get(entry.uid) !== entry.reservation) continue; // replaced or released since
      this.remove(entry.uid);
      expired.push(entry.reservation);
    }
    // Stale entries accumulate when reservations are replaced or released long before their deadline:
    // rebuild the heap from the live ones when they outnumber them, so it stays O(live reservations).
    if (this.heap.length > 64 && this.heap.length > 2 * this.byUid.size) this.rebuildHeap();
    return expired;
  }

  private rebuildHeap(): void {
    this.heap.length = 0;
    for (const reservation of this.byUid.values())
      this.push({ uid: reservation.uid, expiresAtMs: reservation.expiresAtMs, reservation });
  }

  private push(entry: HeapEntry): void {
    const heap = this.heap;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.expiresAtMs <= entry.expiresAtMs) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private pop(): HeapEntry {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const right = left + 1;
        const child = right < heap.length && heap[right]!.expiresAtMs < heap[left]!.expiresAtMs ? right : left;
        if (heap[child]!.expiresAtMs >= last.expiresAtMs) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
