/**
 * Pure figures of the starting-burst benchmark (bench/startingBurst.ts), unit-tested in
 * test/bench/startingStats.test.ts: concurrent starting sandboxes per node from a pod watch, and the
 * distribution of the per-node peaks.
 *
 * A pod is starting from the moment the API shows it bound (spec.nodeName) until it shows it Ready
 * (condition Ready=True), or until it is deleted. Changes are applied in watch order, so the peak of a
 * node is exactly the most pods the API ever showed starting on it at once.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { percentile } from './clusterStats.js';

/** Concurrent starting pods per node, over a stream of pod changes. */
export class StartingTracker {
  private readonly pods = new Map<string, string | null>();
  private readonly current = new Map<string, number>();
  private readonly peak = new Map<string, number>();

  /**
   * Applies one change of pod `name` (a watch ADDED/MODIFIED: its node or null, whether Ready; DELETED: `deleted`).
   */
  observe(name: string, node: string | null, ready: boolean, deleted = false): void {
    const startingOn = !deleted && node !== null && !ready ? node : null;
    const before = this.pods.get(name) ?? null;
    if (startingOn === before) return;
    if (before !== null) this.current.set(before, this.current.get(before)! - 1);
    if (startingOn !== null) {
      const n = (this.current.get(startingOn) ?? 0) + 1;
      this.current.set(startingOn, n);
      if (n > (this.peak.get(startingOn) ?? 0)) this.peak.set(startingOn, n);
    }
    if (startingOn === null) this.pods.delete(name);
    else this.pods.set(name, startingOn);
  }

  /**
   * Applies one watch event of `pod` (observe, with its spec.nodeName and its Ready condition); returns what it read.
   */
  observePod(pod: V1Pod, deleted = false): { name: string; node: string | null; ready: boolean } {
    const name = pod.metadata!.name!;
    const node = pod.spec?.nodeName ?? null;
    const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    this.observe(name, node, ready, deleted);
    return { name, node, ready };
  }

  /** Pods starting on `node` now. */
  startingOn(node: string): number {
    return this.current.get(node) ?? 0;
  }

  /** The peak of every node in `nodes` (0 for a node that never had a pod starting). */
  peaks(nodes: readonly string[]): Map<string, number> {
    return new Map(nodes.map((n) => [n, this.peak.get(n) ?? 0]));
  }
}

export interface Distribution {
  readonly min: number | null;
  readonly p50: number | null;
  readonly p90: number | null;
  readonly max: number | null;
  /** [value, how many] in ascending value. */
  readonly counts: readonly (readonly [number, number])[];
}

/** The distribution of integer values (e.g. per-node peaks). */
export function distribution(values: Iterable<number>): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  const counts = new Map<number, number>();
  for (const v of sorted) counts.set(v, (counts.get(v) ?? 0) + 1);
  return {
    min: sorted[0] ?? null,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    max: sorted.at(-1) ?? null,
    counts: [...counts],
  };
}

/** `value×count` pairs, e.g. `3×12 4×88`. */
export function formatCounts(d: Distribution): string {
  return d.counts.map(([v, n]) => `${v}×${n}`).join(' ');
}
