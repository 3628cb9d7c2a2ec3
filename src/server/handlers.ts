/**
 * The extender verbs, free of HTTP: parse the body → decide in the core → encode the reply as JSON
 * text (written directly: no reply object is built first).
 *
 * Error policy (one place):
 * - /filter: a request that cannot be used (wrong shape, missing Pod or uid, an invalid quantity)
 *   is answered HTTP 200 with the protocol's `Error` field set, because kube-scheduler reads that
 *   field and shows its text in the pod's FailedScheduling event (a non-200 shows only the code).
 *   "Fits nowhere" is never an Error: it is an empty feasible list plus the reasons per node.
 * - /prioritize: kube-scheduler ignores prioritize errors (it logs them), so a bad request is
 *   answered HTTP 400 with `{"Error": "..."}` for the person or tool that sent it.
 * - /bind: every failure is the protocol's `Error` field (HTTP 200); kube-scheduler then forgets
 *   the pod and retries it.
 * - While the cache cannot be trusted (initial sync incomplete, a watch broken too long) the verbs
 *   refuse rather than decide blind; pods of other schedulers are still passed through.
 * - Nothing is reserved or changed unless the request is valid, and a decision whose reply cannot
 *   be encoded, or is not delivered (VerbReply.undelivered), is unreserved.
 * - A pod of another scheduler is passed through before its resources are read: every node kept,
 *   every score 0, nothing reserved (extenders see every profile of the kube-scheduler calling them).
 * - A node kube-scheduler names that the extender does not know goes to FailedNodes with that
 *   reason (filter) or scores 0 (prioritize); a Node object with an invalid allocatable likewise.
 */
import type { Logger } from 'pino';
import { agentSandboxOf } from '../core/agentSandbox.js';
import type { BindOutcome, BindRequest } from '../core/binding.js';
import { explainNoFit, explainPlacement, zeroRequestNote } from '../core/explain.js';
import type { Node, Pod } from '../core/kubeObjects.js';
import type { Candidates, Decision, PlacementService } from '../core/placementService.js';
import { formatFailure, isUnresolvable, onlyStartingLimit } from '../core/reasons.js';
import { toNodeRecord, toPodRecord, type PodRecord } from '../core/records.js';
import type { Metrics, PlacementResult } from '../observability/metrics.js';
import type { DecisionNotice } from '../observability/notices.js';
import type { RequestProblem } from '../observability/requestLog.js';
import { encodeError, encodeFilterResult, encodeHostPriorities, filterError, parseBindingArgs, parseExtenderArgs, type ExtenderArgs } from './wire.js';

export interface VerbDeps {
  readonly service: PlacementService;
  readonly pausedLabel: string;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Current time in ms (the only clock the decisions see). */
  readonly now: () => number;
  /** Null while the verbs may decide; otherwise why they must not (e.g. the initial sync is incomplete). */
  readonly notReady?: () => string | null;
  /** Told of each decision (e.g. to record an Event). */
  readonly onDecision?: (notice: DecisionNotice) => void;
  /** Creates Bindings (cluster mode only). */
  readonly bind?: (request: BindRequest) => Promise<BindOutcome>;
}

/** A verb's answer: HTTP status and the JSON text of the body. */
export interface VerbReply {
  readonly status: number;
  readonly body: string;
  /**
   * Called by the HTTP edge when the reply could not be delivered (its connection closed before all of it was
   * written): kube-scheduler never saw the decision, so what it reserved is released (Unreserve). Set only on a
   * reply whose decision reserved a node.
   */
  readonly undelivered?: () => void;
  /** What was wrong with the request, for the edge to log (at most once per reason a window, with the client's address). */
  readonly problem?: RequestProblem;
}

/**
 * The reply of a decision: with `undelivered`, which releases the decision's reservation (only that one) when it
 * reserved; with the `problem` of names given twice (counted here), when there were any.
 */
