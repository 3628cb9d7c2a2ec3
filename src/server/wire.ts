/**
 * The kube-scheduler extender wire types (k8s.io/kube-scheduler/extender/v1), validated with zod.
 *
 * The Go types carry no JSON tags, so kube-scheduler sends PascalCase keys (`Pod`, `Nodes`,
 * `NodeNames`) and decodes replies case-insensitively. Older clients send lowercase keys, so the
 * top-level keys of a request are matched case-insensitively here (one field under two casings is refused:
 * canonicalKeys); replies are always PascalCase.
 * Nested Kubernetes objects (Pod, NodeList, Node) use the usual camelCase JSON.
 */
import { z } from 'zod';
import type { Node, Pod } from '../core/objects/kubeObjects.js';
import type { ExtenderArgs } from '../core/decide/replies.js';

export type { ExtenderArgs };

/**
 * Kubernetes' own length limits (a name is a DNS subdomain, at most 253 characters; a namespace a DNS
 * label, at most 63; a UID is what the API server generated, a 36-character UUID, so 128 is far above
 * any real one): a request beyond them comes from no API server, and its strings would be kept in
 * reservations and Events.
 */
export const MAX_NAME_LENGTH = 253;
/**
 * The most candidate nodes one request may carry (names or Node objects): well above the largest clusters
 * (Kubernetes supports 5,000 nodes; managed offerings go to 65,000); a longer list is refused before the
 * extender spends seconds on it.
 */
export const MAX_CANDIDATES = 100_000;
export const MAX_NAMESPACE_LENGTH = 63;
export const MAX_UID_LENGTH = 128;

const objectName = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_NAME_LENGTH, `longer than ${MAX_NAME_LENGTH} characters (Kubernetes' limit for a name)`);

const metadata = z.looseObject({
  name: objectName,
  namespace: z
    .string()
    .max(MAX_NAMESPACE_LENGTH, `longer than ${MAX_NAMESPACE_LENGTH} characters (Kubernetes' limit for a namespace)`)
    .optional(),
  uid: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_UID_LENGTH, `longer than ${MAX_UID_LENGTH} characters (no API server makes such a UID)`),
  labels: z.record(z.string(), z.string()).nullish(),
});

const resourceList = z.record(z.string(), z.unknown()).nullish();
const resourceRequirements = z.looseObject({ requests: resourceList, limits: resourceList }).nullish();
const container = z.looseObject({
  name: z.string().optional(),
  resources: resourceRequirements,
  restartPolicy: z.string().nullish(),
});
const containerStatus = z.looseObject({
  name: z.string().optional(),
  resources: resourceRequirements,
  allocatedResources: resourceList,
});
const condition = z.looseObject({
  type: z.string().nullish(),
  status: z.string().nullish(),
  reason: z.string().nullish(),
  message: z.string().nullish(),
});

