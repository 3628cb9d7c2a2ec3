/**
 * Pure helpers of the scheduler-perf scenario (schedulerPerf.ts): the performance config handed to kube-scheduler's
 * scheduler_perf harness (test/integration/scheduler_perf of k8s.io/kubernetes v1.36), the `-test.bench`
 * pattern that selects one workload, and reading what the harness writes: its JSON data items file
 * (`BenchmarkPerfScheduling_benchmark_<topic>_<time>.json`, util.go: dataItems2JSONFile) and its benchmark
 * result line on stdout (`BenchmarkPerfScheduling/<case>/<workload>-<procs>  1  <value> <metric>/<bucket> …`).
 * No I/O here.
 */
import { fmt, median, ratio } from './clusterStats.js';
import type { Table } from './results.js';

// ------------------------------------------------------------------------------------------ the performance config

/** One test case of the harness's YAML (scheduler_perf.go: testCase); fields not read here are kept as they are. */
export interface PerfTestCase {
  name: string;
  workloads: PerfWorkload[];
  schedulerConfigPath?: string;
  labels?: string[];
  [key: string]: unknown;
}

/** One workload of a test case (scheduler_perf.go: Workload). */
export interface PerfWorkload {
  name: string;
  params?: Record<string, number>;
  labels?: string[];
  threshold?: number | Record<string, number>;
  featureGates?: Record<string, boolean>;
  [key: string]: unknown;
}

/** A workload to run: `<test case>/<workload>`; `params` given: a workload of that name added to the test case. */
export interface WorkloadChoice {
  readonly testCase: string;
  readonly workload: string;
  readonly params?: Readonly<Record<string, number>>;
}

/**
 * Splits "SchedulingBasic/500Nodes" (or "Unschedulable/500Nodes/10Init/1kPods": the workload name may itself
 * contain slashes) into test case and workload. @throws Error when there is no slash.
 */
export function parseWorkloadId(id: string): { testCase: string; workload: string } {
  const slash = id.indexOf('/');
  if (slash <= 0 || slash === id.length - 1)
    throw new Error(`"${id}" is not TESTCASE/WORKLOAD (e.g. SchedulingBasic/500Nodes)`);
  return { testCase: id.slice(0, slash), workload: id.slice(slash + 1) };
}

/**
 * The performance config of one process: the chosen test case of the harness's own config with only the chosen
 * workload (upstream's, or one added with `choice.params`, taking the feature gates of none), its `labels` and
 * `threshold` removed (the label filter then selects it; a throughput under upstream's threshold is a figure
 * here, not a failure), and `schedulerConfigPath` set when given (the sandbox variant).
 * @returns the test case list to write as YAML, and upstream's threshold of that workload (null: none).
 * @throws Error when the test case, or the workload without `params`, is not in `upstream`.
 */
export function derivePerfConfig(
  upstream: readonly PerfTestCase[],
  choice: WorkloadChoice,
  schedulerConfigPath?: string,
): { config: PerfTestCase[]; upstreamThreshold: number | null } {
  const tc = upstream.find((t) => t.name === choice.testCase);
  if (!tc)
    throw new Error(
      `no test case ${choice.testCase} in the harness's config (it has: ${upstream.map((t) => t.name).join(', ')})`,
    );
  let workload: PerfWorkload;
  let upstreamThreshold: number | null = null;
  if (choice.params) {
    workload = { name: choice.workload, params: { ...choice.params } };
  } else {
    const w = tc.workloads.find((x) => x.name === choice.workload);
    if (!w)
      throw new Error(
        `no workload ${choice.workload} in test case ${choice.testCase} (it has: ${tc.workloads.map((x) => x.name).join(', ')})`,
      );
    const { labels: _labels, threshold, ...rest } = w;
    workload = structuredClone(rest);
    if (typeof threshold === 'number') upstreamThreshold = threshold;
    else if (threshold && typeof threshold === 'object') upstreamThreshold = Object.values(threshold)[0] ?? null;
  }
  const { labels: _tcLabels, workloads: _all, schedulerConfigPath: _own, ...tcRest } = tc;
  const out: PerfTestCase = { ...structuredClone(tcRest), name: tc.name, workloads: [workload] };
  if (schedulerConfigPath) out.schedulerConfigPath = schedulerConfigPath;
  return { config: [out], upstreamThreshold };
}

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g;

