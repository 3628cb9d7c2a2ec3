/**
 * The request of Filter and Prioritize as the core reads it (ExtenderArgs, k8s.io/kube-scheduler/extender/v1),
 * and their whole replies as plain data (PlacementService.filterReply, prioritizeReply): the nodes to return, the
 * others sorted into resolvable and unresolvable failures (reasons.ts sortFailures), the reservation made and what
 * the pod's Event says. The HTTP verbs only encode them.
 */
import type { DecisionExplanation } from '../text/explain.js';
import type { Node, Pod } from '../objects/kubeObjects.js';
import type { Candidates, DecisionLocality, DecisionResult, DecisionWindow } from './placementService.js';
import {
  toNodeRecord,
  toPodRecord,
  type Dimensions,
  type PodRecord,
  type PodRecordOptions,
} from '../objects/records.js';

/** ExtenderArgs after validation (server/wire.ts parseExtenderArgs): exactly one of Nodes / NodeNames is non-null. */
export interface ExtenderArgs {
  readonly Pod: Pod;
  /** Node objects (nodeCacheCapable: false), each with metadata.name. */
  readonly Nodes: { readonly items: readonly Node[] } | null;
  /** Node names (nodeCacheCapable: true). */
  readonly NodeNames: readonly string[] | null;
}

/** What a reply reads besides the request (the verbs' dependencies have each). */
export interface ReplyContext {
  /** Label key that marks a paused sandbox (PodRecordOptions.pausedLabel). */
  readonly pausedLabel: string;
  /** Current time in ms (the only clock the decisions see): read once by a reply that decides or passes through, never by a refusal. */
  readonly now: () => number;
  /** Null while the verbs may decide; otherwise why they must not (asked only for the extender's own pods). */
  readonly notReady?: (() => string | null) | undefined;
}

/** The verb must not decide: the scheduler cache cannot be trusted now. Nothing was read or reserved. */
export interface NotReadyReply {
  readonly kind: 'not_ready';
  readonly reason: string;
}

/** The pod of the request cannot be read (e.g. an invalid quantity): nothing was decided or reserved. */
export interface UnreadableReply {
  readonly kind: 'unreadable';
  readonly message: string;
}

/** A reservation a reply made: the verb releases it (PlacementService.unreserve with it) when the reply is not delivered. */
export interface ReservationMade {
  readonly uid: string;
  readonly nodeName: string;
  /** When it was made (ms): a later decision for the pod is not released with it. */
  readonly atMs: number;
}

/** What Filter and Prioritize answers have in common. */
export interface Answer {
  readonly kind: 'answer';
  /** What sandbox_extender_placements_total counts for this call; null: nothing. */
  readonly counted: DecisionResult | null;
  /** Names or Node objects the request gave more than once (each node is answered once); 0: none. */
  readonly duplicates: number;
  /** The reservation this call made, or null. */
  readonly reservation: ReservationMade | null;
  /** A decision on one of the extender's own pods; null for a pod passed through (another scheduler's). */
  readonly decided: DecidedPod | null;
}

/** What a decision on one of the extender's own pods tells besides the reply: for its log line, metrics and Event. */
export interface DecidedPod {
  readonly pod: PodRecord;
  /** Candidates scanned (each name once) and how many of them fit. */
  readonly candidates: number;
  readonly feasible: number;
  /** The pods' resourceVersion the decision saw (SchedulerCache.podsResourceVersion). */
  readonly podsResourceVersion: string;
  /** A node chosen with locality on: the pod's signal on it; else null. */
  readonly locality: DecisionLocality | null;
  /** A node chosen from a window kube-scheduler cut short by sampling; else null. */
  readonly window: DecisionWindow | null;
  /** What the pod's Event says (explain.ts explainDecision), when this call is one that has an Event; else null. */
  readonly explanation: DecisionExplanation | null;
}

