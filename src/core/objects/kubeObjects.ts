/**
 * The minimal structural shapes of Kubernetes objects that the pure core reads.
 *
 * These are subsets of the core/v1 `Pod` and `Node` JSON (camelCase, as the API server and
 * `kubectl get -o json` print them). Every field is optional because real objects omit what is
 * unset; the core validates what it needs and throws a descriptive error otherwise. The core never
 * imports `@kubernetes/client-node`: its `V1Pod`/`V1Node` are structurally compatible with these.
 */

/** A `ResourceList`: resource name → Quantity string (e.g. `{"cpu": "3920m", "memory": "15991868Ki"}`). */
export type ResourceList = Readonly<Record<string, unknown>>;

export interface ResourceRequirements {
  readonly requests?: ResourceList | null;
  readonly limits?: ResourceList | null;
}

export interface Container {
  readonly name?: string;
  readonly resources?: ResourceRequirements | null;
  /** `Always` marks a restartable ("sidecar") init container (KEP-753). */
  readonly restartPolicy?: string | null;
}

export interface ObjectMeta {
  readonly name?: string;
  readonly namespace?: string;
  readonly uid?: string;
  /** Opaque version of the object in the API server (a watch event's object carries the version of that change). */
  readonly resourceVersion?: string;
  readonly labels?: Readonly<Record<string, string>> | null;
  readonly annotations?: Readonly<Record<string, string>> | null;
  readonly deletionTimestamp?: string | null;
  /** Objects this one belongs to (a pod of agent-sandbox: its Sandbox). Read defensively: the wire does not check their shape. */
  readonly ownerReferences?: readonly OwnerReference[] | null;
}

/** meta/v1 OwnerReference. */
export interface OwnerReference {
  readonly apiVersion?: string | null;
  readonly kind?: string | null;
  readonly name?: string | null;
  readonly uid?: string | null;
  /** The managing controller (at most one per object). */
  readonly controller?: boolean | null;
}

export interface PodCondition {
  readonly type?: string;
  readonly status?: string;
  readonly reason?: string;
  readonly message?: string;
  readonly lastTransitionTime?: string | null;
}

export interface Pod {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta | null;
  readonly spec?: {
    readonly nodeName?: string | null;
    readonly schedulerName?: string | null;
    readonly containers?: readonly Container[] | null;
    readonly initContainers?: readonly Container[] | null;
    readonly overhead?: ResourceList | null;
    /** Pod-level resources (PodLevelResources, beta and on by default since 1.34). */
    readonly resources?: ResourceRequirements | null;
    readonly tolerations?: readonly Toleration[] | null;
    readonly nodeSelector?: Readonly<Record<string, string>> | null;
    readonly affinity?: Affinity | null;
  } | null;
  readonly status?: {
    readonly phase?: string | null;
    readonly conditions?: readonly PodCondition[] | null;
    readonly containerStatuses?: readonly ContainerStatus[] | null;
    readonly initContainerStatuses?: readonly ContainerStatus[] | null;
    /** Pod-level actuated resources (pod-level in-place resize, InPlacePodLevelResourcesVerticalScaling). */
    readonly resources?: ResourceRequirements | null;
    /** Pod-level resources the kubelet admitted. */
    readonly allocatedResources?: ResourceList | null;
  } | null;
}

/** What the kubelet reports of a container's resources (in-place resize, InPlacePodVerticalScaling). */
export interface ContainerStatus {
  readonly name?: string;
  /** Actuated: what the runtime applied. */
  readonly resources?: ResourceRequirements | null;
  /** Allocated: what the kubelet admitted. */
  readonly allocatedResources?: ResourceList | null;
}

export interface Node {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: ObjectMeta | null;
  readonly spec?: { readonly unschedulable?: boolean | null; readonly taints?: readonly Taint[] | null } | null;
  readonly status?: {
    readonly allocatable?: ResourceList | null;
    readonly capacity?: ResourceList | null;
    readonly conditions?: readonly NodeCondition[] | null;
  } | null;
}

/** A node taint (core/v1 Taint). */
export interface Taint {
  readonly key?: string | null;
  readonly value?: string | null;
  readonly effect?: string | null;
  readonly timeAdded?: string | null;
}

/** A pod toleration (core/v1 Toleration). */
export interface Toleration {
  readonly key?: string | null;
  readonly operator?: string | null;
  readonly value?: string | null;
  readonly effect?: string | null;
  readonly tolerationSeconds?: number | null;
}

/** core/v1 NodeCondition (Ready, MemoryPressure, ...). */
export interface NodeCondition {
  readonly type?: string | null;
  readonly status?: string | null;
  readonly reason?: string | null;
  readonly message?: string | null;
}

/** core/v1 NodeSelectorRequirement. */
export interface NodeSelectorRequirement {
  readonly key?: string | null;
  readonly operator?: string | null;
  readonly values?: readonly string[] | null;
}

/** core/v1 NodeSelectorTerm. */
export interface NodeSelectorTerm {
  readonly matchExpressions?: readonly NodeSelectorRequirement[] | null;
  readonly matchFields?: readonly NodeSelectorRequirement[] | null;
}

/** The node part of core/v1 Affinity that filtering reads. */
export interface Affinity {
  readonly nodeAffinity?: {
    readonly requiredDuringSchedulingIgnoredDuringExecution?: {
      readonly nodeSelectorTerms?: readonly NodeSelectorTerm[] | null;
    } | null;
  } | null;
}

/** Whether `v` is a JSON object (not null, not an array): the shape every Kubernetes object and map has. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
