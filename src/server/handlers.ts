/**
 * The extender verbs (k8s.io/kube-scheduler/extender/v1 Filter, Prioritize, Bind), free of HTTP: each parses its
 * body, asks the core once (PlacementService.filterReply, prioritizeReply; the bind check) and encodes the answer
 * as JSON text. A request it cannot use is answered as docs/errors.md says (/filter and /bind in the protocol's
 * Error field, /prioritize HTTP 400); a reply that cannot be encoded or is not delivered releases its reservation.
 */
import type { Logger } from 'pino';
import type { BindOutcome, BindRequest } from '../core/objects/binding.js';
import { explainDecision } from '../core/text/explain.js';
import type { Pod } from '../core/objects/kubeObjects.js';
import type { PlacementService } from '../core/decide/placementService.js';
import {
  messageOf,
  type Answer,
  type DecidedPod,
  type ExtenderArgs,
  type ReservationMade,
} from '../core/decide/replies.js';
import type { Metrics, PlacementResult } from '../observability/metrics.js';
import type { DecisionNotice } from '../observability/notices.js';
import type { RequestProblem } from '../observability/requestLog.js';
import {
  encodeError,
  encodeFilterResult,
  encodeHostPriorities,
  filterError,
  parseBindingArgs,
  parseExtenderArgs,
} from './wire.js';

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

type Verb = 'filter' | 'prioritize';

/** Unreserve: releases the reservation a reply made (only that one: a later decision for the pod is kept). */
function release(deps: VerbDeps, made: ReservationMade): void {
  deps.service.unreserve(made.uid, made);
}

/**
 * The reply of an answer: with `undelivered`, which releases the answer's reservation when it made one; with the
 * `problem` of names given twice (counted here), when there were any.
 */
function answerReply(text: string, deps: VerbDeps, verb: Verb, args: ExtenderArgs, answer: Answer): VerbReply {
  const problem = answer.duplicates > 0 ? duplicateProblem(deps, verb, args, answer.duplicates) : undefined;
  const made = answer.reservation;
  if (!made) return problem ? { status: 200, body: text, problem } : { status: 200, body: text };
  return { status: 200, body: text, undelivered: () => release(deps, made), ...(problem ? { problem } : {}) };
}

/** Names given twice in a request: counted (sandbox_extender_duplicate_candidates_total) and described for the log. */
function duplicateProblem(deps: VerbDeps, verb: Verb, args: ExtenderArgs, duplicates: number): RequestProblem {
  deps.metrics.duplicateCandidates.inc({ verb }, duplicates);
  const list = args.NodeNames ? 'NodeNames' : 'Nodes.items';
  const pod = args.Pod.metadata;
  return {
    reason: 'duplicate_candidates',
    message: `${verb} for pod ${pod?.namespace || 'default'}/${pod?.name ?? ''}: ${list} gave ${duplicates} node${duplicates === 1 ? '' : 's'} more than once; each node is answered once`,
  };
}

function countPlacement(deps: VerbDeps, result: PlacementResult): void {
  deps.metrics.placements.inc({ strategy: deps.service.placer.strategy, result });
}

/**
 * A decision's metrics and Event: its placement result (when counted), a pod the starting limit alone held; for a
 * reservation its locality signal and sampled window (with its pressure gap to the best node in the model, when it
 * has one); then the Event (DecisionNotice), when one is recorded and the decision has one.
 */
function recordDecision(
  deps: VerbDeps,
  args: ExtenderArgs,
  answer: Answer,
  decided: DecidedPod,
  startingLimitHeld: boolean,
): void {
  if (answer.counted) countPlacement(deps, answer.counted);
  if (startingLimitHeld) deps.metrics.startingLimitHeld.inc();
  if (answer.reservation) {
    if (decided.locality) deps.metrics.placementsByLocality.inc({ locality: decided.locality.signal });
    const window = decided.window;
    if (window) {
      deps.metrics.sampledWindowPlacements.inc();
      if (!Number.isNaN(window.pressureGap)) deps.metrics.windowPressureGap.observe(window.pressureGap);
    }
  }
  const explanation = decided.explanation;
  if (!explanation || !deps.onDecision) return;
  const node = explanation.result === 'placed' ? explanation.chosen.name : null;
  deps.onDecision({
    pod: podRef(args.Pod, decided.pod.uid),
    result: explanation.result,
    node,
    message: explainDecision(explanation),
  });
}

function podRef(pod: Pod, uid: string): DecisionNotice['pod'] {
  return { namespace: pod.metadata?.namespace || 'default', name: pod.metadata?.name ?? '', uid };
}

