/**
 * The extender's decisions over the scheduler cache: Filter and Prioritize (Score) with their whole replies, the
 * bind check and the ranked view, each placement reserved at the moment of decision (SchedulerCache.assume) — by
 * Filter with chooseInFilter or when one node passes (Kubernetes v1.36 pkg/scheduler/schedule_one.go schedulePod
 * takes a single feasible node directly: ADR 0003, 0005), else by Prioritize. Pods of another spec.schedulerName
 * are passed through. docs/model.md (Reservations) has the rules.
 */
import { evaluateCandidate, type Evaluation } from '../fit/evaluation.js';
import { addToOfferSet, emptyOfferSet, OfferLog, offerIncludes } from '../fit/offers.js';
import { checkPercentageOfNodesToScore, sampledWindow } from '../fit/kubeSchedulerSampling.js';
import { COLD, SIGNALS, type LocalityRecordOptions, type LocalitySignal } from '../objects/templateLocality.js';
import { rankByLocality, type LocalityChoice, type Placer } from '../fit/placer.js';
import type { DecisionExplanation } from '../text/explain.js';
import { formatFailures, onlyStartingLimit, sortFailures, type FitFailure } from '../fit/reasons.js';
import type { PodRecord } from '../objects/records.js';
import {
  firstAppearances,
  messageOf,
  readRequest,
  requestedNames,
  type DecidedPod,
  type ExtenderArgs,
  type FilterReply,
  type NotReadyReply,
  type PrioritizeReply,
  type ReadRequest,
  type ReplyContext,
  type UnreadableReply,
} from './replies.js';
import { CandidateScan, FITS, SeenNodes } from '../fit/scan.js';
import { RejectedPods, type RejectedPodsOptions } from '../requeue/rejections.js';
import type { SchedulerCacheView } from '../cache/cacheView.js';
import type { AssumeResult, SchedulerCache } from '../cache/schedulerCache.js';
import { compareByLoad, compareRanked } from '../fit/strategies/strategy.js';

/** The nodes kube-scheduler asks about: names, and with nodeCacheCapable: false the allocatable of their objects. */
export interface Candidates {
  readonly names: readonly string[];
  /** Per name: allocatable from the request's Node object (null: none usable); undefined: the cache's record stands. */
  readonly allocatable?: readonly (readonly number[] | null | undefined)[] | undefined;
}

export type DecisionResult = 'placed' | 'no_fit' | 'passthrough';

/** Why the bind verb must not carry out a bind (PlacementService.authorizeBind). */
export interface BindRefusal {
  /** The node does not fit the pod against the model now (the pod's reservation was released); false: not what kube-scheduler was offered. */
  readonly doesNotFit: boolean;
  readonly reason: string;
}

export interface Decision {
  readonly result: DecisionResult;
  /** This call's scan (valid until the next call on this service): names, fit status, pressure, counts. */
  readonly scan: CandidateScan;
  /** Index of the chosen candidate, or -1 (none fits, passthrough, or Filter left the choice to Prioritize). */
  readonly chosen: number;
  /** Index of the candidate the strategy would have taken next, or -1. */
  readonly runnerUp: number;
  /** Node reserved by this call, or null. */
  readonly reserved: string | null;
  /** What the cache did with the choice (null when nothing was chosen). */
  readonly assumed: AssumeResult | null;
  /** The chosen node and the runner-up in full, as they were before this decision's reservation (for its explanation). */
  readonly chosenEvaluation: Evaluation | null;
  readonly runnerUpEvaluation: Evaluation | null;
  /**
   * The candidates that do not fit, with their failures, in input order — when the reply reports them
   * (two calls per pod, or nothing fits); empty otherwise.
   */
  readonly failed: readonly (readonly [string, readonly FitFailure[]])[];
  /** Locality on and a node chosen: the pod's signal on it and how many candidates were in the band; else null. */
  readonly locality: DecisionLocality | null;
  /** A node chosen from a window kube-scheduler cut short by sampling (DecisionWindow); else null. */
  readonly window: DecisionWindow | null;
}

/**
 * A choice from a window kube-scheduler cut short by sampling (kubeSchedulerSampling.ts sampledWindow): with
 * percentageOfNodesToScore below 100 it stopped filtering once it had found its cap of feasible nodes, and offered
 * the extender those `offered` of the cluster's `nodes`. What the model says of the nodes outside the window: the
 * extender does not know kube-scheduler's own filters (taints, node affinity and selectors), so a node named here
 * is the best in the extender's model, not one kube-scheduler has checked. A window its own filters narrowed (it
 * found fewer than its cap) has none.
 */
