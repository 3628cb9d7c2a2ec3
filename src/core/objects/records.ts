/**
 * Compact records the model keeps instead of whole Kubernetes objects: a *sandbox hint* per pod
 * (its effective request and sandbox state) and a capacity record per node.
 *
 * Vectors are plain `number[]` indexed like `Dimensions.names`, in scheduler units: cpu in
 * millicores, memory and ephemeral-storage in bytes, `pods` and extended resources in counts.
 */
import { agentSandboxKind, type AgentSandboxKind } from './agentSandboxPods.js';
import type { Node, Pod } from './kubeObjects.js';
import {
  localityKey as templateKey,
  nodeImages,
  podImages,
  type LocalityRecordOptions,
  type NodeImage,
} from './templateLocality.js';
import { nodeAllocatableExact, podRequestOptions, podRequestsExact, schedulerAmount } from './podRequests.js';

/** The resource dimensions that pressure and the capacity filter look at, in a fixed order. */
export interface Dimensions {
  readonly names: readonly string[];
}

/** The `pods` dimension is a count: every pod requests exactly one pod slot. */
export const PODS_RESOURCE = 'pods';

/**
 * Lifecycle of a pod as the placement model sees it.
 * - `pending`: not bound to a node yet (and not paused): counts nothing; reservations cover it.
 * - `starting`: bound, not terminal, not Ready.
 * - `running`: bound, not terminal, Ready.
 * - `paused`: carries the paused label; its requests count as paused allocation on its node,
 *   whatever its phase, while the pod object exists.
 * - `inactive`: terminal (Succeeded/Failed) and not paused: counts nothing.
 */
export type SandboxState = 'pending' | 'starting' | 'running' | 'paused' | 'inactive';

export interface PodRecord {
  readonly uid: string;
  /** `namespace/name`, for logs and reasons. */
  readonly key: string;
  readonly nodeName: string | null;
  readonly schedulerName: string;
  /** Effective request per dimension (scheduler units). */
  readonly request: readonly number[];
  readonly state: SandboxState;
  /**
   * The pod's phase is Succeeded or Failed. kube-scheduler does not watch such pods at all (its pod
   * informer selects `status.phase!=Succeeded,status.phase!=Failed`; Kubernetes v1.36
   * pkg/scheduler/scheduler.go: newPodInformer), so what frees when a terminal paused pod goes away
   * or loses its paused label is invisible to it (see rejections.ts seenByScheduler).
   */
  readonly terminal: boolean;
  /**
   * For an unbound pod, kube-scheduler's last scheduling failure as `reason: message` of its
   * `PodScheduled=False` condition (e.g. `Unschedulable: 0/3 nodes are available: …`), else null.
   * A new value after a reservation means the cycle that made it failed (see SchedulerCache.upsertPod).
   */
  readonly schedulingFailure: string | null;
  /**
   * Locality on: the pod's template key (templateLocality.ts localityKey: the template label's value, else
   * its images); null when it has neither. Absent when locality is off.
   */
  readonly localityKey?: string | null;
  /** The pod's images (templateLocality.ts podImages), only in the record of a pod being placed (PodRecordOptions.withImages). */
  readonly images?: readonly string[];
  /**
   * The kind of agent-sandbox pod it is (agentSandboxPods.ts: a Sandbox owns it; warm pool, claimed or
   * standalone); null or absent for a pod of any other origin. Counted per node, never ranked on.
   */
  readonly agentSandbox?: AgentSandboxKind | null;
}

export interface NodeRecord {
  readonly name: string;
  /** Allocatable per dimension (scheduler units), or null when the node's capacity is unknown. */
  readonly allocatable: readonly number[] | null;
  /** Locality on: status.images, at most maxImagesPerNode, the largest first (templateLocality.ts nodeImages). Absent when off. */
  readonly images?: readonly NodeImage[];
}

export interface PodRecordOptions {
  /** Label key that marks a paused sandbox (value must be exactly "true"). */
  readonly pausedLabel: string;
  /** Locality on: records carry the pod's template key and the node's images; absent: off. */
  readonly locality?: LocalityRecordOptions | undefined;
  /** Also keep the pod's images (the pod being placed; records the cache stores leave them out). */
  readonly withImages?: boolean;
}

/** Thrown when an object lacks a field the model needs (e.g. a Pod without metadata.uid). */
export class ObjectError extends Error {
  override readonly name = 'ObjectError';
}

const TERMINAL_PHASES = new Set(['Succeeded', 'Failed']);

/**
 * The sandbox state of a pod (see {@link SandboxState}).
 * Ready is the pod condition `Ready=True`, as kubelet (or KWOK) reports it.
 */
