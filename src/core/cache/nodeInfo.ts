/**
 * NodeInfo: everything the extender knows of one node, in integers — the counterpart of kube-scheduler's
 * framework.NodeInfo (Kubernetes v1.36 pkg/scheduler/framework/types.go), whose "assumed" pods are here the
 * extender's own reservations. Per dimension r, in scheduler units (cpu millicores, bytes, counts):
 *   allocated_r (bound pods starting or running), paused_r (bound paused pods, whatever their phase),
 *   reserved_r (reservations held), inUse_r = allocated_r + paused_r + reserved_r; pressure: pressure.ts.
 * Plus the counts of starting (a reservation is one more), running and paused sandboxes, of agent-sandbox pods
 * among them, and the node's starting limit. The definitions: docs/model.md#nodes-snapshot-records.
 */
import { pressureRatio } from '../objects/pressure.js';

/** What the extender knows of one node name (read-only view; the cache updates it in place). */
export interface NodeInfo {
  readonly name: string;
  /** Dense id, unique for the life of the cache and never reused (sets of candidate nodes are bitsets over it). */
  readonly id: number;
  /** Whether a Node object of this name is in the cache (false: only pods or reservations name it so far). */
  readonly hasNode: boolean;
  /** Allocatable per dimension, or null when the capacity is unknown (no Node object, or no usable allocatable). */
  readonly allocatable: readonly number[] | null;
  readonly allocated: readonly number[];
  readonly paused: readonly number[];
  readonly reserved: readonly number[];
  /** Bound sandboxes not yet Ready. */
  readonly starting: number;
  readonly running: number;
  readonly pausedCount: number;
  /** Reservations held on the node; each also counts as a starting sandbox for placement. */
  readonly reservedCount: number;
  /**
   * agent-sandbox pods among the starting, running and paused ones (agentSandboxPods.ts, PodRecord.agentSandbox):
   * a SandboxWarmPool's not yet claimed, a SandboxClaim's, a Sandbox's of its own. Shown, never ranked on.
   */
  readonly warmPoolSandboxes: number;
  readonly claimedSandboxes: number;
  readonly standaloneSandboxes: number;
  /**
   * How many sandboxes the node may be starting at once (startingLimit.ts): an integer ≥ 1, or
   * Infinity when no limit applies. Set by the SchedulerCache from the configuration and the node's
   * allocatable; absent means no limit.
   */
  readonly startingLimit?: number;
}

/** A pod's own reservation, which is left out of the node it is held on when that pod is evaluated again. */
export interface OwnReservation {
  readonly nodeName: string;
  readonly request: readonly number[];
}

/**
 * inUse_r = allocated_r + paused_r + reserved_r (scheduler units), without `own` when it is held on
 * this node (a retried pod never competes with itself).
 */
export function inUse(info: NodeInfo, r: number, own?: OwnReservation): number {
  const reserved =
    own !== undefined && own.nodeName === info.name ? info.reserved[r]! - own.request[r]! : info.reserved[r]!;
  return info.allocated[r]! + info.paused[r]! + reserved;
}

/** Starting sandboxes for placement: bound and not Ready, plus reservations (without `own` when held here). */
export function startingCount(info: NodeInfo, own?: OwnReservation): number {
  return info.starting + info.reservedCount - (own !== undefined && own.nodeName === info.name ? 1 : 0);
}

/** Whether the node is at its starting limit for a pod: startingCount(info, own) ≥ info.startingLimit. */
export function atStartingLimit(info: NodeInfo, own?: OwnReservation): boolean {
  return info.startingLimit !== undefined && startingCount(info, own) >= info.startingLimit;
}

/**
 * Current pressure per dimension, pressureRatio(inUse_r, allocatable_r) (pressure.ts): NaN where the
 * node has none of the resource or its capacity is unknown.
 */
export function currentPressure(info: NodeInfo): number[] {
  const allocatable = info.allocatable;
  return info.allocated.map((_, r) => pressureRatio(inUse(info, r), allocatable?.[r] ?? 0));
}