/** POST /filter: ExtenderArgs → ExtenderFilterResult (PlacementService.filterReply). */
export function filterVerb(body: unknown, deps: VerbDeps): VerbReply {
  let args: ExtenderArgs;
  try {
    args = parseExtenderArgs(body);
  } catch (err) {
    return unreadableFilter(deps, messageOf(err));
  }
  const reply = deps.service.filterReply(args, deps);
  if (reply.kind === 'not_ready')
    return { status: 200, body: encodeFilterResult(filterError(`sandbox-extender: not ready: ${reply.reason}`)) };
  if (reply.kind === 'unreadable') return unreadableFilter(deps, reply.message);
  const decided = reply.decided;
  // A pass-through is counted whether or not its reply can be encoded; a decision once its reply is.
  if (!decided && reply.counted) countPlacement(deps, reply.counted);
  let text: string;
  try {
    text = encodeFilterResult({ ...reply, error: '' });
  } catch (err) {
    if (reply.reservation) release(deps, reply.reservation);
    return unencodable(err);
  }
  if (decided) {
    recordDecision(deps, args, reply, decided, reply.startingLimitHeld);
    deps.logger.debug(
      {
        pod: decided.pod.key,
        candidates: decided.candidates,
        feasible: decided.feasible,
        reserved: reply.reservation?.nodeName ?? null,
        podsResourceVersion: decided.podsResourceVersion,
      },
      'filter',
    );
  }
  return answerReply(text, deps, 'filter', args, reply);
}

/** A /filter request that cannot be used: counted as an error, answered in the protocol's Error field (HTTP 200). */
function unreadableFilter(deps: VerbDeps, message: string): VerbReply {
  countPlacement(deps, 'error');
  return {
    status: 200,
    body: encodeFilterResult(filterError(`sandbox-extender: ${message}`)),
    problem: { reason: 'shape', message: `filter: ${message}` },
  };
}

/** POST /prioritize: ExtenderArgs → HostPriorityList (bare array, integer scores 0..10; PlacementService.prioritizeReply). */
export function prioritizeVerb(body: unknown, deps: VerbDeps): VerbReply {
  let args: ExtenderArgs;
  try {
    args = parseExtenderArgs(body);
  } catch (err) {
    return unreadablePrioritize(deps, messageOf(err));
  }
  const reply = deps.service.prioritizeReply(args, deps);
  if (reply.kind === 'not_ready')
    return { status: 503, body: encodeError(`sandbox-extender: not ready: ${reply.reason}`) };
  if (reply.kind === 'unreadable') return unreadablePrioritize(deps, reply.message);
  const scores = reply.scores;
  const text = encodeHostPriorities(reply.hosts, (i) => (i < scores.length ? scores[i]! : 0));
  const decided = reply.decided;
  if (decided) {
    recordDecision(deps, args, reply, decided, false);
    deps.logger.debug(
      {
        pod: decided.pod.key,
        node: reply.reservation?.nodeName ?? null,
        feasible: decided.feasible,
        podsResourceVersion: decided.podsResourceVersion,
      },
      'prioritize',
    );
  }
  return answerReply(text, deps, 'prioritize', args, reply);
}

/** A /prioritize request that cannot be used: counted as an error, answered HTTP 400 (kube-scheduler only logs it). */
function unreadablePrioritize(deps: VerbDeps, message: string): VerbReply {
  countPlacement(deps, 'error');
  return {
    status: 400,
    body: encodeError(`sandbox-extender: ${message}`),
    problem: { reason: 'shape', message: `prioritize: ${message}` },
  };
}

/** A Filter reply that cannot be encoded: the protocol's Error field, HTTP 200 (kube-scheduler shows the text in the pod's Event). */
function unencodable(err: unknown): VerbReply {
  return {
    status: 200,
    body: encodeFilterResult(
      filterError(
        `sandbox-extender: the reply cannot be encoded (objects in the request nested too deeply?): ${messageOf(err)}`,
      ),
    ),
  };
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
    if (denied.doesNotFit)
      deps.logger.info(
        { pod, node: args.Node, reason: denied.reason, podsResourceVersion },
        'bind refused: the node no longer fits',
      );
    else deps.logger.warn({ pod, node: args.Node, reason: denied.reason }, 'bind refused');
    return refuse(
      `bind of ${pod} to ${args.Node} refused: ${denied.reason}`,
      denied.doesNotFit ? 'does_not_fit' : 'refused',
    );
  }
  // Held from the check to the watch: no decision may take the room checked while the Binding is created.
  deps.service.startBinding(args.PodUID, args.Node, deps.now());
  const outcome = await deps.bind({
    podName: args.PodName,
    podNamespace: args.PodNamespace,
    podUid: args.PodUID,
    node: args.Node,
  });
  if (!outcome.ok) {
    deps.logger.warn({ pod, node: args.Node, err: outcome.error }, 'bind failed');
    return refuse(outcome.error);
  }
  deps.metrics.binds.inc({ result: outcome.alreadyBound ? 'already_bound' : 'bound' });
  deps.service.finishBinding(args.PodUID, args.Node, deps.now());
  deps.logger.debug({ pod, node: args.Node, alreadyBound: outcome.alreadyBound, podsResourceVersion }, 'bind');
  return { status: 200, body: encodeError('') };
}
