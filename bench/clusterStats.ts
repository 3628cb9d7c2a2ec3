/**
 * The pure half of `npm run bench -- cluster` (bench/cluster.ts): reading Prometheus text, histogram
 * deltas and quantiles, percentiles of client-side samples, CPU shares from /proc tick samples, the
 * self-time table of a V8 CPU profile, and the soundness of a placement. No I/O, no clock: the
 * orchestrator passes everything in.
 */
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import { nodeAllocatable, podRequests } from '../src/core/objects/podRequests.js';
import { formatTable } from '../src/cli/commands.js';
import { discreteOptimum, pressureWith } from '../src/cli/replay.js';

// ------------------------------------------------------------------------------------------ Prometheus text

/** One sample line of the Prometheus text exposition format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

/**
 * A sample value as Prometheus reads it (Go strconv.ParseFloat): the special values in any letter case, so the
 * `Nan` prom-client writes for a gauge without data (its event-loop lag before the first sample) is NaN too.
 */
function parseValue(text: string): number {
  switch (text.toLowerCase()) {
    case '+inf':
    case 'inf':
      return Infinity;
    case '-inf':
      return -Infinity;
    case 'nan':
      return NaN;
    default:
      return Number(text);
  }
}

/**
 * Parses the sample lines of the Prometheus text format (version 0.0.4): `name{label="value",…} value
 * [timestamp]`; `#` lines and blank lines are skipped; label values are unescaped (`\\`, `\"`, `\n`).
 * (The one text-format parser on npm, parse-prometheus-text-format 1.1.1, drops every labelled
 * histogram series after the first, which is what kube-scheduler exports; hence this one.)
 * @throws Error naming the line when a sample line is malformed.
 */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = SAMPLE_NAME.exec(line)?.[0];
    if (!name) throw new Error(`not a Prometheus sample line: ${line}`);
    let i = name.length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      for (;;) {
        while (line[i] === ' ' || line[i] === ',') i++;
        if (line[i] === '}') {
          i++;
          break;
        }
        const eq = line.indexOf('=', i);
        if (eq < 0 || line[eq + 1] !== '"') throw new Error(`bad label in Prometheus sample line: ${line}`);
        const key = line.slice(i, eq).trim();
        let value = '';
        let j = eq + 2;
        for (; j < line.length && line[j] !== '"'; j++) {
          if (line[j] === '\\' && j + 1 < line.length) {
            j++;
            value += line[j] === 'n' ? '\n' : line[j];
          } else value += line[j];
        }
        if (j >= line.length) throw new Error(`unterminated label value in Prometheus sample line: ${line}`);
        labels[key] = value;
        i = j + 1;
      }
    }
    const [valueText] = line.slice(i).trim().split(/\s+/);
    const value = parseValue(valueText ?? '');
    if (valueText === undefined || valueText === '' || (Number.isNaN(value) && valueText.toLowerCase() !== 'nan')) {
      throw new Error(`bad value in Prometheus sample line: ${line}`);
    }
    samples.push({ name, labels, value });
  }
  return samples;
}

/** Label pairs a sample must carry to be counted. */
export type LabelMatch = Readonly<Record<string, string>>;

const matches = (labels: Readonly<Record<string, string>>, match: LabelMatch) =>
  Object.entries(match).every(([k, v]) => labels[k] === v);

/** Sum of the samples of `name` carrying every pair of `match` (0 when there are none). */
export function sumSamples(samples: readonly Sample[], name: string, match: LabelMatch = {}): number {
  let sum = 0;
  for (const s of samples) if (s.name === name && matches(s.labels, match)) sum += s.value;
  return sum;
}

/** sumSamples of `after` less that of `before`: a plain difference (a counter reset is not looked for). */
export function sumDelta(
  after: readonly Sample[],
  before: readonly Sample[],
  name: string,
  match: LabelMatch = {},
): number {
  return sumSamples(after, name, match) - sumSamples(before, name, match);
}

/** Whether any sample of `name` is present. */
export const hasMetric = (samples: readonly Sample[], name: string) => samples.some((s) => s.name === name);

/** Counter sums of `name` grouped by the value of one label. */
export function sumBy(
  samples: readonly Sample[],
  name: string,
  label: string,
  match: LabelMatch = {},
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== name || !matches(s.labels, match)) continue;
    const key = s.labels[label] ?? '';
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

