/**
 * round_robin: the feasible candidate whose name follows the last pick's, in name order, wrapping
 * around; load is not looked at. The runner-up is the name after the chosen one. Scores: 0 for all
 * but the chosen.
 */
import type { CandidateScan } from '../scan.js';
import type { PlacementStrategy } from './strategy.js';

/** The feasible candidate whose name comes first after `after` (null: from the start), wrapping; -1 if none other than `skip`. */
function nextByName(scan: CandidateScan, after: string | null, skip = -1): number {
  let next = -1;
  let first = -1;
  for (let i = 0; i < scan.count; i++) {
    if (i === skip || !scan.fits(i)) continue;
    const name = scan.names[i]!;
    if (first < 0 || name < scan.names[first]!) first = i;
    if (after !== null && name > after && (next < 0 || name < scan.names[next]!)) next = i;
  }
  return next >= 0 ? next : first;
}

export const roundRobin: PlacementStrategy = {
  description: 'the next feasible node by name after the last pick, wrapping around (load ignored)',
  choose(scan, state) {
    const chosen = nextByName(scan, state.lastName);
    state.lastName = scan.names[chosen]!;
    return { chosen, runnerUp: nextByName(scan, state.lastName, chosen) };
  },
  score: () => 0,
};
