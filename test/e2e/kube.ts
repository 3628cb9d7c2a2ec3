/**
 * Small helpers for the e2e tests: run the cluster scripts and kubectl (child_process, no client library),
 * read the extender's Prometheus counters, and wait for conditions.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { forbiddenLinesIn } from './forbidden.mjs';

export const REPO_ROOT = resolve(process.cwd());
export const E2E_DIR = join(REPO_ROOT, 'test', 'e2e');
export const STATE_DIR = process.env.SANDBOX_E2E_STATE ? resolve(process.env.SANDBOX_E2E_STATE) : join(REPO_ROOT, '.e2e');

if (!existsSync(join(E2E_DIR, 'cluster-up.sh'))) {
  throw new Error(`run the e2e tests from the repository root (no test/e2e/cluster-up.sh under ${REPO_ROOT})`);
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program; rejects with its exit code, stderr and stdout tail in the message. */
export function run(file: string, args: readonly string[], opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((ok, bad) => {
    const child = execFile(
      file,
      args,
      { cwd: REPO_ROOT, env: opts.env ?? process.env, maxBuffer: 512 * 1024 * 1024, timeout: opts.timeoutMs ?? 120_000, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const tail = (s: string) => s.split('\n').slice(-40).join('\n');
          bad(new Error(`${file} ${args.join(' ')} failed (${err.code ?? err.signal ?? err.message})\n--- stderr\n${tail(stderr)}\n--- stdout\n${tail(stdout)}`));
        } else ok({ stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** KEY=VALUE lines of .e2e/cluster.env, written by cluster-up.sh. */
export type ClusterEnv = Record<string, string>;

/** The KEY=VALUE lines of a text (an env file the e2e scripts write): key → value; other lines ignored. */
export function keyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

export function readClusterEnv(): ClusterEnv {
  const file = join(STATE_DIR, 'cluster.env');
  if (!existsSync(file)) throw new Error(`${file} not found: is the e2e cluster up? (npm run cluster:up)`);
  const env: ClusterEnv = keyValues(readFileSync(file, 'utf8'));
  for (const key of ['KUBECONFIG', 'KUBECTL', 'EXTENDER_URL']) {
    if (!env[key]) throw new Error(`${file} has no ${key}`);
  }
  return env;
}

export class Kubectl {
  constructor(private readonly env: ClusterEnv) {}

  async run(args: readonly string[], input?: string): Promise<string> {
    const { stdout } = await run(this.env.KUBECTL!, [`--kubeconfig=${this.env.KUBECONFIG}`, ...args], input === undefined ? {} : { input });
    return stdout;
  }

  async json<T>(args: readonly string[]): Promise<T> {
    return JSON.parse(await this.run([...args, '-o', 'json'])) as T;
  }

  async apply(objects: readonly object[]): Promise<void> {
    await this.run(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  }
}

/** Sums a Prometheus counter by one label, e.g. sandbox_extender_http_requests_total by verb. */
export function sumCounterBy(metricsText: string, metric: string, label: string): Map<string, number> {
  const sums = new Map<string, number>();
  const line = new RegExp(`^${metric}(?:\\{([^}]*)\\})?\\s+([^\\s]+)`);
  for (const l of metricsText.split('\n')) {
    const m = line.exec(l);
    if (!m) continue;
    const labels = m[1] ?? '';
    const lv = new RegExp(`(?:^|,)${label}="([^"]*)"`).exec(labels)?.[1] ?? '';
    sums.set(lv, (sums.get(lv) ?? 0) + Number(m[2]));
  }
  return sums;
}

export async function fetchText(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes; then throws `describe()`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, describe?: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = describe ? await describe().catch((e: Error) => `(could not describe: ${e.message})`) : '';
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}\n${detail}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** CPU quantity ("2", "500m", "1.5") in millicores. */
export function milliCpu(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000);
}

// ------------------------------------------------------------------------------------------ cluster lifecycle

/** E2E_REUSE_CLUSTER=1: use the cluster that is already up (npm run cluster:up, run-ci.sh) and leave it running. */
export const REUSE = process.env.E2E_REUSE_CLUSTER === '1';
/** Start-up may include a cold build of the control-plane tools. */
export const SETUP_TIMEOUT_MS = Number(process.env.E2E_SETUP_TIMEOUT_MS ?? 45 * 60_000);

/** Runs cluster-up.sh / cluster-down.sh on examples/cluster/heterogeneous.yaml; echoes only their summary lines. */
export async function clusterScript(name: 'cluster-up.sh' | 'cluster-down.sh', args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, CLUSTER: 'examples/cluster/heterogeneous.yaml', ...extraEnv };
  delete childEnv.CLUSTER_NODES;
  const { stderr } = await run('bash', [join(E2E_DIR, name), ...args], { env: childEnv, timeoutMs: SETUP_TIMEOUT_MS });
  process.stderr.write(stderr.split('\n').filter((l) => /cluster (up|stopped)|tools (up to date|built)/.test(l)).map((l) => `${l}\n`).join(''));
}

/** beforeAll of a test file: starts a cluster of its own unless E2E_REUSE_CLUSTER=1; returns its cluster.env. */
export async function setUpCluster(): Promise<ClusterEnv> {
  if (!REUSE) await clusterScript('cluster-up.sh');
  return readClusterEnv();
}

/** afterAll of a test file: stops the cluster it started (never a reused one). */
export async function tearDownCluster(): Promise<void> {
  if (!REUSE) await clusterScript('cluster-down.sh', ['--keep-logs']);
}

/**
 * test/e2e/component.sh ARGS (restart a component, bind on|off, ...); returns the pid it prints (0 for the
 * commands that print none: stop, kill, standby). Its progress lines go to stderr prefixed with "component.sh".
 */
export async function component(args: readonly string[]): Promise<number> {
  const { stdout, stderr } = await run('bash', [join(E2E_DIR, 'component.sh'), ...args], { timeoutMs: 180_000 });
  process.stderr.write(stderr.split('\n').filter((l) => l.trim()).map((l) => `component.sh ${args.join(' ')}: ${l}\n`).join(''));
  if (['stop', 'kill', 'standby'].includes(args[0] ?? '')) return 0;
  const pid = Number(stdout.trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`component.sh ${args.join(' ')} printed no pid: ${JSON.stringify(stdout)}`);
  return pid;
}

// ------------------------------------------------------------------------------------------ cluster objects

export interface PodView {
  metadata: { name: string; namespace: string; uid?: string; deletionTimestamp?: string };
  spec: { nodeName?: string; schedulerName?: string; containers: { resources?: { requests?: Record<string, string> } }[] };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}
export interface NodeView {
  metadata: { name: string };
  status: { allocatable: Record<string, string> };
}

/** The nodes of examples/cluster/heterogeneous.yaml (name -> CPUs), which the e2e tests are written for. */
export const HETEROGENEOUS_NODES: Readonly<Record<string, string>> = { 'cpu16-0': '16', 'cpu64-0': '64', 'cpu192-0': '192' };

/** The cluster's nodes; throws unless they are those of examples/cluster/heterogeneous.yaml. */
export async function heterogeneousNodes(kubectl: Kubectl): Promise<NodeView[]> {
  const nodes = (await kubectl.json<{ items: NodeView[] }>(['get', 'nodes'])).items;
  const shape = Object.fromEntries(nodes.map((n) => [n.metadata.name, n.status.allocatable.cpu]));
  if (JSON.stringify(Object.entries(shape).sort()) !== JSON.stringify(Object.entries(HETEROGENEOUS_NODES).sort())) {
    throw new Error(`these tests need the cluster of examples/cluster/heterogeneous.yaml (nodes ${JSON.stringify(HETEROGENEOUS_NODES)}), found ${JSON.stringify(shape)}`);
  }
  return nodes;
}

export interface PodSpecOptions {
  readonly namespace: string;
  readonly prefix: string;
  readonly count: number;
  readonly cpu: string;
  readonly memory: string;
  /** Omitted: default-scheduler. */
  readonly schedulerName?: string;
  readonly labels?: Record<string, string>;
}

/** `count` identical pods named PREFIX-000.. with requests = limits (never run: KWOK nodes run no containers). */
export function podManifests(o: PodSpecOptions): object[] {
  const width = String(o.count - 1).length < 2 ? 2 : String(o.count - 1).length;
  return Array.from({ length: o.count }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${o.prefix}-${String(i).padStart(width, '0')}`, namespace: o.namespace, labels: { ...(o.labels ?? {}) } },
    spec: {
      ...(o.schedulerName ? { schedulerName: o.schedulerName } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'sandbox',
          image: 'registry.invalid/e2e/sandbox:1',
          resources: { requests: { cpu: o.cpu, memory: o.memory }, limits: { cpu: o.cpu, memory: o.memory } },
        },
      ],
    },
  }));
}

export async function createNamespace(kubectl: Kubectl, name: string): Promise<void> {
  await kubectl.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }]);
  // ServiceAccount admission rejects pods until kube-controller-manager has created the default ServiceAccount.
  await waitFor(`ServiceAccount ${name}/default`, 60_000, async () => ((await kubectl.run(['-n', name, 'get', 'serviceaccount', 'default', '--ignore-not-found', '-o', 'name'])).trim() ? true : undefined));
}

/** Deletes the namespace and waits until it (and so every pod in it) is gone. */
export async function deleteNamespace(kubectl: Kubectl, name: string): Promise<void> {
  // KWOK's pod-delete stage finishes the deletion that a kubelet would; the namespace controller does the rest.
  await kubectl.run(['delete', 'namespace', name, '--ignore-not-found', '--wait=true', '--timeout=120s']);
}

export const isRunningReady = (p: PodView) => p.status.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export async function describePods(kubectl: Kubectl, namespace: string): Promise<string> {
  const [pods, events] = await Promise.all([
    kubectl.run(['-n', namespace, 'get', 'pods', '-o', 'wide']),
    kubectl.run(['-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp']),
  ]);
  return `pods:\n${pods.split('\n').slice(0, 40).join('\n')}\nevents:\n${events.split('\n').slice(-30).join('\n')}\nlogs: ${join(STATE_DIR, 'logs')}`;
}

/** Waits until `count` pods of the namespace are bound, Running and Ready; returns them. */
export async function waitAllRunningReady(kubectl: Kubectl, namespace: string, count: number, timeoutMs = 180_000): Promise<PodView[]> {
  return waitFor(`${count} pods in ${namespace} Running and Ready`, timeoutMs, async () => {
    const list = await kubectl.json<{ items: PodView[] }>(['-n', namespace, 'get', 'pods']);
    if (list.items.length !== count || !list.items.every((p) => p.spec.nodeName && isRunningReady(p))) return undefined;
    return list.items;
  }, () => describePods(kubectl, namespace));
}

/** Aligns columns of text (first row: headers). */
export function columns(rows: string[][]): string[] {
  const width = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(width[i]!)).join('  ').trimEnd());
}

// ------------------------------------------------------------------------------------------ quantities, pressure

/** Memory quantity ("4Gi", "512Mi", "1G", "1000") in bytes. */
export function bytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$/.exec(q);
  if (!m) throw new Error(`unsupported memory quantity ${q}`);
  const unit: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 };
  return Math.round(Number(m[1]) * unit[m[2] ?? '']!);
}

/** CPU (millicores) and memory (bytes) of one node. */
export interface Amounts {
  cpu: number;
  memory: number;
}

export function allocatableOf(node: NodeView): Amounts {
  return { cpu: milliCpu(node.status.allocatable.cpu ?? '0'), memory: bytes(node.status.allocatable.memory ?? '0') };
}

/** Sum of the container requests of the pods bound to each node (pods that hold resources: not Succeeded/Failed). */
export function requestedPerNode(pods: readonly PodView[]): Map<string, Amounts & { pods: number }> {
  const used = new Map<string, Amounts & { pods: number }>();
  for (const p of pods) {
    if (!p.spec.nodeName || p.status.phase === 'Succeeded' || p.status.phase === 'Failed') continue;
    const u = used.get(p.spec.nodeName) ?? { cpu: 0, memory: 0, pods: 0 };
    for (const c of p.spec.containers) {
      u.cpu += milliCpu(c.resources?.requests?.cpu ?? '0');
      u.memory += bytes(c.resources?.requests?.memory ?? '0');
    }
    u.pods++;
    used.set(p.spec.nodeName, u);
  }
  return used;
}

/** The extender's pressure of a node: the larger of the CPU and memory shares requested. */
export const pressureOf = (used: Amounts, allocatable: Amounts) => Math.max(used.cpu / allocatable.cpu, used.memory / allocatable.memory);

/**
 * The best peak pressure any placement of `count` identical pods can reach (on top of `base`, the requests already
 * on each node, none by default): a node holding k pods is at pressure
 * p_n(k) = k · max_r(request_r / allocatable_r), so with peak P it can hold #{k ≥ 1 : p_n(k) ≤ P} pods, and the
 * optimum is the smallest P that holds them all: the count-th smallest p_n(k) over every node and k (p_n(k) ≤ 1).
 */
export function optimumPeak(nodes: readonly NodeView[], pod: Amounts, count: number, base: ReadonlyMap<string, Amounts> = new Map()): number {
  const levels: number[] = [];
  for (const n of nodes) {
    // With a base load b already on the node: p_n(k) = max_r (b_r + k · request_r) / allocatable_r, still increasing in k.
    const b = base.get(n.metadata.name) ?? { cpu: 0, memory: 0 };
    const level = (k: number) => pressureOf({ cpu: b.cpu + k * pod.cpu, memory: b.memory + k * pod.memory }, allocatableOf(n));
    for (let k = 1; level(k) <= 1 + 1e-12; k++) levels.push(level(k));
  }
  levels.sort((a, b) => a - b);
  if (levels.length < count) throw new Error(`${count} pods do not fit in the cluster (room for ${levels.length})`);
  return levels[count - 1]!;
}

// ------------------------------------------------------------------------------------------ the extender's metrics

/** Sum of the samples of `metric` whose labels include every `labels` pair (0 when there are none). */
export function metricValue(metricsText: string, metric: string, labels: Record<string, string> = {}): number {
  const line = new RegExp(`^${metric}(?:\\{([^}]*)\\})?\\s+([^\\s]+)`);
  let sum = 0;
  for (const l of metricsText.split('\n')) {
    const m = line.exec(l);
    if (!m) continue;
    const have = m[1] ?? '';
    if (Object.entries(labels).every(([k, v]) => new RegExp(`(?:^|,)${k}="${v}"`).test(have))) sum += Number(m[2]);
  }
  return sum;
}

/**
 * Waits until the extender has settled: no reservation pending, and its Event queue drained (an outcome for every
 * decision), so that nothing it still sends lands in a namespace the test is about to delete.
 */
export async function waitExtenderSettled(env: ClusterEnv, timeoutMs = 60_000): Promise<string> {
  return waitFor('the extender to settle (reservations_pending 0, Event queue drained)', timeoutMs, async () => {
    const m = await fetchText(`${env.EXTENDER_URL}/metrics`);
    const decisions = metricValue(m, 'sandbox_extender_placements_total', { result: 'placed' }) + metricValue(m, 'sandbox_extender_placements_total', { result: 'no_fit' });
    const events = metricValue(m, 'sandbox_extender_events_total');
    const eventsOn = env.EXTENDER_MODE === 'cluster';
    return metricValue(m, 'sandbox_extender_reservations_pending') === 0 && (!eventsOn || events >= decisions) ? m : undefined;
  }, async () => (await fetchText(`${env.EXTENDER_URL}/metrics`)).split('\n').filter((l) => /^sandbox_extender_(reservations|placements|events)/.test(l)).join('\n'));
}

/**
 * The lines of the extender's log showing the API server refusing it a request, except while kube-apiserver was
 * starting (before its RBAC was loaded): the same test as lib.sh e2e_forbidden (forbidden.mjs).
 */
export function forbiddenLines(): string[] {
  return forbiddenLinesIn(join(STATE_DIR, 'logs', 'sandbox-extender.log'), join(STATE_DIR, 'logs', 'kube-apiserver.log'));
}

// ------------------------------------------------------------------------------------------ watches

/** One event of a `kubectl get -w --output-watch-events` stream: when it arrived (this process's clock) and its fields. */
export interface WatchEvent {
  readonly at: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | string;
  /** The requested fields of the object, in order ('' where absent). */
  readonly fields: readonly string[];
}

export interface ObjectWatch {
  /** Every event so far, in arrival order. */
  readonly events: WatchEvent[];
  /** The first event (so far or to come) that matches. @throws after timeoutMs, naming `what`. */
  until(what: string, match: (e: WatchEvent) => boolean, timeoutMs: number): Promise<WatchEvent>;
  stop(): void;
}

/**
 * Watches objects with kubectl (`get ARGS -w --output-watch-events`), printing `fields` (JSONPath expressions on
 * the object, e.g. `.metadata.name`, `.spec.nodeName`) of each event on one line, separated by `|`. Events are
 * timed as they arrive, so two events of one stream are comparable to the client's event loop, whatever kubectl's
 * start-up costs. The first events are the objects that exist when the watch starts (ADDED). `listener`, when
 * given, sees each event as it arrives.
 */
export function watchObjects(env: ClusterEnv, args: readonly string[], fields: readonly string[], listener?: (e: WatchEvent) => void): ObjectWatch {
  const template = `{.type}${fields.map((f) => `|{.object${f}}`).join('')}{"\\n"}`;
  const events: WatchEvent[] = [];
  const waiters: { match: (e: WatchEvent) => boolean; ok: (e: WatchEvent) => void }[] = [];
  let stopped = false;
  let child: ReturnType<typeof spawn>;
  // kubectl ends its watch when the API server closes the stream; it is started again, and its listing of what
  // exists then comes as ADDED events after a RESTARTED event (fields: kubectl's last words), so that a listener
  // that keeps state can start over.
  const start = () => {
    child = spawn(env.KUBECTL!, [`--kubeconfig=${env.KUBECONFIG}`, 'get', ...args, '-w', '--output-watch-events', '-o', `jsonpath=${template}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let partial = '';
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-500)));
    child.stdout!.on('data', (d: Buffer) => {
      const at = Date.now();
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const [type = '', ...rest] = line.split('|');
        const event = { at, type, fields: fields.map((_, i) => rest[i] ?? '') };
        events.push(event);
        listener?.(event);
        for (const w of [...waiters]) {
          if (w.match(event)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.ok(event);
          }
        }
      }
    });
    child.on('exit', () => {
      if (stopped) return;
      listener?.({ at: Date.now(), type: 'RESTARTED', fields: [stderr.trim()] });
      setTimeout(() => {
        if (!stopped) start();
      }, 200);
    });
  };
  start();
  const until = (what: string, match: (e: WatchEvent) => boolean, timeoutMs: number) =>
    new Promise<WatchEvent>((ok, bad) => {
      const earlier = events.find(match);
      if (earlier) return ok(earlier);
      const timer = setTimeout(() => bad(new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what} in the watch of ${args.join(' ')}`)), timeoutMs);
      waiters.push({ match, ok: (e) => (clearTimeout(timer), ok(e)) });
    });
  return {
    events,
    until,
    stop: () => {
      stopped = true;
      child.kill();
    },
  };
}

// ------------------------------------------------------------------------------------------ a pod watch

/** One change of a pod as the watch delivered it, with the time it arrived (client side, ms). */
export interface TimedPodChange {
  readonly atMs: number;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** The fields the over-commit replay reads (bench/overcommit.ts): names, resourceVersion, scheduler, node, phase, requests. */
  readonly pod: {
    metadata: { namespace: string; name: string; resourceVersion: string };
    spec: { schedulerName: string; nodeName?: string; containers: { name: string; resources: { requests: Record<string, string> } }[] };
    status: { phase: string };
  };
}

const POD_CHANGE_FIELDS = [
  '.metadata.namespace',
  '.metadata.name',
  '.metadata.resourceVersion',
  '.spec.schedulerName',
  '.spec.nodeName',
  '.status.phase',
  '.spec.containers[*].resources.requests.cpu',
  '.spec.containers[*].resources.requests.memory',
];

/**
 * Watches the pods of every namespace (watchObjects on `pods -A`, from a list of what exists now), keeping every
 * change in arrival order. One stream: its changes come in resourceVersion order. `until` resolves with the first
 * change (seen already or to come) that matches.
 */
export function watchPodChanges(env: ClusterEnv): {
  readonly changes: TimedPodChange[];
  until: (what: string, match: (c: TimedPodChange) => boolean, timeoutMs: number) => Promise<TimedPodChange>;
  stop: () => void;
} {
  const changes: TimedPodChange[] = [];
  const changeOf = new WeakMap<WatchEvent, TimedPodChange>();
  const watch = watchObjects(env, ['pods', '-A'], POD_CHANGE_FIELDS, (e) => {
    const { type } = e;
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    const [namespace = '', name = '', resourceVersion = '', schedulerName = '', nodeName = '', phase = '', cpus = '', memories = ''] = e.fields;
    const cpu = cpus.split(' ');
    const memory = memories.split(' ');
    const containers = cpu.map((c, i) => ({ name: `c${i}`, resources: { requests: { ...(c ? { cpu: c } : {}), ...(memory[i] ? { memory: memory[i]! } : {}) } } }));
    const change: TimedPodChange = {
      atMs: e.at,
      type,
      pod: { metadata: { namespace, name, resourceVersion }, spec: { schedulerName, ...(nodeName ? { nodeName } : {}), containers }, status: { phase } },
    };
    changeOf.set(e, change);
    changes.push(change);
  });
  const until = async (what: string, match: (c: TimedPodChange) => boolean, timeoutMs: number) => {
    const e = await watch.until(what, (event) => {
      const c = changeOf.get(event);
      return c !== undefined && match(c);
    }, timeoutMs);
    return changeOf.get(e)!;
  };
  return { changes, until, stop: () => watch.stop() };
}
