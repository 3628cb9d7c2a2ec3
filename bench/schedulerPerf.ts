/**
 * `npm run bench -- scheduler-perf`: the field's own yardstick. Runs kube-scheduler's benchmark harness
 * (k8s.io/kubernetes test/integration/scheduler_perf, the e2e tier's version) on the same workloads in up to three
 * variants, interleaved: stock (kube-scheduler as shipped), sandbox (the chart's profile with the extender in
 * cluster mode) and floor (the same profile with bench/floorExtender.ts). Never in CI. The variants, processes and
 * figures: docs/benchmarks.md#kube-schedulers-own-yardstick-scheduler_perf; `-- --help` for the options.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { fmt, formatColumns } from './clusterStats.js';
import { freePort, log, REPO_ROOT, script } from '../test/e2e/kit/controlPlane.js';
import { processTree } from './procStats.js';
import { ProcWatch, type CpuReport } from './procWatch.js';
import { startFloorExtender, type FloorExtender } from './floorProcess.js';
import { defaultReportPath, exitWith, type Report, startReport, tableOf, writeReport } from './report.js';
import type { Table } from './results.js';
import {
  benchPattern,
  publishedThroughput,
  CPU_ETCD,
  CPU_EXTENDER,
  CPU_HARNESS,
  derivePerfConfig,
  parseBenchLine,
  parseVariants,
  parseWorkloadId,
  ratioTable,
  samplingOf,
  throughputOf,
  throughputText,
  variantOrder,
  variantsIn,
  variantTable,
  VARIANTS,
  type PerfTestCase,
  type Throughput,
  type Variant,
  type WorkloadChoice,
} from './schedulerPerfStats.js';
import { existingFile, exitOnUsage, percentage, positiveInt } from './cliOptions.js';

/** Other jobs' CPU above which a run is flagged as not from a quiet machine (cores). */
const QUIET_CORES = 0.15;

/**
 * Workloads this bench adds to upstream's test cases, with upstream's parameter names: upstream has no
 * SchedulingBasic workload at 1,000 nodes.
 */
const ADDED_WORKLOADS: Record<string, Record<string, number>> = {
  'SchedulingBasic/1000Nodes_5000Pods': { initNodes: 1000, initPods: 1000, measurePods: 5000 },
};

const DEFAULT_WORKLOADS = [
  'SchedulingBasic/500Nodes', // upstream: 500 nodes, 500 pods placed first, 1,000 measured
  'SchedulingBasic/1000Nodes_5000Pods', // added: 1,000 nodes, 1,000 first, 5,000 measured
  'SchedulingBasic/5000Nodes_10000Pods_QueueingHintsEnabled', // upstream (performance): 5,000 nodes, 1,000 first, 10,000 measured
  'SchedulingWithMixedChurn/1000Nodes', // upstream: 1,000 nodes; a node, a high-priority pod and a Service recreated every second; 1,000 measured
];

export interface Options {
  workloads: string[];
  /** The variants run, in the order of the first run (absent in reports from before the floor: stock, sandbox). */
  variants: Variant[];
  runs: number;
  extenderConfig: string | undefined;
  out?: string | undefined;
  timeoutMinutes: number;
  /** percentageOfNodesToScore of the sandbox profile, sandbox and floor (0: kube-scheduler's adaptive default); stock keeps its default. */
  sandboxPercentage: number;
  /**
   * Filter plugins disabled in the sandbox profile, sandbox and floor (e.g. NodeResourcesFit, whose check the extender
   * makes too): what kube-scheduler's own filtering of every node costs at 100 %. Empty: the chart's profile.
   */
  sandboxFiltersOff: string[];
}

export interface RunRecord {
  /** The harness that ran it: k8s.io/kubernetes VERSION test/integration/scheduler_perf. */
  harness?: string;
  run: number;
  workload: string;
  variant: Variant;
  dir: string;
  exitCode: number | null;
  seconds: number;
  throughput: Throughput | null;
  /** The harness's benchmark line on stdout, SchedulingThroughput part, as printed. */
  harnessLine: string | null;
  upstreamThreshold: number | null;
  cpu: CpuReport;
  error?: string;
}

function pluginList(v: string): string[] {
  const names = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.find((n) => !/^[A-Z][A-Za-z0-9]*$/.test(n));
  if (bad !== undefined)
    throw new InvalidArgumentError(
      `${JSON.stringify(bad)} is not a plugin name (kube-scheduler's plugin names, e.g. NodeResourcesFit)`,
    );
  return names;
}