export function sandboxState(pod: Pod, pausedLabel: string): SandboxState {
  if (pod.metadata?.labels?.[pausedLabel] === 'true') return pod.spec?.nodeName ? 'paused' : 'pending';
  if (TERMINAL_PHASES.has(pod.status?.phase ?? '')) return 'inactive';
  if (!pod.spec?.nodeName) return 'pending';
  const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  return ready ? 'running' : 'starting';
}

/**
 * Effective request of `pod` per dimension; `pods` is always 1. Only the tracked dimensions are
 * converted to scheduler units (see {@link schedulerAmount}). A pod with `spec.nodeName` is counted as
 * kube-scheduler counts the pods on a node (status resources, in-place resize at container and pod level),
 * one without as it counts the pod being scheduled (spec only): see {@link podRequestOptions}.
 * Throws QuantityError on a bad quantity.
 */
export function requestVector(pod: Pod, dims: Dimensions): number[] {
  const requests = podRequestsExact(pod, podRequestOptions(pod));
  return dims.names.map((name) => (name === PODS_RESOURCE ? 1 : schedulerAmount(name, requests.get(name) ?? 0n)));
}

/**
 * Builds the compact record of a pod.
 * @throws ObjectError when metadata.uid or metadata.name is missing.
 * @throws QuantityError when a request, overhead or pod-level quantity is invalid.
 */
export function toPodRecord(pod: Pod, dims: Dimensions, options: PodRecordOptions): PodRecord {
  const meta = pod.metadata;
  if (!meta?.uid) throw new ObjectError(`pod ${podKey(pod)} has no metadata.uid`);
  if (!meta.name) throw new ObjectError('pod has no metadata.name');
  const uid = meta.uid;
  const key = podKey(pod);
  const nodeName = pod.spec?.nodeName || null;
  const schedulerName = pod.spec?.schedulerName || 'default-scheduler';
  const request = requestVector(pod, dims);
  const state = sandboxState(pod, options.pausedLabel);
  const terminal = TERMINAL_PHASES.has(pod.status?.phase ?? '');
  const failure = schedulingFailure(pod);
  const agentSandbox = agentSandboxKind(pod);
  if (!options.locality)
    return { uid, key, nodeName, schedulerName, request, state, terminal, schedulingFailure: failure, agentSandbox };
  // One literal each (no spread): the cache keeps 150,000 of these.
  const localityKey = templateKey(pod, options.locality.templateLabel);
  if (options.withImages)
    return {
      uid,
      key,
      nodeName,
      schedulerName,
      request,
      state,
      terminal,
      schedulingFailure: failure,
      agentSandbox,
      localityKey,
      images: podImages(pod),
    };
  return {
    uid,
    key,
    nodeName,
    schedulerName,
    request,
    state,
    terminal,
    schedulingFailure: failure,
    agentSandbox,
    localityKey,
  };
}

/** `reason: message` of an unbound pod's `PodScheduled=False` condition, or null. */
export function schedulingFailure(pod: Pod): string | null {
  if (pod.spec?.nodeName) return null;
  const condition = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  return condition ? `${condition.reason ?? ''}: ${condition.message ?? ''}` : null;
}

/** `namespace/name` of a pod (namespace defaults to `default`). */
export function podKey(pod: Pod): string {
  return `${pod.metadata?.namespace || 'default'}/${pod.metadata?.name ?? '<unnamed>'}`;
}

/**
 * Builds the capacity record of a node from `status.allocatable`, and with `locality` its
 * status.images (bounded: templateLocality.ts nodeImages).
 * Capacity is unknown (null) when allocatable is missing or zero in every dimension.
 * @throws ObjectError when metadata.name is missing; QuantityError on a bad quantity.
 */
export function toNodeRecord(node: Node, dims: Dimensions, locality?: LocalityRecordOptions): NodeRecord {
  const name = node.metadata?.name;
  if (!name) throw new ObjectError('node has no metadata.name');
  const images = locality ? { images: nodeImages(node, locality.maxImagesPerNode) } : {};
  const allocatable = nodeAllocatableExact(node);
  if (!allocatable) return { name, allocatable: null, ...images };
  // Only the tracked dimensions are converted: an untracked resource too large for exact
  // arithmetic (say 9Pi of ephemeral-storage) must not make the node unusable.
  const vector = dims.names.map((d) => schedulerAmount(d, allocatable.get(d) ?? 0n));
  return { name, allocatable: vector.some((v) => v > 0) ? vector : null, ...images };
}
