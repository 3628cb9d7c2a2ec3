/**
 * The read-only view of the scheduler cache (schedulerCache.ts): what the HTTP edge, the CLI, the debug view,
 * the metrics and the requeue read, while the cache changes only through its two doors, PlacementService and
 * CacheUpdates (sync.ts); the fence: docs/architecture.md#folders. The view is the cache object typed as this
 * interface, so nothing is copied or allocated to read through it; its NodeInfo and pod records are the cache's
 * own, read-only, valid until the next change. The facts the cache reports to its listeners (CapacityFreed) are
 * defined here too.
 */
import type { LocalityView } from '../objects/templateLocality.js';
import type { NodeInfo } from './nodeInfo.js';
import type { Dimensions, PodRecord } from '../objects/records.js';
import type { Reservation, ReleaseReason } from './reservations.js';

/**
 * What freed capacity on a node: the cache's transition (the table in docs/cluster-mode.md#what-frees-capacity-and-what-kube-scheduler-sees-of-it). A pod
 * record counting less (`pod-updated`; `pod-started` when all it frees is a start slot) or gone (`pod-deleted`); a reservation released (its
 * ReleaseReason); a reservation replaced by assume (`reassumed`), by startBinding (`binding-started`) or by
 * finishBinding (`binding-finished`);
 * a Node object that appeared or whose allocatable grew in some dimension (`node-added`, `node-grown`).
 */
export type FreedCause =
  | 'pod-deleted'
  | 'pod-updated'
  | 'pod-started'
  | 'reassumed'
  | 'binding-started'
  | 'binding-finished'
  | 'node-added'
  | 'node-grown'
  | ReleaseReason;

/** Capacity freed on `nodeName` by `cause`. */
export interface CapacityFreed {
  readonly nodeName: string;
  readonly cause: FreedCause;
  /** pod-deleted and pod-updated: the pod record was in a terminal phase (PodRecord.terminal); false for every other cause. */
  readonly podTerminal: boolean;
}

/** Counts of Node objects, pod records and reservations held. */
export interface CacheSize {
  readonly nodes: number;
  readonly pods: number;
  readonly reservations: number;
}

export interface SchedulerCacheView {
  /** The resource dimensions of every vector (requests, allocatable, totals). */
  readonly dims: Dimensions;
  readonly size: CacheSize;
  /** Every NodeInfo id is below this bound (ids are dense and never reused). */
  readonly nodeIdBound: number;
  /** Changes whenever a NodeInfo is added or dropped (never when one changes in place): a NodeInfo held since is still the cache's. */
  readonly nodeSetVersion: number;
  /** The NodeInfo of `name`, if the cache knows anything of it (a Node object, bound pods or reservations). */
  nodeInfo(name: string): NodeInfo | undefined;
  /** Every NodeInfo, in no particular order. */
  nodeInfos(): IterableIterator<NodeInfo>;
  /** Whether a Node object named `name` is in the cache. */
  hasNode(name: string): boolean;
  /** Names of the Node objects in the cache. */
  nodeNames(): IterableIterator<string>;
  /** The record of the pod of `uid`, if the cache holds it. */
  pod(uid: string): PodRecord | undefined;
  /** UIDs of the pod records held. */
  podUids(): IterableIterator<string>;
  /** The reservation held for pod `uid`, if any. */
  reservation(uid: string): Reservation | undefined;
  /** Reservations, oldest write first. */
  reservations(): IterableIterator<Reservation>;
  /** Whether the cache saw the pod of `uid` deleted (among its most recent deletions). */
  wasDeleted(uid: string): boolean;
  /** Template locality (templateLocality.ts: node images, templates started recently), read-only; null when it is off. */
  readonly locality: LocalityView | null;
  /**
   * The resourceVersion of the last pod listing or pod watch event applied (cluster mode; '' before the
   * first): the model holds every pod change up to it and none after it (SchedulerCache.podsResourceVersion).
   */
  readonly podsResourceVersion: string;
}
