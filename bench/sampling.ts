/**
 * `npm run bench -- sampling`: placement quality under kube-scheduler's sampling, from the replay's model of it
 * (src/cli/replay.ts: the window of numFeasibleNodesToFind feasible nodes, walked in node-tree order from where
 * the previous pod's search stopped, full nodes skipped; the extender's least_loaded choice within the window).
 *
 * Per node set and node count it replays one burst at each percentageOfNodesToScore and prints the peak projected
 * pressure against the optimum (the best any placement of the same pods can reach), the pods placed above the
 * optimum (how many would have to move), and whether the peak is within one pod of it. The node sets are the ones
 * the cluster benchmarks and the e2e tier use, plus node pools listed in blocks, as real clusters list nodes by
 * name. No cluster, no clock: the figures are exact for the model and repeat from run to run.
 */
import { Command, InvalidArgumentError } from 'commander';
import { exitOnUsage, intAtLeast, listOf, percentage, within } from './cliOptions.js';
import type { PodRecord } from '../src/core/objects/records.js';
import { numFeasibleNodesToFind } from '../src/core/fit/kubeSchedulerSampling.js';
import { discreteOptimum, podsAbove, pressureWith, replay, type ReplaySpec } from '../src/cli/replay.js';
import { fmt, formatColumns } from './clusterStats.js';
import { startReport, tableOf, writeReport } from './report.js';
import type { Table } from './results.js';

const GI = 1024 ** 3;
/** The burst's pods: 2 CPU / 4 GiB sandboxes. */
const POD = [2000, 4 * GI] as const;

/** One node of `cpus` cores with `memoryPerCpu` bytes a core, in `zone`. */
interface NodeShape {
  readonly cpus: number;
  readonly zone: string;
  readonly pool: string;
}

/** A node set: nodes in the order they joined kube-scheduler's node tree, and pods already on them. */
export interface NodeSet {
  readonly name: string;
  readonly nodes: readonly NodeShape[];
  /** Pods on the nodes before the burst: per node index, how many of which request and state. */
  readonly existing?: (
    i: number,
    node: NodeShape,
  ) => { readonly count: number; readonly request: readonly number[]; readonly state: 'running' | 'paused' } | null;
}

const SHAPES = [16, 64, 192] as const;
const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;

/** The node sets, each of `n` nodes. */
export function nodeSets(n: number): NodeSet[] {
  const inTurn = Array.from({ length: n }, (_, i) => ({
    cpus: SHAPES[i % 3]!,
    zone: ZONES[Math.floor(i / 3) % 3]!,
    pool: `cpu${SHAPES[i % 3]}`,
  }));
  // Pools listed in blocks (cpu16-…, cpu192-…, cpu64-… sort apart), each pool spread over the three zones.
  const third = Math.floor(n / 3);
  const blockOf = (cpus: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({ cpus, zone: ZONES[i % 3]!, pool: `cpu${cpus}` }));
  const blocks = [...blockOf(16, third), ...blockOf(192, third), ...blockOf(64, n - 2 * third)];
  // A large pool of small nodes listed before a small pool of large ones (10 % of the nodes): windows of small nodes only.
  const tenth = Math.floor(n / 10);
  const smallFirst = [...blockOf(16, n - tenth), ...blockOf(192, tenth)];
  return [
    {
      name: 'homogeneous 32 CPU',
      nodes: Array.from({ length: n }, (_, i) => ({ cpus: 32, zone: ZONES[i % 3]!, pool: 'cpu32' })),
    },
    { name: 'heterogeneous 16/64/192 in turn', nodes: inTurn },
    {
      name: 'mixed shapes (every 4th 64-CPU node half full of 2 CPU / 32 GiB pods)',
      nodes: inTurn,
      existing: (i, node) =>
        node.cpus === 64 && i % 4 === 1 ? { count: 4, request: [2000, 32 * GI], state: 'running' } : null,
    },
    {
      name: 'paused sandboxes (every 16-CPU and every 7th node half paused)',
      nodes: inTurn,
      existing: (i, node) =>
        i % 3 === 0 || i % 7 === 0 ? { count: Math.floor(node.cpus / 4), request: [...POD], state: 'paused' } : null,
    },
    {
      name: 'agent-sandbox warm pool (4 pool pods on each node)',
      nodes: inTurn,
      existing: () => ({ count: 4, request: [...POD], state: 'running' }),
    },
    { name: 'pools in blocks (16, 192, 64; three zones)', nodes: blocks },
    { name: 'pools in blocks (90 % 16-CPU, then 10 % 192-CPU)', nodes: smallFirst },
  ];
}

