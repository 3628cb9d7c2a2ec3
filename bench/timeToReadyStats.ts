/**
 * Pure figures of the time-to-Ready benchmark on real nodes (bench/timeToReady.ts), unit-tested in
 * test/bench/timeToReadyStats.test.ts: the figures of one burst from its pods' times and places, kubelet's
 * image-pull Events, the median of runs and the table. No clock, no I/O. Percentiles and medians are
 * clusterStats.ts's (nearest rank; the mean of the two middle values).
 */
import { fmt, formatColumns, median, medianOf, percentile, ratio } from './clusterStats.js';

/** One pod of a burst as the benchmark saw it (ms on the bench's monotonic clock, from the burst's start). */
export interface PodTiming {
  readonly name: string;
  /** Index of its template (one image each). */
  readonly template: number;
  /** Its node (spec.nodeName), null if never bound. */
  readonly node: string | null;
  /** The create was acknowledged by the API server. */
  readonly createdMs: number;
  /** The watch first showed it Ready (condition Ready=True); null if never. */
  readonly readyMs: number | null;
}

/** The figures of one burst. Times in ms. */
export interface BurstFigures {
  readonly pods: number;
  readonly ready: number;
  /** creation (create acknowledged) → Ready seen by the watch, over the Ready pods. */
  readonly createToReadyMs: { readonly p50: number | null; readonly p99: number | null; readonly max: number | null };
  /** First create → last Ready (null unless every pod is Ready). */
  readonly allReadyMs: number | null;
  /** Pods bound to a node that held their template's image when the burst began. */
  readonly warmHits: number;
  /** Distinct (node, template) pairs bound whose image was not on the node when the burst began: pulls kubelet had to make. */
  readonly pulls: number;
  /** Pods per node, by node name. */
  readonly podsPerNode: Readonly<Record<string, number>>;
}

/**
 * The figures of one burst. `heldAtStart(node, template)` says whether the node held the template's image
 * when the burst began. A pod that never became Ready is left out of the percentiles and makes allReadyMs null.
 */
export function burstFigures(
  pods: readonly PodTiming[],
  heldAtStart: (node: string, template: number) => boolean,
): BurstFigures {
  const latencies = pods.filter((p) => p.readyMs !== null).map((p) => p.readyMs! - p.createdMs);
  const sorted = [...latencies].sort((a, b) => a - b);
  const pairs = new Set<string>();
  let warmHits = 0;
  const podsPerNode: Record<string, number> = {};
  for (const p of pods) {
    if (p.node === null) continue;
    podsPerNode[p.node] = (podsPerNode[p.node] ?? 0) + 1;
    if (heldAtStart(p.node, p.template)) warmHits++;
    else pairs.add(`${p.node}\u0000${p.template}`);
  }
  const ready = latencies.length;
  const first = pods.length ? Math.min(...pods.map((p) => p.createdMs)) : 0;
  return {
    pods: pods.length,
    ready,
    createToReadyMs: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? null },
    allReadyMs: ready === pods.length && ready > 0 ? Math.max(...pods.map((p) => p.readyMs!)) - first : null,
    warmHits,
    pulls: pairs.size,
    podsPerNode,
  };
}

/**
 * A Go duration as time.Duration's String writes it (`850ms`, `1.5s`, `2m3.04s`, `1h0m0s`, `12µs`, `0s`), in ms.
 * @throws Error when `text` is not one.
 */
export function goDurationMs(text: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * units[m[2]!]!;
    matched = re.lastIndex;
  }
  if (text.length === 0 || matched !== text.length) throw new Error(`not a Go duration: ${JSON.stringify(text)}`);
  return total;
}

/** What kubelet says of one finished pull (its Pulled Event). */
export interface PullRecord {
  readonly image: string;
  /** The pull itself (kubelet's pullDuration), ms. */
  readonly pullMs: number;
  /** From kubelet asking for the pull to its end, waiting for other pulls included, ms. */
  readonly withWaitingMs: number;
  readonly sizeBytes: number;
}

/**
 * Reads kubelet's Pulled Event message (pkg/kubelet/images/image_manager.go): `Successfully pulled image "REF"
 * in DURATION (DURATION including waiting). Image size: N bytes.` @returns null for any other message (e.g.
 * `Container image "REF" already present on machine`).
 */
export function parsePulledMessage(message: string): PullRecord | null {
  const m =
    /^Successfully pulled image "([^"]+)" in (\S+) \((\S+) including waiting\)\. Image size: (\d+) bytes\.$/.exec(
      message.trim(),
    );
  if (!m) return null;
  return { image: m[1]!, pullMs: goDurationMs(m[2]!), withWaitingMs: goDurationMs(m[3]!), sizeBytes: Number(m[4]) };
}

/**
 * Pull throughput over a set of pulls: `perPullMiBps` the median of each pull's size / its pull time;
 * `medianPullMs` the median pull time. Null when there is no pull.
 */
