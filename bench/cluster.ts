/**
 * `npm run bench:cluster`: burst throughput of sandbox-scheduler (kube-scheduler + the extender) against the
 * stock default-scheduler, in one real control plane (test/e2e/cluster-up.sh: etcd, kube-apiserver,
 * kube-controller-manager, KWOK nodes, the extender in cluster mode with bind on, both kube-schedulers).
 *
 * Per node count: bring the cluster up, make sure no node still carries node.kubernetes.io/not-ready or
 * .../unreachable (removing the taint from nodes KWOK already reports Ready), then place M identical pods
 * through each scheduler, interleaved (sandbox, default, sandbox, default, …), in two modes:
 *   drain  the scheduler under test is stopped (test/e2e/component.sh stop), the pods are created, then it starts;
 *   burst  the pods are created while it runs (parallel creates on keep-alive connections).
 * Between runs the pods are deleted and the bench waits until they are gone and the extender has settled.
 *
 * Per run it measures pods/s over the binding window (first to last bind seen by a watch, client-side ms),
 * creation → bound p50/p99 (burst), kube-scheduler's own pod_scheduling_sli_duration_seconds p50/p99,
 * scheduling_algorithm_duration_seconds and framework_extension_point_duration_seconds (deltas of their
 * histograms over the run), the extender's per-verb latency and event-loop delay, the CPU share of every
 * component (/proc/PID/stat), and checks the placement (nothing over allocatable; peak pressure within one
 * pod of the optimum). `--profile` adds one sandbox run with the extender under `node --cpu-prof` and prints
 * the functions with the most self time inside that run's binding window.
 *
 * Prints one table per node count with the ratios sandbox/stock, and writes a JSON file (.e2e-bench/).
 * Never part of CI. Run with `npm run bench:cluster -- --help` for the options.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { CoreV1Api, V1Node, V1Pod, Watch } from '@kubernetes/client-node';
import { Command } from 'commander';
import type { Node, Pod } from '../src/core/kube.js';
import { adminClients, ensureNamespace, inParallel, log, positiveInt, notReadyTainted, readClusterEnv, REPO_ROOT, script, sleep, STATE_DIR, untaintNodes, type AdminClients, type ClusterEnv } from './e2eCluster.js';
import {
  cpuShares,
  fmt,
  formatColumns,
  hasMetric,
  histogram,
  histogramDelta,
  histogramMean,
  histogramQuantile,
  histogramsBy,
  median,
  parsePrometheusText,
  percentile,
  placementSoundness,
  podsPerSecond,
  ratio,
  selfTimeTable,
  sumBy,
  sumSamples,
  ticksOfStat,
  type CpuProfile,
  type CpuSample,
  type Histogram,
  type ProcTicks,
  type Sample,
  type SelfTimeTable,
  type Soundness,
} from './clusterStats.js';

const NAMESPACE = 'bench';
/** Components whose CPU is sampled (pid files of cluster-up.sh), plus the bench itself and the whole machine. */
const COMPONENTS = ['sandbox-extender', 'kube-scheduler-sandbox', 'kube-scheduler-default', 'kube-apiserver', 'etcd', 'kwok', 'kube-controller-manager'] as const;
const MACHINE = '(machine)';
const BENCH = 'bench';

type Mode = 'drain' | 'burst';
type SchedulerKind = 'sandbox' | 'default';

interface Options {
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
  print?: string | undefined;
}

/** Monotonic milliseconds (CLOCK_MONOTONIC, the clock of V8's CPU profiles in µs). */
const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;

// ------------------------------------------------------------------------------------------ cluster scripts



// ------------------------------------------------------------------------------------------ API access

/** The admin client of the e2e cluster (bench/e2eCluster.ts adminClients: one keep-alive agent), with paged lists. */
class Kube {
  readonly api: CoreV1Api;
  readonly watch: Watch;
  readonly agent: https.Agent;
  /** The admin client certificate, for the schedulers' /metrics and /configz. */
  readonly clientCert: { cert: Buffer; key: Buffer };

  private constructor(clients: AdminClients) {
    this.api = clients.core;
    this.watch = clients.watch;
    this.agent = clients.agent;
    this.clientCert = clients.clientCert;
  }

  static async connect(kubeconfig: string, concurrency: number): Promise<Kube> {
    return new Kube(await adminClients(kubeconfig, concurrency));
  }

  async listAll<T>(page: (cont: string | undefined) => Promise<{ items: T[]; metadata?: { _continue?: string; resourceVersion?: string } }>): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const p = await page(cont);
      items.push(...p.items);
      cont = p.metadata?._continue || undefined;
      resourceVersion = p.metadata?.resourceVersion ?? resourceVersion;
    } while (cont);
    return { items, resourceVersion };
  }

  nodes(): Promise<V1Node[]> {
    return this.listAll((c) => this.api.listNode({ limit: 1000, _continue: c })).then((l) => l.items);
  }

  pods(): Promise<V1Pod[]> {
    return this.listAll((c) => this.api.listPodForAllNamespaces({ limit: 1000, _continue: c })).then((l) => l.items);
  }
}

