/**
 * Pressure: the share of a node's allocatable that requests take, per resource,
 *
 *     pressure_r = used_r / allocatable_r
 *
 * with used_r = inUse_r for a node's current pressure (nodeInfo.ts) and inUse_r + q_r for a pod's projected
 * pressure (evaluation.ts); a node's pressure is the max over its resources (docs/model.md#projected-pressure-and-the-ranking).
 * Every ranking, explanation, debug view, metric and replay optimum takes its ratios from {@link pressureRatio}.
 */

/**
 * used / allocatable (both in the resource's scheduler units); NaN when allocatable ≤ 0: no value (the node has
 * no allocatable of that resource, or its capacity is unknown). "No value" is decided here, once. NaN compares
 * false with every number, so `p > max` passes over it in a max, and a node of known capacity always has a
 * pressure (some tracked resource of a Node record has allocatable > 0: records.ts toNodeRecord). Readers that
 * must print something say what no value looks like there (JSON null, `n/a`, no series).
 * Pure and tiny, so the scan's loop gets it inlined.
 */
export function pressureRatio(used: number, allocatable: number): number {
  return allocatable > 0 ? used / allocatable : NaN;
}

/** The largest of the ratios that have a value; NaN when none has. */
export function maxPressure(ratios: readonly number[]): number {
  let max = NaN;
  for (const p of ratios) if (p > max || (Number.isNaN(max) && !Number.isNaN(p))) max = p;
  return max;
}

/** Order by pressure, highest first; no value after every value. 0 for equals (two without a value are equal). */
export function byPressureDescending(a: number, b: number): number {
  const noA = Number.isNaN(a);
  const noB = Number.isNaN(b);
  if (noA || noB) return noA === noB ? 0 : noA ? 1 : -1;
  return b - a;
}
