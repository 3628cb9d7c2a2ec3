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
import type { BindOutcome, BindRequest } from '../cluster/binder.js';
import { explainNoFit, explainPlacement } from '../core/explain.js';
import type { Node, Pod } from '../core/kube.js';
import type { Evaluation } from '../core/placement.js';
import { formatFailure, isUnresolvable } from '../core/reasons.js';
import { toNodeRecord, toPodRecord, type PodRecord } from '../core/records.js';
import type { Candidate, PlacementService } from '../core/placementService.js';
import type { Metrics } from './metrics.js';
import { parseBindingArgs, parseExtenderArgs, type ExtenderArgs, type ExtenderFilterResult, type HostPriority } from './wire.js';

/** A placement decision worth telling the pod about (one per decision, not per call). */
export interface DecisionNotice {
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly result: 'placed' | 'no_fit';
  readonly node: string | null;
  readonly message: string;
}

export interface VerbDeps {
  readonly service: PlacementService;
  readonly pausedLabel: string;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Current time in ms (the only clock the decisions see). */
  readonly now: () => number;
  /** False while the model is not synced: the verbs then refuse rather than decide blind. */
  readonly ready?: () => boolean;
  /** Told of each decision (e.g. to record an Event). */
  readonly onDecision?: (notice: DecisionNotice) => void;
  /** Creates Bindings (cluster mode only). */
  readonly bind?: (request: BindRequest) => Promise<BindOutcome>;
}

const NOT_READY = 'not ready: the cluster model has not completed its initial sync';

function podRef(pod: Pod, record: PodRecord) {
  return { namespace: pod.metadata?.namespace || 'default', name: pod.metadata?.name ?? '', uid: record.uid };
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
        // A Node object without usable allocatable says nothing new: the model's record, if it has one, stands.
        const record = toNodeRecord(node, deps.service.model.dims);
        candidates.push(record.allocatable || !deps.service.model.nodes.has(name) ? { name, node: record } : { name });
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
    if (deps.ready && !deps.ready()) return { status: 200, body: emptyFilterResult(`sandbox-extender: ${NOT_READY}`) };
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
    if (deps.onDecision) {
      const ref = podRef(request.args.Pod, request.pod);
      if (outcome.reserved) {
        const chosen = outcome.evaluations.find((e) => e.name === outcome.reserved)!;
        deps.onDecision({ pod: ref, result: 'placed', node: chosen.name, message: placementMessage(deps, request, chosen, null, 1, outcome.evaluations) });
      } else {
        deps.onDecision({ pod: ref, result: 'no_fit', node: null, message: explainNoFit(outcome) });
      }
    }
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
    if (deps.ready && !deps.ready()) return { status: 503, body: { Error: `sandbox-extender: ${NOT_READY}` } };
    request = parseRequest(args, deps);
  } catch (err) {
    deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: 'error' });
    return { status: 400, body: { Error: `sandbox-extender: ${(err as Error).message}` } };
  }
  const outcome = deps.service.prioritize(request.pod, request.candidates, deps.now());
  const reply: HostPriority[] = request.candidates.map((c, i) => ({ Host: c.name, Score: outcome.scores[i]! }));
  for (const name of request.badNodes.keys()) reply.push({ Host: name, Score: 0 });
  deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result: outcome.result });
  if (deps.onDecision && outcome.chosen) {
    const message = placementMessage(deps, request, outcome.chosen, outcome.runnerUp, outcome.feasible, outcome.evaluations);
    deps.onDecision({ pod: podRef(request.args.Pod, request.pod), result: 'placed', node: outcome.chosen.name, message });
  }
  deps.logger.debug({ pod: request.pod.key, node: outcome.chosen?.name ?? null, pressure: outcome.chosen?.pressure, feasible: outcome.feasible }, 'prioritize');
  return { status: 200, body: reply };
}

function placementMessage(deps: VerbDeps, request: ParsedRequest, chosen: Evaluation, runnerUp: Evaluation | null, feasible: number, evaluations: readonly Evaluation[] = [chosen]): string {
  const allocatableOf = (name: string) => request.candidates.find((c) => c.name === name)?.node?.allocatable ?? deps.service.model.nodes.get(name)?.allocatable ?? null;
  return explainPlacement({ chosen, runnerUp, feasible, evaluations }, request.pod.request, allocatableOf, deps.service.model.dims, deps.service.placer.strategy);
}

/**
 * POST /bind: ExtenderBindingArgs → ExtenderBindingResult (`{"Error": ""}` on success). Creates the
 * Binding through the API; on success the pod's reservation moves to the bound node (or is made, if
 * the extender saw the pod but held none), until the watch shows the pod bound. A failed bind
 * changes nothing, and only the named pod UID's reservation is ever touched.
 */
export async function bindVerb(body: unknown, deps: VerbDeps): Promise<VerbReply> {
  if (!deps.bind) {
    deps.metrics.binds.inc({ result: 'error' });
    return { status: 200, body: { Error: 'sandbox-extender: the bind verb needs cluster mode (serve without --snapshot)' } };
  }
  let args;
  try {
    args = parseBindingArgs(body);
  } catch (err) {
    deps.metrics.binds.inc({ result: 'error' });
    return { status: 200, body: { Error: `sandbox-extender: ${(err as Error).message}` } };
  }
  const outcome = await deps.bind({ podName: args.PodName, podNamespace: args.PodNamespace, podUid: args.PodUID, node: args.Node });
  if (!outcome.ok) {
    deps.metrics.binds.inc({ result: 'error' });
    deps.logger.warn({ pod: `${args.PodNamespace}/${args.PodName}`, node: args.Node, err: outcome.error }, 'bind failed');
    return { status: 200, body: { Error: `sandbox-extender: ${outcome.error}` } };
  }
  deps.metrics.binds.inc({ result: outcome.alreadyBound ? 'already_bound' : 'bound' });
  holdUntilSeenBound(deps, args.PodUID, `${args.PodNamespace}/${args.PodName}`, args.Node);
  deps.logger.debug({ pod: `${args.PodNamespace}/${args.PodName}`, node: args.Node, alreadyBound: outcome.alreadyBound }, 'bind');
  return { status: 200, body: { Error: '' } };
}

function holdUntilSeenBound(deps: VerbDeps, uid: string, key: string, node: string): void {
  const model = deps.service.model;
  const held = model.reservationOf(uid);
  const known = model.pods.get(uid);
  if (held) model.reserve({ uid, key: held.podKey, request: held.request, schedulingFailure: held.failureMark }, node, deps.now());
  else if (known && !known.nodeName) model.reserve({ uid, key, request: known.request, schedulingFailure: known.schedulingFailure }, node, deps.now());
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