/** GET over TLS with the admin client certificate (the schedulers serve a self-signed certificate). */
function httpsGet(url: string, cert: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((ok, bad) => {
    const req = https.get(url, { ...cert, rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? ok(body) : bad(new Error(`GET ${url}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', bad);
  });
}

async function getText(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** Samples of one /metrics endpoint; [] when it does not answer (a stopped scheduler). */
async function scrape(url: string, kube: Kube): Promise<Sample[]> {
  try {
    return parsePrometheusText(url.startsWith('https:') ? await httpsGet(`${url}/metrics`, kube.clientCert) : await getText(`${url}/metrics`));
  } catch {
    return [];
  }
}

interface Scrapes {
  extender: Sample[];
  sandbox: Sample[];
  default: Sample[];
}

async function scrapeAll(env: ClusterEnv, kube: Kube): Promise<Scrapes> {
  const [extender, sandbox, stock] = await Promise.all([scrape(env.EXTENDER_URL!, kube), scrape(env.SANDBOX_SCHEDULER_URL!, kube), scrape(env.DEFAULT_SCHEDULER_URL!, kube)]);
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
  const configz = JSON.parse(await httpsGet(`${url}/configz`, kube.clientCert)) as { componentconfig?: Record<string, unknown> };
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
  readonly gone = new Set<string>();
  /** Times the API server closed the watch and it was reopened from the last resourceVersion (a slow reader). */
  reopens = 0;
  private controller: AbortController | undefined;
  private stopped = false;
  private resourceVersion = '';

  constructor(
    private readonly kube: Kube,
    private readonly runLabel: string,
  ) {}

  async start(): Promise<void> {
    const list = await this.kube.listAll((c) => this.kube.api.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `bench-run=${this.runLabel}`, limit: 1000, _continue: c }));
    for (const p of list.items) this.observe('ADDED', p);
    this.resourceVersion = list.resourceVersion;
    await this.open();
  }

  private async open(): Promise<void> {
    this.controller = await this.kube.watch.watch(
      `/api/v1/namespaces/${NAMESPACE}/pods`,
      { labelSelector: `bench-run=${this.runLabel}`, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 3600 },
      (type, obj: V1Pod) => this.observe(type, obj),
      (err: unknown) => {
        if (this.stopped) return;
        this.reopens++;
        log(`pod watch ended (${err instanceof Error ? err.message : String(err ?? 'closed')}); reopening from resourceVersion ${this.resourceVersion}`);
        void this.open().catch((e: Error) => log(`cannot reopen the pod watch: ${e.message}`));
      },
    );
  }

  private observe(type: string, pod: V1Pod): void {
    const t = nowMs();
    if (pod.metadata?.resourceVersion) this.resourceVersion = pod.metadata.resourceVersion;
    if (type === 'BOOKMARK') return;
    if (type === 'ERROR') {
      log(`pod watch: ERROR event ${JSON.stringify(pod).slice(0, 300)}`);
      return;
    }
    const name = pod.metadata?.name;
    if (!name) return;
    if (type === 'DELETED') {
      this.gone.add(name);
      return;
    }
    this.seen.add(name);
    if (pod.spec?.nodeName && !this.boundAtMs.has(name)) this.boundAtMs.set(name, t);
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }
}

async function waitUntil(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>, everyMs = 20): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await check())) {
    if (nowMs() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}`);
    await sleep(everyMs);
  }
}

function podManifest(name: string, runLabel: string, schedulerName: string, cpu: string, memory: string): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { 'bench-run': runLabel } },
    spec: {
      schedulerName,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'sandbox', image: 'example.invalid/none', resources: { requests: { cpu, memory }, limits: { cpu, memory } } }],
    },
  };
}

interface Creation {
  readonly ackMs: Map<string, number>;
  readonly startMs: number;
  readonly endMs: number;
  readonly retries: number;
}