/** Every field of a Pod the core reads, with its type (so a type-confused pod is refused with its path, never half-read). */
const pod = z.looseObject({
  metadata,
  spec: z.looseObject({
    nodeName: z.string().nullish(),
    schedulerName: z.string().nullish(),
    containers: z.array(container).nullish(),
    initContainers: z.array(container).nullish(),
    overhead: resourceList,
    resources: resourceRequirements,
  }),
  status: z
    .looseObject({
      phase: z.string().nullish(),
      conditions: z.array(condition).nullish(),
      containerStatuses: z.array(containerStatus).nullish(),
      initContainerStatuses: z.array(containerStatus).nullish(),
      resources: resourceRequirements,
      allocatedResources: resourceList,
    })
    .nullish(),
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNullish = (v: unknown) => v === null || v === undefined;
const nullishString = (v: unknown) => isNullish(v) || typeof v === 'string';
const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
const nullishRecord = (v: unknown) => isNullish(v) || isObject(v);
const requirementsOk = (v: unknown) =>
  isNullish(v) || (isObject(v) && nullishRecord(v.requests) && nullishRecord(v.limits));

function nullishArrayOf(v: unknown, ok: (item: unknown) => boolean): boolean {
  if (isNullish(v)) return true;
  if (!Array.isArray(v)) return false;
  for (const item of v) if (!ok(item)) return false;
  return true;
}

const containerOk = (c: unknown) =>
  isObject(c) && optionalString(c.name) && requirementsOk(c.resources) && nullishString(c.restartPolicy);
const containerStatusOk = (c: unknown) =>
  isObject(c) && optionalString(c.name) && requirementsOk(c.resources) && nullishRecord(c.allocatedResources);
const conditionOk = (c: unknown) =>
  isObject(c) &&
  nullishString(c.type) &&
  nullishString(c.status) &&
  nullishString(c.reason) &&
  nullishString(c.message);

/**
 * The Pod schema above checked by hand, in one pass without allocating (a verb's request carries one Pod,
 * and zod's parse of it was a tenth of the verb's CPU): true only when zod would accept it too (a test
 * holds the two together); false when unsure, and zod then says what is wrong.
 */
export function podLooksValid(value: unknown): boolean {
  if (!isObject(value)) return false;
  const { metadata: meta, spec, status } = value;
  if (!isObject(meta)) return false;
  const { name, namespace, uid, labels } = meta;
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace.length > MAX_NAMESPACE_LENGTH))
    return false;
  if (typeof uid !== 'string' || uid.length === 0 || uid.length > MAX_UID_LENGTH) return false;
  if (!isNullish(labels)) {
    if (!isObject(labels)) return false;
    for (const key of Object.keys(labels)) if (typeof labels[key] !== 'string') return false;
  }
  if (!isObject(spec)) return false;
  if (!nullishString(spec.nodeName) || !nullishString(spec.schedulerName)) return false;
  if (!nullishArrayOf(spec.containers, containerOk) || !nullishArrayOf(spec.initContainers, containerOk)) return false;
  if (!nullishRecord(spec.overhead) || !requirementsOk(spec.resources)) return false;
  if (isNullish(status)) return true;
  if (!isObject(status)) return false;
  return (
    nullishString(status.phase) &&
    nullishArrayOf(status.conditions, conditionOk) &&
    nullishArrayOf(status.containerStatuses, containerStatusOk) &&
    nullishArrayOf(status.initContainerStatuses, containerStatusOk) &&
    requirementsOk(status.resources) &&
    nullishRecord(status.allocatedResources)
  );
}

/** zod's verdict on a Pod (for the test that holds podLooksValid to it). */
export function podSchemaAccepts(value: unknown): boolean {
  return pod.safeParse(value).success;
}

const node = z.looseObject({
  metadata: z.looseObject({ name: objectName }),
  status: z.looseObject({ allocatable: resourceList }).nullish(),
});

/** ExtenderArgs after key normalisation. Exactly one of Nodes / NodeNames is non-null. */
const extenderArgs = z
  .object({
    Pod: pod,
    Nodes: z.looseObject({ items: z.array(node).max(MAX_CANDIDATES) }).nullish(),
    NodeNames: z.array(objectName).max(MAX_CANDIDATES).nullish(),
  })
  .refine((a) => (a.Nodes == null) !== (a.NodeNames == null), {
    message: 'exactly one of Nodes (nodeCacheCapable: false) or NodeNames (nodeCacheCapable: true) must be set',
  });

/** An ExtenderFilterResult before encoding. Exactly one of `nodes` / `nodeNames` is set, unless `error` is. */
export interface FilterResult {
  /** Feasible Node objects to echo (nodeCacheCapable: false). */
  readonly nodes: readonly Node[] | null;
  /** Feasible node names (nodeCacheCapable: true). */
  readonly nodeNames: readonly string[] | null;
  /** Node → reason: Unschedulable (preemption may consider it). */
  readonly failedNodes: ReadonlyMap<string, string>;
  /** Node → reason: UnschedulableAndUnresolvable. */
  readonly failedAndUnresolvableNodes: ReadonlyMap<string, string>;
  /** Non-empty: the whole call failed (kube-scheduler shows it in FailedScheduling). */
  readonly error: string;
}

const NO_FAILURES: ReadonlyMap<string, string> = new Map();

/** A FilterResult carrying only `error` (both lists null). */
export function filterError(error: string): FilterResult {
  return { nodes: null, nodeNames: null, failedNodes: NO_FAILURES, failedAndUnresolvableNodes: NO_FAILURES, error };
}

/** Characters a JSON string may hold unescaped that every Node name (an RFC 1123 subdomain) is made of. */
const PLAIN = /^[A-Za-z0-9._-]*$/;

/** `s` as a JSON string: names (the bulk of every reply) are written as they are, anything else escaped by JSON.stringify. */
function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

function encodeReasons(reasons: ReadonlyMap<string, string>): string {
  let text = '';
  for (const [node, reason] of reasons) text += `${text ? ',' : ''}${jsonString(node)}:${JSON.stringify(reason)}`;
  return `{${text}}`;
}

