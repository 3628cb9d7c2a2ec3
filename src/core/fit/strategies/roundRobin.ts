/**
 * round_robin: the feasible candidate picked least recently, names never picked first and ties in name order; load is
 * not looked at. When every node is offered each time (percentageOfNodesToScore 100) this is the plain rotation in
 * name order, wrapping around. Kept as recency rather than "the name after the last pick" because kube-scheduler may
 * offer a window of the nodes (its sampling: each window starts where the last search stopped): with windows that
 * alternate, the name after the last pick is found again and again on the same two nodes (1,000 nodes, windows of 500:
 * every pod on two of them). The runner-up is the candidate the next pick would take. Scores: 0 for all but the chosen.
 */
import type { CandidateScan } from '../scan.js';
import type { PlacementStrategy, StrategyState } from './strategy.js';

/**
 * Names remembered at most (Kubernetes supports clusters of 5,000 nodes): past it, the least recent are forgotten and
 * count as never picked again.
 */
export const MAX_REMEMBERED_PICKS = 20_000;

/** The feasible candidate picked least recently (never picked first, then name order), other than `skip`; -1 if none. */
function leastRecent(scan: CandidateScan, picks: ReadonlyMap<string, number>, skip = -1): number {
  let best = -1;
  let bestSeq = 0;
  for (let i = 0; i < scan.count; i++) {
    if (i === skip || !scan.fits(i)) continue;
    const name = scan.names[i]!;
    const seq = picks.get(name) ?? -1;
    if (best < 0 || seq < bestSeq || (seq === bestSeq && name < scan.names[best]!)) {
      best = i;
      bestSeq = seq;
    }
  }
  return best;
}

/** Records a pick of `name`; the map's order stays the order of the picks, so the oldest is first when one is forgotten. */
function remember(state: StrategyState, name: string): void {
  const picks = state.roundRobinPicks;
  picks.delete(name);
  picks.set(name, state.roundRobinSeq++);
  if (picks.size > MAX_REMEMBERED_PICKS) picks.delete(picks.keys().next().value!);
}

export const roundRobin: PlacementStrategy = {
  description: 'the feasible node picked least recently, names never picked first in name order (load ignored)',
  choose(scan, state) {
    const chosen = leastRecent(scan, state.roundRobinPicks);
    remember(state, scan.names[chosen]!);
    return { chosen, runnerUp: leastRecent(scan, state.roundRobinPicks, chosen) };
  },
  score: () => 0,
};
