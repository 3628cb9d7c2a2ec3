/**
 * The informer side's door to the scheduler cache (CacheUpdates): a full listing (a snapshot file, or a watch's
 * list/relist) is applied as a diff, watch events one by one, each object converted to a compact record as it
 * comes (a ListingReader keeps records, never objects) and applied in O(dimensions) (SchedulerCache upsertPod,
 * deletePod, upsertNode, deleteNode). Pods absent from a listing are deleted, which catches deletions missed
 * during a watch outage. An object that cannot be converted (a bad quantity, no uid) is reported and skipped,
 * keeping what the cache held for it, so one bad object never loses state.
 */
import type { SchedulerCache } from './schedulerCache.js';
import type { Node, Pod } from '../objects/kubeObjects.js';
import {
  podKey,
  toNodeRecord,
  toPodRecord,
  type Dimensions,
  type NodeRecord,
  type PodRecord,
  type PodRecordOptions,
} from '../objects/records.js';

/** Reads the objects of one full listing into records, one object at a time. Never throws for a bad object. */
export class ListingReader {
  readonly nodes: NodeRecord[] = [];
  readonly pods: PodRecord[] = [];
  /** Names and UIDs of objects that could not be read: the cache keeps what it had for them. */
  readonly keptNodes = new Set<string>();
  readonly keptPods = new Set<string>();
  /** One readable line per object skipped. */
  readonly errors: string[] = [];

  constructor(
    private readonly dims: Dimensions,
    private readonly options: PodRecordOptions,
  ) {}

  addNode(node: Node): void {
    try {
      this.nodes.push(toNodeRecord(node, this.dims, this.options.locality));
    } catch (err) {
      const name = node.metadata?.name;
      if (name) this.keptNodes.add(name);
      this.errors.push(`node ${name ?? '<unnamed>'}: ${(err as Error).message}`);
    }
  }

  addPod(pod: Pod): void {
    try {
      this.pods.push(toPodRecord(pod, this.dims, this.options));
    } catch (err) {
      const uid = pod.metadata?.uid;
      if (uid) this.keptPods.add(uid);
      this.errors.push(`pod ${podKey(pod)}: ${(err as Error).message}`);
    }
  }
}

/** A node listing in records: the nodes read, and the names of those that could not be read (kept as they are). */
export type NodeListing = Pick<ListingReader, 'nodes' | 'keptNodes'>;
/** A pod listing in records: the pods read, and the UIDs of those that could not be read (kept as they are). */
export type PodListing = Pick<ListingReader, 'pods' | 'keptPods'>;

/**
 * Changes for a scheduler cache, as records: what a list/watch delivers, on whichever thread it was
 * read (plain data, so they can be posted from a worker thread).
 */
export interface CacheUpdates {
  replaceNodes(listing: NodeListing): void;
  replacePods(listing: PodListing): void;
  upsertNode(record: NodeRecord): void;
  deleteNode(name: string): void;
  upsertPod(record: PodRecord): void;
  deletePod(uid: string): void;
  /** The pod changes given so far are those up to this resourceVersion (after a listing or a watch event). */
  podsAppliedAt(resourceVersion: string): void;
}

/** The CacheUpdates that apply each change to `cache` at once. */
export function cacheUpdates(cache: SchedulerCache): CacheUpdates {
  return {
    replaceNodes: (listing) => replaceNodes(cache, listing),
    replacePods: (listing) => replacePods(cache, listing),
    upsertNode: (record) => cache.upsertNode(record),
    deleteNode: (name) => cache.deleteNode(name),
    upsertPod: (record) => void cache.upsertPod(record),
    deletePod: (uid) => void cache.deletePod(uid),
    podsAppliedAt: (resourceVersion) => cache.podsAppliedAt(resourceVersion),
  };
}

/** Makes the cache's nodes exactly the reader's (plus those it kept). */
function replaceNodes(cache: SchedulerCache, reader: NodeListing): void {
  const seen = new Set(reader.keptNodes);
  for (const node of reader.nodes) {
    seen.add(node.name);
    cache.upsertNode(node);
  }
  for (const name of [...cache.nodeNames()]) if (!seen.has(name)) cache.deleteNode(name);
}

/** Makes the cache's pods exactly the reader's (plus those it kept); reservations of pods never listed stay. */
function replacePods(cache: SchedulerCache, reader: PodListing): void {
  const seen = new Set(reader.keptPods);
  for (const pod of reader.pods) {
    seen.add(pod.uid);
    cache.upsertPod(pod);
  }
  for (const uid of [...cache.podUids()]) if (!seen.has(uid)) cache.deletePod(uid);
}

/** Reads Node and Pod objects into one listing of records (a bad object is reported in `errors`, and what the cache holds for it is kept). */
export function listingOf(
  dims: Dimensions,
  nodes: readonly Node[],
  pods: readonly Pod[],
  options: PodRecordOptions,
): ListingReader {
  const reader = new ListingReader(dims, options);
  for (const node of nodes) reader.addNode(node);
  for (const pod of pods) reader.addPod(pod);
  return reader;
}

/** Applies a full listing of both kinds (a snapshot file, or rank's dump) through `updates`: the nodes, then the pods, as the two lists of cluster mode. */
export function applyListing(updates: CacheUpdates, listing: NodeListing & PodListing): void {
  updates.replaceNodes(listing);
  updates.replacePods(listing);
}