export interface DecisionWindow {
  /** Nodes kube-scheduler offered, each name once: numFeasibleNodesToFind(p, nodes). Two calls per pod: Filter's, before the extender filtered them. */
  readonly offered: number;
  /** Node objects in the extender's model: kube-scheduler's count of the cluster's nodes. */
  readonly nodes: number;
  /** The strategy's pressure order (+1 the lowest is best, −1 the highest); null: it ignores load, and nothing was searched. */
  readonly pressureSign: 1 | -1 | null;
  /**
   * The best node for the pod in the model, when it is not a candidate of the decision: it fits (the fit rule and
   * starting limit of the scan) and its projected pressure is better, in the strategy's order, than every
   * candidate's of known capacity. Null when a candidate is as good (or nothing was searched).
   */
  readonly clusterBest: { readonly name: string; readonly projectedPressure: number } | null;
  /**
   * pressureSign × (the chosen node's projected pressure − the best projected pressure in the model, a candidate or
   * not): ≥ 0, 0 when the chosen node is the best; NaN when the chosen node's capacity is unknown or nothing was
   * searched. With locality on it includes what the band gave up for locality.
   */
  readonly pressureGap: number;
}

export interface DecisionLocality {
  /** The pod's signal on the chosen node. */
  readonly signal: LocalitySignal;
  /** Candidates within the pressure band (0 when the choice was not ranked: one feasible node, or a strategy that ignores load). */
  readonly inBand: number;
}

/** An evaluation in the ranked view, with the pod's locality signal on the node when locality is on. */
export type RankedEvaluation = Evaluation & { readonly locality?: LocalitySignal; readonly inBand?: boolean };

/** Locality of the placement service: the pressure band, and how the pod being placed is read (its key and images). */
export interface LocalityOptions extends LocalityRecordOptions {
  /** Absolute projected pressure above the best within which locality decides (locality.pressureBand). */
  readonly pressureBand: number;
}

export interface PlacementServiceOptions {
  /** Pods with another spec.schedulerName are passed through. */
  readonly schedulerName: string;
  /** Filter answers with the single node it chooses (one call per pod). */
  readonly chooseInFilter: boolean;
  /** Record the candidates of each request, so the bind verb can check what kube-scheduler offered (cluster mode with bind). */
  readonly recordOffers: boolean;
  /** How long an offer counts (ms): the reservation TTL. */
  readonly offerTtlMs: number;
  /** Remember the pods Filter rejects for capacity, to requeue them when capacity frees (rejections.ts); unset: not remembered. */
  readonly rejectedPods?: RejectedPodsOptions;
  /**
   * Template locality (the cache must have it too: SchedulerCacheOptions.locality): the load-aware
   * strategies rank the candidates within `pressureBand` of the best projected pressure by locality
   * first. Unset: off, and nothing of it runs.
   */
  readonly locality?: LocalityOptions;
  /**
   * The calling kube-scheduler's percentageOfNodesToScore, 0–100 (config kubeScheduler.percentageOfNodesToScore):
   * below 100, a decision from a window it cut short by sampling gets a DecisionWindow. Unset: 100, never.
   */
  readonly percentageOfNodesToScore?: number;
}

const NO_FAILURES: ReadonlyMap<string, string> = new Map();
const NO_SCORES: readonly number[] = [];

/** `items` at each candidate of `scan` that fits, or at `only` alone when it is ≥ 0 (index for index with the scan). */
function feasibleOf<T>(items: readonly T[], scan: CandidateScan, only: number): T[] {
  if (only >= 0) return [items[only]!];
  const out: T[] = [];
  for (let i = 0; i < scan.count; i++) if (scan.fits(i)) out.push(items[i]!);
  return out;
}