/**
 * The `-test.bench` pattern that selects exactly one workload: one anchored element per level of the
 * benchmark name (Go's testing splits the pattern on slashes), e.g.
 * `^BenchmarkPerfScheduling$/^SchedulingBasic$/^500Nodes$`. Spaces become underscores, as b.Run names them.
 */
export function benchPattern(testCase: string, workload: string): string {
  const levels = ['BenchmarkPerfScheduling', testCase, ...workload.split('/')];
  return levels.map((l) => `^${l.replace(/ /g, '_').replace(REGEX_SPECIAL, '\\$&')}$`).join('/');
}

// ------------------------------------------------------------------------------------------ the harness's output

/** The JSON data items file (util.go: DataItems). */
export interface DataItems {
  version: string;
  dataItems: { data: Record<string, number>; unit: string; labels?: Record<string, string> }[];
}

/** SchedulingThroughput of one workload, pods/s, as the harness computed it (1 s samples; util.go: throughputCollector). */
export interface Throughput {
  /** The data item's Name label, e.g. "SchedulingBasic/500Nodes/namespace-2". */
  name: string;
  average: number;
  perc50: number;
  perc90: number;
  perc95: number;
  perc99: number;
}

/**
 * The SchedulingThroughput item of a data items file. @returns null when there is none (the harness logs
 * "Failed to measure SchedulingThroughput" when the measured pods were all scheduled within one 1 s sample).
 * @throws Error when `items` is not a data items object.
 */
export function throughputOf(items: unknown): Throughput | null {
  const list = (items as DataItems | null)?.dataItems;
  if (!Array.isArray(list)) throw new Error('not a scheduler_perf data items file (no dataItems array)');
  const item = list.find((i) => i.labels?.Metric === 'SchedulingThroughput');
  if (!item) return null;
  const d = item.data;
  const need = ['Average', 'Perc50', 'Perc90', 'Perc95', 'Perc99'];
  for (const k of need) if (typeof d[k] !== 'number') throw new Error(`SchedulingThroughput item without ${k}`);
  return {
    name: item.labels?.Name ?? '',
    average: d.Average!,
    perc50: d.Perc50!,
    perc90: d.Perc90!,
    perc95: d.Perc95!,
    perc99: d.Perc99!,
  };
}

/** One result line of `go test -bench`: name, GOMAXPROCS suffix, iterations, then value–unit pairs. */
export interface BenchLine {
  name: string;
  procs: number | null;
  iterations: number;
  metrics: Record<string, number>;
}

/**
 * Parses a benchmark result line, e.g.
 * `BenchmarkPerfScheduling/SchedulingBasic/500Nodes-2  1  412.5 SchedulingThroughput/Average  0 ns/op`.
 * @returns null for any other line.
 */
export function parseBenchLine(line: string): BenchLine | null {
  const fields = line.trim().split(/\s+/);
  if (fields.length < 2 || !fields[0]!.startsWith('Benchmark')) return null;
  const iterations = Number(fields[1]);
  if (!Number.isInteger(iterations)) return null;
  const m = /^(.*)-(\d+)$/.exec(fields[0]!);
  const metrics: Record<string, number> = {};
  for (let i = 2; i + 1 < fields.length; i += 2) {
    const v = Number(fields[i]);
    if (!Number.isFinite(v)) return null;
    metrics[fields[i + 1]!] = v;
  }
  return { name: m ? m[1]! : fields[0]!, procs: m ? Number(m[2]) : null, iterations, metrics };
}

/** The SchedulingThroughput part of a benchmark line as the harness printed it: `412.5 SchedulingThroughput/Average …`. */
export function throughputText(line: BenchLine): string {
  return Object.entries(line.metrics)
    .filter(([k]) => k.startsWith('SchedulingThroughput/'))
    .map(([k, v]) => `${v} ${k}`)
    .join('  ');
}

// ------------------------------------------------------------------------------------------ variants and tables

/**
 * The variants of the bench: `stock` (kube-scheduler as shipped), `sandbox` (the sandbox-scheduler profile and
 * sandbox-extender), `floor` (the same profile and extender configuration, bench/floorExtender.ts in the
 * extender's place).
 */