/**
 * ExtenderFilterResult as JSON text, keys in the Go struct's order (Nodes, NodeNames, FailedNodes,
 * FailedAndUnresolvableNodes, Error), written directly rather than built as an object first.
 * Node names are written as JSON strings, so no name (`__proto__` included) can change the shape.
 * @throws RangeError when an echoed Node object is nested too deeply to encode.
 */
export function encodeFilterResult(result: FilterResult): string {
  const nodes = result.nodes === null ? 'null' : `{"metadata":{},"items":${JSON.stringify(result.nodes)}}`;
  const names = result.nodeNames === null ? 'null' : JSON.stringify(result.nodeNames);
  return (
    `{"Nodes":${nodes},"NodeNames":${names},"FailedNodes":${encodeReasons(result.failedNodes)},` +
    `"FailedAndUnresolvableNodes":${encodeReasons(result.failedAndUnresolvableNodes)},"Error":${JSON.stringify(result.error)}}`
  );
}

/**
 * HostPriorityList as JSON text: a bare array of {"Host", "Score"} in `hosts` order, Score an
 * integer 0..10 (kube-scheduler decodes it into int64: a fraction would drop the whole list).
 */
export function encodeHostPriorities(hosts: readonly string[], score: (i: number) => number): string {
  let text = '[';
  for (let i = 0; i < hosts.length; i++) text += `${i ? ',' : ''}{"Host":${jsonString(hosts[i]!)},"Score":${score(i)}}`;
  return `${text}]`;
}

/** `{"Error": "..."}`, the body of every error answer (and of a successful bind, with an empty text). */
export function encodeError(error: string): string {
  return JSON.stringify({ Error: error });
}

/** Thrown for a request that does not have the ExtenderArgs shape; the message names each problem with its path. */
export class WireError extends Error {
  override readonly name = 'WireError';
}

/**
 * The top-level keys of `body` mapped case-insensitively onto `keys` (others dropped), as Go's encoding/json matches
 * the protocol's untagged fields (k8s.io/kube-scheduler/extender/v1). Two keys of one field (`Pod` and `pod`) are
 * refused: encoding/json would decode both into that field, the later over the earlier (an object's members merged
 * one by one: the `uid` of one pod with the `name` of the other), and JSON.parse keeps only the later, so the two
 * readers would not read the same request.
 * @throws WireError with `shape` when the body is not a JSON object; naming the keys (under `root`) when two or more
 *   name one field.
 */
function canonicalKeys(
  body: unknown,
  keys: ReadonlyMap<string, string>,
  shape: string,
  root: string,
): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new WireError(`request body must be a JSON object with ${shape}`);
  const normalised: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  let repeated: Set<string> | undefined; // the canonical keys given more than once
  for (const key in body) {
    const canonical = keys.get(key.toLowerCase());
    if (!canonical) continue;
    if (canonical in normalised) (repeated ??= new Set()).add(canonical);
    normalised[canonical] = (body as Record<string, unknown>)[key];
  }
  if (repeated) {
    const given = new Map<string, string[]>(); // each field given more than once → its keys, in the body's order
    for (const key of Object.keys(body)) {
      const canonical = keys.get(key.toLowerCase());
      if (canonical && repeated.has(canonical)) given.set(canonical, [...(given.get(canonical) ?? []), key]);
    }
    const each = [...given].map(
      ([canonical, names]) =>
        `${root}: ${listed(names.map((key) => JSON.stringify(key)))} name one field, ${canonical}`,
    );
    throw new WireError(
      `${each.join('; ')} (keys are matched case-insensitively, as Go's encoding/json reads the protocol's types; it would decode each into that field, the later over the earlier, so which value is meant is ambiguous): send each field once`,
    );
  }
  return normalised;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** Lower-cased key → canonical key. */
function keyMap(keys: readonly string[]): ReadonlyMap<string, string> {
  return new Map(keys.map((k) => [k.toLowerCase(), k]));
}

/** The data of a successful zod parse, or a WireError listing every issue as `path: message`. */
/** At most this many problems are listed in one error (the rest are counted): kube-scheduler puts the text in an Event. */
const MAX_LISTED_ISSUES = 20;

function validated<T>(result: z.ZodSafeParseResult<T>, root: string): T {
  if (result.success) return result.data;
  const issues = result.error.issues;
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `${i.path.join('.') || root}: ${i.message}`);
  if (issues.length > MAX_LISTED_ISSUES) listed.push(`and ${issues.length - MAX_LISTED_ISSUES} more problems`);
  throw new WireError(listed.join('; '));
}

const ARGS_KEYS = keyMap(['Pod', 'Nodes', 'NodeNames']);

