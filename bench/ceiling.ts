/**
 * `npm run bench -- ceiling`: the extender's ceiling, the highest rate of Filter calls one extender process
 * (`serve --snapshot FILE`, 1,000 and 5,000 nodes) sustains before its p99 doubles, driven open loop by a load
 * generator outside the process. Never part of CI. The steps, the load and the figures:
 * docs/benchmarks.md#the-extenders-ceiling; `npm run bench -- ceiling -- --help` for the options.
 */
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { stringify as stringifyYaml } from 'yaml';
import {
  ceilingOf,
  ceilingTable,
  DEFAULT_SEARCH,
  nextRate,
  parseStep,
  sustained,
  type SearchOptions,
  type Step,
} from './ceilingStats.js';
import { fmt, formatColumns, parsePrometheusText, sumSamples } from './clusterStats.js';
import { freePort, log, REPO_ROOT, script, sleep } from '../test/e2e/kit/controlPlane.js';
import { benchNode, benchPod, nodeName } from './fixtures.js';
import { ProcWatch, type CpuReport } from './procWatch.js';
import { defaultReportPath, exitWith, type Report, startReport, textTable, writeReport } from './report.js';
import { exitOnUsage, listOf, positive, positiveInt, within } from './cliOptions.js';

const PODS_PER_NODE = 30;
const UID_PLACEHOLDER = '__POD_UID__';
/** Upstream's SchedulingBasic thresholds at 5,000 nodes, pods/s on upstream's CI machines (scheduler_perf misc/performance-config.yaml). */
const UPSTREAM_5000 = { low: 680, high: 810 };
/** Other jobs' CPU above which a figure is flagged as not from a quiet machine (cores). */
const QUIET_CORES = 0.15;

interface Options {
  nodes: number[];
  stepSeconds: number;
  warmupSeconds: number;
  baselineRate: number;
  startRate: number;
  factor: number;
  precision: number;
  maxSteps: number;
  ttl: number;
  out?: string | undefined;
}

interface ScaleResult {
  nodes: number;
  bodyBytes: number;
  warmup: Step;
  serial: Step;
  baseline: Step;
  steps: (Step & { ok: boolean; why: string; reservationsPending: number | null })[];
  ceiling: Step | null;
  firstFailure: Step | null;
  cpu: CpuReport;
}

function parseOptions(argv: string[]): Options {
  const program = new Command('bench:ceiling')
    .exitOverride(exitOnUsage)
    .description(
      'The highest rate of Filter calls one extender process sustains before its p99 doubles (open loop, from a separate load generator).',
    )
    .option('--nodes <counts>', 'node counts, one extender each', listOf(positiveInt), [1000, 5000])
    .option('--step-seconds <s>', 'length of each step', positive, 15)
    .option('--warmup-seconds <s>', 'warm-up at --baseline-rate × 4 before anything is measured', positive, 15)
    .option('--baseline-rate <n>', 'rate of the baseline step (its p99 is the reference)', positive, 25)
    .option('--start-rate <n>', 'first rate of the step-up', positive, DEFAULT_SEARCH.startRate)
    .option('--factor <x>', 'rate multiplier while steps are sustained', within(1, 100), DEFAULT_SEARCH.factor)
    .option(
      '--precision <x>',
      'stop bisecting when the bracket is within this share',
      within(0, 1),
      DEFAULT_SEARCH.precision,
    )
    .option('--max-steps <n>', 'most steps per node count', positiveInt, DEFAULT_SEARCH.maxSteps)
    .option(
      '--ttl <seconds>',
      "the extender's placementReservationTtlSeconds (releases the reservations of the run)",
      positive,
      5,
    )
    .option('--out <file>', 'the report (default .e2e-bench/ceiling-DATE.json; bench/report.ts)')
    .parse(argv, { from: 'user' });
  return program.opts<Options>();
}

/** Runs loadgen once; @returns its result. @throws when it fails. */
function loadgen(bin: string, args: readonly string[]): Promise<Step> {
  return new Promise((ok, bad) => {
    execFile(bin, args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return bad(new Error(`loadgen ${args.join(' ')}: ${err.message}\n${stderr}`));
      try {
        ok(parseStep(stdout.trim().split('\n').at(-1) ?? ''));
      } catch (e) {
        bad(e as Error);
      }
    });
  });
}

async function metricsOf(url: string): Promise<number | null> {
  try {
    const res = await fetch(`${url}/metrics`);
    return sumSamples(parsePrometheusText(await res.text()), 'sandbox_extender_reservations_pending');
  } catch {
    return null;
  }
}

async function waitReady(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    if (exited()) throw new Error('the extender exited before it was ready');
    if (Date.now() > deadline) throw new Error(`the extender was not ready within 300 s (${url}/readyz)`);
    await sleep(200);
  }
}