export type Variant = 'stock' | 'sandbox' | 'floor';

/** Every variant, in the order of the tables' rows. */
export const VARIANTS: readonly Variant[] = ['stock', 'sandbox', 'floor'];

/** The ratios the summary prints (numerator, denominator); sandbox/floor is the extender against its floor. */
export const RATIO_PAIRS: readonly (readonly [Variant, Variant])[] = [
  ['sandbox', 'stock'],
  ['floor', 'stock'],
  ['sandbox', 'floor'],
];

/** CPU categories of a run (the processes the bench watches). */
export const CPU_HARNESS = 'harness (API server + scheduler)';
export const CPU_ETCD = 'etcd';
export const CPU_EXTENDER = 'extender';

/**
 * Parses `--variants`: names from VARIANTS, comma-separated, each at most once, in the order given.
 * @throws Error naming the unknown or repeated name, or when the list is empty.
 */
export function parseVariants(text: string): Variant[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new Error(`no variant given (choose from ${VARIANTS.join(', ')})`);
  const out: Variant[] = [];
  for (const n of names) {
    if (!(VARIANTS as readonly string[]).includes(n))
      throw new Error(`unknown variant "${n}" (choose from ${VARIANTS.join(', ')})`);
    if ((out as string[]).includes(n)) throw new Error(`variant "${n}" given twice`);
    out.push(n as Variant);
  }
  return out;
}

/**
 * The order of the variants in run `run` (1, 2, …): `variants` rotated left by run − 1, so each variant takes
 * each place in turn (two variants: the order flips every run).
 */
export function variantOrder(variants: readonly Variant[], run: number): Variant[] {
  if (variants.length === 0) return [];
  const k = (((run - 1) % variants.length) + variants.length) % variants.length;
  return [...variants.slice(k), ...variants.slice(0, k)];
}

/**
 * Which sampling (percentageOfNodesToScore) a variant ran: stock as shipped (not set: kube-scheduler's
 * adaptive share), sandbox and floor the profile's value, `--sandbox-percentage` (0: adaptive).
 */
export function samplingOf(variant: Variant, sandboxPercentage: number): string {
  if (variant === 'stock') return 'as shipped (adaptive)';
  return sandboxPercentage === 0
    ? 'adaptive (--sandbox-percentage 0)'
    : `${sandboxPercentage} % (--sandbox-percentage)`;
}

/** What the tables read of one run (a report's run record; older reports have no floor runs). */
export interface ThroughputRun {
  readonly workload: string;
  readonly variant: Variant;
  readonly throughput: Throughput | null;
  readonly cpu: { readonly cores: Readonly<Record<string, number>> };
  readonly upstreamThreshold: number | null;
}

/** The variants that have at least one run in `runs`, in the order of VARIANTS. */
export function variantsIn(runs: readonly ThroughputRun[]): Variant[] {
  return VARIANTS.filter((v) => runs.some((r) => r.variant === v));
}

const FIGURES: readonly ((t: Throughput) => number)[] = [(t) => t.average, (t) => t.perc50, (t) => t.perc99];

/** Median SchedulingThroughput (average, p50, p99) of a workload's successful runs of a variant; nulls when none. */
export function medianThroughput(
  runs: readonly ThroughputRun[],
  workload: string,
  variant: Variant,
): [number | null, number | null, number | null] {
  const ok = runs.filter((r) => r.workload === workload && r.variant === variant && r.throughput);
  const [a, b, c] = FIGURES.map((f) => median(ok.map((r) => f(r.throughput!))));
  return [a!, b!, c!];
}

/**
 * One row per workload and variant present in `runs`: its sampling, successful runs of all, the median
 * SchedulingThroughput (pods/s: average, p50, p99) and the median cores of the harness, etcd and the extender
 * ("-": none measured, as stock's extender). The first row is the header.
 */