/** The replay spec of `set` with a burst that fills its CPU to `fill` at the optimum, at `percentage` (null: no sampling). */
export function samplingSpec(set: NodeSet, fill: number, percentage: number | null): ReplaySpec {
  const nodes = set.nodes.map((s, i) => ({
    name: `${s.pool}-${String(i).padStart(5, '0')}`,
    allocatable: [s.cpus * 1000, s.cpus * 4 * GI],
  }));
  const existingPods: PodRecord[] = [];
  let existingCpu = 0;
  set.nodes.forEach((s, i) => {
    const e = set.existing?.(i, s);
    for (let k = 0; e && k < e.count; k++) {
      existingPods.push({
        uid: `e-${i}-${k}`,
        key: `existing/e-${i}-${k}`,
        nodeName: nodes[i]!.name,
        schedulerName: 'sandbox-scheduler',
        request: e.request,
        state: e.state,
        terminal: false,
        schedulingFailure: null,
      });
      existingCpu += e.request[0]!;
    }
  });
  const totalCpu = set.nodes.reduce((sum, s) => sum + s.cpus * 1000, 0);
  const podCount = Math.max(1, Math.floor((fill * totalCpu - existingCpu) / POD[0]));
  return {
    dims: { names: ['cpu', 'memory'] },
    nodes,
    podRequest: [...POD],
    podCount,
    honourCapacity: true,
    existingPods,
    ...(percentage === null
      ? {}
      : { sampling: { percentageOfNodesToScore: percentage, zones: set.nodes.map((s) => s.zone) } }),
  };
}

/** One cell of the table. */
export interface SamplingResult {
  readonly set: string;
  readonly nodes: number;
  /** percentageOfNodesToScore (0: adaptive), or 100 for every node. */
  readonly percentage: number;
  readonly window: number;
  readonly pods: number;
  readonly placed: number;
  readonly peak: number;
  readonly optimum: number | null;
  /** Pods placed above the optimum (that would have to move for the peak to be the optimum). */
  readonly podsAboveOptimum: number | null;
  /** The peak is at most the optimum plus one pod on the peak node. */
  readonly withinOnePod: boolean | null;
}

/** Replays `set` at `percentage` (100: every node offered, no window). */
export function measure(set: NodeSet, fill: number, percentage: number): SamplingResult {
  const spec = samplingSpec(set, fill, percentage === 100 ? null : percentage);
  const r = replay(spec, 'least_loaded', () => 0);
  const optimum = discreteOptimum({ ...spec, podCount: r.placed });
  const peakNode = spec.nodes.find((node) => node.name === r.peakNode);
  const step = peakNode ? pressureWith(peakNode.allocatable, spec.podRequest, 1) : 0;
  return {
    set: set.name,
    nodes: spec.nodes.length,
    percentage,
    window: numFeasibleNodesToFind(percentage, spec.nodes.length),
    pods: spec.podCount,
    placed: r.placed,
    peak: r.peakPressure,
    optimum,
    podsAboveOptimum: optimum === null ? null : podsAbove(spec, r.podsPerNode, optimum),
    withinOnePod: optimum === null ? null : r.peakPressure <= optimum + step + 1e-12,
  };
}

const samplingText = (p: number) => (p === 0 ? 'adaptive' : `${p} %`);

/** The printed rows of one node count's results (header first). */
function printedRows(results: readonly SamplingResult[]): string[][] {
  return [
    ['NODE SET', 'SAMPLING', 'WINDOW', 'PODS', 'PEAK', 'OPTIMUM', 'PODS ABOVE', 'WITHIN ONE POD'],
    ...results.map((r) => [
      r.set,
      samplingText(r.percentage),
      String(r.window),
      r.placed === r.pods ? String(r.pods) : `${r.placed} of ${r.pods}`,
      fmt(r.peak, 4),
      fmt(r.optimum, 4),
      r.podsAboveOptimum === null ? '-' : String(r.podsAboveOptimum),
      r.withinOnePod === null ? '-' : r.withinOnePod ? 'yes' : 'no',
    ]),
  ];
}