export class PlacementService {
  /** The scheduler cache, read-only: what the edge, the CLI and the debug view may read. */
  readonly cache: SchedulerCacheView;
  private readonly scan: CandidateScan;
  /** Names already given in a pass-through's list (the scan keeps its own). */
  private readonly seen = new SeenNodes();
  private readonly offers: OfferLog | null;
  /** The extender's own pods that Filter rejected for capacity (null unless options.rejectedPods). */
  readonly rejectedPods: RejectedPods | null;
  private readonly percentageOfNodesToScore: number;
  /**
   * The pod of the last Filter and how many nodes it was offered: kube-scheduler calls Prioritize for that pod next,
   * with only the nodes that passed Filter, so a window's size is read from here (null uid: none kept).
   */
  private readonly lastFilter: { uid: string | null; offered: number } = { uid: null, offered: 0 };
  /** Prioritize scores of the last prioritizeReply, one per candidate (reused: PrioritizeAnswer.scores). */
  private readonly scores: number[] = [];

  /**
   * @param schedulerCache the cache whose decision side this service is: the only holder of its
   *   assume, startBinding, finishBinding, forget and expire (the informer side goes through sync.ts CacheUpdates).
   * @throws RangeError when options.percentageOfNodesToScore is not an integer 0–100.
   */
  constructor(
    private readonly schedulerCache: SchedulerCache,
    readonly placer: Placer,
    readonly options: PlacementServiceOptions,
  ) {
    this.cache = schedulerCache;
    this.scan = new CandidateScan(
      (name) => schedulerCache.nodeInfo(name),
      schedulerCache.dims,
      () => schedulerCache.nodeSetVersion,
    );
    this.offers = options.recordOffers ? new OfferLog(options.offerTtlMs) : null;
    this.rejectedPods = options.rejectedPods ? new RejectedPods(schedulerCache, options.rejectedPods) : null;
    this.percentageOfNodesToScore = options.percentageOfNodesToScore ?? 100;
    checkPercentageOfNodesToScore(this.percentageOfNodesToScore);
  }

  /** Whether this extender places pods of `schedulerName` (spec.schedulerName; empty means default-scheduler). */
  ownsSchedulerName(schedulerName: string | null | undefined): boolean {
    return (schedulerName || 'default-scheduler') === this.options.schedulerName;
  }

  /**
   * Filter (see the module header). Expires old reservations first. With chooseInFilter the reply is
   * the chosen node alone; otherwise every feasible node, and `failed` lists the others. A pod that
   * fits nowhere is remembered for a requeue (rejectedPods), one that fits somewhere forgotten.
   */
  filter(pod: PodRecord, candidates: Candidates, nowMs: number): Decision {
    const scan = this.scanFor(pod, candidates, nowMs);
    this.lastFilter.uid = pod.uid;
    this.lastFilter.offered = scan.count;
    if (scan.feasible === 0) {
      const rejected = this.decision('no_fit', -1, -1, pod, nowMs, true);
      this.rejectedPods?.remember(pod, rejected.failed, nowMs);
      return rejected;
    }
    this.rejectedPods?.forget(pod.uid);
    const locality = this.localityChoice(pod, nowMs);
    if (this.options.chooseInFilter) {
      const { chosen, runnerUp } = this.placer.choose(scan, locality);
      return this.decision('placed', chosen, runnerUp, pod, nowMs, false, locality);
    }
    if (scan.feasible > 1) return this.decision('placed', -1, -1, pod, nowMs, true);
    let only = 0;
    while (!scan.fits(only)) only++;
    return this.decision('placed', only, -1, pod, nowMs, true, locality);
  }