export function variantTable(
  runs: readonly ThroughputRun[],
  workloads: readonly string[],
  sandboxPercentage: number,
): string[][] {
  const rows = [
    [
      'workload',
      'variant',
      'sampling (percentageOfNodesToScore)',
      'runs ok',
      'avg pods/s',
      'p50',
      'p99',
      'harness cores',
      'etcd',
      'extender',
    ],
  ];
  const variants = variantsIn(runs);
  for (const w of workloads) {
    for (const v of variants) {
      const all = runs.filter((r) => r.workload === w && r.variant === v);
      if (all.length === 0) continue;
      const ok = all.filter((r) => r.throughput);
      const cores = (key: string) =>
        median(all.map((r) => r.cpu.cores[key]).filter((c): c is number => typeof c === 'number'));
      rows.push([
        w,
        v,
        samplingOf(v, sandboxPercentage),
        `${ok.length}/${all.length}`,
        ...medianThroughput(runs, w, v).map((x) => fmt(x)),
        fmt(cores(CPU_HARNESS), 2),
        fmt(cores(CPU_ETCD), 2),
        fmt(cores(CPU_EXTENDER), 2),
      ]);
    }
  }
  return rows;
}

/**
 * One row per workload: the ratios of RATIO_PAIRS whose two variants both have runs in `runs` (of the medians:
 * average, p50, p99; "-" when either median is missing), then upstream's threshold of the workload. The first
 * row is the header.
 */
export function ratioTable(runs: readonly ThroughputRun[], workloads: readonly string[]): string[][] {
  const present = variantsIn(runs);
  const pairs = RATIO_PAIRS.filter(([a, b]) => present.includes(a) && present.includes(b));
  const rows = [
    ['workload', ...pairs.flatMap(([a, b]) => [`${a}/${b} avg`, 'p50', 'p99']), "upstream's threshold (avg)"],
  ];
  for (const w of workloads) {
    const cells = pairs.flatMap(([a, b]) => {
      const num = medianThroughput(runs, w, a);
      const den = medianThroughput(runs, w, b);
      return num.map((x, i) => fmt(ratio(x, den[i]!), 2));
    });
    const threshold = runs.find((r) => r.workload === w)?.upstreamThreshold;
    rows.push([w, ...cells, threshold ? String(threshold) : '-']);
  }
  return rows;
}

/**
 * The published table of a run, bench/results/scheduler-perf.json's `throughput` (the chart's profile) or, with
 * Filter plugins off, `fit-filter-cut`: per workload the median average pods/s of each variant and their ratios.
 * Its CPU-s per 1,000 pods columns are left empty: the harness does not say how many pods each run placed.
 */
export function publishedThroughput(
  runs: readonly ThroughputRun[],
  workloads: readonly string[],
  filtersOff: boolean,
): Table {
  const avg = (w: string, v: Variant) => medianThroughput(runs, w, v)[0];
  const two = (a: number | null, b: number | null) => {
    const r = ratio(a, b);
    return r === null ? null : Number(r.toFixed(2));
  };
  const one = (v: number | null) => (v === null ? null : Number(v.toFixed(1)));
  const col = (name: string, decimals: number) => ({ name, decimals });
  const figures = workloads.map((w) => ({ w, st: avg(w, 'stock'), sb: avg(w, 'sandbox'), fl: avg(w, 'floor') }));
  return filtersOff
    ? {
        id: 'fit-filter-cut',
        title: "A measurement, not the chart's profile: the sandbox profile with Filter plugins off",
        columns: [
          'workload',
          col('stock', 1),
          col('sandbox', 1),
          col('floor', 1),
          col('sandbox/stock', 2),
          col('floor/stock', 2),
          col('sandbox/floor', 2),
          'CPU-s / 1,000 pods: sandbox, floor',
        ],
        rows: figures.map(({ w, st, sb, fl }) => [
          w,
          one(st),
          one(sb),
          one(fl),
          two(sb, st),
          two(fl, st),
          two(sb, fl),
          null,
        ]),
      }
    : {
        id: 'throughput',
        title: 'SchedulingThroughput average, pods/s (median of the runs)',
        columns: [
          'workload',
          col('stock', 1),
          col('sandbox', 1),
          col('floor', 1),
          col('sandbox/floor', 2),
          col('sandbox/stock', 2),
          'CPU-s / 1,000 pods: sandbox',
          'floor',
        ],
        rows: figures.map(({ w, st, sb, fl }) => [w, one(st), one(sb), one(fl), two(sb, fl), two(sb, st), null, null]),
      };
}