function decisionReply(text: string, deps: VerbDeps, verb: 'filter' | 'prioritize', request: ParsedRequest, decision: Decision, atMs: number): VerbReply {
  const duplicates = request.duplicates + decision.scan.duplicates;
  const problem = duplicates > 0 ? duplicateProblem(deps, verb, request, duplicates) : undefined;
  if (!decision.reserved) return problem ? { status: 200, body: text, problem } : { status: 200, body: text };
  const made = { nodeName: decision.reserved, atMs };
  const uid = request.pod.uid;
  return { status: 200, body: text, undelivered: () => deps.service.unreserve(uid, made), ...(problem ? { problem } : {}) };
}

/** Names given twice in a request: counted (sandbox_extender_duplicate_candidates_total) and described for the log. */
function duplicateProblem(deps: VerbDeps, verb: 'filter' | 'prioritize', request: { readonly args: ExtenderArgs }, duplicates: number): RequestProblem {
  deps.metrics.duplicateCandidates.inc({ verb }, duplicates);
  const list = request.args.NodeNames ? 'NodeNames' : 'Nodes.items';
  const pod = request.args.Pod.metadata;
  return {
    reason: 'duplicate_candidates',
    message: `${verb} for pod ${pod?.namespace || 'default'}/${pod?.name ?? ''}: ${list} gave ${duplicates} node${duplicates === 1 ? '' : 's'} more than once; each node is answered once`,
  };
}

/** A pass-through reply, with the problem of names given twice when `firsts` (PlacementService.passThrough) says there were. */
function passThroughReply(body: string, deps: VerbDeps, verb: 'filter' | 'prioritize', args: ExtenderArgs, firsts: readonly number[] | null): VerbReply {
  if (firsts === null) return { status: 200, body };
  const given = args.NodeNames ? args.NodeNames.length : args.Nodes!.items.length;
  return { status: 200, body, problem: duplicateProblem(deps, verb, { args }, given - firsts.length) };
}

interface ParsedRequest {
  readonly args: ExtenderArgs;
  readonly pod: PodRecord;
  readonly candidates: Candidates;
  /** Node objects, one per candidate (nodeCacheCapable: false), to echo the feasible ones; else null. */
  readonly objects: readonly Node[] | null;
  /** Node objects that could not be read: name → reason. */
  readonly badNodes: ReadonlyMap<string, string>;
  /** Node objects dropped because an object of the same name came before (NodeNames repeats are the scan's: CandidateScan.duplicates). */
  readonly duplicates: number;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function countPlacement(deps: VerbDeps, result: PlacementResult): void {
  deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result });
}

/**
 * A placement reserved: counted by the pod's signal on the chosen node (locality on), and when it came from a window
 * kube-scheduler sampled, counted so with its pressure gap to the best node in the model (when it has one).
 */
function countReserved(deps: VerbDeps, decision: Decision): void {
  if (decision.locality) deps.metrics.placementsByLocality.inc({ locality: decision.locality.signal });
  const window = decision.window;
  if (!window) return;
  deps.metrics.sampledWindowPlacements.inc();
  if (!Number.isNaN(window.pressureGap)) deps.metrics.windowPressureGap.observe(window.pressureGap);
}

function podRef(pod: Pod, record: PodRecord): DecisionNotice['pod'] {
  return { namespace: pod.metadata?.namespace || 'default', name: pod.metadata?.name ?? '', uid: record.uid };
}