  /**
   * Filter's whole reply to kube-scheduler's request, as data (replies.ts FilterAnswer): a pod of another scheduler
   * passed through (every node kept, each name once, nothing read or reserved); else, unless `context.notReady`
   * says not to decide, the pod read and decided ({@link filter}): with chooseInFilter and a node chosen, that node
   * alone, otherwise every node that fits, and the others sorted into FailedNodes and FailedAndUnresolvableNodes
   * (reasons.ts sortFailures; a Node object that cannot be read goes to FailedNodes). What a decision reserved is
   * in `reservation`. No per-candidate object is made for a node that fits.
   */
  filterReply(args: ExtenderArgs, context: ReplyContext): FilterReply {
    if (!this.ownsSchedulerName(args.Pod.spec?.schedulerName)) {
      const names = requestedNames(args);
      const firsts = this.passThrough(args.Pod.metadata?.uid || undefined, names, context.now());
      return {
        kind: 'answer',
        counted: 'passthrough',
        duplicates: firsts === null ? 0 : names.length - firsts.length,
        reservation: null,
        decided: null,
        nodes: args.Nodes ? firstAppearances(args.Nodes.items, firsts) : null,
        nodeNames: args.NodeNames ? firstAppearances(args.NodeNames, firsts) : null,
        failedNodes: NO_FAILURES,
        failedAndUnresolvableNodes: NO_FAILURES,
        startingLimitHeld: false,
      };
    }
    const request = this.readOwn(args, context);
    if (request.kind !== 'read') return request;
    const nowMs = context.now();
    const { pod, objects } = request;
    const decision = this.filter(pod, request.candidates, nowMs);
    const { scan } = decision;
    // Chosen in Filter (one call per pod): that node alone. Otherwise every feasible node, with the reasons of the others.
    const only = this.options.chooseInFilter ? decision.chosen : -1;
    const { failedNodes, failedAndUnresolvableNodes } = sortFailures(decision.failed, request.unreadable);
    const reported = decision.reserved !== null || scan.feasible === 0;
    const explanation = decision.reserved
      ? this.placementExplanation(args, pod, decision)
      : scan.feasible === 0
        ? this.noFitExplanation(args, pod, decision)
        : null;
    return {
      kind: 'answer',
      counted: reported ? decision.result : null,
      duplicates: request.duplicates + scan.duplicates,
      reservation: decision.reserved ? { uid: pod.uid, nodeName: decision.reserved, atMs: nowMs } : null,
      decided: this.decided(pod, decision, explanation),
      nodes: objects ? feasibleOf(objects, scan, only) : null,
      nodeNames: objects ? null : feasibleOf(scan.names, scan, only),
      failedNodes,
      failedAndUnresolvableNodes,
      startingLimitHeld: scan.feasible === 0 && decision.failed.some(([, failures]) => onlyStartingLimit(failures)),
    };
  }

  /**
   * Prioritize's whole reply, as data (replies.ts PrioritizeAnswer): a pod of another scheduler scores 0 on every
   * node (each name once; Filter, which always comes first, counted it); else, unless `context.notReady` says not
   * to decide, the pod read and decided ({@link prioritize}), each candidate scored (Placer.score), a Node object
   * that cannot be read last with 0.
   */
  prioritizeReply(args: ExtenderArgs, context: ReplyContext): PrioritizeReply {
    if (!this.ownsSchedulerName(args.Pod.spec?.schedulerName)) {
      const names = requestedNames(args);
      const firsts = this.passThrough(undefined, names, context.now());
      const hosts = firstAppearances(names, firsts);
      return {
        kind: 'answer',
        counted: null,
        duplicates: firsts === null ? 0 : names.length - firsts.length,
        reservation: null,
        decided: null,
        hosts,
        scores: NO_SCORES,
      };
    }
    const request = this.readOwn(args, context);
    if (request.kind !== 'read') return request;
    const nowMs = context.now();
    const { pod } = request;
    const decision = this.prioritize(pod, request.candidates, nowMs);
    const { scan } = decision;
    const scores = this.scores;
    scores.length = 0;
    for (let i = 0; i < scan.count; i++) scores.push(this.placer.score(scan, i, decision.chosen));
    const names = scan.names;
    const explanation = decision.reserved ? this.placementExplanation(args, pod, decision) : null;
    return {
      kind: 'answer',
      counted: decision.result,
      duplicates: request.duplicates + scan.duplicates,
      reservation: decision.reserved ? { uid: pod.uid, nodeName: decision.reserved, atMs: nowMs } : null,
      decided: this.decided(pod, decision, explanation),
      hosts: request.unreadable.size === 0 ? names : [...names, ...request.unreadable.keys()],
      scores,
    };
  }

  /** Prioritize: the strategy's pick scores 10 (Placer.score) and is reserved. Expires old reservations first. */
  prioritize(pod: PodRecord, candidates: Candidates, nowMs: number): Decision {
    const scan = this.scanFor(pod, candidates, nowMs);
    const locality = this.localityChoice(pod, nowMs);
    const { chosen, runnerUp } = this.placer.choose(scan, locality);
    return this.decision(chosen >= 0 ? 'placed' : 'no_fit', chosen, runnerUp, pod, nowMs, false, locality);
  }

