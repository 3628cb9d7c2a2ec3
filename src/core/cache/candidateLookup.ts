/**
 * The NodeInfos of a list of candidate names, found with the help of the list before it. kube-scheduler offers
 * each pod the feasible nodes of its node tree (Kubernetes v1.36 pkg/scheduler/schedule_one.go
 * findNodesThatPassFilters: chunks of consecutive nodes filtered in parallel, each node that passes appended), so
 * one list holds nearly the names of the last in nearly its order, as interleaved runs. Comparing names near where
 * the last list held them is far cheaper than the map for names fresh from JSON.parse
 * (docs/benchmarks.md#in-process); whatever the order, every answer is the map's.
 */
import type { NodeInfo } from './nodeInfo.js';

/** How many places past a cursor a name is looked for (nodes dropped from the list since the last one). */
const LOOKAHEAD = 3;
/** Misses beyond the hits after which a list stops being compared with the last one (a list unlike it). */
const GIVE_UP_AFTER = 32;

/**
 * Two cursors follow two runs at once, each looking LOOKAHEAD places ahead; a name not found there is looked up in
 * the map, and the cursor moves to that name's place in the last list. A list unlike the last (a sampled window that
 * moved on, filters on many cores interleaving many runs) stops being compared once it has missed GIVE_UP_AFTER
 * more times than it has hit, so it costs about the map's price. The last list holds the NodeInfo objects
 * themselves, so it is used only while the cache's set of NodeInfos is unchanged (`version`,
 * SchedulerCacheView.nodeSetVersion): their contents change in place.
 */
export class CandidateLookup {
  private lastNames: string[] = [];
  private lastInfos: (NodeInfo | undefined)[] = [];
  private nextNames: string[] = [];
  private nextInfos: (NodeInfo | undefined)[] = [];
  private lastVersion = NaN;
  /** Whether this list is compared with the last one: the cache's NodeInfos are the same, and it has not given up. */
  private comparing = false;
  /**
   * Where in the last list the next name is looked for first, and where the other run of names was: kube-scheduler
   * filters nodes in parallel (a chunk of the node tree each), so a list interleaves runs of consecutive nodes.
   */
  private cursor = 0;
  private otherCursor = 0;
  /** Hits minus misses of this list, floored at −GIVE_UP_AFTER: comparing stops there. */
  private balance = 0;
  /** Per NodeInfo id, its place in the list of `placeStamps[id]` (a stamp per list, so nothing is cleared). */
  private places = new Int32Array(16);
  private placeStamps = new Uint32Array(16);
  private stamp = 1;
  private length = 0;

  /**
   * @param lookup the cache's own lookup (its map), for a name the last list does not hold where expected.
   * @param version the cache's version of its set of NodeInfos (changes when one is added or dropped).
   */
  constructor(
    private readonly lookup: (name: string) => NodeInfo | undefined,
    private readonly version: () => number,
  ) {}

  /** Starts a new list (forgetting the one being made before it, if it was not finished). */
  begin(): void {
    this.comparing = this.version() === this.lastVersion;
    this.cursor = 0;
    this.otherCursor = 0;
    this.balance = 0;
    this.length = 0;
    if (++this.stamp === 0xffffffff) {
      this.placeStamps.fill(0);
      this.stamp = 2;
    }
  }

  /**
   * The NodeInfo of the list's next name (the names of one list are given in order, from 0), or undefined when the
   * cache knows nothing of it: exactly what the cache's lookup answers. O(1), nothing allocated once the buffers
   * are grown to the list's length.
   */
  next(name: string): NodeInfo | undefined {
    let info: NodeInfo | undefined;
    const at = this.comparing ? this.find(name) : -1;
    if (at >= 0) {
      info = this.lastInfos[at];
      this.balance++;
    } else {
      info = this.lookup(name);
      if (this.comparing) this.missed(info);
    }
    this.remember(name, info);
    return info;
  }

  /** Ends the list: it becomes the last list, for the next one. */
  end(): void {
    const names = this.lastNames;
    const infos = this.lastInfos;
    this.lastNames = this.nextNames;
    this.lastInfos = this.nextInfos;
    this.lastNames.length = this.length;
    this.lastInfos.length = this.length;
    this.nextNames = names;
    this.nextInfos = infos;
    this.lastVersion = this.version();
  }

  /** The place of `name` in the last list within LOOKAHEAD of either cursor (moving that cursor past it), or −1. */
  private find(name: string): number {
    const last = this.lastNames;
    for (let pass = 0; pass < 2; pass++) {
      const from = pass === 0 ? this.cursor : this.otherCursor;
      const to = Math.min(from + LOOKAHEAD, last.length);
      for (let j = from; j < to; j++) {
        if (last[j] !== name) continue;
        if (pass === 1) this.otherCursor = this.cursor;
        this.cursor = j + 1;
        return j;
      }
    }
    return -1;
  }

  /** After a name the cursors did not find: back in step with the last list at that name's place, if it has one. */
  private missed(info: NodeInfo | undefined): void {
    if (--this.balance <= -GIVE_UP_AFTER) {
      this.comparing = false;
      return;
    }
    if (info !== undefined && info.id < this.placeStamps.length && this.placeStamps[info.id] === this.stamp - 1) {
      this.otherCursor = this.cursor;
      this.cursor = this.places[info.id]! + 1;
    }
  }

  private remember(name: string, info: NodeInfo | undefined): void {
    const k = this.length++;
    this.nextNames[k] = name;
    this.nextInfos[k] = info;
    if (info === undefined) return;
    const id = info.id;
    if (id >= this.places.length) {
      const size = Math.max(id + 1, 2 * this.places.length);
      const places = new Int32Array(size);
      places.set(this.places);
      this.places = places;
      const stamps = new Uint32Array(size);
      stamps.set(this.placeStamps);
      this.placeStamps = stamps;
    }
    this.places[id] = k;
    this.placeStamps[id] = this.stamp;
  }
}
