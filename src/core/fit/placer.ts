/** A pod's locality for one choice: the index, the pod's query and the pressure band (locality.pressureBand). */
export interface LocalityChoice {
  readonly view: LocalityView;
  readonly query: LocalityQuery;
  readonly band: number;
}

/**
 * The Placer: the configured strategy and the only state placement has between calls (the turn
 * among ties, the last round-robin pick, the random source). It chooses among a scan's feasible
 * candidates and gives the Prioritize score of every candidate. The strategies themselves are in
 * strategies/ (one file each).
 *
 * Scores (integers 0..10, kube-scheduler's MaxExtenderPriority): the chosen node gets 10 and every
 * other node at most 9, so the strategy's pick is the extender's single best answer whatever the
 * extender's weight; candidates that do not fit score 0. See docs/adr for why.
 */
import type { CandidateScan } from './scan.js';
import type { LocalityQuery, LocalityView } from '../objects/templateLocality.js';
import {
  MAX_EXTENDER_PRIORITY,
  STRATEGY_TABLE,
  type Choice,
  type PlacementStrategy,
  type Strategy,
  type StrategyState,
} from './strategies/index.js';

const NONE: Choice = { chosen: -1, runnerUp: -1 };

export class Placer {
  private readonly unit: PlacementStrategy;
  private readonly state: StrategyState;

  /** @param random values in [0, 1); only the random strategy draws from it. */
  constructor(
    readonly strategy: Strategy,
    random: () => number,
  ) {
    this.unit = STRATEGY_TABLE[strategy];
    this.state = { tieCursor: 0, roundRobinPicks: new Map(), roundRobinSeq: 0, random };
  }

  /** Which projected pressure the strategy prefers: +1 the lowest (least_loaded), −1 the highest (most_loaded); null: it ignores load. */
  get pressureSign(): 1 | -1 | null {
    return this.unit.pressureSign ?? null;
  }

  /** Whether the strategy ranks by locality when given a LocalityChoice (least_loaded, most_loaded). */
  get ranksByLocality(): boolean {
    return this.unit.pressureSign !== undefined;
  }

  /**
   * The strategy's choice among the scan's feasible candidates ({-1, -1} when none fits). With
   * `locality` and a load-aware strategy, the candidates within the pressure band of the best are
   * ranked by locality first (scan.rankByLocality, strategy.ts compareRanked).
   */
  choose(scan: CandidateScan, locality?: LocalityChoice): Choice {
    if (scan.feasible === 0) return NONE;
    const sign = this.unit.pressureSign;
    if (locality !== undefined && sign !== undefined) rankByLocality(scan, locality, sign);
    return this.unit.choose(scan, this.state);
  }

  /** Prioritize score of candidate `i`: 10 when chosen, the strategy's 0..9 when it fits, else 0. */
  score(scan: CandidateScan, i: number, chosen: number): number {
    if (i === chosen) return MAX_EXTENDER_PRIORITY;
    return scan.fits(i) ? this.unit.score(scan, i) : 0;
  }
}

/** scan.rankByLocality with the pod's query. @returns the candidates in the band. */
export function rankByLocality(scan: CandidateScan, locality: LocalityChoice, sign: 1 | -1): number {
  const { view, query } = locality;
  return scan.rankByLocality((id) => view.signal(query, id), query.anyKnown, locality.band, sign);
}