  /**
   * A pod of another scheduler: nothing is read or reserved; its candidates are recorded for the bind check (with a
   * `uid`), and its reply names each node once (as the scan does for the extender's own pods).
   * @returns null when no name is given twice; else the index of each name's first appearance, in order.
   */
  passThrough(uid: string | undefined, names: readonly string[], nowMs: number): number[] | null {
    const offered = this.offers && uid ? emptyOfferSet(this.cache.nodeIdBound) : undefined;
    const seen = this.seen;
    seen.reset();
    let firsts: number[] | null = null;
    for (let i = 0; i < names.length; i++) {
      const info = this.cache.nodeInfo(names[i]!);
      if (seen.repeat(names[i]!, info)) {
        firsts ??= Array.from({ length: i }, (_, j) => j);
        continue;
      }
      firsts?.push(i);
      if (info && offered) addToOfferSet(offered, info.id);
    }
    if (offered) this.offers!.record(uid!, { offered, atMs: nowMs, own: false, request: null });
    return firsts;
  }

  /** Prioritize scores of the last scan, one per candidate in input order (see Placer.score). */
  score(decision: Decision, i: number): number {
    return this.placer.score(decision.scan, i, decision.chosen);
  }

  /**
   * The bind verb authorized the pod's Binding to `nodeName` (authorizeBind) and is about to create it
   * (SchedulerCache.startBinding): the room it checked stays held, and no scheduling failure releases it.
   */
  startBinding(uid: string, nodeName: string, nowMs: number): void {
    this.schedulerCache.startBinding(uid, nodeName, nowMs);
  }

  /** The bind verb created the pod's Binding to `nodeName` (SchedulerCache.finishBinding). */
  finishBinding(uid: string, nodeName: string, nowMs: number): void {
    this.schedulerCache.finishBinding(uid, nodeName, nowMs);
  }

  /**
   * Unreserve: the answer carrying a decision could not be encoded or delivered; its reservation goes
   * (SchedulerCache.forget: unreserved). With `made` (the node the decision reserved and the time it was made), only
   * that reservation goes: one a later decision for the pod made, or that its bind moved on, is kept.
   */
  unreserve(uid: string, made?: { readonly nodeName: string; readonly atMs: number }): void {
    if (made) {
      const reservation = this.cache.reservation(uid);
      if (
        !reservation ||
        reservation.bindingStarted ||
        reservation.nodeName !== made.nodeName ||
        reservation.reservedAtMs !== made.atMs
      )
        return;
    }
    this.schedulerCache.forget(uid);
  }

  /** Releases the reservations whose deadline is ≤ `nowMs` (SchedulerCache.expire: expired). Every verb sweeps first; serve sweeps on a timer too. */
  sweep(nowMs: number): void {
    this.schedulerCache.expire(nowMs);
  }

  /**
   * Whether the bind verb may bind pod `uid` to `nodeName` now: only what kube-scheduler just decided,
   * and only while it still fits. The node must have been a candidate in a Filter or Prioritize this
   * process answered for the pod within the reservation TTL. For the extender's own pods it must also
   * fit the pod against the model as it is now — the node it chose included (another scheduler's pod
   * bound there since the decision counts from the moment the watch shows it; the pod's own
   * reservation is left out) — unless the pod is already bound to it (a retried bind). A node whose
   * capacity the cache does not know passes, as at Filter (ADR 0002).
   *
   * A refusal because the node does not fit (`doesNotFit`) releases the pod's reservation, as
   * kube-scheduler's Unreserve would: its binding cycle fails, it forgets the pod and retries it, and
   * the next Filter decides again. Any other refusal touches nothing.
   * @returns null when allowed, else why not.
   */
  authorizeBind(uid: string, nodeName: string, nowMs: number): BindRefusal | null {
    if (!this.offers) return null;
    const offer = this.offers.get(uid, nowMs);
    if (!offer)
      return {
        doesNotFit: false,
        reason: `no filter or prioritize for pod UID ${uid} was answered by this extender within the reservation TTL: only a pod kube-scheduler has just scheduled is bound`,
      };
    const info = this.cache.nodeInfo(nodeName);
    if (!info || !offerIncludes(offer.offered, info.id))
      return {
        doesNotFit: false,
        reason: `node ${nodeName} was not among the candidates kube-scheduler offered for pod UID ${uid}`,
      };
    if (!offer.own || this.cache.pod(uid)?.nodeName === nodeName) return null;
    const own = this.cache.reservation(uid);
    // Chosen from the request's own Node object (nodeCacheCapable: false) before the watch showed the node: nothing newer to check against.
    if (!info.hasNode && own?.nodeName === nodeName) return null;
    const evaluation = evaluateCandidate(nodeName, info, undefined, offer.request!, own, this.cache.dims);
    if (evaluation.failures.length === 0) return null;
    this.schedulerCache.forget(uid);
    return {
      doesNotFit: true,
      reason: `node ${nodeName} does not fit pod UID ${uid} now: ${formatFailures(evaluation.failures)}`,
    };
  }

