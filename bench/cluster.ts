/**
 * `npm run bench -- cluster`: burst throughput of sandbox-scheduler (kube-scheduler + the extender) against the
 * stock default-scheduler in one real control plane (test/e2e/cluster-up.sh), interleaved, in drain and burst
 * modes, with the ratios sandbox/stock per node count and its report (bench/report.ts). Never part of CI.
 * The modes, the figures and the checks: docs/benchmarks.md#cluster-sandbox-scheduler-against-the-stock-kube-scheduler;
 * `npm run bench -- cluster -- --help` for the options.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { V1Pod } from '@kubernetes/client-node';
import { Command, InvalidArgumentError } from 'commander';
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import {
  benchPod,
  createPods,
  PodWatch,
  type PodEventType,
  ensureNamespace,
  httpsGet,
  Kube,
  scrape,
  taintsToClear,
  untaintNodes,
  type Creation,
} from '../test/e2e/kit/adminClient.js';
import {
  log,
  nowMs,
  readClusterEnv,
  REPO_ROOT,
  script,
  sleep,
  STATE_DIR,
  waitUntil,
  type ClusterEnv,
} from '../test/e2e/kit/controlPlane.js';
import { startFloorExtender } from './floorProcess.js';
import { parseProcStat } from './procStats.js';
import { clockTicksPerSecond } from './procWatch.js';
import {
  cpuSecondsPerThousand,
  cpuShares,
  firstRunRatio,
  loadDisturbance,
  otherCores,
  spreadOf,
  stockRateOutliers,
  type Spread,
  fmt,
  formatColumns,
  hasMetric,
  histogram,
  histogramDelta,
  histogramMean,
  histogramQuantile,
  histogramsBy,
  medianOf,
  percentile,
  placementSoundness,
  podsPerSecond,
  ratio,
  schedulerColumns,
  selfTimeTable,
  counterDeltas,
  sumSamples,
  startTimeOfStat,
  type CpuProfile,
  type CpuSample,
  type Histogram,
  type ProcTicks,
  type Sample,
  type SelfTimeTable,
  type Soundness,
} from './clusterStats.js';
import { defaultReportPath, exitWith, type Report, startReport, tableOf, textTable, writeReport } from './report.js';
import type { Table } from './results.js';
import {
  existingFile,
  exitOnUsage,
  listOf,
  nonNegative,
  oneOf,
  percentage,
  positiveInt,
  quantity,
} from './cliOptions.js';

const NAMESPACE = 'bench';
/** Components whose CPU is sampled (pid files of cluster-up.sh), plus the bench itself and the whole machine. */
const COMPONENTS = [
  'sandbox-extender',
  'kube-scheduler-sandbox',
  'kube-scheduler-default',
  'kube-apiserver',
  'etcd',
  'kwok',
  'kube-controller-manager',
] as const;
const MACHINE = '(machine)';
/** The extender's main thread (the one answering the verbs), sampled apart from the process. */
const EXTENDER_MAIN = 'sandbox-extender main thread';
const BENCH = 'bench';

type Mode = 'drain' | 'burst';
type SchedulerKind = 'sandbox' | 'default';

export interface Options {
  nodes: number[];
  nodeShape: string;
  pods: number;
  podCpu: string;
  podMemory: string;
  runs: number;
  modes: Mode[];
  extenderConfig: string | undefined;
  /** The extender binds (bindVerb); false: kube-scheduler binds. */
  bind: boolean;
  profile: boolean;
  concurrency: number;
  out?: string | undefined;
  reuse: boolean;
  runTimeout: number;
  settleTimeout: number;
  /** A run in which other processes took more cores than this is flagged and left out of the summary. */
  maxOtherCores: number;
  /** A stock run whose pods/s lies further than this from the median of its mode is flagged (0.25 = ±25 %). */
  maxStockDeviation: number;
  /** One more sandbox run per mode with the floor extender (bench/floorExtender.ts) in the extender's place. */
  floor: boolean;
  /** percentageOfNodesToScore of the sandbox-scheduler profile (0: kube-scheduler's adaptive default). */
  sandboxPercentage: number;
  /** percentageOfNodesToScore of the stock scheduler; undefined: not set, kube-scheduler as shipped (the baseline). */
  stockPercentage: number | undefined;
  /** Which scheduler runs first in each round of runs. */
  first: SchedulerKind;
  /**
   * The production-like variant: the extender (or the floor in its place) on CPU 1, everything else (the control
   * plane, both kube-schedulers, KWOK, this bench) on CPU 0, for every scheduler in the run (taskset).
   */
  pin: boolean;
}

interface Scrapes {
  extender: Sample[];
  sandbox: Sample[];
  default: Sample[];
}

async function scrapeAll(env: ClusterEnv, kube: Kube): Promise<Scrapes> {
  const [extender, sandbox, stock] = await Promise.all([
    scrape(env.EXTENDER_URL!, kube),
    scrape(env.SANDBOX_SCHEDULER_URL!, kube),
    scrape(env.DEFAULT_SCHEDULER_URL!, kube),
  ]);
  return { extender, sandbox, default: stock };
}

// ------------------------------------------------------------------------------------------ the schedulers' configuration

interface SchedulerSettings {
  qps: unknown;
  burst: unknown;
  parallelism: unknown;
  percentageOfNodesToScore: unknown;
  podInitialBackoffSeconds: unknown;
  podMaxBackoffSeconds: unknown;
  profiles: unknown;
  extenders: number;
}

/** The effective configuration (kube-scheduler's /configz: file plus defaults) of one scheduler. */
async function schedulerSettings(url: string, kube: Kube): Promise<SchedulerSettings> {
  const configz = JSON.parse(await httpsGet(`${url}/configz`, kube.clientCert)) as {
    componentconfig?: Record<string, unknown>;
  };
  const c = (configz.componentconfig ?? {}) as {
    clientConnection?: { qps?: number; burst?: number };
    parallelism?: number;
    percentageOfNodesToScore?: number;
    podInitialBackoffSeconds?: number;
    podMaxBackoffSeconds?: number;
    profiles?: { schedulerName?: string }[];
    extenders?: unknown[];
  };
  return {
    qps: c.clientConnection?.qps,
    burst: c.clientConnection?.burst,
    parallelism: c.parallelism,
    percentageOfNodesToScore: c.percentageOfNodesToScore,
    podInitialBackoffSeconds: c.podInitialBackoffSeconds,
    podMaxBackoffSeconds: c.podMaxBackoffSeconds,
    profiles: (c.profiles ?? []).map((p) => p.schedulerName),
    extenders: (c.extenders ?? []).length,
  };
}

// ------------------------------------------------------------------------------------------ pods: watch, create, delete

/** Client-side times (monotonic ms) of the pods of one run, from a watch of the bench namespace. */
class PodTracker {
  readonly seen = new Set<string>();
  readonly boundAtMs = new Map<string, number>();
  /** When the watch first showed each pod Ready (condition Ready=True; KWOK reports it after its ready delay). */
  readonly readyAtMs = new Map<string, number>();
  readonly gone = new Set<string>();
  private watch: PodWatch | undefined;

  constructor(
    private readonly kube: Kube,
    private readonly runLabel: string,
  ) {}

  /** Times the API server closed the watch and it was reopened from the last resourceVersion (a slow reader). */
  get reopens(): number {
    return this.watch?.reopens ?? 0;
  }

  async start(): Promise<void> {
    const labelSelector = `bench-run=${this.runLabel}`;
    const list = await this.kube.listAll((c) =>
      this.kube.api.listNamespacedPod({ namespace: NAMESPACE, labelSelector, limit: 1000, _continue: c }),
    );
    for (const p of list.items) this.observe('ADDED', p);
    const observe = (type: PodEventType, pod: V1Pod) => this.observe(type, pod);
    this.watch = new PodWatch(this.kube, NAMESPACE, observe, list.resourceVersion, labelSelector);
    await this.watch.start();
  }

