/**
 * The strategies, by the name the config uses. Adding one: a file next to this one exporting a
 * PlacementStrategy, and a row here; the config schema, the CLI and the docs take their names from
 * this table.
 */
import { leastLoaded } from './leastLoaded.js';
import { mostLoaded } from './mostLoaded.js';
import { random } from './random.js';
import { roundRobin } from './roundRobin.js';
import type { PlacementStrategy } from './strategy.js';

export const STRATEGY_TABLE = {
  least_loaded: leastLoaded,
  most_loaded: mostLoaded,
  round_robin: roundRobin,
  random,
} as const satisfies Record<string, PlacementStrategy>;

export type Strategy = keyof typeof STRATEGY_TABLE;

/** The strategy names, in table order (least_loaded, the default, first). */
export const STRATEGIES = Object.keys(STRATEGY_TABLE) as [Strategy, ...Strategy[]];

export { MAX_EXTENDER_PRIORITY, type Choice, type PlacementStrategy, type StrategyState } from './strategy.js';
