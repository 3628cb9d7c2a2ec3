/**
 * Bringing the scheduler cache in line with the API server's view: a full listing (a snapshot file, or a
 * watch's list/relist) is applied as a diff, and watch events one by one. Every change goes through
 * the cache's O(dimensions) updates: pods absent from a listing are deleted (releasing their
 * reservations; this is how deletions missed during a watch outage are caught), the others upserted
 * (a pod now bound releases its reservation in the same step), nodes likewise.
 *
 * An object that cannot be converted (a bad quantity, no uid) is reported and skipped; whatever the
 * cache held for it before is kept, so one bad object never loses state.
 */
import type { SchedulerCache } from './schedulerCache.js';
import type { Node, Pod } from './kube.js';
import { podKey, toNodeRecord, toPodRecord, type PodRecordOptions } from './records.js';
import type { Release } from './reservations.js';

export interface SyncResult {
  readonly nodes: number;
  readonly pods: number;
  /** One readable line per object that was skipped. */
  readonly errors: readonly string[];
  /** Reservations released by this sync (bound, moved, deleted, unschedulable). */
  readonly releases: readonly Release[];
}

/** Makes the cache's nodes exactly `nodes`. @returns one line per skipped object. */
export function syncNodes(cache: SchedulerCache, nodes: readonly Node[]): string[] {
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const node of nodes) {
    const name = node.metadata?.name;
    if (name) seen.add(name);
    const error = applyNode(cache, 'MODIFIED', node);
    if (error) errors.push(error);
  }
  for (const name of [...cache.nodeNames()]) if (!seen.has(name)) cache.deleteNode(name);
  return errors;
}

/** Makes the cache's pods exactly `pods` (reservations of pods never listed are kept). */
export function syncPods(cache: SchedulerCache, pods: readonly Pod[], options: PodRecordOptions): { errors: string[]; releases: Release[] } {
  const errors: string[] = [];
  const releases: Release[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    const uid = pod.metadata?.uid;
    if (uid) seen.add(uid);
    const result = applyPod(cache, 'MODIFIED', pod, options);
    if (result.error) errors.push(result.error);
    if (result.release) releases.push(result.release);
  }
  for (const uid of [...cache.podUids()]) {
    if (seen.has(uid)) continue;
    const release = cache.deletePod(uid);
    if (release) releases.push(release);
  }
  return { errors, releases };
}

/** Applies a full listing of both kinds (the snapshot file). Never throws for bad objects. */
export function syncModel(cache: SchedulerCache, nodes: readonly Node[], pods: readonly Pod[], options: PodRecordOptions): SyncResult {
  const nodeErrors = syncNodes(cache, nodes);
  const { errors, releases } = syncPods(cache, pods, options);
  const size = cache.size;
  return { nodes: size.nodes, pods: size.pods, errors: [...nodeErrors, ...errors], releases };
}

/** Applies one watch event for a Node. @returns a readable error if the object was skipped. */
export function applyNode(cache: SchedulerCache, type: 'ADDED' | 'MODIFIED' | 'DELETED', node: Node): string | null {
  const name = node.metadata?.name;
  if (type === 'DELETED') {
    if (name) cache.deleteNode(name);
    return null;
  }
  try {
    cache.upsertNode(toNodeRecord(node, cache.dims));
    return null;
  } catch (err) {
    return `node ${name ?? '<unnamed>'}: ${(err as Error).message}`;
  }
}

/** Applies one watch event for a Pod. Never throws; a skipped object is returned as `error`. */
export function applyPod(cache: SchedulerCache, type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: Pod, options: PodRecordOptions): { release: Release | null; error: string | null } {
  const uid = pod.metadata?.uid;
  if (type === 'DELETED') return { release: uid ? cache.deletePod(uid) : null, error: null };
  try {
    return { release: cache.upsertPod(toPodRecord(pod, cache.dims, options)), error: null };
  } catch (err) {
    return { release: null, error: `pod ${podKey(pod)}: ${(err as Error).message}` };
  }
}