function parseRequest(args: ExtenderArgs, deps: VerbDeps): ParsedRequest {
  const cache = deps.service.cache;
  // With locality on, the pod's template key and images come along (PlacementService reads them).
  const pod = toPodRecord(args.Pod, cache.dims, { pausedLabel: deps.pausedLabel, locality: deps.service.options.locality, withImages: true });
  if (args.NodeNames) return { args, pod, candidates: { names: args.NodeNames }, objects: null, badNodes: new Map(), duplicates: 0 };
  const names: string[] = [];
  const allocatable: (readonly number[] | null | undefined)[] = [];
  const objects: Node[] = [];
  const badNodes = new Map<string, string>();
  // Each node once, its first object (the candidates and the objects echoed stay index for index).
  const seen = new Set<string>();
  for (const node of args.Nodes!.items) {
    const name = node.metadata!.name!;
    if (seen.has(name)) continue;
    seen.add(name);
    try {
      // A Node object without usable allocatable says nothing new: the cache's record, if it has one, stands.
      const record = toNodeRecord(node, cache.dims);
      allocatable.push(record.allocatable || !cache.hasNode(name) ? record.allocatable : undefined);
      names.push(name);
      objects.push(node);
    } catch (err) {
      badNodes.set(name, `invalid Node object: ${messageOf(err)}`);
    }
  }
  return { args, pod, candidates: { names, allocatable }, objects, badNodes, duplicates: args.Nodes!.items.length - seen.size };
}

/** The nodes of a request, in input order (without reading any of them). */
function requestedNames(args: ExtenderArgs): readonly string[] {
  return args.NodeNames ?? args.Nodes!.items.map((n) => n.metadata!.name!);
}

/** `list` at `firsts` (PlacementService.passThrough: the first appearance of each name), or `list` when that is null. */
function firstAppearances<T>(list: readonly T[], firsts: readonly number[] | null): readonly T[] {
  return firsts === null ? list : firsts.map((i) => list[i]!);
}

/** POST /filter: ExtenderArgs → ExtenderFilterResult. */
export function filterVerb(body: unknown, deps: VerbDeps): VerbReply {
  let request: ParsedRequest;
  try {
    const args = parseExtenderArgs(body);
    if (!deps.service.ownsSchedulerName(args.Pod.spec?.schedulerName)) return passThroughFilter(args, deps);
    const blocked = deps.notReady?.();
    if (blocked) return { status: 200, body: encodeFilterResult(filterError(`sandbox-extender: not ready: ${blocked}`)) };
    request = parseRequest(args, deps);
  } catch (err) {
    countPlacement(deps, 'error');
    return { status: 200, body: encodeFilterResult(filterError(`sandbox-extender: ${messageOf(err)}`)), problem: { reason: 'shape', message: `filter: ${messageOf(err)}` } };
  }
  const now = deps.now();
  const decision = deps.service.filter(request.pod, request.candidates, now);
  const { scan } = decision;
  // Chosen in Filter (one call per pod): that node alone. Otherwise every feasible node, with the reasons of the others.
  const feasible: number[] = [];
  if (deps.service.options.chooseInFilter && decision.chosen >= 0) feasible.push(decision.chosen);
  else for (let i = 0; i < scan.count; i++) if (scan.fits(i)) feasible.push(i);
  const failedNodes = new Map<string, string>();
  const unresolvable = new Map<string, string>();
  for (const [name, failures] of decision.failed) (failures.some(isUnresolvable) ? unresolvable : failedNodes).set(name, failures.map(formatFailure).join('; '));
  for (const [name, reason] of request.badNodes) failedNodes.set(name, reason);
  const objects = request.objects;
  let text: string;
  try {
    text = encodeFilterResult({
      nodes: objects ? feasible.map((i) => objects[i]!) : null,
      nodeNames: objects ? null : feasible.map((i) => scan.names[i]!),
      failedNodes,
      failedAndUnresolvableNodes: unresolvable,
      error: '',
    });
  } catch (err) {
    if (decision.reserved) deps.service.unreserve(request.pod.uid);
    return unencodable(err);
  }
  if (decision.reserved || scan.feasible === 0) {
    countPlacement(deps, decision.result);
    if (scan.feasible === 0 && decision.failed.some(([, failures]) => onlyStartingLimit(failures))) deps.metrics.startingLimitHeld.inc();
    if (decision.reserved) {
      countReserved(deps, decision);
      notifyPlacement(deps, request, decision);
    } else if (deps.onDecision) {
      const message = explainNoFit(scan.count, decision.failed, zeroRequestNote(request.args.Pod, request.pod.request, deps.service.cache.dims));
      deps.onDecision({ pod: podRef(request.args.Pod, request.pod), result: 'no_fit', node: null, message });
    }
  }
  deps.logger.debug({ pod: request.pod.key, candidates: scan.count, feasible: scan.feasible, reserved: decision.reserved, podsResourceVersion: deps.service.cache.podsResourceVersion }, 'filter');
  return decisionReply(text, deps, 'filter', request, decision, now);
}