  /**
   * Every candidate evaluated, nodes that fit first, in least_loaded order (name last); with locality
   * on, the candidates within the pressure band ranked by locality first, as least_loaded would, and
   * each evaluation carries the pod's signal on its node. Nothing is reserved.
   */
  rank(pod: PodRecord, candidates: Candidates, nowMs: number): RankedEvaluation[] {
    const scan = this.scan.run(pod.request, candidates.names, {
      allocatableOverrides: candidates.allocatable,
      own: this.cache.reservation(pod.uid),
    });
    const locality = this.localityChoice(pod, nowMs);
    if (locality) rankByLocality(scan, locality, 1);
    const order = Array.from({ length: scan.count }, (_, i) => i);
    order.sort((i, j) => {
      if (scan.fits(i) !== scan.fits(j)) return scan.fits(i) ? -1 : 1;
      const names = scan.names;
      return (
        (locality ? compareRanked(scan, i, j, 1) : compareByLoad(scan, i, j, 1)) ||
        (names[i]! < names[j]! ? -1 : names[i]! > names[j]! ? 1 : 0)
      );
    });
    if (!locality) return order.map((i) => scan.evaluation(i));
    return order.map((i) => ({
      ...scan.evaluation(i),
      locality: this.signalOf(scan, i, locality),
      inBand: scan.localityRank[i]! > 0,
    }));
  }

  /** A request of one of the extender's own pods, read; or why it is not decided (not ready, or the pod unreadable). */
  private readOwn(
    args: ExtenderArgs,
    context: ReplyContext,
  ): (ReadRequest & { readonly kind: 'read' }) | NotReadyReply | UnreadableReply {
    const blocked = context.notReady?.();
    if (blocked) return { kind: 'not_ready', reason: blocked };
    try {
      // With locality on, the pod's template key and images come along (the decision reads them).
      const podOptions = { pausedLabel: context.pausedLabel, locality: this.options.locality, withImages: true };
      return { kind: 'read', ...readRequest(args, this.cache.dims, podOptions, (name) => this.cache.hasNode(name)) };
    } catch (err) {
      return { kind: 'unreadable', message: messageOf(err) };
    }
  }

  /** What a decision tells besides the reply (replies.ts DecidedPod). */
  private decided(pod: PodRecord, decision: Decision, explanation: DecisionExplanation | null): DecidedPod {
    const { scan } = decision;
    return {
      pod,
      candidates: scan.count,
      feasible: scan.feasible,
      podsResourceVersion: this.cache.podsResourceVersion,
      locality: decision.locality,
      window: decision.window,
      explanation,
    };
  }

  private placementExplanation(args: ExtenderArgs, record: PodRecord, decision: Decision): DecisionExplanation {
    const { scan } = decision;
    return {
      result: 'placed',
      pod: args.Pod,
      record,
      chosen: decision.chosenEvaluation!,
      runnerUp: decision.runnerUpEvaluation,
      candidates: scan.count,
      feasible: scan.feasible,
      locality: decision.locality,
      window: decision.window,
      dims: this.cache.dims,
      strategy: this.placer.strategy,
    };
  }

  private noFitExplanation(args: ExtenderArgs, record: PodRecord, decision: Decision): DecisionExplanation {
    return {
      result: 'no_fit',
      pod: args.Pod,
      record,
      candidates: decision.scan.count,
      failed: decision.failed,
      dims: this.cache.dims,
    };
  }

  /** The pod's locality for a choice, when locality is on and the strategy ranks by it; else undefined. */
  private localityChoice(pod: PodRecord, nowMs: number): LocalityChoice | undefined {
    const band = this.options.locality?.pressureBand;
    const view = this.cache.locality;
    if (band === undefined || view === null || !this.placer.ranksByLocality) return undefined;
    return { view, query: view.query(pod, nowMs), band };
  }

  /** The pod's signal on candidate `i`: from the scan's locality rank when it was ranked there, else asked. */
  private signalOf(scan: CandidateScan, i: number, locality: LocalityChoice): LocalitySignal {
    if (scan.localityRanked && scan.localityRank[i]! > 0) return SIGNALS[scan.localityRank[i]! - 1]!;
    const id = scan.nodeId(i);
    return SIGNALS[id < 0 ? COLD : locality.view.signal(locality.query, id)]!;
  }

