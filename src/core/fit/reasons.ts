/**
 * Why a node cannot take a pod, as data, and how a Filter reply sorts it: {@link sortFailures} puts each node
 * that does not fit in `FailedNodes` or `FailedAndUnresolvableNodes` with its reasons in words
 * ({@link formatFailure}), as Kubernetes v1.36 pkg/scheduler/framework/plugins/noderesources/fit.go
 * fitsRequest returns each insufficient resource with whether it can ever clear.
 */

/**
 * One reason a node cannot take a pod:
 * - `InsufficientResource`: allocated + paused + reserved + requested > allocatable in a dimension
 *   (may clear when pods finish or reservations lapse; preemption may consider it) → FailedNodes.
 * - `RequestExceedsAllocatable`: the request alone is above the node's total allocatable (or the
 *   node has none of that resource); it can never fit → FailedAndUnresolvableNodes. Mirrors
 *   kube-scheduler NodeResourcesFit, which marks such nodes UnschedulableAndUnresolvable.
 * - `NodeNotInSnapshot`: kube-scheduler named a node the extender does not know (its snapshot is
 *   stale); it is reported, not guessed at → FailedNodes, so a later cycle can retry it.
 * - `StartingLimit`: the node is already starting as many sandboxes as its starting limit allows
 *   (startingLimit.ts; `starting` counts the pods bound and not Ready plus the reservations held,
 *   without the pod's own) → FailedNodes: it clears as sandboxes become Ready, and kube-scheduler
 *   retries the pod on those pod updates.
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
  | {
      readonly code: 'RequestExceedsAllocatable';
      readonly resource: string;
      readonly requested: number;
      readonly allocatable: number;
    }
  | { readonly code: 'NodeNotInSnapshot'; readonly node: string }
  | { readonly code: 'StartingLimit'; readonly starting: number; readonly limit: number };

/** Whether a failure can never clear on this node (→ FailedAndUnresolvableNodes). */
export function isUnresolvable(failure: FitFailure): boolean {
  return failure.code === 'RequestExceedsAllocatable';
}

/** Whether the starting limit alone excludes the node: it would fit otherwise. */
export function onlyStartingLimit(failures: readonly FitFailure[]): boolean {
  return failures.length > 0 && failures.every((f) => f.code === 'StartingLimit');
}

const KI = 1024n;
const BINARY_SUFFIXES = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * Formats an amount in scheduler units for humans, one rule for requests, allocatable and usage:
 * - cpu: millicores (`2500m`); the saturated amount 2^53 − 1 is `9007199254740991m or more`;
 * - byte resources (memory, ephemeral-storage, hugepages-*): in the largest binary unit the amount
 *   reaches (Ki … Ei; plain bytes below 1Ki), with at most two decimals; a value that had to be
 *   rounded (to the nearest hundredth) is marked `~` — `4Gi`, `1.5Gi`, `~62.51Gi` (65544140Ki), `512`;
 *   the saturated amount 2^53 − 1 is `8Pi or more`;
 * - counts (pods, extended resources): plain.
 */
export function formatAmount(resource: string, amount: number): string {
  // Amounts saturate at 2^53 − 1 (podRequests schedulerAmount): the real value may be larger.
  if (resource === 'cpu') return amount === Number.MAX_SAFE_INTEGER ? `${amount}m or more` : `${amount}m`;
  if (!isByteResource(resource) || !Number.isSafeInteger(amount) || Math.abs(amount) < 1024) return String(amount);
  // Amounts saturate at 2^53 − 1 (podRequests schedulerAmount): the real value may be larger.
  if (amount === Number.MAX_SAFE_INTEGER) return '8Pi or more';
  const bytes = BigInt(Math.abs(amount));
  let unit = 1n;
  let suffix = '';
  for (const next of BINARY_SUFFIXES) {
    if (bytes < unit * KI) break;
    unit *= KI;
    suffix = next;
  }
  // Hundredths of the unit, rounded half up, in exact integer arithmetic; a value that rounds up to
  // 1024 of a unit moves to the next one (`~1Gi`, not `~1024Mi`).
  let hundredths = (bytes * 200n + unit) / (2n * unit);
  if (hundredths >= 1024n * 100n && suffix !== BINARY_SUFFIXES.at(-1)) {
    unit *= KI;
    suffix = BINARY_SUFFIXES[BINARY_SUFFIXES.indexOf(suffix) + 1]!;
    hundredths = (bytes * 200n + unit) / (2n * unit);
  }
  const exact = hundredths * unit === bytes * 100n;
  const whole = hundredths / 100n;
  const fraction = (hundredths % 100n).toString().padStart(2, '0').replace(/0+$/, '');
  return `${exact ? '' : '~'}${amount < 0 ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}${suffix}`;
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
    case 'StartingLimit':
      return `${failure.starting} sandboxes starting, limit ${failure.limit}`;
  }
}

/** The value of one node in FailedNodes / FailedAndUnresolvableNodes: each failure in words, `; `-separated. */
export function formatFailures(failures: readonly FitFailure[]): string {
  return failures.map(formatFailure).join('; ');
}

/** The nodes that do not fit, sorted as the extender protocol reports them (ExtenderFilterResult). */
export interface SortedFailures {
  /** Node → reasons: Unschedulable (may clear; preemption may consider the node). */
  readonly failedNodes: ReadonlyMap<string, string>;
  /** Node → reasons: UnschedulableAndUnresolvable (a failure that can never clear: {@link isUnresolvable}). */
  readonly failedAndUnresolvableNodes: ReadonlyMap<string, string>;
}

/**
 * Sorts the nodes that do not fit: a node with any failure that can never clear goes to
 * `failedAndUnresolvableNodes`, any other to `failedNodes` (Kubernetes v1.36 noderesources/fit.go: a request
 * above the node's allocatable is UnschedulableAndUnresolvable, too little room left Unschedulable). Each node's
 * value is all its failures in words ({@link formatFailures}), in input order.
 * @param failed each node that does not fit, with its failures, in input order.
 * @param unreadable nodes not evaluated at all (name → reason, e.g. a Node object with an invalid allocatable),
 *   added to `failedNodes` after the others.
 */
export function sortFailures(
  failed: readonly (readonly [string, readonly FitFailure[]])[],
  unreadable: ReadonlyMap<string, string>,
): SortedFailures {
  const failedNodes = new Map<string, string>();
  const failedAndUnresolvableNodes = new Map<string, string>();
  for (const [name, failures] of failed)
    (failures.some(isUnresolvable) ? failedAndUnresolvableNodes : failedNodes).set(name, formatFailures(failures));
  for (const [name, reason] of unreadable) failedNodes.set(name, reason);
  return { failedNodes, failedAndUnresolvableNodes };
}