/**
 * How much each counter of `name` (grouped by `label`) grew from `before` to `after`, the groups that did not
 * grow left out; a counter that went down was reset (its process restarted) and counts from 0.
 */
export function counterDeltas(
  after: readonly Sample[],
  before: readonly Sample[],
  name: string,
  label: string,
  match: LabelMatch = {},
): Record<string, number> {
  const b = sumBy(before, name, label, match);
  const out: Record<string, number> = {};
  for (const [k, v] of sumBy(after, name, label, match)) {
    const prior = b.get(k) ?? 0;
    const d = v >= prior ? v - prior : v;
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** A cumulative histogram: counts of observations ≤ each upper bound (ascending, ending at +Inf), sum and count. */
export interface Histogram {
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  readonly sum: number;
  readonly count: number;
}

export const EMPTY_HISTOGRAM: Histogram = { buckets: [], sum: 0, count: 0 };

/**
 * The histogram `name` (its `_bucket`, `_sum`, `_count` series), summed over every series carrying
 * `match` (e.g. over the `attempts` label of kube-scheduler's SLI histogram). EMPTY_HISTOGRAM when absent.
 */
export function histogram(samples: readonly Sample[], name: string, match: LabelMatch = {}): Histogram {
  const byLe = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const s of samples) {
    if (!matches(s.labels, match)) continue;
    if (s.name === `${name}_bucket`) {
      const le = parseValue(s.labels.le ?? '');
      byLe.set(le, (byLe.get(le) ?? 0) + s.value);
    } else if (s.name === `${name}_sum`) sum += s.value;
    else if (s.name === `${name}_count`) count += s.value;
  }
  const buckets = [...byLe].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c }));
  return { buckets, sum, count };
}

/** The histograms of `name` per value of `label` (e.g. per `verb`, per `extension_point`). */
export function histogramsBy(
  samples: readonly Sample[],
  name: string,
  label: string,
  match: LabelMatch = {},
): Map<string, Histogram> {
  const values = new Set<string>();
  for (const s of samples)
    if (s.name === `${name}_count` && matches(s.labels, match)) values.add(s.labels[label] ?? '');
  return new Map([...values].sort().map((v) => [v, histogram(samples, name, { ...match, [label]: v })]));
}

/**
 * `after − before`, bucket by bucket: the observations made between two scrapes. When any count went
 * down (the process restarted between the scrapes) or there is no `before`, `after` itself is the delta.
 */
export function histogramDelta(after: Histogram, before: Histogram | undefined): Histogram {
  if (!before || before.count === 0) return after;
  const prior = new Map(before.buckets.map((b) => [b.le, b.count]));
  if (after.count < before.count || after.buckets.some((b) => b.count < (prior.get(b.le) ?? 0))) return after;
  return {
    buckets: after.buckets.map((b) => ({ le: b.le, count: b.count - (prior.get(b.le) ?? 0) })),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/** Mean observation (sum / count), or null for an empty histogram. */
export const histogramMean = (h: Histogram): number | null => (h.count > 0 ? h.sum / h.count : null);

/**
 * The q-quantile (0 ≤ q ≤ 1) as Prometheus' histogram_quantile computes it: the bucket holding rank
 * q·count, linearly interpolated between its lower bound (the previous bucket's bound, 0 for the first)
 * and its upper bound; in the +Inf bucket, the highest finite bound. Null for an empty histogram.
 * So the answer is only as fine as the buckets (kube-scheduler's SLI buckets double from 10 ms).
 */
export function histogramQuantile(q: number, h: Histogram): number | null {
  const total = h.buckets.at(-1)?.count ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank && b.count > lowerCount) {
      if (b.le === Infinity) return lowerBound;
      return lowerBound + ((b.le - lowerBound) * (rank - lowerCount)) / (b.count - lowerCount);
    }
    lowerBound = b.le;
    lowerCount = b.count;
  }
  return lowerBound;
}

// ------------------------------------------------------------------------------------------ client-side samples

