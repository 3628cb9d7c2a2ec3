/**
 * A pod's effective resource request, exactly as kube-scheduler's NodeResourcesFit computes it, and a node's
 * allocatable in the same units (docs/model.md#pods-sandbox-hints: the rule, the feature gates, what is not modelled).
 * Mirrors k8s.io/component-helpers/resource/helpers.go `PodRequests` (AggregateContainerRequests,
 * determineEffectiveRequests, the pod-level override), then pkg/scheduler/framework/types.go `(*Resource).Add`:
 * aggregated exactly (BigInt nanos) and converted at the end, cpu to millicores (`MilliValue()`), the rest to
 * bytes/counts (`Value()`), both rounded up. With the options of a v1.36 kube-scheduler's two callers
 * ({@link PodRequestsOptions}: `PodInfo.CalculateResource` for a bound pod, fit.go `computePodResourceRequest`).
 */
import { isRecord, type Container, type ContainerStatus, type Node, type Pod } from './kubeObjects.js';
import {
  MAX_SAFE_INTEGER_BIG,
  QuantityError,
  milliValue,
  parseQuantityValue,
  toSafeInteger,
  value,
} from './quantity.js';

/** Resource name → scheduler units: cpu in millicores, everything else bytes or counts (safe integers). */
export type ResourceAmounts = ReadonlyMap<string, number>;

/**
 * The `PodResourcesOptions` fields that change a v1.36 kube-scheduler's result (the others are left at their
 * zero value by both callers, or set from gates that are on: `SkipPodLevelResources` is false).
 */
export interface PodRequestsOptions {
  /**
   * `UseStatusResources`: a container or sidecar whose status reports `resources` counts
   * max(spec, actuated, allocated), or max(actuated, allocated) while the resize is Infeasible.
   */
  readonly useStatusResources: boolean;
  /**
   * `InPlacePodLevelResourcesVerticalScalingEnabled` (effective only with useStatusResources): pod-level
   * requests follow `status.resources` / `status.allocatedResources` the same way.
   */
  readonly podLevelStatusResources: boolean;
}

/**
 * A pod bound (or assumed) to a node, as Kubernetes v1.36 pkg/scheduler/framework/types.go
 * `PodInfo.CalculateResource` counts it: status resources at container and at pod level.
 */
export const ASSIGNED_POD_OPTIONS: PodRequestsOptions = Object.freeze({
  useStatusResources: true,
  podLevelStatusResources: true,
});

/**
 * The pod being scheduled, as Kubernetes v1.36 pkg/scheduler/framework/plugins/noderesources/fit.go
 * `computePodResourceRequest` counts it ("pod hasn't scheduled yet"): the spec only.
 */
export const INCOMING_POD_OPTIONS: PodRequestsOptions = Object.freeze({
  useStatusResources: false,
  podLevelStatusResources: false,
});

/**
 * The options kube-scheduler uses for this pod: {@link ASSIGNED_POD_OPTIONS} when `spec.nodeName` is set
 * (the scheduler's cache holds bound and assumed pods, both with a node name), else {@link INCOMING_POD_OPTIONS}.
 */
export function podRequestOptions(pod: Pod): PodRequestsOptions {
  return pod.spec?.nodeName ? ASSIGNED_POD_OPTIONS : INCOMING_POD_OPTIONS;
}

type Exact = Map<string, bigint>;

const RESTART_POLICY_ALWAYS = 'Always';
const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

