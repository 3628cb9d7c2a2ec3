/**
 * kube-scheduler's sampling of the nodes it filters (`percentageOfNodesToScore`), as Kubernetes v1.36
 * pkg/scheduler/schedule_one.go has it: `findNodesThatPassFilters` walks the nodes from where the previous pod's
 * search stopped and stops once it has found {@link numFeasibleNodesToFind} nodes that pass its own filters; its
 * count of feasible nodes is capped at exactly that number. What it found is what the extenders are sent
 * (`findNodesThatPassExtenders`). Used by the replay (src/cli/replay.ts) and by a decision's window (placementService.ts).
 */

/** kube-scheduler's floor on the nodes it looks for (schedule_one.go minFeasibleNodesToFind). */
const MIN_FEASIBLE_NODES_TO_FIND = 100;
/** kube-scheduler's floor on the adaptive percentage (schedule_one.go minFeasibleNodesPercentageToFind). */
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

/**
 * Refuses a percentageOfNodesToScore kube-scheduler would refuse (its validation: an integer 0–100).
 * @throws RangeError naming the value.
 */
export function checkPercentageOfNodesToScore(percentageOfNodesToScore: number): void {
  if (!Number.isInteger(percentageOfNodesToScore) || percentageOfNodesToScore < 0 || percentageOfNodesToScore > 100) {
    throw new RangeError(`percentageOfNodesToScore must be an integer 0–100, not ${percentageOfNodesToScore}`);
  }
}

/**
 * How many feasible nodes kube-scheduler looks for before it stops filtering: all of them under 100 nodes,
 * else max(100, nodes × p / 100) with p = percentageOfNodesToScore, or when 0, max(5, 50 − nodes/125) (integer
 * arithmetic). Mirrors Kubernetes v1.36 pkg/scheduler/schedule_one.go `numFeasibleNodesToFind`: 1,000 nodes at
 * 0 → 420, 5,000 at 0 → 500; at 100 it is every node.
 * @throws RangeError when the percentage is not an integer 0–100.
 */
export function numFeasibleNodesToFind(percentageOfNodesToScore: number, numAllNodes: number): number {
  checkPercentageOfNodesToScore(percentageOfNodesToScore);
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let percentage = percentageOfNodesToScore;
  if (percentage === 0)
    percentage = Math.max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND, 50 - Math.trunc(numAllNodes / 125));
  return Math.max(MIN_FEASIBLE_NODES_TO_FIND, Math.trunc((numAllNodes * percentage) / 100));
}

/**
 * Whether kube-scheduler cut a pod's window short by sampling: it sent `offered` nodes (found feasible, before any
 * extender filtered them) out of a cluster of `numAllNodes`, and stopped at its cap, i.e. `offered` equals
 * numFeasibleNodesToFind(p, numAllNodes) and is below `numAllNodes`. Fewer than the cap means it walked every node
 * and the rest failed its own filters (taints, node selectors and affinity, an unschedulable node): not sampled.
 * Never true at p = 100 (the cap is every node). Exact when the extender's model holds the nodes kube-scheduler's
 * cache does and no PreFilter narrowed the pod's nodes (a pod pinned to a node set is then searched among those
 * only, and reads as not sampled unless the cap happens to match).
 * @throws RangeError when the percentage is not an integer 0–100 (numFeasibleNodesToFind).
 */
export function sampledWindow(percentageOfNodesToScore: number, offered: number, numAllNodes: number): boolean {
  return offered < numAllNodes && offered === numFeasibleNodesToFind(percentageOfNodesToScore, numAllNodes);
}
