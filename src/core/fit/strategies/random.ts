/**
 * random: a feasible candidate drawn uniformly with the injected random source (seeded by
 * `randomSeed`); load is not looked at. No runner-up; scores 0 for all but the chosen.
 */
import type { PlacementStrategy } from './strategy.js';

export const random: PlacementStrategy = {
  description: 'a feasible node drawn uniformly (seeded by randomSeed); load ignored',
  choose(scan, state) {
    let k = Math.min(scan.feasible - 1, Math.floor(state.random() * scan.feasible));
    for (let i = 0; i < scan.count; i++) {
      if (scan.fits(i) && k-- === 0) return { chosen: i, runnerUp: -1 };
    }
    return { chosen: -1, runnerUp: -1 };
  },
  score: () => 0,
};
