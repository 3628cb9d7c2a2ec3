/**
 * The extender's decisions over the cluster model: Filter, Prioritize (Score) and the ranked view,
 * with the reservation made at the moment of decision.
 *
 * Where a reservation is made (keyed by pod UID; the same UID again replaces it):
 * - Prioritize reserves the node it scores 10.
 * - Filter reserves when exactly one node passes, because kube-scheduler then skips Prioritize
 *   (pkg/scheduler/schedule_one.go: a single feasible node is chosen directly).
 * A pod's own earlier reservation is left out of the totals it is evaluated against, so a retried
 * pod never competes with itself.
 *
 * Pods whose spec.schedulerName is not the extender's are passed through: Filter keeps every node,
 * Prioritize scores every node 0, nothing is reserved (extenders are called for every profile of the
 * kube-scheduler process that calls them). Their requests still count once they are bound.
 */
import type { ClusterModel } from './clusterModel.js';
import { evaluate, scoreEvaluations, compareCandidates, type Evaluation, type NodeView, type Placer } from './placement.js';
import type { FitFailure } from './reasons.js';
import type { NodeRecord, PodRecord } from './records.js';
import type { NodeReservations } from './reservations.js';

/** A node kube-scheduler asked about: by name (nodeCacheCapable) or with its object (its allocatable wins). */
export interface Candidate {
  readonly name: string;
  readonly node?: NodeRecord;
}

export type DecisionResult = 'placed' | 'no_fit' | 'passthrough';

export interface FilterOutcome {
  readonly result: DecisionResult;
  readonly evaluations: readonly Evaluation[];
  /** Names that fit, in input order. */
  readonly feasible: readonly string[];
  /** Per node that does not fit: its failures. */
  readonly failed: ReadonlyMap<string, readonly FitFailure[]>;
  /** Node reserved by this call (single feasible node), if any. */
  readonly reserved: string | null;
}

export interface PrioritizeOutcome {
  readonly result: DecisionResult;
  readonly evaluations: readonly Evaluation[];
  /** One score per candidate, input order, integers 0..10. */
  readonly scores: readonly number[];
  readonly chosen: Evaluation | null;
  readonly runnerUp: Evaluation | null;
  readonly feasible: number;
}

export interface PlacementServiceOptions {
  /** Pods with another spec.schedulerName are passed through. */
  readonly schedulerName: string;
}

export class PlacementService {
  constructor(
    readonly model: ClusterModel,
    readonly placer: Placer,
    private readonly options: PlacementServiceOptions,
  ) {}

  /** Whether this extender places pods of `schedulerName` (spec.schedulerName; empty means default-scheduler). */
  ownsSchedulerName(schedulerName: string | null | undefined): boolean {
    return (schedulerName || 'default-scheduler') === this.options.schedulerName;
  }

  /** Whether this extender places `pod` (its schedulerName matches). */
  owns(pod: PodRecord): boolean {
    return this.ownsSchedulerName(pod.schedulerName);
  }

  /** Filter: which candidates can take `pod` now. Expires old reservations first. */
  filter(pod: PodRecord, candidates: readonly Candidate[], nowMs: number): FilterOutcome {
    this.model.expire(nowMs);
    if (!this.owns(pod)) {
      return { result: 'passthrough', evaluations: [], feasible: candidates.map((c) => c.name), failed: new Map(), reserved: null };
    }
    const evaluations = this.evaluateAll(pod, candidates);
    const feasible: string[] = [];
    const failed = new Map<string, readonly FitFailure[]>();
    for (const e of evaluations) {
      if (e.failures.length === 0) feasible.push(e.name);
      else failed.set(e.name, e.failures);
    }
    let reserved: string | null = null;
    if (feasible.length === 1 && this.model.reserve(pod, feasible[0]!, nowMs)) reserved = feasible[0]!;
    return { result: feasible.length > 0 ? 'placed' : 'no_fit', evaluations, feasible, failed, reserved };
  }

  /** Prioritize: scores 0..10 with the strategy's pick at 10, and reserves that pick. */
  prioritize(pod: PodRecord, candidates: readonly Candidate[], nowMs: number): PrioritizeOutcome {
    this.model.expire(nowMs);
    if (!this.owns(pod)) {
      return { result: 'passthrough', evaluations: [], scores: candidates.map(() => 0), chosen: null, runnerUp: null, feasible: candidates.length };
    }
    const evaluations = this.evaluateAll(pod, candidates);
    const decision = this.placer.choose(evaluations);
    const scores = scoreEvaluations(evaluations, decision.chosen, this.placer.strategy);
    const chosen = decision.chosen >= 0 ? evaluations[decision.chosen]! : null;
    if (chosen) this.model.reserve(pod, chosen.name, nowMs);
    return {
      result: chosen ? 'placed' : 'no_fit',
      evaluations,
      scores,
      chosen,
      runnerUp: decision.runnerUp >= 0 ? evaluations[decision.runnerUp]! : null,
      feasible: decision.feasible,
    };
  }

  /** Every candidate evaluated and sorted in least_loaded candidate order; nothing is reserved. */
  rank(pod: PodRecord, candidates: readonly Candidate[]): Evaluation[] {
    return this.evaluateAll(pod, candidates).sort((a, b) => {
      const fa = a.failures.length === 0;
      const fb = b.failures.length === 0;
      if (fa !== fb) return fa ? -1 : 1;
      return compareCandidates(a, b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    });
  }

  private evaluateAll(pod: PodRecord, candidates: readonly Candidate[]): Evaluation[] {
    const own = this.model.reservationOf(pod.uid);
    return candidates.map((candidate) => {
      const node = candidate.node ?? this.model.nodes.get(candidate.name);
      if (!node) return notInSnapshot(candidate.name);
      let reserved = this.model.ledger.reservedOn(candidate.name);
      if (own && own.nodeName === candidate.name) reserved = without(reserved, own.request);
      const view: NodeView = { name: candidate.name, allocatable: node.allocatable, totals: this.model.totalsOf(candidate.name), reserved };
      return evaluate(view, pod.request, this.model.dims);
    });
  }
}

function without(reserved: NodeReservations, request: readonly number[]): NodeReservations {
  return { request: reserved.request.map((v, i) => v - request[i]!), count: reserved.count - 1 };
}

function notInSnapshot(name: string): Evaluation {
  return {
    name,
    known: false,
    projected: [],
    pressure: NaN,
    starting: 0,
    running: 0,
    paused: 0,
    failures: [{ code: 'NodeNotInSnapshot', node: name }],
  };
}