  private observe(type: PodEventType, pod: V1Pod): void {
    const t = nowMs();
    const name = pod.metadata!.name!;
    if (type === 'DELETED') {
      this.gone.add(name);
      return;
    }
    this.seen.add(name);
    if (pod.spec?.nodeName && !this.boundAtMs.has(name)) this.boundAtMs.set(name, t);
    if (
      !this.readyAtMs.has(name) &&
      (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
    )
      this.readyAtMs.set(name, t);
  }

  stop(): void {
    this.watch?.stop();
  }
}

/**
 * Waits until the extender has settled after a run: no reservation pending, its model holds exactly the pods
 * the API server has, and its Event queue is drained (an outcome per decision, or no outcome for 5 s: Events off).
 */
async function waitExtenderSettled(env: ClusterEnv, kube: Kube, timeoutMs: number): Promise<number> {
  const start = nowMs();
  let lastEvents = -1;
  let eventsStillSince = nowMs();
  const clusterPods = (await kube.pods()).length;
  await waitUntil(
    'the extender to settle (no reservation pending, its model in step, its Events sent)',
    timeoutMs,
    async () => {
      const m = await scrape(env.EXTENDER_URL!, kube);
      const decisions =
        sumSamples(m, 'sandbox_extender_placements_total', { result: 'placed' }) +
        sumSamples(m, 'sandbox_extender_placements_total', { result: 'no_fit' });
      const events = sumSamples(m, 'sandbox_extender_events_total');
      if (events !== lastEvents) {
        lastEvents = events;
        eventsStillSince = nowMs();
      }
      const eventsDone = events >= decisions || nowMs() - eventsStillSince > 5000;
      return (
        sumSamples(m, 'sandbox_extender_reservations_pending') === 0 &&
        sumSamples(m, 'sandbox_extender_snapshot_objects', { kind: 'pod' }) === clusterPods &&
        eventsDone
      );
    },
    500,
  );
  return nowMs() - start;
}

/** How often the API server is asked for the run's Events while waiting for them (ms). */
const EVENTS_POLL_MS = 2000;

/**
 * Waits until the API server holds the extender's Event for every pod of the run (`names`): its Events are
 * rate-limited (events.perSecond), so they trail the binds. Satisfied when the count has not moved for 5 s
 * (Events off, dropped, or a stock run). The Events are counted in the API server, not in the extender's
 * metrics: a scrape of 1,000 nodes' series costs the extender ~8 ms of CPU, which every 2 s over the ~50 s of
 * a 1,000-pod run's Events was ~0.2 CPU-s per 1,000 pods charged to it.
 */
async function waitEventsSent(kube: Kube, names: readonly string[], timeoutMs: number): Promise<void> {
  const pods = new Set(names);
  let last = -1;
  let stillSince = nowMs();
  await waitUntil(
    "the extender's Events for this run to be recorded",
    timeoutMs,
    async () => {
      const list = await kube.listAll((c) =>
        kube.api.listNamespacedEvent({
          namespace: NAMESPACE,
          fieldSelector: 'source=sandbox-extender',
          limit: 1000,
          _continue: c,
        }),
      );
      const covered = new Set(list.items.map((e) => e.involvedObject?.name ?? '').filter((n) => pods.has(n))).size;
      if (covered !== last) {
        last = covered;
        stillSince = nowMs();
      }
      return covered >= pods.size || nowMs() - stillSince > 5000;
    },
    EVENTS_POLL_MS,
  );
}

// ------------------------------------------------------------------------------------------ CPU sampling

/** Samples utime+stime of every component (pids from the state folder), the bench and the machine, every `everyMs`. */
class CpuSampler {
  readonly samples: CpuSample[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly everyMs = 250) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  sample(): void {
    const procs: Record<string, ProcTicks> = {};
    const read = (name: string, pid: number) => {
      try {
        procs[name] = { pid, ticks: parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).ticks };
      } catch {
        // not running (a stopped scheduler)
      }
    };
    for (const c of COMPONENTS) {
      try {
        const pid = Number(readFileSync(join(STATE_DIR, 'pids', c), 'utf8').split(' ')[0]);
        if (pid > 0) read(c, pid);
        // The extender's main thread alone (its task id is the pid): the rest is the API worker and V8's helpers.
        if (pid > 0 && c === 'sandbox-extender') {
          try {
            procs[EXTENDER_MAIN] = {
              pid,
              ticks: parseProcStat(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')).ticks,
            };
          } catch {
            // gone meanwhile
          }
        }
      } catch {
        // no pid file: not running
      }
    }
    read(BENCH, process.pid);
    try {
      // /proc/stat "cpu" line: user nice system idle iowait irq softirq steal ...; busy = all but idle and iowait.
      const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
      procs[MACHINE] = { pid: 0, ticks: f.reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0) };
    } catch {
      // not Linux
    }
    this.samples.push({ tMs: nowMs(), procs });
  }
}

/**
 * Waits until the machine's load has settled: the busy cores of two consecutive 5 s windows within 0.05 of each
 * other (the cluster's start-up — the controller manager still working through 1,000+ new nodes, KWOK catching
 * up — is over; what remains is its steady background: node leases and heartbeats), at most 10 min. Measured runs
 * start after it, so the first run does not carry the cluster's start-up.
 */
async function waitClusterSettled(sampler: CpuSampler, clkTck: number): Promise<{ waitedMs: number; cores: number }> {
  const start = nowMs();
  let previous = Infinity;
  for (;;) {
    const from = nowMs();
    sampler.sample();
    await sleep(5000);
    sampler.sample();
    const cores = cpuShares(sampler.samples, from, nowMs(), clkTck).cores.get(MACHINE) ?? 0;
    if (Math.abs(cores - previous) < 0.05 || nowMs() - start > 600_000) return { waitedMs: nowMs() - start, cores };
    log(`waiting for the cluster's load to settle: ${cores.toFixed(2)} cores busy over the last 5 s`);
    previous = cores;
  }
}

// ------------------------------------------------------------------------------------------ production-like pinning

/** CPU of the extender under --pin; every other process of the run stays on CPU_CONTROL_PLANE. */
const CPU_EXTENDER = 1;
const CPU_CONTROL_PLANE = 0;

/**
 * --pin: this bench and everything it starts from now on run on CPU_CONTROL_PLANE (children inherit the
 * affinity); the extender's process, whichever pid its pid file names (the extender, a restart of it, or the
 * floor), is moved with all its threads to CPU_EXTENDER within `everyMs` of appearing. Threads it starts later
 * inherit its affinity. Returns a function that stops the watcher.
 * @throws Error when taskset fails (not installed, or fewer than two CPUs)
 */