/** ExtenderFilterResult as data: exactly one of `nodes` / `nodeNames` is set, as the request gave Node objects or names. */
export interface FilterAnswer extends Answer {
  /** Node objects to echo, as the request gave them (nodeCacheCapable: false); else null. */
  readonly nodes: readonly Node[] | null;
  /** Node names to return (nodeCacheCapable: true); else null. */
  readonly nodeNames: readonly string[] | null;
  /** Node → reasons: Unschedulable (may clear; reasons.ts sortFailures). */
  readonly failedNodes: ReadonlyMap<string, string>;
  /** Node → reasons: UnschedulableAndUnresolvable. */
  readonly failedAndUnresolvableNodes: ReadonlyMap<string, string>;
  /** Nothing fits, and the starting limit alone excludes at least one node (sandbox_extender_starting_limit_held_total). */
  readonly startingLimitHeld: boolean;
}

/** HostPriorityList as data. */
export interface PrioritizeAnswer extends Answer {
  /** The hosts, in the request's order (each once), the unreadable Node objects last. */
  readonly hosts: readonly string[];
  /**
   * Integer score 0..10 per host, index for index; a host past its end scores 0. Valid until the next call on the
   * service (its buffer is reused).
   */
  readonly scores: readonly number[];
}

export type FilterReply = NotReadyReply | UnreadableReply | FilterAnswer;
export type PrioritizeReply = NotReadyReply | UnreadableReply | PrioritizeAnswer;

/** A request of one of the extender's own pods, read. */
export interface ReadRequest {
  readonly pod: PodRecord;
  readonly candidates: Candidates;
  /** Node objects, one per candidate (nodeCacheCapable: false), to echo the feasible ones; else null. */
  readonly objects: readonly Node[] | null;
  /** Node objects that could not be read: name → reason. */
  readonly unreadable: ReadonlyMap<string, string>;
  /** Node objects dropped because an object of the same name came before (NodeNames repeats are the scan's: CandidateScan.duplicates). */
  readonly duplicates: number;
}

const NONE_UNREADABLE: ReadonlyMap<string, string> = new Map();

/**
 * Reads a request of one of the extender's own pods: the pod's record (with its images, and its template key when
 * locality is on), and the candidates with the allocatable of their Node objects when it gives objects. Each node
 * once, its first object; a Node object without usable allocatable says nothing new (the cache's record, if it has
 * one, stands); one that cannot be read is set aside with its reason.
 * @param hasNode whether the cache has a Node object of that name.
 * @throws ObjectError or QuantityError when the pod cannot be read.
 */
export function readRequest(
  args: ExtenderArgs,
  dims: Dimensions,
  podOptions: PodRecordOptions,
  hasNode: (name: string) => boolean,
): ReadRequest {
  const pod = toPodRecord(args.Pod, dims, podOptions);
  if (args.NodeNames)
    return { pod, candidates: { names: args.NodeNames }, objects: null, unreadable: NONE_UNREADABLE, duplicates: 0 };
  const names: string[] = [];
  const allocatable: (readonly number[] | null | undefined)[] = [];
  const objects: Node[] = [];
  const unreadable = new Map<string, string>();
  // The candidates and the objects echoed stay index for index.
  const seen = new Set<string>();
  for (const node of args.Nodes!.items) {
    const name = node.metadata!.name!;
    if (seen.has(name)) continue;
    seen.add(name);
    try {
      const record = toNodeRecord(node, dims);
      allocatable.push(record.allocatable || !hasNode(name) ? record.allocatable : undefined);
      names.push(name);
      objects.push(node);
    } catch (err) {
      unreadable.set(name, `invalid Node object: ${messageOf(err)}`);
    }
  }
  return {
    pod,
    candidates: { names, allocatable },
    objects,
    unreadable,
    duplicates: args.Nodes!.items.length - seen.size,
  };
}

/** The nodes of a request, in input order (without reading any of them). */
export function requestedNames(args: ExtenderArgs): readonly string[] {
  return args.NodeNames ?? args.Nodes!.items.map((n) => n.metadata!.name!);
}

/** `list` at `firsts` (PlacementService.passThrough: the first appearance of each name), or `list` when that is null. */
export function firstAppearances<T>(list: readonly T[], firsts: readonly number[] | null): readonly T[] {
  return firsts === null ? list : firsts.map((i) => list[i]!);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