export function pullThroughput(pulls: readonly PullRecord[]): {
  perPullMiBps: number | null;
  medianPullMs: number | null;
} {
  const rates = pulls.filter((p) => p.pullMs > 0).map((p) => p.sizeBytes / 1024 ** 2 / (p.pullMs / 1000));
  return { perPullMiBps: median(rates), medianPullMs: median(pulls.map((p) => p.pullMs)) };
}

/**
 * What one node's pulls add up to, as a serial pull queue would see it: the bytes of the distinct images it pulled
 * over the longest of its pulls, waiting included (its pulls start together at a burst and overlap), in MiB/s, per
 * node. Pulls without a node are left out.
 */
export function nodePullRates(pulls: readonly (PullRecord & { readonly node: string | null })[]): Map<string, number> {
  const byNode = new Map<string, { images: Map<string, number>; longestMs: number }>();
  for (const p of pulls) {
    if (typeof p.node !== 'string') continue; // null, or missing in a result file written before nodes were kept
    const n = byNode.get(p.node) ?? { images: new Map<string, number>(), longestMs: 0 };
    n.images.set(p.image, p.sizeBytes);
    n.longestMs = Math.max(n.longestMs, p.withWaitingMs);
    byNode.set(p.node, n);
  }
  const out = new Map<string, number>();
  for (const [node, n] of byNode) {
    const bytes = [...n.images.values()].reduce((a, b) => a + b, 0);
    if (n.longestMs > 0) out.set(node, bytes / 1024 ** 2 / (n.longestMs / 1000));
  }
  return out;
}

/** One run: a setup, a cache state, its figures. */
export interface RunRow<S extends string, C extends string> {
  readonly setup: S;
  readonly cache: C;
  readonly figures: BurstFigures;
  /** The most sandboxes starting (bound, not Ready) at once on any node (startingStats.ts StartingTracker). */
  readonly peakStarting: number;
}

/** readyTable's rows, the header first (its first cell `head`). */
export function readyRows<S extends string, C extends string>(
  runs: readonly RunRow<S, C>[],
  setups: readonly S[],
  caches: readonly C[],
  labels: Readonly<Record<S, string>>,
  baseline: S,
  head = 'median of runs',
): string[][] {
  const shown = setups.filter((s) => runs.some((r) => r.setup === s));
  const rows: string[][] = [[head, ...shown.map((s) => labels[s])]];
  for (const cache of caches) {
    if (!runs.some((r) => r.cache === cache)) continue;
    const med = (s: S, f: (x: RunRow<S, C>) => number | null) =>
      medianOf(
        runs.filter((r) => r.setup === s && r.cache === cache),
        f,
      );
    // digits 'count': a whole number as such, a median between two counts with its .5
    const row = (label: string, f: (x: RunRow<S, C>) => number | null, digits: number | 'count', vsBaseline: boolean) =>
      rows.push([
        `${cache}: ${label}`,
        ...shown.map((s) => {
          const v = med(s, f);
          const r = vsBaseline && s !== baseline ? ratio(v, med(baseline, f)) : null;
          const d = digits === 'count' ? (v !== null && Number.isInteger(v) ? 0 : 1) : digits;
          return fmt(v, d) + (r !== null ? ` (${r.toFixed(2)}×)` : '');
        }),
      ]);
    row('creation → Ready p50 s', (x) => sec(x.figures.createToReadyMs.p50), 1, true);
    row('creation → Ready p99 s', (x) => sec(x.figures.createToReadyMs.p99), 1, true);
    row('first create → all Ready s', (x) => sec(x.figures.allReadyMs), 1, true);
    row('pulls made', (x) => x.figures.pulls, 'count', false);
    row('peak starting on one node', (x) => x.peakStarting, 'count', false);
    row('pods on the fullest node', (x) => Math.max(0, ...Object.values(x.figures.podsPerNode)), 'count', false);
    rows.push([
      `${cache}: runs`,
      ...shown.map((s) => String(runs.filter((r) => r.setup === s && r.cache === cache).length)),
    ]);
  }
  return rows;
}

/**
 * The table of runs: per cache state, rows of figures (median over the runs of a setup), one column per setup,
 * each time with its ratio to `baseline`'s median in brackets. `labels` names the columns, in order.
 */
export function readyTable<S extends string, C extends string>(
  runs: readonly RunRow<S, C>[],
  setups: readonly S[],
  caches: readonly C[],
  labels: Readonly<Record<S, string>>,
  baseline: S,
): string {
  return formatColumns(readyRows(runs, setups, caches, labels, baseline));
}

const sec = (ms: number | null) => (ms === null ? null : ms / 1000);

/** How far a model's figure lies from the measured one: model / measured (1.00 = the same), null when either is missing. */
export const modelRatio = (model: number | null, measured: number | null): number | null => ratio(model, measured);