function variantList(v: string): Variant[] {
  try {
    return parseVariants(v);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function parseOptions(argv: string[]): Options {
  const program = new Command('bench:scheduler-perf')
    .exitOverride(exitOnUsage)
    .description(
      "kube-scheduler's scheduler_perf harness: the stock configuration, the sandbox-scheduler profile with sandbox-extender, and the same profile with the floor extender, interleaved; the harness's SchedulingThroughput and the ratios.",
    )
    .option(
      '--workloads <list>',
      `TESTCASE/WORKLOAD, comma-separated (upstream's names, or ${Object.keys(ADDED_WORKLOADS).join(', ')})`,
      DEFAULT_WORKLOADS.join(','),
    )
    .addOption(
      new Option(
        '--variants <list>',
        `variants to run, comma-separated: ${VARIANTS.join(', ')} (stock: as shipped; sandbox: the sandbox-scheduler profile with sandbox-extender; floor: the same profile with bench/floorExtender.ts in the extender's place)`,
      )
        .argParser(variantList)
        .default([...VARIANTS], VARIANTS.join(',')),
    )
    .option(
      '--runs <n>',
      'runs of each workload and variant (the variants interleave, their order rotating each run)',
      positiveInt,
      2,
    )
    .option(
      '--extender-config <file>',
      "the extender's --config (its schedulerName is set to default-scheduler, the harness's pods' scheduler)",
      existingFile,
    )
    .option('--timeout-minutes <n>', 'longest run of one process', positiveInt, 60)
    .option('--out <dir>', 'output folder, the report in it as report.json (default .e2e-bench/scheduler-perf-DATE)')
    .option(
      '--sandbox-percentage <n>',
      "percentageOfNodesToScore of the sandbox profile (sandbox and floor), 0–100 (0: kube-scheduler's adaptive default); stock always runs as shipped",
      percentage,
      100,
    )
    .option(
      '--sandbox-filters-off <plugins>',
      "Filter plugins to disable in the sandbox profile (sandbox and floor), comma-separated, e.g. NodeResourcesFit (the extender checks the fit too); not the chart's profile: a measurement",
      pluginList,
      [],
    )
    .parse(argv, { from: 'user' });
  const o = program.opts<{
    workloads: string;
    variants: Variant[];
    runs: number;
    extenderConfig?: string;
    timeoutMinutes: number;
    out?: string;
    sandboxPercentage: number;
    sandboxFiltersOff: string[];
  }>();
  const workloads = o.workloads
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const w of workloads) {
    try {
      parseWorkloadId(w);
    } catch (err) {
      program.error(`--workloads: ${(err as Error).message}`);
    }
  }
  if (o.extenderConfig && !existsSync(o.extenderConfig))
    program.error(`--extender-config: ${o.extenderConfig} not found`);
  return { ...o, workloads, extenderConfig: o.extenderConfig ? resolve(o.extenderConfig) : undefined };
}

/**
 * The sandbox-scheduler profile as the chart renders it, named after the harness's pods' scheduler; `filtersOff`
 * (not the chart's) disables those Filter plugins too.
 */
function sandboxSchedulerConfig(
  extenderUrl: string,
  percentageOfNodesToScore: number,
  filtersOff: readonly string[] = [],
): string {
  const off = (names: readonly string[]) => ({ disabled: names.map((name) => ({ name })) });
  return stringifyYaml({
    apiVersion: 'kubescheduler.config.k8s.io/v1',
    kind: 'KubeSchedulerConfiguration',
    percentageOfNodesToScore,
    profiles: [
      {
        schedulerName: 'default-scheduler',
        plugins: { score: off(['*']), ...(filtersOff.length > 0 ? { filter: off(filtersOff) } : {}) },
      },
    ],
    extenders: [
      {
        urlPrefix: extenderUrl,
        filterVerb: 'filter',
        prioritizeVerb: 'prioritize',
        weight: 1,
        nodeCacheCapable: true,
        httpTimeout: '5s',
        ignorable: false,
      },
    ],
  });
}

function extenderConfig(file: string | undefined): string {
  const base = file ? ((parseYaml(readFileSync(file, 'utf8')) as Record<string, unknown> | null) ?? {}) : {};
  return stringifyYaml({ ...base, schedulerName: 'default-scheduler' });
}

const safeName = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_');

interface Tools {
  harnessDir: string;
  e2eBin: string;
  upstream: PerfTestCase[];
}

async function tools(): Promise<Tools> {
  const e2eBin = (await script('build-tools.sh', ['--print-bin'])).trim();
  if (!existsSync(join(e2eBin, 'etcd')))
    throw new Error(`${e2eBin}/etcd not found: the harness needs etcd from the e2e tools (npm run e2e:tools)`);
  log('building the scheduler_perf harness if missing (test/e2e/build-tools.sh --scheduler-perf)');
  const harnessDir = (await script('build-tools.sh', ['--scheduler-perf'])).trim();
  const upstream = parseYaml(
    readFileSync(join(harnessDir, 'scheduler_perf', 'misc', 'performance-config.yaml'), 'utf8'),
  ) as PerfTestCase[];
  return { harnessDir, e2eBin, upstream };
}

/** A workload of --workloads: upstream's, or one added here with its parameters (ADDED_WORKLOADS). */
function choiceOf(workload: string): WorkloadChoice {
  const params = ADDED_WORKLOADS[workload];
  return { ...parseWorkloadId(workload), ...(params ? { params } : {}) };
}

/** Runs the harness on one workload and variant; its files go to `dir`. */
async function runOne(
  t: Tools,
  opts: Options,
  outDir: string,
  run: number,
  workload: string,
  variant: Variant,
  extenderConfigFile: string,
): Promise<RunRecord> {
  const dir = join(outDir, `run${run}-${safeName(workload)}-${variant}`);
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const choice = choiceOf(workload);
  const id = { testCase: choice.testCase, workload: choice.workload };

  const args = [
    '-test.run=^$',
    `-test.bench=${benchPattern(id.testCase, id.workload)}`,
    '-test.benchtime=1x',
    `-test.timeout=${opts.timeoutMinutes}m`,
    '-perf-scheduling-label-filter=',
    `-data-items-dir=${dataDir}`,
    `-topic=${variant}`,
  ];
  let schedulerConfigPath: string | undefined;
  let extenderUrl: string | undefined;
  if (variant !== 'stock') {
    // sandbox and floor: the same profile and extender configuration block; only the process behind the URL differs.
    const port = await freePort();
    extenderUrl = `http://127.0.0.1:${port}`;
    schedulerConfigPath = join(dir, 'scheduler-config.yaml');
    writeFileSync(
      schedulerConfigPath,
      sandboxSchedulerConfig(extenderUrl, opts.sandboxPercentage, opts.sandboxFiltersOff),
    );
    if (variant === 'sandbox') {
      const argv = [
        process.execPath,
        join(REPO_ROOT, 'bin', 'sandbox-extender.js'),
        'serve',
        '--config',
        extenderConfigFile,
        '--port',
        String(port),
      ];
      args.push(
        `-extender-argv=${JSON.stringify(argv)}`,
        `-extender-dir=${join(dir, 'extender')}`,
        `-extender-readyz=${extenderUrl}/readyz`,
      );
    }
  }
  const { config, upstreamThreshold } = derivePerfConfig(t.upstream, choice, schedulerConfigPath);
  const perfConfig = join(dir, 'performance-config.yaml');
  writeFileSync(perfConfig, stringifyYaml(config));
  args.push(`-perf-config=${perfConfig}`);

  // The floor needs no credentials (it never calls the API server): up before the harness starts, stopped after it exits.
  log(`run ${run}: ${workload} ${variant}`);
  const floor = variant === 'floor' ? await startFloor(extenderUrl!, join(dir, 'extender')) : null;
  const outFile = join(dir, 'harness-output.txt');
  let harness: { exitCode: number | null; cpu: CpuReport; seconds: number };
  try {
    harness = await runHarness(t, dir, args, outFile, floor);
  } finally {
    if (floor) await floor.stop();
  }
  const { exitCode, cpu, seconds } = harness;

  const record: RunRecord = {
    run,
    workload,
    variant,
    dir,
    exitCode,
    seconds,
    throughput: null,
    harnessLine: null,
    upstreamThreshold,
    cpu,
  };
  try {
    const output = readFileSync(outFile, 'utf8');
    const line = output
      .split('\n')
      .map(parseBenchLine)
      .find((l) => l !== null && l.name.startsWith('BenchmarkPerfScheduling/'));
    if (line) record.harnessLine = `${line.name}-${line.procs ?? ''}  ${line.iterations}  ${throughputText(line)}`;
    const file = readdirSync(dataDir).find(
      (f) => f.startsWith(`BenchmarkPerfScheduling_benchmark_${variant}_`) && f.endsWith('.json'),
    );
    if (!file) throw new Error(`no data items file in ${dataDir}`);
    record.throughput = throughputOf(JSON.parse(readFileSync(join(dataDir, file), 'utf8')));
    if (!record.throughput)
      throw new Error('the data items have no SchedulingThroughput (all pods placed within one 1 s sample?)');
  } catch (err) {
    record.error = `${(err as Error).message}; exit code ${exitCode}; see ${outFile}`;
  }
  log(
    `run ${run}: ${workload} ${variant}: ${record.throughput ? `${record.throughput.average.toFixed(1)} pods/s average` : `FAILED (${record.error})`} in ${seconds.toFixed(0)} s; other load ${cpu.otherCores.toFixed(2)} cores`,
  );
  return record;
}

/** Starts the floor extender on `url`, its log in `logDir`/extender.log (where the harness puts the extender's). */
async function startFloor(url: string, logDir: string): Promise<FloorExtender> {
  mkdirSync(logDir, { recursive: true });
  const logFd = openSync(join(logDir, 'extender.log'), 'w');
  try {
    const floor = await startFloorExtender(url, { stderr: logFd });
    log(`floor extender (bench/floorExtender.ts): pid ${floor.pid}, ${url}`);
    return floor;
  } finally {
    closeSync(logFd);
  }
}

/**
 * Runs the harness process with `args` (its output to `outFile`) until it exits, watching the CPU of it, its
 * children (etcd, the extender it starts), the floor extender when given, and this bench.
 */
async function runHarness(
  t: Tools,
  dir: string,
  args: readonly string[],
  outFile: string,
  floor: FloorExtender | null,
): Promise<{ exitCode: number | null; cpu: CpuReport; seconds: number }> {
  const fd = openSync(outFile, 'w');
  const started = performance.now();
  const child = spawn(join(t.harnessDir, 'scheduler-perf.test'), args, {
    // The config's template paths (../templates/…) are relative to the harness's misc/ folder.
    cwd: join(t.harnessDir, 'scheduler_perf', 'misc'),
    env: {
      ...process.env,
      PATH: `${t.e2eBin}:${process.env.PATH ?? ''}`,
      ARTIFACTS: dir,
      KUBE_CACHE_MUTATION_DETECTOR: 'false',
    },
    stdio: ['ignore', fd, fd],
  });
  const root = child.pid!;
  const watch = new ProcWatch((all) => [
    ...processTree(all, root).map((p) => ({
      proc: p,
      category:
        p.pid === root
          ? CPU_HARNESS
          : p.comm === 'etcd'
            ? CPU_ETCD
            : p.comm === 'node'
              ? CPU_EXTENDER
              : 'other children',
    })),
    ...all.filter((p) => p.pid === floor?.pid).map((p) => ({ proc: p, category: CPU_EXTENDER })),
    ...all.filter((p) => p.pid === process.pid).map((p) => ({ proc: p, category: 'bench' })),
  ]);
  watch.start();
  const exitCode = await new Promise<number | null>((ok) => {
    child.once('error', (err) => {
      log(`cannot start the harness: ${err.message}`);
      ok(null);
    });
    child.once('exit', (code) => ok(code));
  });
  const cpu = watch.stop();
  closeSync(fd);
  return { exitCode, cpu, seconds: (performance.now() - started) / 1000 };
}

// ------------------------------------------------------------------------------------------ tables

const cpuCell = (c: CpuReport, key: string) => fmt(c.cores[key], 2);

function runRows(runs: readonly RunRecord[]): string {
  const rows = [
    [
      'run',
      'workload',
      'variant',
      'avg pods/s',
      'p50',
      'p99',
      'secs',
      'harness cores',
      'etcd',
      'extender',
      'other load',
      'harness line (its own SchedulingThroughput output)',
    ],
  ];
  for (const r of runs) {
    const t = r.throughput;
    // stock has no extender: its cell is "-".
    rows.push([
      String(r.run),
      r.workload,
      r.variant,
      fmt(t?.average),
      fmt(t?.perc50),
      fmt(t?.perc99),
      r.seconds.toFixed(0),
      cpuCell(r.cpu, CPU_HARNESS),
      cpuCell(r.cpu, CPU_ETCD),
      cpuCell(r.cpu, CPU_EXTENDER),
      r.cpu.otherCores.toFixed(2),
      r.error ? `FAILED: ${r.error}` : (r.harnessLine ?? ''),
    ]);
  }
  return formatColumns(rows);
}

const VARIANTS_TITLE =
  'SchedulingThroughput, pods/s (the harness’s own figure; median over runs), and cores (median over runs, over each process’s life)';

/**
 * The report's tables: `variants` (the median figures of each workload and variant), `ratios` (the ratios of the
 * medians) and the published `throughput` or, with Filter plugins off, `fit-filter-cut`.
 */
export function perfTables(runs: readonly RunRecord[], opts: Options): Table[] {
  const filtersOff = opts.sandboxFiltersOff.length > 0;
  return [
    tableOf('variants', VARIANTS_TITLE, variantTable(runs, opts.workloads, opts.sandboxPercentage)),
    tableOf('ratios', 'Ratios of the medians', ratioTable(runs, opts.workloads)),
    publishedThroughput(runs, opts.workloads, filtersOff),
  ];
}

function printReport(report: Report, say: (s: string) => void): void {
  const { machine } = report;
  const options = report.options as unknown as Options;
  const runs = report.runs as RunRecord[];
  const others = runs.map((r) => r.cpu.otherCores);
  const variants = variantsIn(runs);
  const sandboxPercentage = options.sandboxPercentage;
  say('');
  say(
    `scheduler_perf (${runs[0]?.harness ?? '?'}), ${options.runs} run(s) per workload and variant, ${variants.join(', ')} interleaved; machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}`,
  );
  say(
    `sampling (percentageOfNodesToScore): ${variants.map((v) => `${v} ${samplingOf(v, sandboxPercentage)}`).join('; ')}`,
  );
  const filtersOff = options.sandboxFiltersOff;
  if (filtersOff.length > 0)
    say(`NOT the chart's profile: Filter plugins disabled in sandbox and floor: ${filtersOff.join(', ')}`);
  const busy = runs.filter((r) => r.cpu.otherCores > QUIET_CORES).length;
  say(
    `other load on the machine during the runs (cores, besides the harness, etcd, the extender and this bench): ${fmt(Math.min(...others), 2)}–${fmt(Math.max(...others), 2)}${busy ? ` — NOT QUIET in ${busy} run(s): other jobs took more than ${QUIET_CORES} cores` : ''}`,
  );
  say('');
  say(runRows(runs));
  say('');
  say(`${VARIANTS_TITLE}:`);
  say(formatColumns(variantTable(runs, options.workloads, sandboxPercentage)));
  say('');
  say(
    `Ratios of the medians${variants.includes('floor') ? ' (sandbox/floor: the extender against the do-nothing floor behind the same profile and sampling; the goal is ≥ 0.95)' : ''}:`,
  );
  say(formatColumns(ratioTable(runs, options.workloads)));
  say('');
  say(
    'Published comparison in this harness (kube-scheduler-wasm-extension PR #63, 500 nodes): 991 pods/s without an extender, 111 with a Go HTTP extender (0.11).',
  );
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const t = await tools();
  // A workload the harness does not have is refused before any run: its config is known once the harness is built.
  for (const workload of opts.workloads) {
    try {
      derivePerfConfig(t.upstream, choiceOf(workload));
    } catch (err) {
      process.stderr.write(`bench:scheduler-perf: --workloads: ${(err as Error).message}\n`);
      process.exit(2);
    }
  }
  const report = startReport('scheduler-perf', opts);
  // a folder per report: the report (report.json) beside each run's data
  const outDir = opts.out ? resolve(opts.out) : defaultReportPath(report, REPO_ROOT).replace(/\.json$/, '');
  mkdirSync(outDir, { recursive: true });
  const extenderConfigFile = join(outDir, 'extender-config.yaml');
  writeFileSync(extenderConfigFile, extenderConfig(opts.extenderConfig));
  const harness = `k8s.io/kubernetes ${t.harnessDir.match(/k8s-(v[0-9.]+)/)?.[1] ?? '?'} test/integration/scheduler_perf`;
  const reportFile = join(outDir, 'report.json');
  const runs: RunRecord[] = [];
  for (let run = 1; run <= opts.runs; run++) {
    for (const workload of opts.workloads) {
      for (const variant of variantOrder(opts.variants, run)) {
        runs.push({ harness, ...(await runOne(t, opts, outDir, run, workload, variant, extenderConfigFile)) });
        report.runs = runs;
        report.tables = perfTables(runs, opts);
        writeReport(report, reportFile, () => undefined);
      }
    }
  }
  printReport(report, say);
  say('');
  say(
    `results: ${outDir} (report.json; per run: the harness's data items, progress .dat and output); print its tables again: npm run bench -- --print ${reportFile}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:scheduler-perf'));
