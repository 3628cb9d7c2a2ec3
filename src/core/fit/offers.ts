/**
 * What kube-scheduler offered: for each pod UID the extender answered a Filter or Prioritize for,
 * the set of candidate nodes in that request (a bitset over NodeInfo ids), so that the bind verb
 * carries out only what kube-scheduler just decided (see PlacementService.authorizeBind).
 * Bounded: entries older than `ttlMs` are ignored, and at most `maxEntries` are kept (oldest dropped).
 */

export interface Offer {
  /** Bit id of every candidate node the cache knew (NodeInfo.id). */
  readonly offered: Uint32Array;
  /** When the request was answered (ms, caller's clock). */
  readonly atMs: number;
  /** The extender's own pod (placed by it), or another scheduler's (passed through). */
  readonly own: boolean;
  /** The pod's request vector (own pods), to check a node's fit at bind time. */
  readonly request: readonly number[] | null;
}

/** An empty bitset able to hold ids below `idBound`. */
export function emptyOfferSet(idBound: number): Uint32Array {
  return new Uint32Array((idBound + 31) >>> 5);
}

/** Adds `id` to the set. */
export function addToOfferSet(offered: Uint32Array, id: number): void {
  offered[id >>> 5]! |= 1 << (id & 31);
}

export function offerIncludes(offered: Uint32Array, id: number): boolean {
  const word = id >>> 5;
  return word < offered.length && (offered[word]! & (1 << (id & 31))) !== 0;
}

export class OfferLog {
  private readonly byUid = new Map<string, Offer>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get size(): number {
    return this.byUid.size;
  }

  record(uid: string, offer: Offer): void {
    this.byUid.delete(uid);
    this.byUid.set(uid, offer);
    if (this.byUid.size > this.maxEntries) this.byUid.delete(this.byUid.keys().next().value!);
  }

  /** The offer answered for `uid` within the TTL, if any. */
  get(uid: string, nowMs: number): Offer | undefined {
    const offer = this.byUid.get(uid);
    return offer !== undefined && nowMs - offer.atMs < this.ttlMs ? offer : undefined;
  }
}
