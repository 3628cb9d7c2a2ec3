/**
 * The capacity filter and projected pressure of one candidate node for one pod: the single place where the fit
 * rule is written (kube-scheduler's NodeResourcesFit fitsRequest, Kubernetes v1.36
 * pkg/scheduler/framework/plugins/noderesources/fit.go, with paused and reserved counted as in use). With request
 * q, allocatable A and inUse = allocated + paused + reserved (nodeInfo.ts, without the pod's own reservation):
 * pressure = max_r (inUse_r + q_r) / A_r; a node fails where q_r > 0 and inUse_r + q_r > A_r (unresolvable when
 * q_r > A_r), or at its starting limit (startingLimit.ts); unknown capacity passes (docs/model.md). scan.ts applies
 * the same functions to thousands of candidates without allocating; {@link evaluateCandidate} keeps every detail.
 */
import { atStartingLimit, inUse, startingCount, type NodeInfo, type OwnReservation } from '../cache/nodeInfo.js';
import { pressureRatio } from '../objects/pressure.js';
import type { FitFailure } from './reasons.js';
import type { Dimensions } from '../objects/records.js';

export interface Evaluation {
  readonly name: string;
  /** False when the node's capacity is unknown (or the node is not in the cache): it has no pressure. */
  readonly capacityKnown: boolean;
  /** Allocatable per dimension (scheduler units), or null. */
  readonly allocatable: readonly number[] | null;
  /** inUse per dimension before the pod, without its own reservation (scheduler units). */
  readonly inUse: readonly number[];
  /** Projected pressure per dimension; NaN where the node has none of that resource or capacity is unknown. */
  readonly projected: readonly number[];
  /** max over dimensions of `projected`; NaN (no value) when capacity is unknown. */
  readonly pressure: number;
  /** Starting sandboxes, including pending reservations (not the pod's own). */
  readonly starting: number;
  readonly running: number;
  readonly paused: number;
  /** Why the pod does not fit; empty when it fits. */
  readonly failures: readonly FitFailure[];
}

/** Fit of one dimension: 0 fits, 1 insufficient (inUse + q > A), 2 the request alone exceeds allocatable. */
export type DimensionFit = 0 | 1 | 2;

/** The fit rule of one dimension (the module header's); `inUsePlusRequest` = inUse_r + q_r. */
export function dimensionFit(request: number, inUsePlusRequest: number, allocatable: number): DimensionFit {
  if (request <= 0) return 0;
  if (request > allocatable) return 2;
  return inUsePlusRequest > allocatable ? 1 : 0;
}

/**
 * Evaluates one candidate in full. O(dimensions).
 * @param info the cache's NodeInfo of the name, if any.
 * @param allocatableOverride allocatable from a Node object in the request (nodeCacheCapable: false),
 *   null for such an object without usable allocatable; undefined: use the cache's.
 * @returns an Evaluation; a node neither in the cache nor given as an object fails with NodeNotInSnapshot.
 */
export function evaluateCandidate(
  name: string,
  info: NodeInfo | undefined,
  allocatableOverride: readonly number[] | null | undefined,
  request: readonly number[],
  own: OwnReservation | undefined,
  dims: Dimensions,
): Evaluation {
  const n = dims.names.length;
  const used = new Array<number>(n).fill(0);
  const starting = info ? startingCount(info, own) : 0;
  const running = info?.running ?? 0;
  const paused = info?.pausedCount ?? 0;
  const base = { name, inUse: used, starting, running, paused };
  if (allocatableOverride === undefined && !info?.hasNode) {
    return {
      ...base,
      capacityKnown: false,
      allocatable: null,
      projected: new Array<number>(n).fill(NaN),
      pressure: NaN,
      failures: [{ code: 'NodeNotInSnapshot', node: name }],
    };
  }
  const allocatable = allocatableOverride !== undefined ? allocatableOverride : info!.allocatable;
  if (info) for (let r = 0; r < n; r++) used[r] = inUse(info, r, own);
  const failures: FitFailure[] = [];
  if (info && atStartingLimit(info, own))
    failures.push({ code: 'StartingLimit', starting, limit: info.startingLimit! });
  if (!allocatable)
    return {
      ...base,
      capacityKnown: false,
      allocatable: null,
      projected: new Array<number>(n).fill(NaN),
      pressure: NaN,
      failures,
    };
  const projected: number[] = [];
  let pressure = 0;
  for (let r = 0; r < n; r++) {
    const a = allocatable[r]!;
    const q = request[r]!;
    const total = used[r]! + q;
    const p = pressureRatio(total, a);
    projected.push(p);
    if (p > pressure) pressure = p;
    const fit = dimensionFit(q, total, a);
    if (fit === 2)
      failures.push({ code: 'RequestExceedsAllocatable', resource: dims.names[r]!, requested: q, allocatable: a });
    else if (fit === 1) {
      failures.push({
        code: 'InsufficientResource',
        resource: dims.names[r]!,
        requested: q,
        allocated: info?.allocated[r] ?? 0,
        paused: info?.paused[r] ?? 0,
        reserved: info ? used[r]! - info.allocated[r]! - info.paused[r]! : 0,
        allocatable: a,
      });
    }
  }
  return { ...base, capacityKnown: true, allocatable, projected, pressure, failures };
}