/** POST /prioritize: ExtenderArgs → HostPriorityList (bare array, integer scores 0..10). */
export function prioritizeVerb(body: unknown, deps: VerbDeps): VerbReply {
  let request: ParsedRequest;
  try {
    const args = parseExtenderArgs(body);
    // Filter, which always comes first, counted the pass-through.
    if (!deps.service.ownsSchedulerName(args.Pod.spec?.schedulerName)) {
      const names = requestedNames(args);
      const firsts = deps.service.passThrough(undefined, names, deps.now());
      return passThroughReply(encodeHostPriorities(firstAppearances(names, firsts), () => 0), deps, 'prioritize', args, firsts);
    }
    const blocked = deps.notReady?.();
    if (blocked) return { status: 503, body: encodeError(`sandbox-extender: not ready: ${blocked}`) };
    request = parseRequest(args, deps);
  } catch (err) {
    countPlacement(deps, 'error');
    return { status: 400, body: encodeError(`sandbox-extender: ${messageOf(err)}`), problem: { reason: 'shape', message: `prioritize: ${messageOf(err)}` } };
  }
  const now = deps.now();
  const decision = deps.service.prioritize(request.pod, request.candidates, now);
  const names = decision.scan.names;
  const hosts = request.badNodes.size === 0 ? names : [...names, ...request.badNodes.keys()];
  const text = encodeHostPriorities(hosts, (i) => (i < names.length ? deps.service.score(decision, i) : 0));
  countPlacement(deps, decision.result);
  if (decision.reserved) {
    countReserved(deps, decision);
    notifyPlacement(deps, request, decision);
  }
  deps.logger.debug({ pod: request.pod.key, node: decision.reserved, feasible: decision.scan.feasible, podsResourceVersion: deps.service.cache.podsResourceVersion }, 'prioritize');
  return decisionReply(text, deps, 'prioritize', request, decision, now);
}

function notifyPlacement(deps: VerbDeps, request: ParsedRequest, decision: Decision): void {
  if (!deps.onDecision) return;
  const chosen = decision.chosenEvaluation!;
  const dims = deps.service.cache.dims;
  // An agent-sandbox pod (its record says so) is named in the message: its kind and template, read from the pod.
  const agentSandboxPod = request.pod.agentSandbox ? agentSandboxOf(request.args.Pod) : null;
  const zero = zeroRequestNote(request.args.Pod, request.pod.request, dims);
  const summary = {
    chosen,
    runnerUp: decision.runnerUpEvaluation,
    candidates: decision.scan.count,
    feasible: decision.scan.feasible,
    locality: decision.locality,
    window: decision.window,
    agentSandbox: agentSandboxPod,
    podNote: zero && agentSandboxPod ? `${zero} (set requests in its SandboxTemplate)` : zero,
  };
  const message = explainPlacement(summary, dims, deps.service.placer.strategy);
  deps.onDecision({ pod: podRef(request.args.Pod, request.pod), result: 'placed', node: chosen.name, message });
}

/** A pod of another scheduler: every node is kept, nothing is read or reserved. */
function passThroughFilter(args: ExtenderArgs, deps: VerbDeps): VerbReply {
  countPlacement(deps, 'passthrough');
  const firsts = deps.service.passThrough(args.Pod.metadata?.uid || undefined, requestedNames(args), deps.now());
  try {
    const nodes = args.Nodes ? firstAppearances(args.Nodes.items, firsts) : null;
    const nodeNames = args.NodeNames ? firstAppearances(args.NodeNames, firsts) : null;
    return passThroughReply(encodeFilterResult({ ...filterError(''), nodes, nodeNames }), deps, 'filter', args, firsts);
  } catch (err) {
    return unencodable(err);
  }
}

