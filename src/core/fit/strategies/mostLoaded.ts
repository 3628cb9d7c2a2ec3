/**
 * most_loaded (bin-packing): the candidate with the highest projected pressure that still fits;
 * otherwise as least_loaded (fewer starting, running, paused sandboxes; exact ties in turn).
 */
import { chooseBest, loadOrder, loadScore, type PlacementStrategy } from './strategy.js';

export const mostLoaded: PlacementStrategy = {
  description: 'highest projected pressure that fits (bin-packing); then as least_loaded',
  pressureSign: -1,
  choose: (scan, state) => chooseBest(scan, state, loadOrder(scan, -1)),
  score: (scan, i) => loadScore(scan, i, false),
};
