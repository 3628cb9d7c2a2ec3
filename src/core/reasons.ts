/**
 * Why a node cannot take a pod, as data. Turned into the strings of the extender protocol's
 * `FailedNodes` / `FailedAndUnresolvableNodes` only at the edge, by {@link formatFailure}.
 *
 * - `InsufficientResource`: allocated + paused + reserved + requested > allocatable in a dimension
 *   (may clear when pods finish or reservations lapse; preemption may consider it) → FailedNodes.
 * - `RequestExceedsAllocatable`: the request alone is above the node's total allocatable (or the
 *   node has none of that resource); it can never fit → FailedAndUnresolvableNodes. Mirrors
 *   kube-scheduler NodeResourcesFit, which marks such nodes UnschedulableAndUnresolvable.
 * - `NodeNotInSnapshot`: kube-scheduler named a node the extender does not know (its snapshot is
 *   stale); it is reported, not guessed at → FailedNodes, so a later cycle can retry it.
 */
export type FitFailure =
  | {
      readonly code: 'InsufficientResource';
      readonly resource: string;
      readonly requested: number;
      readonly allocated: number;
      readonly paused: number;
      readonly reserved: number;
      readonly allocatable: number;
    }
  | { readonly code: 'RequestExceedsAllocatable'; readonly resource: string; readonly requested: number; readonly allocatable: number }
  | { readonly code: 'NodeNotInSnapshot'; readonly node: string };

/** Whether a failure can never clear on this node (→ FailedAndUnresolvableNodes). */
export function isUnresolvable(failure: FitFailure): boolean {
  return failure.code === 'RequestExceedsAllocatable';
}

const KI = 1024;
const BINARY_SUFFIXES = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * Formats an amount in scheduler units for humans: cpu as millicores (`2500m`), byte resources in
 * the largest binary unit that divides them exactly (`4Gi`, `1536Mi`, else plain bytes), counts plain.
 */
export function formatAmount(resource: string, amount: number): string {
  if (resource === 'cpu') return `${amount}m`;
  if (!isByteResource(resource) || amount === 0) return String(amount);
  let value = amount;
  let suffix = '';
  for (const next of BINARY_SUFFIXES) {
    if (value % KI !== 0) break;
    value /= KI;
    suffix = next;
  }
  return `${value}${suffix}`;
}

function isByteResource(resource: string): boolean {
  return resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-');
}

/** The human-readable reason for one failure, with the numbers that decided it. */
export function formatFailure(failure: FitFailure): string {
  switch (failure.code) {
    case 'InsufficientResource': {
      const f = (n: number) => formatAmount(failure.resource, n);
      const inUse = failure.allocated + failure.paused + failure.reserved;
      return (
        `Insufficient ${failure.resource}: requested ${f(failure.requested)} + in use ${f(inUse)} ` +
        `(allocated ${f(failure.allocated)}, paused ${f(failure.paused)}, reserved ${f(failure.reserved)}) ` +
        `> allocatable ${f(failure.allocatable)}`
      );
    }
    case 'RequestExceedsAllocatable': {
      const f = (n: number) => formatAmount(failure.resource, n);
      return `${failure.resource} request ${f(failure.requested)} exceeds the node's allocatable ${f(failure.allocatable)}`;
    }
    case 'NodeNotInSnapshot':
      return `node ${failure.node} is not in the extender's cluster snapshot`;
  }
}