/**
 * The node list of a request checked by hand, in one pass (the long part of a request: up to 5,000
 * names or Node objects), with exactly the rules of the zod schema above; false when unsure, and
 * zod then says what is wrong.
 */
function nodesLookValid(args: Record<string, unknown>): boolean {
  const names = args.NodeNames;
  const nodes = args.Nodes;
  if (Array.isArray(names)) {
    if (nodes != null || names.length > MAX_CANDIDATES) return false;
    for (let i = 0; i < names.length; i++) {
      const name: unknown = names[i];
      if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
    }
    return true;
  }
  if (names != null || typeof nodes !== 'object' || nodes === null) return false;
  const items = (nodes as { items?: unknown }).items;
  if (!Array.isArray(items) || items.length > MAX_CANDIDATES) return false;
  for (const item of items as unknown[]) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
    const { metadata, status } = item as { metadata?: unknown; status?: unknown };
    const name = (metadata as { name?: unknown } | null | undefined)?.name;
    if (
      typeof metadata !== 'object' ||
      metadata === null ||
      Array.isArray(metadata) ||
      typeof name !== 'string' ||
      name.length === 0 ||
      name.length > MAX_NAME_LENGTH
    )
      return false;
    if (status != null) {
      if (typeof status !== 'object' || Array.isArray(status)) return false;
      const allocatable = (status as { allocatable?: unknown }).allocatable;
      if (allocatable != null && (typeof allocatable !== 'object' || Array.isArray(allocatable))) return false;
    }
  }
  return true;
}

/**
 * Validates a decoded JSON body as ExtenderArgs, matching top-level keys case-insensitively (a field under two
 * casings, `Pod` and `pod`, is refused: canonicalKeys). The Pod
 * and the node list are checked by hand with the schema's rules (podLooksValid, nodesLookValid); zod
 * runs only to explain a failure.
 * @throws WireError listing every problem as `path: message`.
 */
export function parseExtenderArgs(body: unknown): ExtenderArgs {
  const normalised = canonicalKeys(body, ARGS_KEYS, 'Pod and Nodes or NodeNames (ExtenderArgs)', 'ExtenderArgs');
  // Said before any per-node work: a list this long would cost seconds even to explain.
  const names = normalised.NodeNames;
  const items = (normalised.Nodes as { items?: unknown } | null | undefined)?.items;
  for (const [key, list] of [
    ['NodeNames', names],
    ['Nodes.items', items],
  ] as const) {
    if (Array.isArray(list) && list.length > MAX_CANDIDATES)
      throw new WireError(`${key}: ${list.length} candidates, more than the ${MAX_CANDIDATES} one request may carry`);
  }
  if (!podLooksValid(normalised.Pod) || !nodesLookValid(normalised))
    validated(extenderArgs.safeParse(normalised), 'ExtenderArgs');
  // Valid; hand back the caller's own objects (zod's copies reorder keys), so Node objects are echoed as sent.
  const input = normalised as { Pod: Pod; Nodes?: { items: Node[] } | null; NodeNames?: string[] | null };
  return { Pod: input.Pod, Nodes: input.Nodes ?? null, NodeNames: input.NodeNames ?? null };
}

/** ExtenderBindingArgs: the pod kube-scheduler wants bound, and where. */
export interface ExtenderBindingArgs {
  readonly PodName: string;
  readonly PodNamespace: string;
  readonly PodUID: string;
  readonly Node: string;
}

const bindingArgs = z.object({
  PodName: objectName,
  PodNamespace: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_NAMESPACE_LENGTH, `longer than ${MAX_NAMESPACE_LENGTH} characters (Kubernetes' limit for a namespace)`),
  PodUID: z
    .string()
    .min(1, 'must not be empty')
    .max(MAX_UID_LENGTH, `longer than ${MAX_UID_LENGTH} characters (no API server makes such a UID)`),
  Node: objectName,
});

/**
 * Validates a decoded JSON body as ExtenderBindingArgs (top-level keys matched case-insensitively; a field under two
 * casings is refused).
 * @throws WireError listing every problem as `path: message`.
 */
const BINDING_KEYS = keyMap(['PodName', 'PodNamespace', 'PodUID', 'Node']);

export function parseBindingArgs(body: unknown): ExtenderBindingArgs {
  return validated(
    bindingArgs.safeParse(
      canonicalKeys(
        body,
        BINDING_KEYS,
        'PodName, PodNamespace, PodUID, Node (ExtenderBindingArgs)',
        'ExtenderBindingArgs',
      ),
    ),
    'ExtenderBindingArgs',
  );
}