/** Nearest-rank percentile (0 < q ≤ 1) of `values`; null when empty. */
export function percentile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The middle value (the mean of the two middle ones for an even count); null when empty. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median of `f` over `rows`, leaving out the rows where it is null, undefined or not finite; null when none is left. */
export function medianOf<T>(rows: readonly T[], f: (row: T) => number | null | undefined): number | null {
  return median(rows.map(f).filter((v): v is number => typeof v === 'number' && Number.isFinite(v)));
}

/** Pods per second over the binding window: (n − 1) intervals between the first and the last bind (ms). */
export function podsPerSecond(bindTimesMs: readonly number[]): number | null {
  if (bindTimesMs.length < 2) return null;
  const first = Math.min(...bindTimesMs);
  const last = Math.max(...bindTimesMs);
  return last > first ? ((bindTimesMs.length - 1) * 1000) / (last - first) : null;
}

// ------------------------------------------------------------------------------------------ CPU from /proc

/** utime + stime of one process at one moment (clock ticks), from /proc/PID/stat. */
export interface ProcTicks {
  readonly pid: number;
  readonly ticks: number;
}

/** One sample of every component: monotonic time (ms) and the ticks per component name. */
export interface CpuSample {
  readonly tMs: number;
  readonly procs: Readonly<Record<string, ProcTicks>>;
}

/** The start time (field 22, clock ticks after boot) of the text of /proc/PID/stat, as cluster-up.sh records it in its pid files. */
export function startTimeOfStat(stat: string): string {
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  if (start === undefined || !/^\d+$/.test(start)) throw new Error(`not a /proc/PID/stat line: ${stat.slice(0, 80)}`);
  return start;
}

/**
 * CPU share of each component over [fromMs, toMs], in cores (1 = one core busy the whole time): the
 * tick delta between the last sample at or before `fromMs` and the first at or after `toMs` (so the
 * window widens to the sampling grid), over that sample interval. A component whose pid changed in
 * between counts from zero ticks (a new process). Components missing at either end are left out.
 */
export function cpuShares(
  samples: readonly CpuSample[],
  fromMs: number,
  toMs: number,
  clockTicksPerSecond: number,
): { windowMs: number; cores: Map<string, number> } {
  const sorted = [...samples].sort((a, b) => a.tMs - b.tMs);
  const start = [...sorted].reverse().find((s) => s.tMs <= fromMs) ?? sorted[0];
  const end = sorted.find((s) => s.tMs >= toMs) ?? sorted.at(-1);
  const cores = new Map<string, number>();
  if (!start || !end || end.tMs <= start.tMs) return { windowMs: 0, cores };
  const seconds = (end.tMs - start.tMs) / 1000;
  for (const [name, e] of Object.entries(end.procs)) {
    const s = start.procs[name];
    if (!s) continue;
    const ticks = s.pid === e.pid ? e.ticks - s.ticks : e.ticks;
    cores.set(name, ticks / clockTicksPerSecond / seconds);
  }
  return { windowMs: end.tMs - start.tMs, cores };
}

// ------------------------------------------------------------------------------------------ V8 CPU profile

/** The parts of a `.cpuprofile` (V8 / Chrome DevTools format) read here; times in microseconds. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTimeEntry {
  readonly functionName: string;
  /** Script URL with the `file://` scheme and `stripPrefix` removed; `node:…` for Node's internals. */
  readonly location: string;
  readonly selfMs: number;
  /** Share of the busy time (every sample but "(idle)"). */
  readonly share: number;
}

export interface SelfTimeTable {
  /** The samples counted × the sampling interval, ms. */
  readonly totalMs: number;
  readonly idleMs: number;
  /** totalMs − idleMs. */
  readonly busyMs: number;
  readonly gcMs: number;
  readonly top: readonly SelfTimeEntry[];
}

/**
 * Self time per function (name + script + line) of a CPU profile, the `top` largest. Each sample counts
 * for the profile's sampling interval (the median gap between samples), not, as DevTools' "Bottom-Up"
 * view does, until the next sample: V8 takes a sample when its signal reaches the thread, so a thread
 * that the kernel preempted (on a machine whose cores are busy) gets one sample late, and timing it to
 * the next sample charged the whole preemption to the function it was in (a socket write, mostly: 23 %
 * of the extender's main thread by gaps, 10 % by samples, 5 % on-CPU by the kernel's own sampling). With
 * `fromUs`/`toUs` (the profile's clock: CLOCK_MONOTONIC in µs, the clock of process.hrtime), only the
 * samples inside that window count.
 */