function keyPath(path: string, key: string): string {
  return SIMPLE_KEY.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Parses one ResourceList value; the error names the JSON path. Negative values are rejected. */
function parseAt(raw: unknown, path: string): bigint {
  let nanos: bigint;
  try {
    nanos = parseQuantityValue(raw).nanos;
  } catch (err) {
    if (err instanceof QuantityError) throw new QuantityError(`${path}: ${err.message}`, raw, { cause: err });
    throw err;
  }
  if (nanos < 0n) {
    throw new QuantityError(
      `${path}: negative quantity ${JSON.stringify(raw)} is not allowed (resource values must be >= 0)`,
      raw,
    );
  }
  return nanos;
}

/** A ResourceList (`{"cpu": "500m", …}`) in exact nanos; null/undefined is empty. */
function readResourceList(list: unknown, path: string): Exact {
  const out: Exact = new Map();
  if (list === null || list === undefined) return out;
  if (!isRecord(list)) throw new QuantityError(`${path}: expected a resource list object`, list);
  for (const [name, raw] of Object.entries(list)) out.set(name, parseAt(raw, keyPath(path, name)));
  return out;
}

/** Go `addResourceList`: sums per resource; absent keys are copied. */
function addInto(target: Exact, add: ReadonlyMap<string, bigint>): void {
  for (const [name, nanos] of add) target.set(name, (target.get(name) ?? 0n) + nanos);
}

/** Go `maxResourceList`: per resource, keep the larger; absent keys are copied. */
function maxInto(target: Exact, other: ReadonlyMap<string, bigint>): void {
  for (const [name, nanos] of other) {
    const current = target.get(name);
    if (current === undefined || nanos > current) target.set(name, nanos);
  }
}

function containerList(list: unknown, path: string): readonly Container[] {
  if (list === null || list === undefined) return [];
  if (!Array.isArray(list)) throw new QuantityError(`${path}: expected an array of containers`, list);
  return list as readonly Container[];
}

function containerRequests(container: unknown, path: string): Exact {
  if (!isRecord(container)) throw new QuantityError(`${path}: expected a container object`, container);
  const resources = container['resources'];
  if (resources === null || resources === undefined) return new Map();
  if (!isRecord(resources)) throw new QuantityError(`${path}.resources: expected an object`, resources);
  return readResourceList(resources['requests'], `${path}.resources.requests`);
}

function isRestartableInit(container: Container): boolean {
  return container.restartPolicy === RESTART_POLICY_ALWAYS;
}

type PodSpec = NonNullable<Pod['spec']>;
type PodStatus = NonNullable<Pod['status']>;

/** Container statuses by container name (containers and init containers share one namespace). */
function statusesByName(status: PodStatus | null | undefined): Map<string, ContainerStatus> {
  const byName = new Map<string, ContainerStatus>();
  for (const list of [status?.containerStatuses, status?.initContainerStatuses]) {
    if (!Array.isArray(list)) continue;
    for (const cs of list as ContainerStatus[])
      if (isRecord(cs)) byName.set(typeof cs.name === 'string' ? cs.name : '', cs);
  }
  return byName;
}

/** Go `IsPodResizeInfeasible`: the PodResizePending condition has reason Infeasible. */
function resizeInfeasible(status: PodStatus | null | undefined): boolean {
  const condition = status?.conditions?.find((c) => c?.type === 'PodResizePending');
  return condition?.reason === 'Infeasible';
}

/**
 * Go `determineEffectiveRequests` for a status (a container's, or the pod's) that reports `resources`:
 * max(spec, actuated, allocated) per resource, without spec when the resize is infeasible; the spec alone
 * when the status has no `resources` (Go: `cs.Resources != nil`, `pod.Status.Resources != nil`).
 */
function effectiveRequests(
  spec: Exact,
  status: ContainerStatus | PodStatus | null | undefined,
  infeasible: boolean,
  path: string,
): Exact {
  if (!status || status.resources === null || status.resources === undefined) return spec;
  const actuated = readResourceList(
    isRecord(status.resources) ? status.resources['requests'] : undefined,
    `${path}.resources.requests`,
  );
  const allocated = readResourceList(status.allocatedResources, `${path}.allocatedResources`);
  const out: Exact = infeasible ? new Map() : new Map(spec);
  maxInto(out, actuated);
  maxInto(out, allocated);
  return out;
}

/**
 * Go `AggregateContainerRequests`: Σ containers; each restartable init container ("sidecar") is added to
 * that sum and to the running sidecar total; a plain init container i uses requests(i) + sidecars started
 * before it; result = per-resource max(container sum, max_i usage(i)). With `useStatusResources`, containers
 * and sidecars whose status reports resources count their effective requests (see {@link effectiveRequests});
 * a plain init container always counts its spec.
 */
function aggregateContainerRequests(
  spec: PodSpec,
  status: PodStatus | null | undefined,
  options: PodRequestsOptions,
): Exact {
  const statuses = statusesByName(status);
  const infeasible = resizeInfeasible(status);
  const effective = (c: Container, own: Exact, path: string) =>
    options.useStatusResources ? effectiveRequests(own, statuses.get(c.name ?? ''), infeasible, path) : own;
  const reqs: Exact = new Map();
  containerList(spec.containers, 'spec.containers').forEach((c, i) => {
    const path = `spec.containers[${i}]`;
    addInto(reqs, effective(c, containerRequests(c, path), `status.containerStatuses[${c.name}]`));
  });
  const sidecars: Exact = new Map();
  const initMax: Exact = new Map();
  containerList(spec.initContainers, 'spec.initContainers').forEach((c, i) => {
    const specOwn = containerRequests(c, `spec.initContainers[${i}]`);
    const own = isRestartableInit(c) ? effective(c, specOwn, `status.initContainerStatuses[${c.name}]`) : specOwn;
    if (isRestartableInit(c)) {
      addInto(reqs, own);
      addInto(sidecars, own);
      maxInto(initMax, sidecars);
    } else {
      addInto(own, sidecars);
      maxInto(initMax, own);
    }
  });
  maxInto(reqs, initMax);
  return reqs;
}

/** Go `IsSupportedPodLevelResource`: cpu, memory and hugepages-*. */
function isSupportedPodLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

/**
 * Pod-level `spec.resources.requests` replace the aggregate for each supported resource they set (Go
 * `IsPodLevelRequestsSet`: at least one supported key, else nothing changes). With pod-level status
 * resources on and `status.resources` reported, each such key takes its effective request instead:
 * max(spec, actuated, allocated), or max(actuated, allocated) while Infeasible; a key found in none of those
 * lists is 0 (Go reads it from the effective map, where a missing key is a zero Quantity).
 */
function applyPodLevelRequests(
  reqs: Exact,
  spec: PodSpec,
  status: PodStatus | null | undefined,
  options: PodRequestsOptions,
): void {
  const resources: unknown = spec.resources;
  if (resources === null || resources === undefined) return;
  if (!isRecord(resources)) throw new QuantityError('spec.resources: expected an object', resources);
  const podLevel = readResourceList(resources['requests'], 'spec.resources.requests');
  if (![...podLevel.keys()].some(isSupportedPodLevelResource)) return;
  const effective =
    options.useStatusResources && options.podLevelStatusResources
      ? effectiveRequests(podLevel, status, resizeInfeasible(status), 'status')
      : podLevel;
  for (const name of podLevel.keys()) {
    if (isSupportedPodLevelResource(name)) reqs.set(name, effective.get(name) ?? 0n);
  }
}

/**
 * The pod's effective request in exact nanos (value × 10^9), per resource: Go `PodRequests` =
 * `AggregateContainerRequests` → pod-level override (cpu, memory, hugepages-*) → + `spec.overhead`.
 * Keys present with value 0 are kept, as in Go. A missing spec or containers list is treated as empty.
 * Whether the pod is terminal (and so counts at all) is the caller's concern.
 *
 * @param options which of kube-scheduler's two option sets to apply (default {@link ASSIGNED_POD_OPTIONS};
 *   {@link podRequestOptions} picks the one the scheduler would use for this pod).
 * @throws QuantityError naming the JSON path (e.g. `spec.containers[1].resources.requests.memory`) for an
 *   invalid or negative quantity or a malformed container/resource list.
 */
export function podRequestsExact(pod: Pod, options: PodRequestsOptions = ASSIGNED_POD_OPTIONS): Map<string, bigint> {
  const spec: PodSpec = pod.spec ?? {};
  const reqs = aggregateContainerRequests(spec, pod.status, options);
  applyPodLevelRequests(reqs, spec, pod.status, options);
  addInto(reqs, readResourceList(spec.overhead, 'spec.overhead'));
  return reqs;
}

/** `(*Resource).Add`'s rounding, exactly: cpu → MilliValue() (millicores), anything else → Value(); both round up. */
function exactUnits(resource: string, nanos: bigint): bigint {
  return resource === 'cpu' ? milliValue({ nanos, format: 'DecimalSI' }) : value({ nanos, format: 'DecimalSI' });
}

function unitsAt(resource: string, nanos: bigint, what: string): number {
  return toSafeInteger(exactUnits(resource, nanos), `${what} (${resource === 'cpu' ? 'millicores' : 'units'})`);
}

/**
 * As {@link toSchedulerUnits}, but saturating at 2^53 − 1 (8 PiB of bytes) instead of throwing: what the
 * placement model uses for its tracked dimensions, so a valid but astronomically large quantity simply
 * fits nowhere instead of breaking exact arithmetic.
 */
export function schedulerAmount(resource: string, nanos: bigint): number {
  const units = exactUnits(resource, nanos);
  return Number(units > MAX_SAFE_INTEGER_BIG ? MAX_SAFE_INTEGER_BIG : units);
}

/**
 * Converts exact nanos to scheduler units as `(*Resource).Add` does: `cpu` → `MilliValue()` (millicores,
 * rounded up), anything else → `Value()` (bytes or counts, rounded up).
 * @throws QuantityError when the result is not a safe integer (|v| > 2^53 − 1), naming the resource.
 */
export function toSchedulerUnits(resource: string, nanos: bigint): number {
  return unitsAt(resource, nanos, resource);
}

function toAmounts(exact: ReadonlyMap<string, bigint>, label: (name: string) => string): ResourceAmounts {
  const out = new Map<string, number>();
  for (const [name, nanos] of exact) out.set(name, unitsAt(name, nanos, label(name)));
  return out;
}

/**
 * The pod's effective request in scheduler units (cpu millicores; bytes/counts otherwise), converted
 * from {@link podRequestsExact} (same options) only after exact aggregation, as NodeResourcesFit does.
 * @throws QuantityError as podRequestsExact, or when a total is not a safe integer.
 */
export function podRequests(pod: Pod, options: PodRequestsOptions = ASSIGNED_POD_OPTIONS): ResourceAmounts {
  return toAmounts(podRequestsExact(pod, options), (name) => `pod request ${name}`);
}

/**
 * `status.allocatable` in scheduler units (what `NodeInfo.Allocatable` holds), or null when allocatable is
 * missing or null (a registered node whose kubelet never reported; `SetDefaults_NodeStatus` only copies
 * capacity, which such a node also lacks).
 * @throws QuantityError naming `status.allocatable.<resource>` for an invalid, negative or unsafe value.
 */
export function nodeAllocatable(node: Node): ResourceAmounts | null {
  const exact = nodeAllocatableExact(node);
  return exact && toAmounts(exact, (name) => keyPath('status.allocatable', name));
}

/**
 * `status.allocatable` exactly, in nanos per resource, or null when allocatable is missing or null.
 * @throws QuantityError naming `status.allocatable.<resource>` for an invalid or negative value.
 */
export function nodeAllocatableExact(node: Node): Map<string, bigint> | null {
  const allocatable = node.status?.allocatable;
  if (allocatable === null || allocatable === undefined) return null;
  return readResourceList(allocatable, 'status.allocatable');
}
