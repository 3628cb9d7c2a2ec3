/**
 * least_loaded (the default): the candidate with the lowest projected pressure; ties broken by fewer
 * starting, running, paused sandboxes, then taken in turn. The load-aware strategy this project
 * comes from: on nodes of 16/64/192 CPUs with 300 pods of 2 CPU / 4 GiB it peaks at pressure
 * 2.21875, the best any placement can do (see src/cli/replay.ts).
 */
import { chooseBest, loadOrder, loadScore, type PlacementStrategy } from './strategy.js';

export const leastLoaded: PlacementStrategy = {
  description: 'lowest projected pressure; then fewer starting, running, paused sandboxes; exact ties in turn',
  pressureSign: 1,
  choose: (scan, state) => chooseBest(scan, state, loadOrder(scan, 1)),
  score: (scan, i) => loadScore(scan, i, true),
};