  private scanFor(pod: PodRecord, candidates: Candidates, nowMs: number): CandidateScan {
    this.sweep(nowMs);
    const offered = this.offers ? emptyOfferSet(this.cache.nodeIdBound) : undefined;
    this.scan.run(pod.request, candidates.names, {
      allocatableOverrides: candidates.allocatable,
      own: this.cache.reservation(pod.uid),
      offered,
    });
    if (offered) this.offers!.record(pod.uid, { offered, atMs: nowMs, own: true, request: pod.request });
    return this.scan;
  }

  /** Everything that reads the cache is taken before the reservation changes it; then the choice is assumed. */
  private decision(
    result: DecisionResult,
    chosen: number,
    runnerUp: number,
    pod: PodRecord,
    nowMs: number,
    reportFailures: boolean,
    localityChoice?: LocalityChoice,
  ): Decision {
    const scan = this.scan;
    const failed: [string, readonly FitFailure[]][] = [];
    if (reportFailures || chosen < 0)
      for (let i = 0; i < scan.count; i++)
        if (!scan.fits(i)) failed.push([scan.names[i]!, scan.evaluation(i).failures]);
    const base = {
      result,
      scan,
      chosen,
      runnerUp,
      failed,
      chosenEvaluation: null,
      runnerUpEvaluation: null,
      reserved: null,
      assumed: null,
      locality: null,
      window: null,
    };
    if (chosen < 0) return base;
    const chosenEvaluation = scan.evaluation(chosen);
    const runnerUpEvaluation = runnerUp >= 0 ? scan.evaluation(runnerUp) : null;
    const locality = localityChoice
      ? { signal: this.signalOf(scan, chosen, localityChoice), inBand: scan.localityRanked ? scan.inBand : 0 }
      : null;
    const window = this.windowOf(scan, chosen, pod.uid);
    const node = scan.names[chosen]!;
    const assumed = this.schedulerCache.assume(pod, node, nowMs);
    return {
      ...base,
      chosenEvaluation,
      runnerUpEvaluation,
      reserved: assumed === 'assumed' ? node : null,
      assumed,
      locality,
      window,
    };
  }

  /**
   * The window of a choice (DecisionWindow): null, in O(1), unless kube-scheduler cut the pod's window short by
   * sampling (sampledWindow: the nodes it offered, at the pod's Filter when there was one, equal its cap and are
   * fewer than the Node objects in the model); else, for a load-aware strategy, the best candidate and the best
   * node that is not one (CandidateScan.bestNotOffered), O(nodes in the model × dimensions) without allocating per
   * node.
   */
  private windowOf(scan: CandidateScan, chosen: number, uid: string): DecisionWindow | null {
    if (this.percentageOfNodesToScore === 100) return null;
    // Two calls per pod: Prioritize is sent only what passed Filter; the window is what Filter was sent.
    const offered = this.lastFilter.uid === uid ? this.lastFilter.offered : scan.count;
    const nodes = this.cache.size.nodes;
    if (!sampledWindow(this.percentageOfNodesToScore, offered, nodes)) return null;
    const sign = this.placer.pressureSign;
    if (sign === null) return { offered, nodes, pressureSign: null, clusterBest: null, pressureGap: NaN };
    let bestOffered = NaN;
    for (let i = 0; i < scan.count; i++) {
      const p = scan.pressure[i]!;
      if (scan.status[i] === FITS && (Number.isNaN(bestOffered) || sign * (p - bestOffered) < 0)) bestOffered = p;
    }
    const outside = scan.bestNotOffered(this.cache.nodeInfos(), sign);
    // A node of known capacity comes before every node of unknown capacity (NaN here), as in the strategies' order.
    const better = outside !== null && (Number.isNaN(bestOffered) || sign * (outside.pressure - bestOffered) < 0);
    const best = better ? outside.pressure : bestOffered;
    return {
      offered,
      nodes,
      pressureSign: sign,
      clusterBest: better ? { name: outside.info.name, projectedPressure: outside.pressure } : null,
      // Math.max: 0 rather than −0 when equal (sign −1); NaN stays NaN.
      pressureGap: Math.max(0, sign * (scan.pressure[chosen]! - best)),
    };
  }
}
