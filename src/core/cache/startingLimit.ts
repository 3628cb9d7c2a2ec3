/**
 * The starting limit: how many sandboxes a node may be starting at once (cold-start storms). When a
 * burst lands, every new sandbox on a node pulls layers, sets up its filesystem and network and
 * starts its runtime at the same time, so a node starting many at once starts each far slower.
 * Peers cap it the same way: Cloud Foundry's `starting_container_count_maximum` per cell, and
 * scheduler plugins that limit the pods starting per node or per core.
 *
 * A sandbox counts as starting from the decision (its reservation) until the pod is Ready:
 * startingCount (nodeInfo.ts) = bound and not Ready + reservations held on the node, without the
 * pod's own reservation. A node fails the fit rule when startingCount ≥ its limit (evaluation.ts,
 * scan.ts); the failure is resolvable (FailedNodes): it clears as sandboxes become Ready.
 *
 * A node's limit (computed once per Node object update by the SchedulerCache, not per decision):
 *
 *     perNode only:  perNode
 *     perCore only:  max(1, floor(perCore × allocatable cpu in cores))
 *     both:          the smaller of the two
 *     neither:       no limit (Infinity)
 *
 * A node whose capacity is unknown (no usable allocatable), or whose allocatable has no cpu, has no
 * core count: only perNode applies to it (no limit when only perCore is set) — it is never blocked
 * on a guess. perCore is exact to the thousandth (the configuration allows at most three decimals):
 * the product is taken in integers, millicores × thousandths / 10^6, so 0.29 × 100 cores is 29,
 * not the 28 of floating point.
 */

/** The configured limits (config `startingLimit`); both absent: off. */
export interface StartingLimitConfig {
  /** Starting sandboxes per node, an integer ≥ 1. */
  readonly perNode?: number | undefined;
  /** Starting sandboxes per core of allocatable cpu, > 0 with at most three decimals. */
  readonly perCore?: number | undefined;
}

/**
 * Checks a limit configuration.
 * @throws RangeError when perNode is not an integer ≥ 1, or perCore is not a finite number > 0 with
 *   at most three decimals.
 */
export function checkStartingLimit(config: StartingLimitConfig): void {
  const { perNode, perCore } = config;
  if (perNode !== undefined && !(Number.isSafeInteger(perNode) && perNode >= 1)) throw new RangeError(`startingLimit.perNode must be an integer ≥ 1, got ${perNode}`);
  if (perCore !== undefined && !(Number.isFinite(perCore) && perCore > 0 && hasAtMostThreeDecimals(perCore))) {
    throw new RangeError(`startingLimit.perCore must be a number > 0 with at most three decimals, got ${perCore}`);
  }
}

/** Whether `x` is a multiple of 0.001 as it is written (0.125 yes, 0.0625 no). */
export function hasAtMostThreeDecimals(x: number): boolean {
  const thousandths = Math.round(x * 1000);
  return Math.abs(x * 1000 - thousandths) <= 1e-9 * Math.max(1, Math.abs(x * 1000)) && Number.isSafeInteger(thousandths);
}

/**
 * The starting limit of one node (see the module header).
 * @param milliCpu the node's allocatable cpu in millicores; null when its capacity is unknown or it has no cpu.
 * @returns an integer ≥ 1, or Infinity when no limit applies.
 */
export function startingLimitOf(config: StartingLimitConfig, milliCpu: number | null): number {
  let limit = config.perNode ?? Infinity;
  if (config.perCore !== undefined && milliCpu !== null && milliCpu > 0) {
    const thousandths = BigInt(Math.round(config.perCore * 1000));
    const perCore = Number((thousandths * BigInt(milliCpu)) / 1_000_000n);
    limit = Math.min(limit, Math.max(1, perCore));
  }
  return limit;
}