export function selfTimeTable(
  profile: CpuProfile,
  options: { top?: number; fromUs?: number; toUs?: number; stripPrefix?: string } = {},
): SelfTimeTable {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const from = options.fromUs ?? -Infinity;
  const to = options.toUs ?? Infinity;
  const bySite = new Map<string, { functionName: string; location: string; us: number }>();
  let totalUs = 0;
  let idleUs = 0;
  let gcUs = 0;
  const times: number[] = [];
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    times.push(t);
  }
  const duration = median(profile.timeDeltas.filter((d) => d > 0)) ?? 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const at = times[i]!;
    if (at < from || at > to) continue;
    const frame = frames.get(profile.samples[i]!);
    if (!frame) continue;
    totalUs += duration;
    if (frame.functionName === '(idle)') {
      idleUs += duration;
      continue;
    }
    if (frame.functionName === '(garbage collector)') gcUs += duration;
    let url = frame.url.replace(/^file:\/\//, '');
    if (options.stripPrefix && url.startsWith(options.stripPrefix))
      url = url.slice(options.stripPrefix.length).replace(/^\//, '');
    const location = url ? `${url}:${frame.lineNumber + 1}` : '';
    const functionName = frame.functionName || '(anonymous)';
    const key = `${functionName}\u0000${location}`;
    const entry = bySite.get(key) ?? { functionName, location, us: 0 };
    entry.us += duration;
    bySite.set(key, entry);
  }
  const busyUs = totalUs - idleUs;
  const top = [...bySite.values()]
    .sort((a, b) => b.us - a.us || a.functionName.localeCompare(b.functionName))
    .slice(0, options.top ?? 25)
    .map((e) => ({
      functionName: e.functionName,
      location: e.location,
      selfMs: e.us / 1000,
      share: busyUs > 0 ? e.us / busyUs : 0,
    }));
  return { totalMs: totalUs / 1000, idleMs: idleUs / 1000, busyMs: busyUs / 1000, gcMs: gcUs / 1000, top };
}

// ------------------------------------------------------------------------------------------ placement soundness

export interface OverAllocatable {
  readonly node: string;
  readonly resource: string;
  readonly requested: number;
  readonly allocatable: number;
}

export interface Soundness {
  /** Bound, non-terminal pods counted. */
  readonly boundPods: number;
  /** Nodes where the sum of requests exceeds allocatable (cpu millicores, memory bytes, pods count). */
  readonly overAllocatable: readonly OverAllocatable[];
  /** max over nodes of max(cpu, memory) requested / allocatable. */
  readonly peakPressure: number;
  readonly peakNode: string | null;
  /** Best peak any placement of the same pods can reach (src/cli/replay.ts discreteOptimum); null when the pods are not identical. */
  readonly optimum: number | null;
  /** Pressure of one pod on the peak node: the slack "within one pod of the optimum" allows. */
  readonly onePodStep: number | null;
  readonly withinOnePodOfOptimum: boolean | null;
}

/**
 * Checks a placement: every node's summed requests (component-helpers PodRequests, as kube-scheduler's
 * NodeResourcesFit counts them) against its allocatable in cpu, memory and pod count, and for identical
 * pods the peak pressure against the optimum: peak ≤ optimum + one pod's pressure on the peak node.
 * Pods that are not bound or are Succeeded/Failed hold nothing. Nodes without allocatable are skipped.
 * @throws QuantityError on an unreadable quantity.
 */