/** A Filter reply that cannot be encoded: the protocol's Error field, HTTP 200 (kube-scheduler shows the text in the pod's Event). */
function unencodable(err: unknown): VerbReply {
  return { status: 200, body: encodeFilterResult(filterError(`sandbox-extender: the reply cannot be encoded (objects in the request nested too deeply?): ${messageOf(err)}`)) };
}

/**
 * POST /bind: ExtenderBindingArgs → ExtenderBindingResult (`{"Error": ""}` on success). Binds only
 * what kube-scheduler just decided, and only while the node still fits the pod against the model as
 * it is now (PlacementService.authorizeBind: another scheduler's pod bound there since the decision
 * counts), through the API; on success the pod's reservation moves to the bound node and waits for the
 * watch (SchedulerCache.finishBinding). A refusal because the node no longer fits releases the pod's
 * reservation (kube-scheduler retries the pod); any other refused bind changes nothing. Once allowed, the
 * reservation is held on the node through the API call (SchedulerCache.startBinding: no scheduling failure the
 * watch shows releases it from then on, being an earlier cycle's), and a bind that fails leaves it held until
 * kube-scheduler's retry decides again.
 * The debug line of each bind names the pods' resourceVersion the check saw (SchedulerCache.podsResourceVersion).
 */
export async function bindVerb(body: unknown, deps: VerbDeps): Promise<VerbReply> {
  const refuse = (error: string, result: 'error' | 'refused' | 'does_not_fit' = 'error'): VerbReply => {
    deps.metrics.binds.inc({ result });
    return { status: 200, body: encodeError(`sandbox-extender: ${error}`) };
  };
  if (!deps.bind) return refuse('the bind verb needs cluster mode (serve without --snapshot)');
  let args;
  try {
    args = parseBindingArgs(body);
  } catch (err) {
    return { ...refuse(messageOf(err)), problem: { reason: 'shape', message: `bind: ${messageOf(err)}` } };
  }
  const blocked = deps.notReady?.();
  if (blocked) return refuse(`not ready: ${blocked}`);
  const pod = `${args.PodNamespace}/${args.PodName}`;
  const podsResourceVersion = deps.service.cache.podsResourceVersion;
  const denied = deps.service.authorizeBind(args.PodUID, args.Node, deps.now());
  if (denied) {
    // A node that filled since the decision is ordinary contention (another scheduler shares the nodes); the rest is not.
    if (denied.doesNotFit) deps.logger.info({ pod, node: args.Node, reason: denied.reason, podsResourceVersion }, 'bind refused: the node no longer fits');
    else deps.logger.warn({ pod, node: args.Node, reason: denied.reason }, 'bind refused');
    return refuse(`bind of ${pod} to ${args.Node} refused: ${denied.reason}`, denied.doesNotFit ? 'does_not_fit' : 'refused');
  }
  // Held from the check to the watch: no decision may take the room checked while the Binding is created.
  deps.service.startBinding(args.PodUID, args.Node, deps.now());
  const outcome = await deps.bind({ podName: args.PodName, podNamespace: args.PodNamespace, podUid: args.PodUID, node: args.Node });
  if (!outcome.ok) {
    deps.logger.warn({ pod, node: args.Node, err: outcome.error }, 'bind failed');
    return refuse(outcome.error);
  }
  deps.metrics.binds.inc({ result: outcome.alreadyBound ? 'already_bound' : 'bound' });
  deps.service.finishBinding(args.PodUID, args.Node, deps.now());
  deps.logger.debug({ pod, node: args.Node, alreadyBound: outcome.alreadyBound, podsResourceVersion }, 'bind');
  return { status: 200, body: encodeError('') };
}