async function benchScale(opts: Options, nodes: number, outDir: string, loadgenBin: string): Promise<ScaleResult> {
  const dir = join(outDir, `${nodes}-nodes`);
  mkdirSync(dir, { recursive: true });
  const items = [];
  for (let i = 0; i < nodes; i++) items.push(benchNode(i));
  for (let i = 0; i < nodes * PODS_PER_NODE; i++) items.push(benchPod(`bound-${i}`, nodeName(i % nodes)));
  const snapshot = join(dir, 'snapshot.json');
  writeFileSync(snapshot, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  const config = join(dir, 'extender-config.yaml');
  writeFileSync(config, stringifyYaml({ placementReservationTtlSeconds: opts.ttl }));
  // One request: the pod (its name and uid replaced per request by loadgen) and every node's name.
  const template = benchPod(UID_PLACEHOLDER);
  const pod = { ...template, metadata: { ...template.metadata, uid: UID_PLACEHOLDER } };
  const body = JSON.stringify({
    Pod: pod,
    Nodes: null,
    NodeNames: Array.from({ length: nodes }, (_, i) => nodeName(i)),
  });
  const bodyFile = join(dir, 'filter-request.json');
  writeFileSync(bodyFile, body);

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = join(dir, 'extender.log');
  const fd = openSync(logFile, 'w');
  const extender = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'bin', 'sandbox-extender.js'),
      'serve',
      '--snapshot',
      snapshot,
      '--config',
      config,
      '--port',
      String(port),
    ],
    { stdio: ['ignore', fd, fd] },
  );
  let exited = false;
  extender.on('exit', () => (exited = true));
  try {
    await waitReady(url, () => exited);
    log(
      `${nodes} nodes: extender ready (pid ${extender.pid}, ${url}); request body ${(body.length / 1024).toFixed(0)} KiB`,
    );
    const watch = new ProcWatch((all) =>
      all.flatMap((p) =>
        p.pid === extender.pid
          ? [{ proc: p, category: 'extender' }]
          : p.comm === 'loadgen'
            ? [{ proc: p, category: 'loadgen' }]
            : p.pid === process.pid
              ? [{ proc: p, category: 'bench' }]
              : [],
      ),
    );
    watch.start();
    let run = 0;
    const attack = (rate: number, seconds: number, extra: string[] = []) =>
      loadgen(loadgenBin, [
        '-url',
        `${url}/filter`,
        '-body',
        bodyFile,
        '-placeholder',
        UID_PLACEHOLDER,
        '-uid-prefix',
        `n${nodes}-s${++run}`,
        '-rate',
        String(rate),
        '-duration',
        `${seconds}s`,
        ...extra,
      ]);
    const warmup = await attack(opts.baselineRate * 4, opts.warmupSeconds);
    log(`${nodes} nodes: warm-up ${warmup.requests} requests, p99 ${warmup.latencyMs.p99.toFixed(2)} ms`);
    const serial = await attack(0, opts.stepSeconds, ['-workers', '1']);
    log(
      `${nodes} nodes: serial (one in flight) ${serial.throughput.toFixed(0)}/s, p50 ${serial.latencyMs.p50.toFixed(2)} ms, p99 ${serial.latencyMs.p99.toFixed(2)} ms`,
    );
    await sleep(opts.ttl * 1000); // the serial step's reservations expire
    const baseline = await attack(opts.baselineRate, opts.stepSeconds);
    log(
      `${nodes} nodes: baseline ${opts.baselineRate}/s, p50 ${baseline.latencyMs.p50.toFixed(2)} ms, p99 ${baseline.latencyMs.p99.toFixed(2)} ms`,
    );
    const search: SearchOptions = {
      startRate: opts.startRate,
      factor: opts.factor,
      precision: opts.precision,
      maxSteps: opts.maxSteps,
      p99Factor: 2,
      minSent: 0.95,
    };
    const steps: ScaleResult['steps'] = [];
    for (
      let rate = nextRate(steps, baseline.latencyMs.p99, search);
      rate !== null;
      rate = nextRate(steps, baseline.latencyMs.p99, search)
    ) {
      const step = await attack(rate, opts.stepSeconds);
      const reservationsPending = await metricsOf(url);
      const verdict = sustained(step, baseline.latencyMs.p99, search);
      steps.push({ ...step, ...verdict, reservationsPending });
      log(
        `${nodes} nodes: ${rate}/s → replies ${step.throughput.toFixed(0)}/s, p50 ${step.latencyMs.p50.toFixed(2)} ms, p99 ${step.latencyMs.p99.toFixed(2)} ms, not placed ${step.notPlaced}, reservations pending ${reservationsPending ?? '?'}: ${verdict.ok ? 'sustained' : `not sustained (${verdict.why})`}`,
      );
      if (step.notPlaced > 0)
        log(
          `${nodes} nodes: WARNING ${step.notPlaced} replies did not place the pod, e.g. ${step.sampleBodies[0] ?? ''}`,
        );
      await sleep(opts.ttl * 1000); // the step's reservations expire and any backlog drains before the next
    }
    const cpu = watch.stop();
    const { ceiling, firstFailure } = ceilingOf(steps, baseline.latencyMs.p99, search);
    return { nodes, bodyBytes: body.length, warmup, serial, baseline, steps, ceiling, firstFailure, cpu };
  } finally {
    extender.kill('SIGTERM');
    await new Promise<void>((ok) => (exited ? ok() : extender.once('exit', () => ok())));
    closeSync(fd);
  }
}