export function placementSoundness(nodes: readonly Node[], pods: readonly Pod[]): Soundness {
  const dims = ['cpu', 'memory'] as const;
  const allocatable = new Map<string, number[]>();
  const podSlots = new Map<string, number>();
  for (const n of nodes) {
    const a = nodeAllocatable(n);
    const name = n.metadata?.name;
    if (!a || !name) continue;
    allocatable.set(
      name,
      dims.map((d) => a.get(d) ?? 0),
    );
    podSlots.set(name, a.get('pods') ?? Infinity);
  }
  const used = new Map<string, { vector: number[]; pods: number }>();
  const requestKeys = new Set<string>();
  let request: number[] | null = null;
  let boundPods = 0;
  for (const p of pods) {
    const nodeName = p.spec?.nodeName;
    if (!nodeName || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    boundPods++;
    const r = podRequests(p);
    const vector = dims.map((d) => r.get(d) ?? 0);
    requestKeys.add(vector.join('/'));
    request = vector;
    const u = used.get(nodeName) ?? { vector: [0, 0], pods: 0 };
    u.vector = u.vector.map((v, i) => v + vector[i]!);
    u.pods++;
    used.set(nodeName, u);
  }
  const overAllocatable: OverAllocatable[] = [];
  let peakPressure = 0;
  let peakNode: string | null = null;
  for (const [node, u] of [...used].sort((a, b) => a[0].localeCompare(b[0]))) {
    const a = allocatable.get(node);
    if (!a) continue;
    dims.forEach((d, i) => {
      if (u.vector[i]! > a[i]!)
        overAllocatable.push({ node, resource: d, requested: u.vector[i]!, allocatable: a[i]! });
    });
    const slots = podSlots.get(node) ?? Infinity;
    if (u.pods > slots) overAllocatable.push({ node, resource: 'pods', requested: u.pods, allocatable: slots });
    const p = pressureWith(a, u.vector, 1);
    if (p > peakPressure) {
      peakPressure = p;
      peakNode = node;
    }
  }
  let optimum: number | null = null;
  let onePodStep: number | null = null;
  if (request && requestKeys.size === 1) {
    const spec = {
      dims: { names: [...dims] },
      nodes: [...allocatable].map(([name, a]) => ({ name, allocatable: a })),
      podRequest: request,
      podCount: boundPods,
      honourCapacity: true,
    };
    optimum = discreteOptimum(spec);
    onePodStep = peakNode ? pressureWith(allocatable.get(peakNode)!, request, 1) : 0;
  }
  const withinOnePodOfOptimum =
    optimum === null || onePodStep === null ? null : peakPressure <= optimum + onePodStep + 1e-12;
  return { boundPods, overAllocatable, peakPressure, peakNode, optimum, onePodStep, withinOnePodOfOptimum };
}

/**
 * How a scheduler picks the nodes it filters, from its /configz: percentageOfNodesToScore unset or 0 is
 * kube-scheduler's adaptive default (numFeasibleNodesToFind: max(5, 50 − nodes/125) %, at least 100 nodes).
 */
export function sampling(percentage: unknown): string {
  return typeof percentage === 'number' && percentage > 0 ? `${percentage} %` : 'adaptive';
}

/**
 * The column titles of the two schedulers, each with its sampling from /configz. Stock whose
 * percentageOfNodesToScore is unset or 0 (what /configz reports for unset: the v1 default) samples as shipped.
 */
export function schedulerColumns(
  settings:
    | {
        readonly sandbox: { readonly percentageOfNodesToScore: unknown };
        readonly default: { readonly percentageOfNodesToScore: unknown };
      }
    | undefined,
): [string, string] {
  if (!settings) return ['sandbox-scheduler', 'default-scheduler'];
  const stock = settings.default.percentageOfNodesToScore;
  return [
    `sandbox-scheduler (${sampling(settings.sandbox.percentageOfNodesToScore)})`,
    sampling(stock) === 'adaptive' ? 'stock as shipped (adaptive)' : `stock at ${sampling(stock)} (not as shipped)`,
  ];
}

// ------------------------------------------------------------------------------------------ output

/** Left-aligned columns, two spaces apart (first row: headers): the CLI's own layout (rank's table). */
export const formatColumns = formatTable;

/** A number with `digits` decimals, or "-" for null/NaN. */
export function fmt(v: number | null | undefined, digits = 1): string {
  return v === null || v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits);
}

/** a / b, or null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  return a === null || a === undefined || b === null || b === undefined || b === 0 ? null : a / b;
}

// ------------------------------------------------------------------------------------------ CPU per placed pod

/**
 * CPU-seconds each component spent per 1,000 pods over [fromMs, toMs], minus what it spends idle: `idleCores`
 * (its share over a quiet interval just before) times the window's length. So a component that does nothing
 * for the pods shows about 0, whatever its background work (health reports, timers, heartbeats).
 * A component missing from `idleCores` is not corrected. Components missing at either end of the window are
 * left out (see cpuShares). Negative results (noise) are kept: they say the component did nothing measurable.
 */