function pinExtender(everyMs = 200): () => void {
  execFileSync('taskset', ['-a', '-pc', String(CPU_CONTROL_PLANE), String(process.pid)], { stdio: 'ignore' });
  const pidFile = join(STATE_DIR, 'pids', 'sandbox-extender');
  let pinned = 0;
  const timer = setInterval(() => {
    let pid = 0;
    try {
      pid = Number(readFileSync(pidFile, 'utf8').split(' ')[0]);
    } catch {
      return; // not started yet, or between a stop and a start
    }
    if (!(pid > 0) || pid === pinned) return;
    try {
      execFileSync('taskset', ['-a', '-pc', String(CPU_EXTENDER), String(pid)], { stdio: 'ignore' });
      pinned = pid;
      log(`pinned the extender (pid ${pid}) to CPU ${CPU_EXTENDER}; everything else on CPU ${CPU_CONTROL_PLANE}`);
    } catch {
      // the process ended between the read and taskset: the next tick reads the new pid
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

// ------------------------------------------------------------------------------------------ one run

interface VerbStats {
  count: number;
  meanMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface RunResult {
  nodes: number;
  mode: Mode;
  scheduler: SchedulerKind;
  run: number;
  profiled: boolean;
  pods: number;
  boundPods: number;
  creation: { seconds: number; podsPerSecond: number; retries: number; concurrency: number };
  bindWindowSeconds: number | null;
  /** First and last bind, monotonic ms (the clock of the extender's CPU profile, in µs there). */
  bindWindowMs: { from: number; to: number };
  podsPerSecond: number | null;
  /** Burst: creation acknowledged → bind seen, client side. */
  createToBound: { p50Ms: number | null; p99Ms: number | null; maxMs: number | null } | null;
  /** Drain: scheduler start command → first / last bind. */
  startToFirstBindMs: number | null;
  sli: { count: number; p50Ms: number | null; p99Ms: number | null };
  algorithm: { count: number; meanMs: number | null; p99Ms: number | null };
  attempt: { count: number; meanMs: number | null };
  scheduleAttempts: Record<string, number>;
  extensionPoints: Record<string, { count: number; meanMs: number | null }>;
  schedulerCounters: Record<string, number>;
  extender: {
    verbs: Record<string, VerbStats>;
    eventLoop: {
      source: string;
      meanMs: number | null;
      p50Ms: number | null;
      p99Ms: number | null;
      maxMs: number | null;
    };
    binds: Record<string, number>;
    errors: number;
  };
  cpu: { windowMs: number; cores: Record<string, number> };
  benchEventLoopP99Ms: number;
  taintedNodesAtStart: number;
  watchReopens: number;
  soundness: Soundness;
  settleSeconds: number;
  /** 'floor extender': a sandbox run with the floor (--floor) in the extender's place; null otherwise. */
  variant: 'floor extender' | null;
  /** Cores each component took over the quiet 3 s just before the run (its background: timers, heartbeats). */
  idleCores: Record<string, number>;
  /**
   * CPU-seconds per 1,000 pods of each component: over the binding window (no correction), and over the
   * pods' whole placement — from the run's start (drain: the scheduler's start; burst: the first create)
   * until every pod is Ready and the extender's Events are sent — minus the component's idle share.
   */
  cpuPerThousand: { binding: Record<string, number>; lifecycle: Record<string, number>; lifecycleSeconds: number };
  /** Cores that processes outside the cluster and the bench took over the binding window. */
  otherCores: number | null;
  /** Why this run is not evidence (other load, stock's rate off its median); empty: a quiet run. */
  disturbed: string[];
  /** The API server's request counters over the run (POST events by API group: '' is core/v1, the extender's). */
  apiRequests: Record<string, number>;
}

interface Context {
  opts: Options;
  env: ClusterEnv;
  kube: Kube;
  sampler: CpuSampler;
  clkTck: number;
  nodeCount: number;
}

function verbStats(h: Histogram): VerbStats {
  const q = (p: number) => {
    const v = histogramQuantile(p, h);
    return v === null ? null : v * 1000;
  };
  const mean = histogramMean(h);
  return { count: h.count, meanMs: mean === null ? null : mean * 1000, p50Ms: q(0.5), p99Ms: q(0.99) };
}

/** Histograms per label value, as deltas between two scrapes. */
function deltasBy(
  after: Sample[],
  before: Sample[],
  name: string,
  label: string,
  match: Record<string, string> = {},
): Map<string, Histogram> {
  const b = histogramsBy(before, name, label, match);
  return new Map([...histogramsBy(after, name, label, match)].map(([k, h]) => [k, histogramDelta(h, b.get(k))]));
}

/** The extender's event-loop delay over the run: its histogram if it exports one, else prom-client's gauges. */
function eventLoop(after: Sample[], before: Sample[]): RunResult['extender']['eventLoop'] {
  const name = 'sandbox_extender_event_loop_delay_seconds';
  if (hasMetric(after, `${name}_count`)) {
    const h = histogramDelta(histogram(after, name), histogram(before, name));
    const s = verbStats(h);
    const maxBucket = [...h.buckets].reverse().find((b, i, arr) => b.count > (arr[i + 1]?.count ?? 0));
    return {
      source: `${name} (histogram delta)`,
      meanMs: s.meanMs,
      p50Ms: s.p50Ms,
      p99Ms: s.p99Ms,
      maxMs: maxBucket ? maxBucket.le * 1000 : null,
    };
  }
  // prom-client's monitorEventLoopDelay gauges are reset at every scrape: the scrape at the end of the run
  // reports the distribution since the scrape at its start (the bench is the only scraper of the extender).
  const g = (suffix: string) =>
    hasMetric(after, `sandbox_extender_nodejs_eventloop_lag_${suffix}_seconds`)
      ? sumSamples(after, `sandbox_extender_nodejs_eventloop_lag_${suffix}_seconds`) * 1000
      : null;
  return {
    source:
      'prom-client nodejs_eventloop_lag_* gauges (monitorEventLoopDelay since the previous scrape, 10 ms resolution)',
    meanMs: g('mean'),
    p50Ms: g('p50'),
    p99Ms: g('p99'),
    maxMs: g('max'),
  };
}

async function runOnce(
  ctx: Context,
  mode: Mode,
  scheduler: SchedulerKind,
  run: number,
  profiled = false,
  variant: RunResult['variant'] = null,
): Promise<RunResult> {
  if (variant !== null) await script('component.sh', ['stop', 'sandbox-extender']);
  let floor: { stop: () => Promise<void> } | null = null;
  try {
    // Inside the try: a floor that does not come up still gives the extender back.
    if (variant === 'floor extender') floor = await startFloorInExtenderPlace(ctx.env);
    return await measuredRun(ctx, mode, scheduler, run, profiled, variant);
  } finally {
    if (floor) await floor.stop();
    if (variant !== null) await script('component.sh', ['start', 'sandbox-extender']);
  }
}

/**
 * Starts bench/floorExtender.ts in the extender's place (its URL's port), its pid in the extender's pid file so
 * that the CPU sampler reads it; `stop` ends it and removes the file (component.sh then starts the real one).
 */
async function startFloorInExtenderPlace(env: ClusterEnv): Promise<{ stop: () => Promise<void> }> {
  const floor = await startFloorExtender(env.EXTENDER_URL!);
  const pidFile = join(STATE_DIR, 'pids', 'sandbox-extender');
  const stop = async () => {
    await floor.stop();
    rmSync(pidFile, { force: true });
  };
  try {
    writeFileSync(pidFile, `${floor.pid} ${startTimeOfStat(readFileSync(`/proc/${floor.pid}/stat`, 'utf8'))}\n`);
  } catch (err) {
    await stop();
    throw err;
  }
  log(`floor extender (bench/floorExtender.ts) in the extender's place: pid ${floor.pid}, ${env.EXTENDER_URL}`);
  return { stop };
}

async function measuredRun(
  ctx: Context,
  mode: Mode,
  scheduler: SchedulerKind,
  run: number,
  profiled: boolean,
  variant: RunResult['variant'],
): Promise<RunResult> {
  const { opts, env, kube } = ctx;
  const schedulerName = scheduler === 'sandbox' ? env.SANDBOX_SCHEDULER_NAME! : 'default-scheduler';
  const component = scheduler === 'sandbox' ? 'kube-scheduler-sandbox' : 'kube-scheduler-default';
  const runLabel = `${mode}-${scheduler}-${run}${profiled ? '-prof' : ''}-${Date.now().toString(36)}`;
  log(
    `run ${run}: ${mode}, ${schedulerName}${profiled ? ' (extender profiled)' : ''}${variant ? ` (${variant})` : ''}: ${opts.pods} pods`,
  );

  const tainted = (await kube.nodes()).filter((n) => taintsToClear(n).length > 0).length;
  if (tainted > 0) await untaintNodes(kube);

  const tracker = new PodTracker(kube, runLabel);
  await tracker.start();
  const width = String(opts.pods - 1).length;
  const manifests = Array.from({ length: opts.pods }, (_, i) =>
    benchPod(`${runLabel}-${String(i).padStart(width, '0')}`, NAMESPACE, {
      schedulerName,
      cpu: opts.podCpu,
      memory: opts.podMemory,
      labels: { 'bench-run': runLabel },
    }),
  );
  const names = manifests.map((m) => m.metadata!.name!);

  // The API server's counters, then a quiet 3 s: each component's background share, subtracted from its CPU per pod.
  const apiBefore = await scrape(env.APISERVER_URL!, kube);
  ctx.sampler.sample();
  const idleFrom = nowMs();
  await sleep(3000);
  ctx.sampler.sample();
  const idleCores = cpuShares(ctx.sampler.samples, idleFrom, nowMs(), ctx.clkTck).cores;

  const benchLoop = monitorEventLoopDelay({ resolution: 5 });
  let before: Scrapes;
  let runStartMs: number;
  let creation: Creation;
  let startCommandMs: number | null = null;
  const allBound = () => tracker.boundAtMs.size >= opts.pods;
  const boundTimeout = opts.runTimeout * 1000;
  if (mode === 'drain') {
    await script('component.sh', ['stop', component]);
    try {
      creation = await createPods(kube, NAMESPACE, manifests, opts.concurrency);
      await waitUntil(`the watch to see all ${opts.pods} pods`, 60_000, () => names.every((n) => tracker.seen.has(n)));
      if (tracker.boundAtMs.size > 0)
        throw new Error(`${tracker.boundAtMs.size} pods were bound while ${component} was stopped`);
    } catch (err) {
      await script('component.sh', ['start', component]).catch(() => undefined); // leave a reused cluster whole
      throw err;
    }
    before = await scrapeAll(env, kube);
    benchLoop.enable();
    startCommandMs = nowMs();
    runStartMs = startCommandMs;
    await Promise.all([
      script('component.sh', ['start', component]),
      waitUntil(`all ${opts.pods} pods bound`, boundTimeout, allBound),
    ]);
  } else {
    before = await scrapeAll(env, kube);
    benchLoop.enable();
    runStartMs = nowMs();
    creation = await createPods(kube, NAMESPACE, manifests, opts.concurrency);
    await waitUntil(`all ${opts.pods} pods bound`, boundTimeout, allBound);
  }
  const after = await scrapeAll(env, kube);
  ctx.sampler.sample();
  benchLoop.disable();
  const endMs = nowMs();
  // The placement is complete when every pod is Ready and the extender has sent its Events (rate-limited, they trail the binds).
  await waitUntil(`all ${opts.pods} pods Ready`, boundTimeout, () => names.every((n) => tracker.readyAtMs.has(n)), 50);
  await waitEventsSent(kube, names, opts.settleTimeout * 1000);
  ctx.sampler.sample();
  const completeMs = nowMs();
  const apiAfter = await scrape(env.APISERVER_URL!, kube);

  // ---- figures
  const binds = [...tracker.boundAtMs.values()];
  const firstBind = Math.min(...binds);
  const lastBind = Math.max(...binds);
  const latencies = mode === 'burst' ? names.map((n) => tracker.boundAtMs.get(n)! - creation.ackMs.get(n)!) : [];
  const sAfter = after[scheduler];
  const sBefore = mode === 'drain' ? [] : before[scheduler]; // a drained scheduler is a new process: its counters start at 0
  const sli = histogramDelta(
    histogram(sAfter, 'scheduler_pod_scheduling_sli_duration_seconds'),
    histogram(sBefore, 'scheduler_pod_scheduling_sli_duration_seconds'),
  );
  const algorithm = histogramDelta(
    histogram(sAfter, 'scheduler_scheduling_algorithm_duration_seconds'),
    histogram(sBefore, 'scheduler_scheduling_algorithm_duration_seconds'),
  );
  const attempt = histogramDelta(
    histogram(sAfter, 'scheduler_scheduling_attempt_duration_seconds', { profile: schedulerName }),
    histogram(sBefore, 'scheduler_scheduling_attempt_duration_seconds', { profile: schedulerName }),
  );
  const points = deltasBy(sAfter, sBefore, 'scheduler_framework_extension_point_duration_seconds', 'extension_point', {
    profile: schedulerName,
  });
  const verbs = deltasBy(after.extender, before.extender, 'sandbox_extender_http_request_duration_seconds', 'verb');
  const schedulerCounters: Record<string, number> = {};
  for (const name of [
    'scheduler_batch_attempts_total',
    'scheduler_pod_scheduled_after_flush_total',
    'scheduler_preemption_attempts_total',
  ]) {
    const d = sumSamples(sAfter, name) - sumSamples(sBefore, name);
    if (d !== 0) schedulerCounters[name] = d;
  }
  const ms = (h: Histogram) => {
    const m = histogramMean(h);
    return m === null ? null : m * 1000;
  };
  const q = (p: number, h: Histogram) => {
    const v = histogramQuantile(p, h);
    return v === null ? null : v * 1000;
  };
  const cpu = cpuShares(ctx.sampler.samples, firstBind, lastBind, ctx.clkTck);
  const bindingPerThousand = Object.fromEntries(
    [...cpu.cores].map(([c, cores]) => [c, ((cores * (lastBind - firstBind)) / 1000 / binds.length) * 1000]),
  );
  const lifecycle = cpuSecondsPerThousand(
    ctx.sampler.samples,
    runStartMs!,
    completeMs,
    ctx.clkTck,
    binds.length,
    idleCores,
  );
  const other = otherCores(Object.fromEntries(cpu.cores), MACHINE, [...COMPONENTS, BENCH]);

  // ---- soundness, then clean up
  const [nodes, pods] = await Promise.all([kube.nodes(), kube.pods()]);
  const soundness = placementSoundness(nodes as unknown as Node[], pods as unknown as Pod[]);
  await kube.api.deleteCollectionNamespacedPod({
    namespace: NAMESPACE,
    labelSelector: `bench-run=${runLabel}`,
    gracePeriodSeconds: 0,
  });
  await waitUntil(`the ${opts.pods} pods to be gone`, 180_000, () => names.every((n) => tracker.gone.has(n)), 100);
  tracker.stop();
  // The extender is stopped or the floor stands in for it: nothing of it to settle.
  const settleMs = variant === null ? await waitExtenderSettled(env, kube, opts.settleTimeout * 1000) : 0;

  const result: RunResult = {
    nodes: ctx.nodeCount,
    mode,
    scheduler,
    run,
    profiled,
    pods: opts.pods,
    boundPods: binds.length,
    creation: {
      seconds: (creation.endMs - creation.startMs) / 1000,
      podsPerSecond: (opts.pods * 1000) / (creation.endMs - creation.startMs),
      retries: creation.retries,
      concurrency: opts.concurrency,
    },
    bindWindowSeconds: (lastBind - firstBind) / 1000,
    bindWindowMs: { from: firstBind, to: lastBind },
    podsPerSecond: podsPerSecond(binds),
    createToBound:
      mode === 'burst'
        ? { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), maxMs: Math.max(...latencies) }
        : null,
    startToFirstBindMs: startCommandMs === null ? null : firstBind - startCommandMs,
    sli: { count: sli.count, p50Ms: q(0.5, sli), p99Ms: q(0.99, sli) },
    algorithm: { count: algorithm.count, meanMs: ms(algorithm), p99Ms: q(0.99, algorithm) },
    attempt: { count: attempt.count, meanMs: ms(attempt) },
    scheduleAttempts: counterDeltas(sAfter, sBefore, 'scheduler_schedule_attempts_total', 'result', {
      profile: schedulerName,
    }),
    extensionPoints: Object.fromEntries(
      [...points].filter(([, h]) => h.count > 0).map(([k, h]) => [k, { count: h.count, meanMs: ms(h) }]),
    ),
    schedulerCounters,
    extender: {
      verbs: Object.fromEntries([...verbs].filter(([, h]) => h.count > 0).map(([k, h]) => [k, verbStats(h)])),
      eventLoop: eventLoop(after.extender, before.extender),
      binds: counterDeltas(after.extender, before.extender, 'sandbox_extender_binds_total', 'result'),
      errors: Object.entries(
        counterDeltas(after.extender, before.extender, 'sandbox_extender_http_requests_total', 'code'),
      ).reduce((a, [code, n]) => a + (code.startsWith('2') ? 0 : n), 0),
    },
    cpu: { windowMs: cpu.windowMs, cores: Object.fromEntries(cpu.cores) },
    benchEventLoopP99Ms: benchLoop.percentile(99) / 1e6,
    taintedNodesAtStart: tainted,
    watchReopens: tracker.reopens,
    soundness,
    settleSeconds: settleMs / 1000,
    variant,
    idleCores: Object.fromEntries(idleCores),
    cpuPerThousand: {
      binding: bindingPerThousand,
      lifecycle: Object.fromEntries(lifecycle.perThousand),
      lifecycleSeconds: lifecycle.windowMs / 1000,
    },
    otherCores: other,
    disturbed: loadDisturbance(other, { maxOtherCores: opts.maxOtherCores, maxStockDeviation: opts.maxStockDeviation }),
    apiRequests: Object.fromEntries(
      Object.entries(
        counterDeltas(apiAfter, apiBefore, 'apiserver_request_total', 'group', { resource: 'events', verb: 'POST' }),
      ).map(([g, v]) => [`POST events ${g || 'core/v1'}`, v]),
    ),
  };
  log(
    `  ${fmt(result.podsPerSecond)} pods/s over ${fmt(result.bindWindowSeconds, 2)} s; created at ${fmt(result.creation.podsPerSecond, 0)}/s` +
      (result.createToBound
        ? `; create→bound p50 ${fmt(result.createToBound.p50Ms, 0)} ms p99 ${fmt(result.createToBound.p99Ms, 0)} ms`
        : '') +
      `; SLI p99 ${fmt(result.sli.p99Ms, 0)} ms; extender ${fmt(result.cpuPerThousand.lifecycle['sandbox-extender'], 2)} CPU-s per 1,000 pods; other load ${fmt(other, 2)} cores; over allocatable ${soundness.overAllocatable.length}; peak ${soundness.peakPressure.toFixed(4)} (optimum ${fmt(soundness.optimum, 4)}); ${Math.round(endMs - (startCommandMs ?? creation.startMs)) / 1000} s`,
  );
  return result;
}

// ------------------------------------------------------------------------------------------ profile

interface ProfileResult {
  /** The profile files, main thread first (V8 names them CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread). */
  files: string[];
  run: RunResult;
  /** Per thread ('main', 'worker N'): its self-time table inside the binding window, and over the whole profile. */
  threads: { thread: string; file: string; window: SelfTimeTable; whole: SelfTimeTable }[];
}

/** The thread id in a V8 CPU profile's default file name (…<pid>.<thread id>.<seq>.cpuprofile), or -1. */
export function profileThreadId(file: string): number {
  const m = /\.(\d+)\.(\d+)\.(\d+)\.cpuprofile$/.exec(file);
  return m ? Number(m[2]) : -1;
}

/** Restarts the extender, with `nodeFlags` if given. */
async function restartExtender(nodeFlags = ''): Promise<void> {
  await script('component.sh', ['restart', 'sandbox-extender', ...(nodeFlags ? ['--node-flags', nodeFlags] : [])]);
}

async function profiledRun(ctx: Context, mode: Mode, outDir: string): Promise<ProfileResult> {
  const dir = join(outDir, `profile-${ctx.nodeCount}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  // No --cpu-prof-name: every thread (the main thread and the API worker) writes a profile of its own.
  await restartExtender(`--cpu-prof --cpu-prof-dir=${dir}`);
  let run: RunResult;
  try {
    run = await runOnce(ctx, mode, 'sandbox', 1, true);
  } finally {
    await restartExtender(); // SIGTERM: the process exits and writes its profiles
  }
  const profiles = () => readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  await waitUntil(
    `the CPU profiles in ${dir} (main thread and API worker)`,
    30_000,
    () => profiles().length >= 2 && profiles().some((f) => profileThreadId(f) === 0),
    200,
  );
  await sleep(500); // the last file may still be being written
  const files = profiles()
    .sort((a, b) => profileThreadId(a) - profileThreadId(b))
    .map((f) => join(dir, f));
  const threads = files.map((file) => {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const tid = profileThreadId(file);
    return {
      thread: tid === 0 ? 'main' : `worker ${tid}`,
      file,
      window: windowTable(profile, run),
      whole: selfTimeTable(profile, { top: 25, stripPrefix: REPO_ROOT }),
    };
  });
  return { files, run, threads };
}

/** Only the samples between the run's first and last bind (the profile's clock is the bench's monotonic clock). */
function windowTable(profile: CpuProfile, run: RunResult): SelfTimeTable {
  return selfTimeTable(profile, {
    top: 25,
    stripPrefix: REPO_ROOT,
    fromUs: run.bindWindowMs.from * 1000,
    toUs: run.bindWindowMs.to * 1000,
  });
}

// ------------------------------------------------------------------------------------------ output

function runRows(results: readonly RunResult[]): string {
  const rows = [
    [
      'mode',
      'run',
      'scheduler',
      'pods/s',
      'window s',
      'created/s',
      'c→b p50 ms',
      'c→b p99 ms',
      'start→1st bind s',
      'SLI p50 ms',
      'SLI p99 ms',
      'algo ms',
      'attempts',
      'over alloc',
      'peak',
      'optimum',
      '≤ opt+1 pod',
      'ext CPU-s/1k pods',
      'other cores',
      'flags',
    ],
  ];
  for (const r of results) {
    const attempts = Object.entries(r.scheduleAttempts)
      .map(([k, v]) => (k === 'scheduled' ? String(v) : `${k} ${v}`))
      .join(', ');
    rows.push([
      r.mode,
      `${r.run}${r.profiled ? ' (profiled)' : ''}${r.variant ? ` (${r.variant})` : ''}`,
      r.scheduler === 'sandbox' ? 'sandbox-scheduler' : 'default-scheduler',
      fmt(r.podsPerSecond),
      fmt(r.bindWindowSeconds, 2),
      fmt(r.creation.podsPerSecond, 0),
      fmt(r.createToBound?.p50Ms, 0),
      fmt(r.createToBound?.p99Ms, 0),
      fmt(r.startToFirstBindMs === null ? null : r.startToFirstBindMs / 1000, 2),
      fmt(r.sli.p50Ms, 0),
      fmt(r.sli.p99Ms, 0),
      fmt(r.algorithm.meanMs, 2),
      attempts,
      String(r.soundness.overAllocatable.length),
      r.soundness.peakPressure.toFixed(4),
      fmt(r.soundness.optimum, 4),
      r.soundness.withinOnePodOfOptimum === null ? '-' : r.soundness.withinOnePodOfOptimum ? 'yes' : 'NO',
      fmt(r.cpuPerThousand?.lifecycle['sandbox-extender'], 2),
      fmt(r.otherCores, 2),
      (r.disturbed ?? []).length ? `DISTURBED: ${r.disturbed.join('; ')}` : '',
    ]);
  }
  return formatColumns(rows);
}

/** Whether a run counts in the summaries: not profiled, not the floor's, not disturbed. */
const counted = (r: RunResult) => !r.profiled && !r.variant && !(r.disturbed ?? []).length;

/** Marks the stock runs whose rate lies off the median of their mode (stockRateOutliers) as disturbed. */
function flagStockOutliers(results: readonly RunResult[], maxStockDeviation: number): void {
  const candidates = results.filter((r) => !r.profiled && !r.variant);
  const outliers = stockRateOutliers(
    candidates.map((r) => ({ mode: r.mode, stock: r.scheduler === 'default', podsPerSecond: r.podsPerSecond })),
    maxStockDeviation,
  );
  for (const [i, reason] of outliers) candidates[i]!.disturbed = [...(candidates[i]!.disturbed ?? []), reason];
}

const med = medianOf<RunResult>;
const mean = (vs: readonly (number | null | undefined)[]) => {
  const xs = vs.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
};

const POINT_ORDER = [
  'Sign',
  'PreEnqueue',
  'PreFilter',
  'Filter',
  'PostFilter',
  'PreScore',
  'Score',
  'Reserve',
  'Permit',
  'PreBindPreFlight',
  'PreBind',
  'Bind',
  'PostBind',
];

function breakdownRows(results: readonly RunResult[], modes: readonly Mode[]): string {
  const groups = modes
    .flatMap((mode) =>
      (['sandbox', 'default'] as const).map((scheduler) => ({
        mode,
        scheduler,
        rs: results.filter((r) => r.mode === mode && r.scheduler === scheduler && counted(r)),
      })),
    )
    .filter((g) => g.rs.length);
  const header = [
    'mean over runs',
    ...groups.map((g) => `${g.mode} ${g.scheduler === 'sandbox' ? 'sandbox' : 'stock'}`),
  ];
  const rows: string[][] = [header];
  const row = (label: string, f: (r: RunResult) => number | null | undefined, digits = 2) =>
    rows.push([label, ...groups.map((g) => fmt(mean(g.rs.map(f)), digits))]);
  row('scheduling_algorithm ms', (r) => r.algorithm.meanMs);
  row(
    '  1000 / that = pods/s of a serial scheduling cycle',
    (r) => (r.algorithm.meanMs ? 1000 / r.algorithm.meanMs : null),
    1,
  );
  row('scheduling_attempt ms (algorithm + binding)', (r) => r.attempt.meanMs);
  const points = new Set(results.flatMap((r) => Object.keys(r.extensionPoints)));
  for (const p of [...points].sort((a, b) => POINT_ORDER.indexOf(a) - POINT_ORDER.indexOf(b)))
    row(`  extension point ${p} ms`, (r) => r.extensionPoints[p]?.meanMs);
  row('  algorithm − (PreFilter+Filter+PreScore+Score) ms', (r) => {
    const a = r.algorithm.meanMs;
    if (a === null) return null;
    return (
      a - ['PreFilter', 'Filter', 'PreScore', 'Score'].reduce((sum, p) => sum + (r.extensionPoints[p]?.meanMs ?? 0), 0)
    );
  });
  for (const verb of ['filter', 'prioritize', 'bind']) {
    row(`extender ${verb} mean ms`, (r) => r.extender.verbs[verb]?.meanMs);
    row(`extender ${verb} p99 ms`, (r) => r.extender.verbs[verb]?.p99Ms);
    row(`extender ${verb} calls`, (r) => r.extender.verbs[verb]?.count, 0);
  }
  row('extender event-loop delay p50 ms', (r) => r.extender.eventLoop.p50Ms);
  row('extender event-loop delay p99 ms', (r) => r.extender.eventLoop.p99Ms);
  row('extender event-loop delay max ms', (r) => r.extender.eventLoop.maxMs);
  for (const c of [...COMPONENTS, EXTENDER_MAIN, BENCH, MACHINE]) row(`CPU ${c} (cores)`, (r) => r.cpu.cores[c], 2);
  row('CPU of other processes (machine − the above)', (r) => {
    const machine = r.cpu.cores[MACHINE];
    return machine === undefined
      ? null
      : machine - [...COMPONENTS, BENCH].reduce((sum, c) => sum + (r.cpu.cores[c] ?? 0), 0);
  });
  row('bench event-loop delay p99 ms (timestamp error)', (r) => r.benchEventLoopP99Ms);
  row('extender CPU-s per 1,000 pods, binding window', (r) => r.cpuPerThousand?.binding['sandbox-extender'], 3);
  for (const c of [
    'sandbox-extender',
    EXTENDER_MAIN,
    'kube-scheduler-sandbox',
    'kube-scheduler-default',
    'kube-apiserver',
    'etcd',
    'kwok',
  ]) {
    row(
      `${c} CPU-s per 1,000 pods, start → all Ready and Events sent, idle subtracted`,
      (r) => r.cpuPerThousand?.lifecycle[c],
      3,
    );
  }
  row('  that window s', (r) => r.cpuPerThousand?.lifecycleSeconds, 1);
  row('POST events core/v1 (the extender) per run', (r) => r.apiRequests?.['POST events core/v1'], 0);
  row('POST events events.k8s.io (kube-scheduler) per run', (r) => r.apiRequests?.['POST events events.k8s.io'], 0);
  return formatColumns(rows);
}

function profileRows(t: SelfTimeTable): string {
  const rows = [['self ms', '% busy', 'function', 'location']];
  for (const e of t.top) rows.push([e.selfMs.toFixed(1), (e.share * 100).toFixed(1), e.functionName, e.location]);
  return formatColumns(rows);
}

// ------------------------------------------------------------------------------------------ main

function parseOptions(argv: string[]): Options {
  const program = new Command('bench:cluster')
    .exitOverride(exitOnUsage)
    .description(
      'Pods/s and latency of sandbox-scheduler vs the stock default-scheduler in one local control plane (test/e2e), interleaved runs.',
    )
    .option('--nodes <counts>', 'KWOK node counts, one cluster each (e.g. 1000,5000)', listOf(positiveInt), [1000])
    .option('--node-shape <cpu/memory>', 'allocatable of every node', nodeShape, '32/128Gi')
    .option('--pods <n>', 'pods per run', positiveInt, 1000)
    .option('--pod-cpu <quantity>', 'cpu request = limit of each pod', quantity, '250m')
    .option('--pod-memory <quantity>', 'memory request = limit of each pod', quantity, '512Mi')
    .option('--runs <n>', 'runs per scheduler and mode', positiveInt, 2)
    .option(
      '--modes <list>',
      'drain (pods created with the scheduler stopped, then it starts), burst (created while it runs)',
      listOf(oneOf(['drain', 'burst'] as const)),
      ['drain', 'burst'] as Mode[],
    )
    .option('--extender-config <file>', 'extender --config (default: $EXTENDER_CONFIG)', existingFile)
    .option('--bind', 'the extender binds (bindVerb); by default kube-scheduler binds, as the chart installs it', false)
    .option(
      '--profile',
      'one more sandbox run (drain if measured) with the extender under node --cpu-prof; prints its top self time',
      false,
    )
    .option('--concurrency <n>', 'pod creates in flight', positiveInt, 32)
    .option('--out <file>', 'the report (default .e2e-bench/cluster-DATE.json; bench/report.ts)')
    .option('--reuse', 'use the cluster that is already up and leave it running (its node count)', false)
    .option('--run-timeout <seconds>', 'longest wait for a run’s pods to be bound', positiveInt, 900)
    .option('--settle-timeout <seconds>', 'longest wait for the extender to settle after a run', positiveInt, 300)
    .option(
      '--max-other-cores <cores>',
      'flag (and leave out of the summary) a run in which other processes took more cores than this',
      nonNegative,
      0.1,
    )
    .option(
      '--max-stock-deviation <fraction>',
      "flag a stock run whose pods/s lies further than this from its mode's median (0.25 = ±25 %)",
      nonNegative,
      0.25,
    )
    .option(
      '--first <scheduler>',
      'which scheduler runs first in each round of runs (sandbox or stock)',
      oneOf(['sandbox', 'stock'] as const),
      'sandbox',
    )
    .option(
      '--pin',
      'production-like variant: the extender (or the floor) on CPU 1, the control plane, both kube-schedulers, KWOK and the bench on CPU 0 (taskset), for every scheduler in the run',
      false,
    )
    .option(
      '--sandbox-percentage <n>',
      "percentageOfNodesToScore of the sandbox-scheduler profile, 0–100 (0: kube-scheduler's adaptive default, 50 − nodes/125 %)",
      percentage,
      100,
    )
    .option(
      '--stock-percentage <n>',
      'percentageOfNodesToScore of the stock scheduler, 0–100: a labelled extra (default: not set, kube-scheduler as shipped, the baseline)',
      percentage,
    )
    .option(
      '--floor',
      "one more sandbox run per mode with bench/floorExtender.ts in the extender's place (read, JSON.parse, answer a name): the floor of a Node extender on this machine",
      false,
    )
    .parse(argv, { from: 'user' });
  const o = program.opts<Omit<Options, 'first'> & { first: 'sandbox' | 'stock' }>();
  const fromEnvironment = process.env.EXTENDER_CONFIG;
  if (o.extenderConfig === undefined && fromEnvironment && !existsSync(fromEnvironment))
    program.error(`error: EXTENDER_CONFIG: no such file: ${fromEnvironment}`);
  const extenderConfig = o.extenderConfig ?? (fromEnvironment ? resolve(fromEnvironment) : undefined);
  return { ...o, extenderConfig, first: o.first === 'stock' ? 'default' : 'sandbox' };
}

/** --node-shape: CPUS/MEMORY, the memory a quantity above zero. @throws InvalidArgumentError otherwise. */
function nodeShape(v: string): string {
  const memory = /^\d+\/(.+)$/.exec(v)?.[1];
  try {
    if (memory !== undefined) return (quantity(memory), v);
  } catch {
    // refused below, in the shape's own words
  }
  throw new InvalidArgumentError('expected CPUS/MEMORY, e.g. 32/128Gi');
}

async function benchScale(
  opts: Options,
  nodeCount: number,
  outDir: string,
): Promise<{
  results: RunResult[];
  profile: ProfileResult | null;
  settings: Record<SchedulerKind, SchedulerSettings>;
  untaint: { removed: number; waitedMs: number };
  clusterUpSeconds: number | null;
}> {
  let clusterUpSeconds: number | null = null;
  if (!opts.reuse) {
    const t = nowMs();
    log(
      `cluster up: ${nodeCount} nodes of ${opts.nodeShape}${opts.extenderConfig ? `, extender --config ${opts.extenderConfig}` : ''}`,
    );
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: `${nodeCount}x${opts.nodeShape}`,
      EXTENDER_BUILD: '0',
      EXTENDER_MODE: 'cluster',
      EXTENDER_BIND: opts.bind ? '1' : '0',
      EXTENDER_CONFIG: opts.extenderConfig ?? '',
      SANDBOX_PERCENTAGE: String(opts.sandboxPercentage),
      STOCK_PERCENTAGE: opts.stockPercentage === undefined ? '' : String(opts.stockPercentage),
      AGENT_SANDBOX: '0', // no agent-sandbox-controller watching the pods: the figures stay those of the schedulers alone
      E2E_START_TIMEOUT: String(Math.max(120, Math.ceil(nodeCount / 20))),
    });
    clusterUpSeconds = (nowMs() - t) / 1000;
  }
  const sampler = new CpuSampler();
  try {
    const env = readClusterEnv([
      'KUBECONFIG',
      'APISERVER_URL',
      'EXTENDER_URL',
      'SANDBOX_SCHEDULER_URL',
      'DEFAULT_SCHEDULER_URL',
      'SANDBOX_SCHEDULER_NAME',
    ]);
    const kube = await Kube.connect(env.KUBECONFIG!, opts.concurrency);
    const actualNodes = (await kube.nodes()).length;
    const untaint = await untaintNodes(kube);
    log(
      `no node carries a not-ready/unreachable taint (${untaint.removed} removed, ${Math.round(untaint.waitedMs / 100) / 10} s)`,
    );
    const settings = {
      sandbox: await schedulerSettings(env.SANDBOX_SCHEDULER_URL!, kube),
      default: await schedulerSettings(env.DEFAULT_SCHEDULER_URL!, kube),
    };
    await ensureNamespace(kube, NAMESPACE);
    sampler.start();
    const settled = await waitClusterSettled(sampler, clockTicksPerSecond());
    log(
      `the cluster's load has settled (${settled.cores.toFixed(2)} cores busy over the last 5 s) after ${(settled.waitedMs / 1000).toFixed(0)} s`,
    );
    const ctx: Context = { opts, env, kube, sampler, clkTck: clockTicksPerSecond(), nodeCount: actualNodes };
    const results: RunResult[] = [];
    let profile: ProfileResult | null = null;
    const profileMode: Mode = opts.modes.includes('drain') ? 'drain' : opts.modes[0]!;
    for (const mode of opts.modes) {
      for (let run = 1; run <= opts.runs; run++) {
        const order = opts.first === 'sandbox' ? (['sandbox', 'default'] as const) : (['default', 'sandbox'] as const);
        for (const scheduler of order) results.push(await runOnce(ctx, mode, scheduler, run));
      }
      if (opts.floor) results.push(await runOnce(ctx, mode, 'sandbox', opts.runs + 1, false, 'floor extender'));
      if (opts.profile && mode === profileMode) {
        profile = await profiledRun(ctx, mode, outDir);
        results.push(profile.run);
      }
    }
    kube.agent.destroy();
    return { results, profile, settings, untaint, clusterUpSeconds };
  } finally {
    sampler.stop();
    if (!opts.reuse)
      await script('cluster-down.sh', ['--keep-logs']).catch((e: Error) => log(`cluster-down failed: ${e.message}`));
  }
}

function settingsLine(s: Record<SchedulerKind, SchedulerSettings>): string {
  const keys = [
    'qps',
    'burst',
    'parallelism',
    'percentageOfNodesToScore',
    'podInitialBackoffSeconds',
    'podMaxBackoffSeconds',
  ] as const;
  const same = keys.filter((k) => JSON.stringify(s.sandbox[k]) === JSON.stringify(s.default[k]));
  const differ = keys.filter((k) => !same.includes(k));
  return (
    `kube-scheduler settings (/configz): ${keys.map((k) => `${k} ${JSON.stringify(s.sandbox[k])}${differ.includes(k) ? ` vs ${JSON.stringify(s.default[k])}` : ''}`).join(', ')}` +
    (differ.length ? ` — DIFFER: ${differ.join(', ')}` : ' — the same in both') +
    `; sandbox-scheduler: profile ${JSON.stringify(s.sandbox.profiles)}, score plugins off, ${s.sandbox.extenders} extender; default-scheduler: profile ${JSON.stringify(s.default.profiles)}, stock plugins, ${s.default.extenders} extenders`
  );
}

/** What the report keeps of one node count. */
export interface ScaleRecord {
  nodes: number;
  results: RunResult[];
  settings: Record<SchedulerKind, SchedulerSettings>;
  untaint: { removed: number; waitedMs: number };
  clusterUpSeconds: number | null;
  profile: { files: string[]; threads: ProfileResult['threads'] } | null;
}

/** The production-like label of a --pin run (older result files have no `pin`). */
function pinned(opts: Options): string {
  return opts.pin
    ? `; PRODUCTION-LIKE (--pin): the extender on CPU ${CPU_EXTENDER}, everything else on CPU ${CPU_CONTROL_PLANE}`
    : '';
}

function printScale(scale: ScaleRecord, opts: Options, machine: Report['machine'], say: (s: string) => void): void {
  say('');
  say(
    `== ${scale.results[0]?.nodes ?? scale.nodes} nodes of ${opts.nodeShape}, ${opts.pods} pods of ${opts.podCpu} / ${opts.podMemory}, ${opts.runs} runs per scheduler and mode, interleaved (sandbox, default, …)${pinned(opts)}`,
  );
  say(
    `machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}; extender config: ${opts.extenderConfig ?? 'defaults'}; bind: ${opts.bind ? 'the extender (bindVerb)' : 'kube-scheduler'}; creates ${opts.concurrency} in flight on keep-alive connections`,
  );
  say(settingsLine(scale.settings));
  say(
    `nodes untainted before the first run: ${scale.untaint.removed} not-ready taints removed, ${(scale.untaint.waitedMs / 1000).toFixed(1)} s${scale.clusterUpSeconds ? `; cluster up in ${scale.clusterUpSeconds.toFixed(0)} s` : ''}`,
  );
  say('');
  say(runRows(scale.results));
  say('');
  say(
    "Breakdown (kube-scheduler histograms and the extender's, deltas over each run; CPU in cores over the binding window, 1.00 = one core busy):",
  );
  say(breakdownRows(scale.results, opts.modes));
  const ev = scale.results.find((r) => r.scheduler === 'sandbox')?.extender.eventLoop.source;
  if (ev) say(`extender event-loop delay from: ${ev}`);
  const profiled = scale.results.find((r) => r.profiled);
  if (scale.profile && profiled) {
    for (const t of scale.profile.threads) {
      const w = t.window;
      say('');
      say(
        `Extender CPU profile, ${t.thread} thread, of the profiled ${profiled.mode} run (${t.file}): inside its binding window ${w.totalMs.toFixed(0)} ms sampled, ${w.busyMs.toFixed(0)} ms busy (${((w.busyMs / Math.max(1, w.totalMs)) * 100).toFixed(0)} %), GC ${w.gcMs.toFixed(0)} ms; top 25 by self time:`,
      );
      say(profileRows(w));
    }
  }
}

const spreadText = (x: Spread, digits: number) =>
  x.median === null ? '-' : `${fmt(x.median, digits)} [${fmt(x.min, digits)}–${fmt(x.max, digits)}]`;

/** The figures of the published tables `readme` (the chart's profile) and `pinned` (--pin): sandbox, floor, stock. */
function publishedTable(all: readonly RunResult[], quiet: readonly RunResult[], opts: Options): Table {
  const floors = all.filter((r) => r.variant === 'floor extender');
  const of = (mode: Mode, get: (r: RunResult) => number | null | undefined) => {
    const x = med(
      quiet.filter((r) => r.mode === mode && r.scheduler === 'sandbox'),
      get,
    );
    const f = med(
      floors.filter((r) => r.mode === mode),
      get,
    );
    const d = med(
      quiet.filter((r) => r.mode === mode && r.scheduler === 'default'),
      get,
    );
    return { x, f, d };
  };
  const two = (v: number | null) => (v === null ? null : Number(v.toFixed(2)));
  const rows: Table['rows'] = [];
  for (const mode of opts.modes) {
    const { x, f, d } = of(mode, (r) => r.podsPerSecond);
    rows.push(
      opts.pin
        ? [`${mode} pods/s`, x, f, d, two(ratio(x, d)), two(ratio(f, d)), two(ratio(x, f))]
        : [`${mode} pods/s`, x, f, d, two(ratio(x, d))],
    );
  }
  if (opts.modes.includes('burst')) {
    const { x, d } = of('burst', (r) => r.createToBound?.p99Ms);
    const row = ['burst create→bound p99 ms', x === null ? null : fmt(x, 0), null, d === null ? null : fmt(d, 0)];
    rows.push(opts.pin ? [...row, two(ratio(x, d)), null, null] : [...row, two(ratio(x, d))]);
  }
  if (!opts.pin) {
    for (const mode of opts.modes) {
      const { x, f } = of(mode, (r) => r.cpuPerThousand?.lifecycle['sandbox-extender']);
      rows.push([
        `extender CPU-s / 1,000 pods, ${mode}`,
        x === null ? null : fmt(x, 2),
        f === null ? null : fmt(f, 2),
        null,
        null,
      ]);
    }
  }
  const nodes = (all[0]?.nodes ?? 0).toLocaleString('en-US');
  const one = (name: string) => ({ name, decimals: 1 });
  const two_ = (name: string) => ({ name, decimals: 2 });
  return opts.pin
    ? {
        id: 'pinned',
        title: `Production-like: the extender (or the floor) alone on one core, everything else on the other; ${nodes} nodes`,
        columns: [
          'figure',
          one('sandbox'),
          one('floor'),
          one('stock'),
          two_('sandbox/stock'),
          two_('floor/stock'),
          two_('sandbox/floor'),
        ],
        rows,
      }
    : {
        id: 'readme',
        title: `${nodes} nodes: medians of the quiet runs`,
        columns: ['figure', one('sandbox'), one('floor (do-nothing extender)'), one('stock'), two_('sandbox/stock')],
        rows,
      };
}

/**
 * The figures of one node count as tables: `summary` (median of the quiet runs with their spread (min–max) and the
 * ratio of the medians; the runs left out and each scheduler's warm-up, its first run against the later ones, as
 * notes), and `readme` (with --pin `pinned`): sandbox, the floor (--floor) and stock side by side, in the columns of
 * bench/results/cluster.json.
 */
export function pooledTables(records: readonly ScaleRecord[], opts: Options): Table[] {
  const all = records.flatMap((r) => r.results);
  const quiet = all.filter(counted);
  const notes = all
    .filter((r) => !r.profiled && !r.variant && !counted(r))
    .map((r) => `left out: ${r.mode} run ${r.run} ${r.scheduler}: ${(r.disturbed ?? []).join('; ')}`);
  const rows = [['mode', 'figure', ...schedulerColumns(records[0]?.settings), 'sandbox/stock']];
  const nodes = all[0]?.nodes ?? 0;
  for (const mode of opts.modes) {
    const line = (label: string, f: (r: RunResult) => number | null | undefined, digits: number) => {
      const pick = (scheduler: SchedulerKind) =>
        spreadOf(quiet.filter((r) => r.mode === mode && r.scheduler === scheduler).map(f));
      const a = pick('sandbox');
      const b = pick('default');
      rows.push([mode, label, spreadText(a, digits), spreadText(b, digits), fmt(ratio(a.median, b.median), 2)]);
    };
    line('pods/s over the binding window', (r) => r.podsPerSecond, 1);
    line('SLI p50 ms (kube-scheduler)', (r) => r.sli.p50Ms, 0);
    line('SLI p99 ms (kube-scheduler)', (r) => r.sli.p99Ms, 0);
    if (mode === 'burst') {
      line('create→bound p50 ms (client)', (r) => r.createToBound?.p50Ms, 0);
      line('create→bound p99 ms (client)', (r) => r.createToBound?.p99Ms, 0);
    }
    line('scheduling_algorithm mean ms', (r) => r.algorithm.meanMs, 2);
    line('extender CPU-s per 1,000 pods', (r) => r.cpuPerThousand?.lifecycle['sandbox-extender'], 3);
    line('  the same, binding window only', (r) => r.cpuPerThousand?.binding['sandbox-extender'], 3);
    line('  of which its main thread', (r) => r.cpuPerThousand?.lifecycle[EXTENDER_MAIN], 3);
    line(
      'its kube-scheduler CPU-s per 1,000 pods',
      (r) =>
        r.cpuPerThousand?.lifecycle[r.scheduler === 'sandbox' ? 'kube-scheduler-sandbox' : 'kube-scheduler-default'],
      3,
    );
    line('kube-apiserver CPU-s per 1,000 pods', (r) => r.cpuPerThousand?.lifecycle['kube-apiserver'], 3);
    line('other processes, cores', (r) => r.otherCores, 3);
  }
  // Warm-up: each scheduler's first run of a mode (the first load after its start) against its later ones.
  for (const scheduler of ['sandbox', 'default'] as const) {
    const warm = opts.modes.flatMap((mode) => {
      const runs = all
        .filter((r) => r.mode === mode && r.scheduler === scheduler && !r.profiled && !r.variant)
        .sort((a, b) => a.run - b.run);
      const first = firstRunRatio(runs.map((r) => r.podsPerSecond));
      return first === null ? [] : [`${mode} ${fmt(first, 2)}`];
    });
    if (warm.length)
      notes.push(
        `warm-up of ${scheduler === 'sandbox' ? 'sandbox-scheduler' : 'default-scheduler'} (its first run's pods/s ÷ median of its later runs): ${warm.join('; ')}`,
      );
  }
  const tables: Table[] = [
    tableOf(
      'summary',
      `${nodes} nodes, ${quiet.length} quiet runs; median [min–max] of the runs and the ratio of the medians${pinned(opts)}`,
      rows,
      notes.length > 0 ? notes : undefined,
    ),
  ];
  tables.push(publishedTable(all, quiet, opts));
  return tables;
}

/** Prints the pooled tables of one node count. */
function printPooled(records: readonly ScaleRecord[], opts: Options, say: (s: string) => void): void {
  for (const t of pooledTables(records, opts)) {
    say('');
    say(textTable(t));
  }
}

/** The report's tables: each node count's pooled tables, their ids suffixed by the node count when there are several. */
function reportTables(scales: readonly ScaleRecord[], opts: Options): Table[] {
  const counts = [...new Set(scales.map((s) => s.nodes))];
  return counts.flatMap((n) =>
    pooledTables(
      scales.filter((s) => s.nodes === n),
      opts,
    ).map((t) => (counts.length > 1 ? { ...t, id: `${t.id}-${n}` } : t)),
  );
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const say = (s: string) => process.stdout.write(`${s}\n`);
  const outDir = join(REPO_ROOT, '.e2e-bench');
  mkdirSync(outDir, { recursive: true });
  const report = startReport('cluster', opts);
  const outFile = opts.out ? resolve(opts.out) : defaultReportPath(report, REPO_ROOT);
  const machine = report.machine;
  if (opts.pin) {
    if (machine.cpus < 2) throw new Error('--pin needs two CPUs: one for the extender, one for everything else');
    pinExtender(); // before cluster-up: every component it starts inherits CPU 0
  }
  const scales: ScaleRecord[] = [];
  const save = () => {
    report.runs = scales;
    report.tables = reportTables(scales, opts);
    writeReport(report, outFile, () => undefined);
  };
  for (const nodeCount of opts.nodes) {
    const scale = await benchScale(opts, nodeCount, outDir);
    const record: ScaleRecord = {
      nodes: nodeCount,
      ...scale,
      profile: scale.profile && { files: scale.profile.files, threads: scale.profile.threads },
    };
    flagStockOutliers(record.results, opts.maxStockDeviation);
    scales.push(record);
    save();
    printScale(record, opts, machine, say);
    printPooled([record], opts, say);
  }
  say('');
  say(`report: ${outFile} (print its tables again: npm run bench -- --print FILE)`);
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:cluster'));
