/**
 * The kube-scheduler extender wire types (k8s.io/kube-scheduler/extender/v1), validated with zod.
 *
 * The Go types carry no JSON tags, so kube-scheduler sends PascalCase keys (`Pod`, `Nodes`,
 * `NodeNames`) and decodes replies case-insensitively. Older clients send lowercase keys, so the
 * top-level keys of a request are matched case-insensitively here; replies are always PascalCase.
 * Nested Kubernetes objects (Pod, NodeList, Node) use the usual camelCase JSON.
 */
import { z } from 'zod';
import type { Node, Pod } from '../core/kube.js';

const metadata = z.looseObject({
  name: z.string().min(1, 'must not be empty'),
  namespace: z.string().optional(),
  uid: z.string().min(1, 'must not be empty'),
  labels: z.record(z.string(), z.string()).nullish(),
});

const resourceRequirements = z.looseObject({
  requests: z.record(z.string(), z.unknown()).nullish(),
  limits: z.record(z.string(), z.unknown()).nullish(),
}).nullish();

const container = z.looseObject({ name: z.string().optional(), resources: resourceRequirements, restartPolicy: z.string().nullish() });

const pod = z.looseObject({
  metadata,
  spec: z.looseObject({
    nodeName: z.string().nullish(),
    schedulerName: z.string().nullish(),
    containers: z.array(container).nullish(),
    initContainers: z.array(container).nullish(),
    overhead: z.record(z.string(), z.unknown()).nullish(),
    resources: resourceRequirements,
  }),
  status: z.looseObject({}).nullish(),
});

const node = z.looseObject({
  metadata: z.looseObject({ name: z.string().min(1, 'must not be empty') }),
  status: z.looseObject({ allocatable: z.record(z.string(), z.unknown()).nullish() }).nullish(),
});

/** ExtenderArgs after key normalisation. Exactly one of Nodes / NodeNames is non-null. */
const extenderArgs = z
  .object({
    Pod: pod,
    Nodes: z.looseObject({ items: z.array(node) }).nullish(),
    NodeNames: z.array(z.string().min(1, 'must not be empty')).nullish(),
  })
  .refine((a) => (a.Nodes == null) !== (a.NodeNames == null), {
    message: 'exactly one of Nodes (nodeCacheCapable: false) or NodeNames (nodeCacheCapable: true) must be set',
  });

export interface ExtenderArgs {
  readonly Pod: Pod;
  readonly Nodes: { readonly items: readonly Node[] } | null;
  readonly NodeNames: readonly string[] | null;
}

/** ExtenderFilterResult. */
export interface ExtenderFilterResult {
  Nodes: { metadata: Record<string, never>; items: Node[] } | null;
  NodeNames: string[] | null;
  FailedNodes: Record<string, string>;
  FailedAndUnresolvableNodes: Record<string, string>;
  Error: string;
}

/** HostPriority; a prioritize reply is a bare array of these, Score an integer 0..10. */
export interface HostPriority {
  Host: string;
  Score: number;
}

/** Thrown for a request that does not have the ExtenderArgs shape; the message names each problem with its path. */
export class WireError extends Error {
  override readonly name = 'WireError';
}

/**
 * The top-level keys of `body` mapped case-insensitively onto `keys` (others dropped).
 * @throws WireError with `shape` when the body is not a JSON object.
 */
function canonicalKeys(body: unknown, keys: readonly string[], shape: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new WireError(`request body must be a JSON object with ${shape}`);
  const byLower = new Map(keys.map((k) => [k.toLowerCase(), k]));
  const normalised: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const canonical = byLower.get(key.toLowerCase());
    if (canonical) normalised[canonical] = value;
  }
  return normalised;
}

/** The data of a successful zod parse, or a WireError listing every issue as `path: message`. */
function validated<T>(result: z.ZodSafeParseResult<T>, root: string): T {
  if (result.success) return result.data;
  throw new WireError(result.error.issues.map((i) => `${i.path.join('.') || root}: ${i.message}`).join('; '));
}

/**
 * Validates a decoded JSON body as ExtenderArgs, matching top-level keys case-insensitively.
 * @throws WireError listing every problem as `path: message`.
 */
export function parseExtenderArgs(body: unknown): ExtenderArgs {
  const normalised = canonicalKeys(body, ['Pod', 'Nodes', 'NodeNames'], 'Pod and Nodes or NodeNames (ExtenderArgs)');
  validated(extenderArgs.safeParse(normalised), 'ExtenderArgs');
  // Validated; hand back the caller's own objects (zod's copies reorder keys), so Node objects are echoed as sent.
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
  PodName: z.string().min(1, 'must not be empty'),
  PodNamespace: z.string().min(1, 'must not be empty'),
  PodUID: z.string().min(1, 'must not be empty'),
  Node: z.string().min(1, 'must not be empty'),
});

/**
 * Validates a decoded JSON body as ExtenderBindingArgs (top-level keys matched case-insensitively).
 * @throws WireError listing every problem as `path: message`.
 */
export function parseBindingArgs(body: unknown): ExtenderBindingArgs {
  const keys = ['PodName', 'PodNamespace', 'PodUID', 'Node'];
  return validated(bindingArgs.safeParse(canonicalKeys(body, keys, `${keys.join(', ')} (ExtenderBindingArgs)`)), 'ExtenderBindingArgs');
}