export function cpuSecondsPerThousand(
  samples: readonly CpuSample[],
  fromMs: number,
  toMs: number,
  clockTicksPerSecond: number,
  pods: number,
  idleCores: ReadonlyMap<string, number> = new Map(),
): { windowMs: number; perThousand: Map<string, number> } {
  const { windowMs, cores } = cpuShares(samples, fromMs, toMs, clockTicksPerSecond);
  const perThousand = new Map<string, number>();
  if (pods <= 0) return { windowMs, perThousand };
  for (const [name, c] of cores)
    perThousand.set(name, (((c - (idleCores.get(name) ?? 0)) * windowMs) / 1000 / pods) * 1000);
  return { windowMs, perThousand };
}

// ------------------------------------------------------------------------------------------ quiet runs

/** What makes a run not evidence: its reasons, empty when it ran on a quiet machine. */
export interface DisturbanceLimits {
  /** Cores that processes outside the cluster and the bench may take before a run is flagged. */
  readonly maxOtherCores: number;
  /** How far a stock run's pods/s may lie from the median of the stock runs of its mode (0.25 = ±25 %). */
  readonly maxStockDeviation: number;
}

/** Cores taken by other processes: the machine's busy cores minus the components' and the bench's. */
export function otherCores(
  cores: Readonly<Record<string, number>>,
  machineKey: string,
  own: readonly string[],
): number | null {
  const machine = cores[machineKey];
  if (machine === undefined) return null;
  return machine - own.reduce((sum, c) => sum + (cores[c] ?? 0), 0);
}

/** The reasons a run is disturbed by other load (other processes busy over its window). */
export function loadDisturbance(other: number | null, limits: DisturbanceLimits): string[] {
  return other !== null && other > limits.maxOtherCores
    ? [`other processes took ${other.toFixed(2)} cores (> ${limits.maxOtherCores})`]
    : [];
}

/**
 * The stock runs whose rate lies off the median of the stock runs of the same mode by more than
 * `maxStockDeviation`: stock's rate is the yardstick, so a run where it moved says the machine moved.
 * @returns run index → reason.
 */
export function stockRateOutliers(
  runs: readonly { readonly mode: string; readonly stock: boolean; readonly podsPerSecond: number | null }[],
  maxStockDeviation: number,
): Map<number, string> {
  const out = new Map<number, string>();
  const modes = new Set(runs.filter((r) => r.stock).map((r) => r.mode));
  for (const mode of modes) {
    const rates = runs
      .filter((r) => r.stock && r.mode === mode && r.podsPerSecond !== null)
      .map((r) => r.podsPerSecond!);
    const m = median(rates);
    if (m === null || m <= 0) continue;
    runs.forEach((r, i) => {
      if (!r.stock || r.mode !== mode || r.podsPerSecond === null) return;
      const off = r.podsPerSecond / m - 1;
      if (Math.abs(off) > maxStockDeviation)
        out.set(
          i,
          `stock ${r.podsPerSecond.toFixed(1)} pods/s is ${(off * 100).toFixed(0)} % off the median of stock ${mode} runs (${m.toFixed(1)})`,
        );
    });
  }
  return out;
}

/** Median and spread (min–max) of a figure over runs. */
export interface Spread {
  readonly median: number | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly n: number;
}

/** The median and spread of `values` (one per run; null, undefined and NaN are left out). */
export function spreadOf(values: readonly (number | null | undefined)[]): Spread {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return {
    median: median(xs),
    min: xs.length ? Math.min(...xs) : null,
    max: xs.length ? Math.max(...xs) : null,
    n: xs.length,
  };
}

/**
 * Warm-up: the first run's figure after a (re)start against the median of the later runs of the same
 * mode (1.00 = no warm-up cost; 0.70 = the first run reached 70 % of the later ones' rate).
 * Null without a later run.
 */
export function firstRunRatio(ordered: readonly (number | null)[]): number | null {
  const [first, ...later] = ordered;
  const m = median(later.filter((v): v is number => v !== null));
  return first === null || first === undefined || m === null || m === 0 ? null : first / m;
}
