/**
 * What a placement strategy is: a way to choose among the feasible candidates of a scan, and a
 * Prioritize score for the candidates it did not choose. One file per strategy sits next to this
 * one; index.ts registers them. The shared pieces (load order, one-pass choice with round-robin
 * among exact ties, load scores) are here.
 */
import { FITS, type CandidateScan } from '../scan.js';

/** kube-scheduler's MaxExtenderPriority (k8s.io/kube-scheduler/extender/v1): Prioritize scores are integers in 0..10. */
export const MAX_EXTENDER_PRIORITY = 10;

/** The chosen candidate and the one the strategy would have taken next (indices into the scan; -1: none). */
export interface Choice {
  readonly chosen: number;
  readonly runnerUp: number;
}

/** The only state of placement, kept between calls by the Placer. */
export interface StrategyState {
  /** Turn among exact ties (least_loaded, most_loaded). */
  tieCursor: number;
  /** round_robin: each node name picked, with the sequence number of its last pick (in the order of the picks). */
  readonly roundRobinPicks: Map<string, number>;
  /** round_robin: the next pick's sequence number. */
  roundRobinSeq: number;
  /** Values in [0, 1) (random); injected, so the core stays deterministic under test. */
  readonly random: () => number;
}

export interface PlacementStrategy {
  /** One line for the docs: how it chooses. */
  readonly description: string;
  /**
   * Load-aware strategies: which projected pressure is best (+1 the lowest, −1 the highest). Only
   * these rank by locality (scan.rankByLocality) within the pressure band of the best.
   */
  readonly pressureSign?: 1 | -1;
  /** Chooses among the scan's feasible candidates (scan.feasible > 0). */
  choose(scan: CandidateScan, state: StrategyState): Choice;
  /**
   * Prioritize score, 0..MAX_EXTENDER_PRIORITY − 1, of a feasible candidate that was not chosen
   * (the chosen one scores MAX_EXTENDER_PRIORITY). It follows the order `choose` uses: a candidate
   * the strategy prefers never scores below one it ranks after.
   */
  score(scan: CandidateScan, i: number): number;
}

/**
 * Load order of two candidates: negative when `i` comes first. Known capacity first; then
 * projected pressure (lower first when `pressureSign` is +1, higher first when −1); then fewer
 * starting, fewer running, fewer paused sandboxes. 0 for exact equals.
 */
export function compareByLoad(scan: CandidateScan, i: number, j: number, pressureSign: 1 | -1): number {
  const knownI = scan.capacityKnown(i);
  const knownJ = scan.capacityKnown(j);
  if (knownI !== knownJ) return knownI ? -1 : 1;
  if (knownI && scan.pressure[i] !== scan.pressure[j]) return pressureSign * (scan.pressure[i]! - scan.pressure[j]!);
  return (
    scan.starting[i]! - scan.starting[j]! || scan.running[i]! - scan.running[j]! || scan.paused[i]! - scan.paused[j]!
  );
}

/**
 * compareByLoad after the locality rank (scan.rankByLocality): a candidate in the pressure band
 * comes before one outside it (it has better pressure anyway), and within the band warm before
 * partial before cold; then projected pressure, starting, running, paused as in compareByLoad.
 */
export function compareRanked(scan: CandidateScan, i: number, j: number, pressureSign: 1 | -1): number {
  return scan.localityRank[j]! - scan.localityRank[i]! || compareByLoad(scan, i, j, pressureSign);
}

/** The load order of the scan: compareRanked when the scan was ranked by locality, else compareByLoad. */
export function loadOrder(scan: CandidateScan, pressureSign: 1 | -1): (i: number, j: number) => number {
  return scan.localityRanked
    ? (i, j) => compareRanked(scan, i, j, pressureSign)
    : (i, j) => compareByLoad(scan, i, j, pressureSign);
}

/**
 * The first candidate in `compare` order, in one pass; among exact equals the next one in turn
 * (`state.tieCursor`), so that a burst does not pile onto one node. The runner-up is the best of the
 * others, the first in input order among equals.
 */
export function chooseBest(
  scan: CandidateScan,
  state: StrategyState,
  compare: (i: number, j: number) => number,
): Choice {
  const ties = scan.scratch;
  let tieCount = 0;
  let best = -1;
  let second = -1;
  for (let i = 0; i < scan.count; i++) {
    if (!scan.fits(i)) continue;
    if (best < 0) {
      best = i;
      ties[tieCount++] = i;
      continue;
    }
    const c = compare(i, best);
    if (c < 0) {
      second = best;
      best = i;
      ties[0] = i;
      tieCount = 1;
    } else if (c === 0) {
      ties[tieCount++] = i;
    } else if (second < 0 || compare(i, second) < 0) {
      second = i;
    }
  }
  if (tieCount <= 1) return { chosen: best, runnerUp: second };
  const k = state.tieCursor++ % tieCount;
  return { chosen: ties[k]!, runnerUp: ties[k === 0 ? 1 : 0]! };
}

/**
 * Score of a candidate from its projected pressure p (clamped to 0..1): `free` true gives
 * floor(9 × (1 − p)), the free share after placing the pod; false gives floor(9 × p). Candidates of
 * unknown capacity score 0. When the scan was ranked by locality, a candidate in the pressure band
 * scores as the band's best pressure: the band is ordered by locality, not pressure, so its
 * candidates tie, and none scores below a candidate outside the band (ADR 0001's order kept).
 */
export function loadScore(scan: CandidateScan, i: number, free: boolean): number {
  if (scan.status[i] !== FITS) return 0;
  const raw = scan.localityRanked && scan.localityRank[i]! > 0 ? scan.bandBest : scan.pressure[i]!;
  const p = Math.min(1, Math.max(0, raw));
  return Math.floor((MAX_EXTENDER_PRIORITY - 1) * (free ? 1 - p : p));
}
