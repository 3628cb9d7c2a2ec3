/**
 * The extender verbs, free of HTTP: parse the body → decide in the core → encode the reply.
 *
 * Error policy (one place):
 * - /filter: a request that cannot be used (wrong shape, missing Pod or uid, an invalid quantity)
 *   is answered HTTP 200 with the protocol's `Error` field set, because kube-scheduler reads that
 *   field and shows its text in the pod's FailedScheduling event (a non-200 shows only the code).
 *   "Fits nowhere" is never an Error: it is an empty feasible list plus the reasons per node.
 * - /prioritize: kube-scheduler ignores prioritize errors (it logs them), so a bad request is
 *   answered HTTP 400 with `{"Error": "..."}` for the person or tool that sent it.
 * - Nothing is reserved or changed unless the request is valid.
 * - A pod of another scheduler is passed through before its resources are read: every node kept,
 *   every score 0, nothing reserved (extenders see every profile of the kube-scheduler calling them).
 * - A node kube-scheduler names that the extender does not know goes to FailedNodes with that
 *   reason (filter) or scores 0 (prioritize); a Node object with an invalid allocatable likewise.
 */
import type { Logger } from 'pino';
import type { Node } from '../core/kube.js';
import { formatFailure, isUnresolvable } from '../core/reasons.js';
import { toNodeRecord, toPodRecord, type PodRecord } from '../core/records.js';
import type { Candidate, PlacementService } from '../core/placementService.js';
import type { Metrics } from './metrics.js';
import { parseExtenderArgs, type ExtenderArgs, type ExtenderFilterResult, type HostPriority } from './wire.js';

export interface VerbDeps {
  readonly service: PlacementService;
  readonly pausedLabel: string;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Current time in ms (the only clock the decisions see). */
  readonly now: () => number;
}

export interface VerbReply {
  readonly status: number;
  readonly body: unknown;
}

interface ParsedRequest {
  readonly args: ExtenderArgs;
  readonly pod: PodRecord;
  readonly candidates: Candidate[];
  /** Node objects by name, to echo back in Nodes mode. */
  readonly objects: Map<string, Node>;
  /** Failures found while reading candidate Node objects. */
  readonly badNodes: Map<string, string>;
}

/** The node names of a request, in input order. */
function candidateNames(args: ExtenderArgs): string[] {
  return args.NodeNames ? [...args.NodeNames] : args.Nodes!.items.map((n) => n.metadata!.name!);
}

function parseRequest(args: ExtenderArgs, deps: VerbDeps): ParsedRequest {
  const pod = toPodRecord(args.Pod, deps.service.model.dims, { pausedLabel: deps.pausedLabel });
  const objects = new Map<string, Node>();
  const badNodes = new Map<string, string>();
  const candidates: Candidate[] = [];
  if (args.NodeNames) {
    for (const name of args.NodeNames) candidates.push({ name });
  } else {
    for (const node of args.Nodes!.items) {
      const name = node.metadata!.name!;
      objects.set(name, node);
      try {
        candidates.push({ name, node: toNodeRecord(node, deps.service.model.dims) });
      } catch (err) {
        badNodes.set(name, `invalid Node object: ${(err as Error).message}`);
      }
    }
  }
  return { args, pod, candidates, objects, badNodes };
}

/** The validated request, or it wrapped as `passthrough` when the pod belongs to another scheduler. */
function ownedArgs(body: unknown, deps: VerbDeps): ExtenderArgs | { passthrough: ExtenderArgs } {
  const args = parseExtenderArgs(body);
  return deps.service.ownsSchedulerName(args.Pod.spec?.schedulerName) ? args : { passthrough: args };
}

/** POST /filter: ExtenderArgs → ExtenderFilterResult. */
export function filterVerb(body: unknown, deps: VerbDeps): VerbReply {
  let request: ParsedRequest;
  try {
    const args = ownedArgs(body, deps);
    if ('passthrough' in args) return passthroughFilter(args.passthrough, deps);
    request = parseRequest(args, deps);
  } catch (err) {
    deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: 'error' });
    return { status: 200, body: emptyFilterResult(`sandbox-extender: ${(err as Error).message}`) };
  }
  const outcome = deps.service.filter(request.pod, request.candidates, deps.now());
  const reply = emptyFilterResult('');
  for (const [name, failures] of outcome.failed) {
    const text = failures.map(formatFailure).join('; ');
    if (failures.some(isUnresolvable)) reply.FailedAndUnresolvableNodes[name] = text;
    else reply.FailedNodes[name] = text;
  }
  for (const [name, reason] of request.badNodes) reply.FailedNodes[name] = reason;
  if (request.args.NodeNames) reply.NodeNames = [...outcome.feasible];
  else reply.Nodes = { metadata: {}, items: outcome.feasible.map((n) => request.objects.get(n)!) };

  if (outcome.reserved || outcome.feasible.length === 0) {
    deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: outcome.result });
  }
  deps.logger.debug({ pod: request.pod.key, feasible: outcome.feasible.length, failed: outcome.failed.size, reserved: outcome.reserved }, 'filter');
  return { status: 200, body: reply };
}

/** POST /prioritize: ExtenderArgs → HostPriorityList (bare array, integer scores 0..10). */
export function prioritizeVerb(body: unknown, deps: VerbDeps): VerbReply {
  let request: ParsedRequest;
  try {
    const args = ownedArgs(body, deps);
    if ('passthrough' in args) {
      deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: 'passthrough' });
      return { status: 200, body: candidateNames(args.passthrough).map((Host): HostPriority => ({ Host, Score: 0 })) };
    }
    request = parseRequest(args, deps);
  } catch (err) {
    deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: 'error' });
    return { status: 400, body: { Error: `sandbox-extender: ${(err as Error).message}` } };
  }
  const outcome = deps.service.prioritize(request.pod, request.candidates, deps.now());
  const reply: HostPriority[] = request.candidates.map((c, i) => ({ Host: c.name, Score: outcome.scores[i]! }));
  for (const name of request.badNodes.keys()) reply.push({ Host: name, Score: 0 });
  deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: outcome.result });
  deps.logger.debug({ pod: request.pod.key, node: outcome.chosen?.name ?? null, pressure: outcome.chosen?.pressure, feasible: outcome.feasible }, 'prioritize');
  return { status: 200, body: reply };
}

/** A pod of another scheduler: every node is kept, nothing is read or reserved. */
function passthroughFilter(args: ExtenderArgs, deps: VerbDeps): VerbReply {
  deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: 'passthrough' });
  const reply = emptyFilterResult('');
  if (args.NodeNames) reply.NodeNames = [...args.NodeNames];
  else reply.Nodes = { metadata: {}, items: [...args.Nodes!.items] };
  return { status: 200, body: reply };
}

function emptyFilterResult(error: string): ExtenderFilterResult {
  return { Nodes: null, NodeNames: null, FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: error };
}
