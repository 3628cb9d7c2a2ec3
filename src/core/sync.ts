/**
 * Bringing the model in line with a full listing of Nodes and Pods (a snapshot file, or a relist).
 * Only the differences are applied, each through the model's O(dimensions) update: pods absent from
 * the listing are deleted (releasing their reservations), the others upserted (a pod now bound
 * releases its reservation in the same step), nodes likewise.
 *
 * An object that cannot be converted (a bad quantity, no uid) is reported and skipped; whatever the
 * model held for it before is kept, so one bad object never loses state.
 */
import type { ClusterModel } from './clusterModel.js';
import type { Node, Pod } from './kube.js';
import { toNodeRecord, toPodRecord, type PodRecordOptions } from './records.js';
import type { Release } from './reservations.js';

export interface SyncResult {
  readonly nodes: number;
  readonly pods: number;
  /** One readable line per object that was skipped. */
  readonly errors: readonly string[];
  /** Reservations released by this sync (bound, moved, deleted). */
  readonly releases: readonly Release[];
}

/** Applies a full listing to `model`. Never throws for bad objects; see SyncResult.errors. */
export function syncModel(model: ClusterModel, nodes: readonly Node[], pods: readonly Pod[], options: PodRecordOptions): SyncResult {
  const errors: string[] = [];
  const releases: Release[] = [];
  const seenNodes = new Set<string>();
  for (const node of nodes) {
    const name = node.metadata?.name;
    if (name) seenNodes.add(name);
    try {
      model.upsertNode(toNodeRecord(node, model.dims));
    } catch (err) {
      errors.push(`node ${name ?? '<unnamed>'}: ${(err as Error).message}`);
    }
  }
  for (const name of [...model.nodes.keys()]) if (!seenNodes.has(name)) model.deleteNode(name);

  const seenPods = new Set<string>();
  for (const pod of pods) {
    const uid = pod.metadata?.uid;
    if (uid) seenPods.add(uid);
    try {
      const { release } = model.upsertPod(toPodRecord(pod, model.dims, options));
      if (release) releases.push(release);
    } catch (err) {
      errors.push(`pod ${pod.metadata?.namespace ?? 'default'}/${pod.metadata?.name ?? '<unnamed>'}: ${(err as Error).message}`);
    }
  }
  for (const uid of [...model.pods.keys()]) {
    if (seenPods.has(uid)) continue;
    const { release } = model.deletePod(uid);
    if (release) releases.push(release);
  }
  return { nodes: model.nodes.size, pods: model.pods.size, errors, releases };
}
