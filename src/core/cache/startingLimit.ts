/**
 * The starting limit: how many sandboxes a node may be starting at once (cold-start storms). Computed once per
 * Node object update by the SchedulerCache, so a decision compares two integers: a node whose startingCount
 * (nodeInfo.ts: bound and not Ready, plus the reservations held on it, without the pod's own) is at its limit
 * fails the fit rule (evaluation.ts), resolvably. The formula, its exact integer arithmetic and why:
 * docs/starting-limit.md.
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
  if (perNode !== undefined && !(Number.isSafeInteger(perNode) && perNode >= 1))
    throw new RangeError(`startingLimit.perNode must be an integer ≥ 1, got ${perNode}`);
  if (perCore !== undefined && !(Number.isFinite(perCore) && perCore > 0 && hasAtMostThreeDecimals(perCore))) {
    throw new RangeError(`startingLimit.perCore must be a number > 0 with at most three decimals, got ${perCore}`);
  }
}

/** Whether `x` is a multiple of 0.001 as it is written (0.125 yes, 0.0625 no). */
export function hasAtMostThreeDecimals(x: number): boolean {
  const thousandths = Math.round(x * 1000);
  return (
    Math.abs(x * 1000 - thousandths) <= 1e-9 * Math.max(1, Math.abs(x * 1000)) && Number.isSafeInteger(thousandths)
  );
}

/**
 * The starting limit of one node: perNode, max(1, floor(perCore × cores)) taken in integers (millicores ×
 * thousandths / 10^6), or the smaller of the two (docs/starting-limit.md).
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