function printReport(report: Report, say: (s: string) => void): void {
  const m = report.machine;
  const options = report.options as unknown as Options;
  const scales = report.runs as ScaleResult[];
  say('');
  say(
    `extender ceiling: open-loop Filter calls naming every node, each a distinct pod (chooseInFilter, nodeCacheCapable); ${options.stepSeconds} s steps; sustained = p99 ≤ 2 × baseline p99, no failure, the generator sent ≥ 0.95 × rate`,
  );
  say(
    `machine: ${m.cpus} × ${m.cpuModel}, Node ${m.node}; reservations released by placementReservationTtlSeconds ${options.ttl}`,
  );
  for (const s of scales) {
    say('');
    say(
      `== ${s.nodes} nodes (request ${(s.bodyBytes / 1024).toFixed(0)} KiB); CPU over the run: extender ${fmt(s.cpu.cores.extender, 2)}, loadgen ${fmt(s.cpu.cores.loadgen, 2)}, other load ${s.cpu.otherCores.toFixed(2)} cores (load average ${s.cpu.loadavg.map((l) => l.toFixed(2)).join(' → ')})${s.cpu.otherCores > QUIET_CORES ? ` — NOT QUIET: other jobs took more than ${QUIET_CORES} cores` : ''}`,
    );
    const rows = [
      [
        'step',
        'rate/s',
        'replies/s',
        'sent/s',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'max ms',
        'not placed',
        'failed',
        'reservations pending',
        'verdict',
      ],
    ];
    const row = (label: string, st: Step, verdict: string, pending: number | null = null) =>
      rows.push([
        label,
        st.rate === 0 ? 'serial' : String(st.rate),
        st.throughput.toFixed(0),
        st.sentRate.toFixed(0),
        st.latencyMs.p50.toFixed(2),
        st.latencyMs.p90.toFixed(2),
        st.latencyMs.p99.toFixed(2),
        st.latencyMs.max.toFixed(1),
        String(st.notPlaced),
        String(st.failed),
        pending === null ? '-' : String(pending),
        verdict,
      ]);
    row('warm-up', s.warmup, '(not counted)');
    row('serial', s.serial, 'one request in flight');
    row('baseline', s.baseline, `p99 reference ${s.baseline.latencyMs.p99.toFixed(2)} ms`);
    s.steps.forEach((st, i) => row(String(i + 1), st, st.ok ? 'sustained' : `not: ${st.why}`, st.reservationsPending));
    say(formatColumns(rows));
    say(
      `ceiling: ${s.ceiling ? `${s.ceiling.rate} filter calls/s (p50 ${s.ceiling.latencyMs.p50.toFixed(2)} ms, p99 ${s.ceiling.latencyMs.p99.toFixed(2)} ms)` : 'none sustained'}${s.firstFailure ? `; first rate not sustained: ${s.firstFailure.rate}/s` : '; no rate tried was too high (raise --max-steps)'}; serial: ${s.serial.throughput.toFixed(0)}/s`,
    );
  }
  say('');
  for (const t of report.tables) say(textTable(t));
  const big = scales.find((s) => s.nodes === 5000);
  if (big?.ceiling) {
    const c = big.ceiling.rate;
    say('');
    say(
      `5,000 nodes: ceiling ${c} calls/s against upstream SchedulingBasic thresholds of ${UPSTREAM_5000.low}–${UPSTREAM_5000.high} pods/s: ${c >= UPSTREAM_5000.high ? 'above both' : c >= UPSTREAM_5000.low ? 'between them' : 'below both'} (one Filter call per pod)`,
    );
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const loadgenBin = (await script('build-tools.sh', ['--loadgen'])).trim();
  const report = startReport('ceiling', opts);
  const outFile = opts.out ? resolve(opts.out) : defaultReportPath(report, REPO_ROOT);
  // each node count's snapshot, config and logs go beside the report
  const outDir = outFile.replace(/\.json$/, '');
  const scales: ScaleResult[] = [];
  for (const nodes of opts.nodes) {
    scales.push(await benchScale(opts, nodes, outDir, loadgenBin));
    report.runs = scales;
    report.tables = [ceilingTable(scales, opts.baselineRate)];
    writeReport(report, outFile, () => undefined);
  }
  printReport(report, say);
  say('');
  say(`report: ${outFile} (print its tables again: npm run bench -- --print FILE)`);
}

main().catch(exitWith('bench:ceiling'));