/** Creates the pods, `concurrency` in flight; a 429/5xx answer is retried after 100 ms. */
async function createPods(kube: Kube, pods: readonly V1Pod[], concurrency: number): Promise<Creation> {
  const ackMs = new Map<string, number>();
  let retries = 0;
  const startMs = nowMs();
  await inParallel(pods, concurrency, async (body) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await kube.api.createNamespacedPod({ namespace: NAMESPACE, body });
        ackMs.set(body.metadata!.name!, nowMs());
        return;
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (attempt < 20 && (code === 429 || (code !== undefined && code >= 500))) {
          retries++;
          await sleep(100);
          continue;
        }
        throw err;
      }
    }
  });
  return { ackMs, startMs, endMs: nowMs(), retries };
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
  await waitUntil('the extender to settle (no reservation pending, its model in step, its Events sent)', timeoutMs, async () => {
    const m = await scrape(env.EXTENDER_URL!, kube);
    const decisions = sumSamples(m, 'sandbox_extender_placements_total', { result: 'placed' }) + sumSamples(m, 'sandbox_extender_placements_total', { result: 'no_fit' });
    const events = sumSamples(m, 'sandbox_extender_events_total');
    if (events !== lastEvents) {
      lastEvents = events;
      eventsStillSince = nowMs();
    }
    const eventsDone = events >= decisions || nowMs() - eventsStillSince > 5000;
    return sumSamples(m, 'sandbox_extender_reservations_pending') === 0 && sumSamples(m, 'sandbox_extender_snapshot_objects', { kind: 'pod' }) === clusterPods && eventsDone;
  }, 500);
  return nowMs() - start;
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
        procs[name] = { pid, ticks: ticksOfStat(readFileSync(`/proc/${pid}/stat`, 'utf8')) };
      } catch {
        // not running (a stopped scheduler)
      }
    };
    for (const c of COMPONENTS) {
      try {
        const pid = Number(readFileSync(join(STATE_DIR, 'pids', c), 'utf8').split(' ')[0]);
        if (pid > 0) read(c, pid);
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

function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

// ------------------------------------------------------------------------------------------ one run

interface VerbStats {
  count: number;
  meanMs: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
}

interface RunResult {
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
    eventLoop: { source: string; meanMs: number | null; p50Ms: number | null; p99Ms: number | null; maxMs: number | null };
    binds: Record<string, number>;
    errors: number;
  };
  cpu: { windowMs: number; cores: Record<string, number> };
  benchEventLoopP99Ms: number;
  taintedNodesAtStart: number;
  watchReopens: number;
  soundness: Soundness;
  settleSeconds: number;
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
function deltasBy(after: Sample[], before: Sample[], name: string, label: string, match: Record<string, string> = {}): Map<string, Histogram> {
  const b = histogramsBy(before, name, label, match);
  return new Map([...histogramsBy(after, name, label, match)].map(([k, h]) => [k, histogramDelta(h, b.get(k))]));
}

function counterDeltas(after: Sample[], before: Sample[], name: string, label: string, match: Record<string, string> = {}): Record<string, number> {
  const b = sumBy(before, name, label, match);
  const out: Record<string, number> = {};
  for (const [k, v] of sumBy(after, name, label, match)) {
    const prior = b.get(k) ?? 0;
    const d = v >= prior ? v - prior : v;
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** The extender's event-loop delay over the run: its histogram if it exports one, else prom-client's gauges. */
function eventLoop(after: Sample[], before: Sample[]): RunResult['extender']['eventLoop'] {
  const name = 'sandbox_extender_event_loop_delay_seconds';
  if (hasMetric(after, `${name}_count`)) {
    const h = histogramDelta(histogram(after, name), histogram(before, name));
    const s = verbStats(h);
    const maxBucket = [...h.buckets].reverse().find((b, i, arr) => b.count > (arr[i + 1]?.count ?? 0));
    return { source: `${name} (histogram delta)`, meanMs: s.meanMs, p50Ms: s.p50Ms, p99Ms: s.p99Ms, maxMs: maxBucket ? maxBucket.le * 1000 : null };
  }
  // prom-client's monitorEventLoopDelay gauges are reset at every scrape: the scrape at the end of the run
  // reports the distribution since the scrape at its start (the bench is the only scraper of the extender).
  const g = (suffix: string) => (hasMetric(after, `sandbox_extender_nodejs_eventloop_lag_${suffix}_seconds`) ? sumSamples(after, `sandbox_extender_nodejs_eventloop_lag_${suffix}_seconds`) * 1000 : null);
  return { source: 'prom-client nodejs_eventloop_lag_* gauges (monitorEventLoopDelay since the previous scrape, 10 ms resolution)', meanMs: g('mean'), p50Ms: g('p50'), p99Ms: g('p99'), maxMs: g('max') };
}

async function runOnce(ctx: Context, mode: Mode, scheduler: SchedulerKind, run: number, profiled = false): Promise<RunResult> {
  const { opts, env, kube } = ctx;
  const schedulerName = scheduler === 'sandbox' ? env.SANDBOX_SCHEDULER_NAME! : 'default-scheduler';
  const component = scheduler === 'sandbox' ? 'kube-scheduler-sandbox' : 'kube-scheduler-default';
  const runLabel = `${mode}-${scheduler}-${run}${profiled ? '-prof' : ''}-${Date.now().toString(36)}`;
  log(`run ${run}: ${mode}, ${schedulerName}${profiled ? ' (extender profiled)' : ''}: ${opts.pods} pods`);

  const tainted = (await kube.nodes()).filter(notReadyTainted).length;
  if (tainted > 0) await untaintNodes(kube.api);

  const tracker = new PodTracker(kube, runLabel);
  await tracker.start();
  const width = String(opts.pods - 1).length;
  const manifests = Array.from({ length: opts.pods }, (_, i) => podManifest(`${runLabel}-${String(i).padStart(width, '0')}`, runLabel, schedulerName, opts.podCpu, opts.podMemory));
  const names = manifests.map((m) => m.metadata!.name!);

  const benchLoop = monitorEventLoopDelay({ resolution: 5 });
  let before: Scrapes;
  let creation: Creation;
  let startCommandMs: number | null = null;
  const allBound = () => tracker.boundAtMs.size >= opts.pods;
  const boundTimeout = opts.runTimeout * 1000;
  if (mode === 'drain') {
    await script('component.sh', ['stop', component]);
    try {
      creation = await createPods(kube, manifests, opts.concurrency);
      await waitUntil(`the watch to see all ${opts.pods} pods`, 60_000, () => names.every((n) => tracker.seen.has(n)));
      if (tracker.boundAtMs.size > 0) throw new Error(`${tracker.boundAtMs.size} pods were bound while ${component} was stopped`);
    } catch (err) {
      await script('component.sh', ['start', component]).catch(() => undefined); // leave a reused cluster whole
      throw err;
    }
    before = await scrapeAll(env, kube);
    benchLoop.enable();
    startCommandMs = nowMs();
    await Promise.all([script('component.sh', ['start', component]), waitUntil(`all ${opts.pods} pods bound`, boundTimeout, allBound)]);
  } else {
    before = await scrapeAll(env, kube);
    benchLoop.enable();
    creation = await createPods(kube, manifests, opts.concurrency);
    await waitUntil(`all ${opts.pods} pods bound`, boundTimeout, allBound);
  }
  const after = await scrapeAll(env, kube);
  ctx.sampler.sample();
  benchLoop.disable();
  const endMs = nowMs();

  // ---- figures
  const binds = [...tracker.boundAtMs.values()];
  const firstBind = Math.min(...binds);
  const lastBind = Math.max(...binds);
  const latencies = mode === 'burst' ? names.map((n) => tracker.boundAtMs.get(n)! - creation.ackMs.get(n)!) : [];
  const sAfter = after[scheduler];
  const sBefore = mode === 'drain' ? [] : before[scheduler]; // a drained scheduler is a new process: its counters start at 0
  const sli = histogramDelta(histogram(sAfter, 'scheduler_pod_scheduling_sli_duration_seconds'), histogram(sBefore, 'scheduler_pod_scheduling_sli_duration_seconds'));
  const algorithm = histogramDelta(histogram(sAfter, 'scheduler_scheduling_algorithm_duration_seconds'), histogram(sBefore, 'scheduler_scheduling_algorithm_duration_seconds'));
  const attempt = histogramDelta(histogram(sAfter, 'scheduler_scheduling_attempt_duration_seconds', { profile: schedulerName }), histogram(sBefore, 'scheduler_scheduling_attempt_duration_seconds', { profile: schedulerName }));
  const points = deltasBy(sAfter, sBefore, 'scheduler_framework_extension_point_duration_seconds', 'extension_point', { profile: schedulerName });
  const verbs = deltasBy(after.extender, before.extender, 'sandbox_extender_http_request_duration_seconds', 'verb');
  const schedulerCounters: Record<string, number> = {};
  for (const name of ['scheduler_batch_attempts_total', 'scheduler_pod_scheduled_after_flush_total', 'scheduler_preemption_attempts_total']) {
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

  // ---- soundness, then clean up
  const [nodes, pods] = await Promise.all([kube.nodes(), kube.pods()]);
  const soundness = placementSoundness(nodes as unknown as Node[], pods as unknown as Pod[]);
  await kube.api.deleteCollectionNamespacedPod({ namespace: NAMESPACE, labelSelector: `bench-run=${runLabel}`, gracePeriodSeconds: 0 });
  await waitUntil(`the ${opts.pods} pods to be gone`, 180_000, () => names.every((n) => tracker.gone.has(n)), 100);
  tracker.stop();
  const settleMs = await waitExtenderSettled(env, kube, opts.settleTimeout * 1000);

  const result: RunResult = {
    nodes: ctx.nodeCount,
    mode,
    scheduler,
    run,
    profiled,
    pods: opts.pods,
    boundPods: binds.length,
    creation: { seconds: (creation.endMs - creation.startMs) / 1000, podsPerSecond: (opts.pods * 1000) / (creation.endMs - creation.startMs), retries: creation.retries, concurrency: opts.concurrency },
    bindWindowSeconds: (lastBind - firstBind) / 1000,
    bindWindowMs: { from: firstBind, to: lastBind },
    podsPerSecond: podsPerSecond(binds),
    createToBound: mode === 'burst' ? { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), maxMs: Math.max(...latencies) } : null,
    startToFirstBindMs: startCommandMs === null ? null : firstBind - startCommandMs,
    sli: { count: sli.count, p50Ms: q(0.5, sli), p99Ms: q(0.99, sli) },
    algorithm: { count: algorithm.count, meanMs: ms(algorithm), p99Ms: q(0.99, algorithm) },
    attempt: { count: attempt.count, meanMs: ms(attempt) },
    scheduleAttempts: counterDeltas(sAfter, sBefore, 'scheduler_schedule_attempts_total', 'result', { profile: schedulerName }),
    extensionPoints: Object.fromEntries([...points].filter(([, h]) => h.count > 0).map(([k, h]) => [k, { count: h.count, meanMs: ms(h) }])),
    schedulerCounters,
    extender: {
      verbs: Object.fromEntries([...verbs].filter(([, h]) => h.count > 0).map(([k, h]) => [k, verbStats(h)])),
      eventLoop: eventLoop(after.extender, before.extender),
      binds: counterDeltas(after.extender, before.extender, 'sandbox_extender_binds_total', 'result'),
      errors: Object.entries(counterDeltas(after.extender, before.extender, 'sandbox_extender_http_requests_total', 'code')).reduce((a, [code, n]) => a + (code.startsWith('2') ? 0 : n), 0),
    },
    cpu: { windowMs: cpu.windowMs, cores: Object.fromEntries(cpu.cores) },
    benchEventLoopP99Ms: benchLoop.percentile(99) / 1e6,
    taintedNodesAtStart: tainted,
    watchReopens: tracker.reopens,
    soundness,
    settleSeconds: settleMs / 1000,
  };
  log(
    `  ${fmt(result.podsPerSecond)} pods/s over ${fmt(result.bindWindowSeconds, 2)} s; created at ${fmt(result.creation.podsPerSecond, 0)}/s` +
      (result.createToBound ? `; create→bound p50 ${fmt(result.createToBound.p50Ms, 0)} ms p99 ${fmt(result.createToBound.p99Ms, 0)} ms` : '') +
      `; SLI p99 ${fmt(result.sli.p99Ms, 0)} ms; over allocatable ${soundness.overAllocatable.length}; peak ${soundness.peakPressure.toFixed(4)} (optimum ${fmt(soundness.optimum, 4)}); ${Math.round(endMs - (startCommandMs ?? creation.startMs)) / 1000} s`,
  );
  return result;
}

// ------------------------------------------------------------------------------------------ profile

interface ProfileResult {
  file: string;
  run: RunResult;
  window: SelfTimeTable;
  whole: SelfTimeTable;
}

async function profiledRun(ctx: Context, mode: Mode, outDir: string): Promise<ProfileResult> {
  const dir = join(outDir, `profile-${ctx.nodeCount}-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  await script('component.sh', ['restart', 'sandbox-extender', '--node-flags', `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-name=sandbox-extender.cpuprofile`]);
  let run: RunResult;
  try {
    run = await runOnce(ctx, mode, 'sandbox', 1, true);
  } finally {
    await script('component.sh', ['restart', 'sandbox-extender']); // SIGTERM: the process exits and writes its profile
  }
  const file = join(dir, 'sandbox-extender.cpuprofile');
  await waitUntil(`the CPU profile ${file}`, 30_000, () => existsSync(file), 200);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  return { file, run, window: windowTable(profile, run), whole: selfTimeTable(profile, { top: 25, stripPrefix: REPO_ROOT }) };
}

/** Only the samples between the run's first and last bind (the profile's clock is the bench's monotonic clock). */
function windowTable(profile: CpuProfile, run: RunResult): SelfTimeTable {
  return selfTimeTable(profile, { top: 25, stripPrefix: REPO_ROOT, fromUs: run.bindWindowMs.from * 1000, toUs: run.bindWindowMs.to * 1000 });
}

// ------------------------------------------------------------------------------------------ output

function runRows(results: readonly RunResult[]): string {
  const rows = [['mode', 'run', 'scheduler', 'pods/s', 'window s', 'created/s', 'c→b p50 ms', 'c→b p99 ms', 'start→1st bind s', 'SLI p50 ms', 'SLI p99 ms', 'algo ms', 'attempts', 'over alloc', 'peak', 'optimum', '≤ opt+1 pod']];
  for (const r of results) {
    const attempts = Object.entries(r.scheduleAttempts).map(([k, v]) => (k === 'scheduled' ? String(v) : `${k} ${v}`)).join(', ');
    rows.push([
      r.mode,
      `${r.run}${r.profiled ? ' (profiled)' : ''}`,
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
    ]);
  }
  return formatColumns(rows);
}

const med = (rs: readonly RunResult[], f: (r: RunResult) => number | null | undefined) => median(rs.map(f).filter((v): v is number => typeof v === 'number' && Number.isFinite(v)));
const mean = (vs: readonly (number | null | undefined)[]) => {
  const xs = vs.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
};

/**
 * The targets of the throughput work, printed next to the ratios (never asserted anywhere): drain pods/s at
 * least 90 % of stock's at 1,000 nodes (70 % at 5,000), burst SLI p99 at most 2× stock's.
 */
function target(mode: Mode, figure: 'pods/s' | 'sli-p99', nodes: number): { text: string; met: (r: number) => boolean } | null {
  if (mode === 'drain' && figure === 'pods/s') {
    const min = nodes >= 5000 ? 0.7 : 0.9;
    return { text: `≥ ${min.toFixed(2)}`, met: (r) => r >= min };
  }
  if (mode === 'burst' && figure === 'sli-p99') return { text: '≤ 2.00', met: (r) => r <= 2 };
  return null;
}

function summaryRows(results: readonly RunResult[], modes: readonly Mode[]): string {
  const rows = [['mode', 'figure (median of runs)', 'sandbox-scheduler', 'default-scheduler', 'sandbox/stock', 'target']];
  const nodes = results[0]?.nodes ?? 0;
  for (const mode of modes) {
    const s = results.filter((r) => r.mode === mode && r.scheduler === 'sandbox' && !r.profiled);
    const d = results.filter((r) => r.mode === mode && r.scheduler === 'default');
    const line = (label: string, f: (r: RunResult) => number | null | undefined, digits: number, figure?: 'pods/s' | 'sli-p99') => {
      const a = med(s, f);
      const b = med(d, f);
      const r = ratio(a, b);
      const t = figure ? target(mode, figure, nodes) : null;
      rows.push([mode, label, fmt(a, digits), fmt(b, digits), fmt(r, 2), t ? `${t.text}${r === null ? '' : t.met(r) ? ' met' : ' not met'}` : '']);
    };
    line('pods/s over the binding window', (r) => r.podsPerSecond, 1, 'pods/s');
    line('SLI p50 ms (kube-scheduler)', (r) => r.sli.p50Ms, 0);
    line('SLI p99 ms (kube-scheduler)', (r) => r.sli.p99Ms, 0, 'sli-p99');
    if (mode === 'burst') {
      line('create→bound p50 ms (client)', (r) => r.createToBound?.p50Ms, 0);
      line('create→bound p99 ms (client)', (r) => r.createToBound?.p99Ms, 0);
    }
    line('scheduling_algorithm mean ms', (r) => r.algorithm.meanMs, 2);
  }
  return formatColumns(rows);
}

const POINT_ORDER = ['Sign', 'PreEnqueue', 'PreFilter', 'Filter', 'PostFilter', 'PreScore', 'Score', 'Reserve', 'Permit', 'PreBindPreFlight', 'PreBind', 'Bind', 'PostBind'];

function breakdownRows(results: readonly RunResult[], modes: readonly Mode[]): string {
  const groups = modes.flatMap((mode) => (['sandbox', 'default'] as const).map((scheduler) => ({ mode, scheduler, rs: results.filter((r) => r.mode === mode && r.scheduler === scheduler && !r.profiled) }))).filter((g) => g.rs.length);
  const header = ['mean over runs', ...groups.map((g) => `${g.mode} ${g.scheduler === 'sandbox' ? 'sandbox' : 'stock'}`)];
  const rows: string[][] = [header];
  const row = (label: string, f: (r: RunResult) => number | null | undefined, digits = 2) => rows.push([label, ...groups.map((g) => fmt(mean(g.rs.map(f)), digits))]);
  row('scheduling_algorithm ms', (r) => r.algorithm.meanMs);
  row('  1000 / that = pods/s of a serial scheduling cycle', (r) => (r.algorithm.meanMs ? 1000 / r.algorithm.meanMs : null), 1);
  row('scheduling_attempt ms (algorithm + binding)', (r) => r.attempt.meanMs);
  const points = new Set(results.flatMap((r) => Object.keys(r.extensionPoints)));
  for (const p of [...points].sort((a, b) => POINT_ORDER.indexOf(a) - POINT_ORDER.indexOf(b))) row(`  extension point ${p} ms`, (r) => r.extensionPoints[p]?.meanMs);
  row('  algorithm − (PreFilter+Filter+PreScore+Score) ms', (r) => {
    const a = r.algorithm.meanMs;
    if (a === null) return null;
    return a - ['PreFilter', 'Filter', 'PreScore', 'Score'].reduce((sum, p) => sum + (r.extensionPoints[p]?.meanMs ?? 0), 0);
  });
  for (const verb of ['filter', 'prioritize', 'bind']) {
    row(`extender ${verb} mean ms`, (r) => r.extender.verbs[verb]?.meanMs);
    row(`extender ${verb} p99 ms`, (r) => r.extender.verbs[verb]?.p99Ms);
    row(`extender ${verb} calls`, (r) => r.extender.verbs[verb]?.count, 0);
  }
  row('extender event-loop delay p50 ms', (r) => r.extender.eventLoop.p50Ms);
  row('extender event-loop delay p99 ms', (r) => r.extender.eventLoop.p99Ms);
  row('extender event-loop delay max ms', (r) => r.extender.eventLoop.maxMs);
  for (const c of [...COMPONENTS, BENCH, MACHINE]) row(`CPU ${c} (cores)`, (r) => r.cpu.cores[c], 2);
  row('CPU of other processes (machine − the above)', (r) => {
    const machine = r.cpu.cores[MACHINE];
    return machine === undefined ? null : machine - [...COMPONENTS, BENCH].reduce((sum, c) => sum + (r.cpu.cores[c] ?? 0), 0);
  });
  row('bench event-loop delay p99 ms (timestamp error)', (r) => r.benchEventLoopP99Ms);
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
    .description('Pods/s and latency of sandbox-scheduler vs the stock default-scheduler in one local control plane (test/e2e), interleaved runs.')
    .option('--nodes <counts>', 'KWOK node counts, one cluster each (e.g. 1000,5000)', '1000')
    .option('--node-shape <cpu/memory>', 'allocatable of every node', '32/128Gi')
    .option('--pods <n>', 'pods per run', positiveInt, 1000)
    .option('--pod-cpu <quantity>', 'cpu request = limit of each pod', '250m')
    .option('--pod-memory <quantity>', 'memory request = limit of each pod', '512Mi')
    .option('--runs <n>', 'runs per scheduler and mode', positiveInt, 2)
    .option('--modes <list>', 'drain (pods created with the scheduler stopped, then it starts), burst (created while it runs)', 'drain,burst')
    .option('--extender-config <file>', 'extender --config (default: $EXTENDER_CONFIG)')
    .option('--bind', 'the extender binds (bindVerb); by default kube-scheduler binds, as the chart installs it', false)
    .option('--profile', 'one more sandbox run (drain if measured) with the extender under node --cpu-prof; prints its top self time', false)
    .option('--concurrency <n>', 'pod creates in flight', positiveInt, 32)
    .option('--out <file>', 'JSON result file (default .e2e-bench/cluster-DATE.json)')
    .option('--reuse', 'use the cluster that is already up and leave it running (its node count)', false)
    .option('--run-timeout <seconds>', 'longest wait for a run’s pods to be bound', positiveInt, 900)
    .option('--settle-timeout <seconds>', 'longest wait for the extender to settle after a run', positiveInt, 300)
    .option('--print <file>', 'print the tables of an earlier result file (JSON) and exit; runs nothing')
    .parse(argv, { from: 'user' });
  const o = program.opts<{ nodes: string; nodeShape: string; pods: number; podCpu: string; podMemory: string; runs: number; modes: string; extenderConfig?: string; bind: boolean; profile: boolean; concurrency: number; out?: string; reuse: boolean; runTimeout: number; settleTimeout: number; print?: string }>();
  const nodes = o.nodes.split(',').map((s) => positiveInt(s.trim()));
  const modes = o.modes.split(',').map((s) => s.trim());
  for (const m of modes) if (m !== 'drain' && m !== 'burst') program.error(`--modes: "${m}" is neither drain nor burst`);
  if (!/^\d+\/[0-9.]+[A-Za-z]*$/.test(o.nodeShape)) program.error(`--node-shape: "${o.nodeShape}" is not CPUS/MEMORY, e.g. 32/128Gi`);
  const extenderConfig = o.extenderConfig ?? (process.env.EXTENDER_CONFIG || undefined);
  if (extenderConfig && !existsSync(extenderConfig)) program.error(`--extender-config: ${extenderConfig} not found`);
  return { ...o, nodes, modes: modes as Mode[], extenderConfig: extenderConfig ? resolve(extenderConfig) : undefined };
}

async function benchScale(opts: Options, nodeCount: number, outDir: string): Promise<{ results: RunResult[]; profile: ProfileResult | null; settings: Record<SchedulerKind, SchedulerSettings>; untaint: { removed: number; waitedMs: number }; clusterUpSeconds: number | null }> {
  let clusterUpSeconds: number | null = null;
  if (!opts.reuse) {
    const t = nowMs();
    log(`cluster up: ${nodeCount} nodes of ${opts.nodeShape}${opts.extenderConfig ? `, extender --config ${opts.extenderConfig}` : ''}`);
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: `${nodeCount}x${opts.nodeShape}`,
      EXTENDER_BUILD: '0',
      EXTENDER_MODE: 'cluster',
      EXTENDER_BIND: opts.bind ? '1' : '0',
      EXTENDER_CONFIG: opts.extenderConfig ?? '',
      E2E_START_TIMEOUT: String(Math.max(120, Math.ceil(nodeCount / 20))),
      AGENT_SANDBOX: '0', // no agent-sandbox-controller watching the pods: the figures stay those of the schedulers alone
    });
    clusterUpSeconds = (nowMs() - t) / 1000;
  }
  const sampler = new CpuSampler();
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL', 'SANDBOX_SCHEDULER_URL', 'DEFAULT_SCHEDULER_URL', 'SANDBOX_SCHEDULER_NAME']);
    const kube = await Kube.connect(env.KUBECONFIG!, opts.concurrency);
    const actualNodes = (await kube.nodes()).length;
    const untaint = await untaintNodes(kube.api);
    log(`no node carries a not-ready/unreachable taint (${untaint.removed} removed, ${Math.round(untaint.waitedMs / 100) / 10} s)`);
    const settings = { sandbox: await schedulerSettings(env.SANDBOX_SCHEDULER_URL!, kube), default: await schedulerSettings(env.DEFAULT_SCHEDULER_URL!, kube) };
    await ensureNamespace(kube.api, NAMESPACE);
    sampler.start();
    const ctx: Context = { opts, env, kube, sampler, clkTck: clockTicksPerSecond(), nodeCount: actualNodes };
    const results: RunResult[] = [];
    let profile: ProfileResult | null = null;
    const profileMode: Mode = opts.modes.includes('drain') ? 'drain' : opts.modes[0]!;
    for (const mode of opts.modes) {
      for (let run = 1; run <= opts.runs; run++) {
        for (const scheduler of ['sandbox', 'default'] as const) results.push(await runOnce(ctx, mode, scheduler, run));
      }
      if (opts.profile && mode === profileMode) {
        profile = await profiledRun(ctx, mode, outDir);
        results.push(profile.run);
      }
    }
    kube.agent.destroy();
    return { results, profile, settings, untaint, clusterUpSeconds };
  } finally {
    sampler.stop();
    if (!opts.reuse) await script('cluster-down.sh', ['--keep-logs']).catch((e: Error) => log(`cluster-down failed: ${e.message}`));
  }
}

function settingsLine(s: Record<SchedulerKind, SchedulerSettings>): string {
  const keys = ['qps', 'burst', 'parallelism', 'percentageOfNodesToScore', 'podInitialBackoffSeconds', 'podMaxBackoffSeconds'] as const;
  const same = keys.filter((k) => JSON.stringify(s.sandbox[k]) === JSON.stringify(s.default[k]));
  const differ = keys.filter((k) => !same.includes(k));
  return (
    `kube-scheduler settings (/configz): ${keys.map((k) => `${k} ${JSON.stringify(s.sandbox[k])}${differ.includes(k) ? ` vs ${JSON.stringify(s.default[k])}` : ''}`).join(', ')}` +
    (differ.length ? ` — DIFFER: ${differ.join(', ')}` : ' — the same in both') +
    `; sandbox-scheduler: profile ${JSON.stringify(s.sandbox.profiles)}, score plugins off, ${s.sandbox.extenders} extender; default-scheduler: profile ${JSON.stringify(s.default.profiles)}, stock plugins, ${s.default.extenders} extenders`
  );
}

interface Machine {
  cpus: number;
  cpuModel: string | undefined;
  node: string;
  loadavgAtStart: number[];
}

/** What the JSON file keeps of one node count, enough to print its tables again (--print). */
interface ScaleRecord {
  nodes: number;
  results: RunResult[];
  settings: Record<SchedulerKind, SchedulerSettings>;
  untaint: { removed: number; waitedMs: number };
  clusterUpSeconds: number | null;
  profile: { file: string; window: SelfTimeTable; whole: SelfTimeTable } | null;
}

function printScale(scale: ScaleRecord, opts: Options, machine: Machine, say: (s: string) => void): void {
  say('');
  say(`== ${scale.results[0]?.nodes ?? scale.nodes} nodes of ${opts.nodeShape}, ${opts.pods} pods of ${opts.podCpu} / ${opts.podMemory}, ${opts.runs} runs per scheduler and mode, interleaved (sandbox, default, …)`);
  say(`machine: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}; extender config: ${opts.extenderConfig ?? 'defaults'}; bind: ${opts.bind ? 'the extender (bindVerb)' : 'kube-scheduler'}; creates ${opts.concurrency} in flight on keep-alive connections`);
  say(settingsLine(scale.settings));
  say(`nodes untainted before the first run: ${scale.untaint.removed} not-ready taints removed, ${(scale.untaint.waitedMs / 1000).toFixed(1)} s${scale.clusterUpSeconds ? `; cluster up in ${scale.clusterUpSeconds.toFixed(0)} s` : ''}`);
  say('');
  say(runRows(scale.results));
  say('');
  say(summaryRows(scale.results, opts.modes));
  say('');
  say("Breakdown (kube-scheduler histograms and the extender's, deltas over each run; CPU in cores over the binding window, 1.00 = one core busy):");
  say(breakdownRows(scale.results, opts.modes));
  const ev = scale.results.find((r) => r.scheduler === 'sandbox')?.extender.eventLoop.source;
  if (ev) say(`extender event-loop delay from: ${ev}`);
  const profiled = scale.results.find((r) => r.profiled);
  if (scale.profile && profiled) {
    const w = scale.profile.window;
    say('');
    say(`Extender CPU profile of the profiled ${profiled.mode} run (${scale.profile.file}): inside its binding window ${w.totalMs.toFixed(0)} ms sampled, ${w.busyMs.toFixed(0)} ms busy (${((w.busyMs / Math.max(1, w.totalMs)) * 100).toFixed(0)} %), GC ${w.gcMs.toFixed(0)} ms; top 25 by self time:`);
    say(profileRows(w));
  }
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const say = (s: string) => process.stdout.write(`${s}\n`);
  if (opts.print) {
    const report = JSON.parse(readFileSync(opts.print, 'utf8')) as { options: Options; machine: Machine; scales: ScaleRecord[] };
    for (const scale of report.scales) printScale(scale, report.options, report.machine, say);
    return;
  }
  const outDir = join(REPO_ROOT, '.e2e-bench');
  mkdirSync(outDir, { recursive: true });
  const started = new Date();
  const outFile = opts.out ? resolve(opts.out) : join(outDir, `cluster-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  const machine: Machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, node: process.version, loadavgAtStart: loadavg() };
  const report = { started: started.toISOString(), options: opts, machine, scales: [] as ScaleRecord[] };
  for (const nodeCount of opts.nodes) {
    const scale = await benchScale(opts, nodeCount, outDir);
    const record: ScaleRecord = { nodes: nodeCount, ...scale, profile: scale.profile && { file: scale.profile.file, window: scale.profile.window, whole: scale.profile.whole } };
    report.scales.push(record);
    writeFileSync(outFile, JSON.stringify(report, null, 2));
    printScale(record, opts, machine, say);
  }
  say('');
  say(`results: ${outFile} (print them again: npm run bench:cluster -- --print FILE)`);
}

main().catch((err: Error) => {
  process.stderr.write(`bench:cluster: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
