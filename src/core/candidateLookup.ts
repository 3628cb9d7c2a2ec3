/**
 * The NodeInfos of a list of candidate names, found with the help of the list before it. kube-scheduler offers
 * each pod the feasible nodes in the order it walks its node tree (Kubernetes v1.36
 * pkg/scheduler/schedule_one.go findNodesThatPassFilters over pkg/scheduler/backend/cache/node_tree.go), so at
 * percentageOfNodesToScore 100 one list is the last one less the nodes its filters dropped, plus the ones that fit
 * again: nearly every name stands where it stood in the last list, or a place or a few before. Comparing a name with
 * the one held at that place costs a few ns; looking it up in the cache's map costs ~80 ns for a fresh
 * 45-character name out of JSON.parse, most of it hashing the name (V8 hashes a string on first use). At 5,000
 * names that is about a third of a Filter call.
 *
 * The memory of the last list holds the NodeInfo objects themselves, so it is valid only while the cache's set of
 * NodeInfos is unchanged (`version`, SchedulerCacheView.nodeSetVersion): their contents change in place. A list
 * unlike the last (a sampled window that moved on) costs one failed comparison or two per name on top of the map.
 */
import type { NodeInfo } from './nodeInfo.js';

export class CandidateLookup {
  private lastNames: string[] = [];
  private lastInfos: (NodeInfo | undefined)[] = [];
  private nextNames: string[] = [];
  private nextInfos: (NodeInfo | undefined)[] = [];
  private lastVersion = NaN;
  /** Whether the last list may be used: the cache's set of NodeInfos has not changed since it was made. */
  private usable = false;
  /** Where in the last list the next name is looked for first. */
  private cursor = 0;
  /** Per NodeInfo id, its place in the list of `placeStamps[id]` (a stamp per list, so nothing is cleared). */
  private places = new Int32Array(16);
  private placeStamps = new Uint32Array(16);
  private stamp = 1;
  private length = 0;

  /**
   * @param lookup the cache's own lookup (its map), for a name the last list does not hold at the expected place.
   * @param version the cache's version of its set of NodeInfos (changes when one is added or dropped).
   */
  constructor(
    private readonly lookup: (name: string) => NodeInfo | undefined,
    private readonly version: () => number,
  ) {}

  /** Starts a new list (forgetting the one being made before it, if it was not finished). */
  begin(): void {
    this.usable = this.version() === this.lastVersion;
    this.cursor = 0;
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
    let found = false;
    if (this.usable) {
      const last = this.lastNames;
      const j = this.cursor;
      if (j < last.length && last[j] === name) {
        info = this.lastInfos[j];
        this.cursor = j + 1;
        found = true;
      } else if (j + 1 < last.length && last[j + 1] === name) {
        // The name before it in the last list was dropped from this one.
        info = this.lastInfos[j + 1];
        this.cursor = j + 2;
        found = true;
      }
    }
    if (!found) {
      info = this.lookup(name);
      // Back in step with the last list after the names it does not have, or after several it had were dropped.
      if (this.usable && info !== undefined && info.id < this.placeStamps.length && this.placeStamps[info.id] === this.stamp - 1) {
        this.cursor = this.places[info.id]! + 1;
      }
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