/**
 * The tables of one node count `n`: `nodes-N` as bench/results/sampling.json has it (a row per node set, a column
 * per percentage: the pods above the optimum, in bold with the peak where it is more than one pod above) and
 * `all-N`, every figure as printed.
 */
export function samplingTables(n: number, results: readonly SamplingResult[], percentages: readonly number[]): Table[] {
  const sets = [...new Set(results.map((r) => r.set))];
  const of = (set: string, p: number) => results.find((r) => r.set === set && r.percentage === p);
  const first = (p: number) => results.find((r) => r.percentage === p);
  const cell = (r: SamplingResult | undefined) =>
    r === undefined || r.podsAboveOptimum === null || r.optimum === null
      ? null
      : r.withinOnePod
        ? r.podsAboveOptimum
        : `**${r.podsAboveOptimum}** (peak ${r.peak.toFixed(2)}, optimum ${r.optimum.toFixed(2)})`;
  return [
    {
      id: `nodes-${n}`,
      title: `${n.toLocaleString('en-US')} nodes: pods above the optimum (peak pressure where more than one pod above it); windows in brackets`,
      columns: [
        'node set (pods in the burst)',
        ...percentages.map((p) => `${samplingText(p)} (${first(p)?.window ?? '?'})`),
      ],
      rows: sets.map((set) => [
        `${set} (${(of(set, percentages[0]!)?.pods ?? 0).toLocaleString('en-US')})`,
        ...percentages.map((p) => cell(of(set, p))),
      ]),
    },
    tableOf(`all-${n}`, `${n} nodes, every figure`, printedRows(results)),
  ];
}

/** --sets: a part of a node set's name (any letter case). @throws InvalidArgumentError when no set's name has it. */
function setName(v: string): string {
  const names = nodeSets(3).map((s) => s.name.toLowerCase());
  const part = v.toLowerCase();
  if (!names.some((n) => n.includes(part)))
    throw new InvalidArgumentError(`no node set's name contains "${v}" (the sets: ${names.join('; ')})`);
  return part;
}

function main(): void {
  const program = new Command('bench:sampling')
    .exitOverride(exitOnUsage)
    .description(
      "placement quality at each percentageOfNodesToScore, from the replay's model of kube-scheduler's sampling",
    )
    .option('--nodes <counts>', 'node counts', listOf(intAtLeast(3)), [1000, 5000])
    .option(
      '--percentages <list>',
      'percentageOfNodesToScore values (0: adaptive default)',
      listOf(percentage),
      [5, 10, 25, 0, 50, 100],
    )
    .option('--fill <fraction>', "the burst fills the set's CPU to this fraction at the optimum", within(0, 1), 0.5)
    .option('--sets <names>', 'only the node sets whose name contains one of these (comma-separated)', listOf(setName));
  program.parse();
  const o = program.opts<{ nodes: number[]; percentages: number[]; fill: number; sets?: string[] }>();
  const { nodes: counts, percentages, fill, sets: wanted } = o;
  const report = startReport('sampling', { nodes: counts, percentages, fill, sets: wanted ?? null });
  for (const n of counts) {
    const results: SamplingResult[] = [];
    for (const set of nodeSets(n).filter((s) => !wanted || wanted.some((w) => s.name.toLowerCase().includes(w))))
      for (const p of percentages) results.push(measure(set, fill, p));
    process.stdout.write(
      `\n${n} nodes, bursts of 2 CPU / 4 GiB pods filling ${Math.round(fill * 100)} % of the CPU at the optimum (least_loaded, capacity honoured)\n`,
    );
    process.stdout.write(`${formatColumns(printedRows(results))}\n`);
    report.runs.push(...results);
    report.tables.push(...samplingTables(n, results, percentages));
  }
  writeReport(report);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
