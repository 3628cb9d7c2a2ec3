/**
 * `npm run bench -- starting`: a cold-start storm on the e2e control plane with pods that become Ready a fixed
 * time after they are bound (KWOK_POD_READY_DELAY): sandbox-scheduler with the starting limit off and on, and the
 * stock default-scheduler. Never part of CI; one e2e control plane on a machine at a time: it brings the cluster up
 * and down itself unless --reuse. The setups and figures: docs/benchmarks.md#starting-burst; `--help` lists the
 * options.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { median } from './clusterStats.js';
import {
  benchPod,
  createPods,
  ensureNamespace,
  Kube,
  metricSum as metric,
  PodWatch,
  waitEventsOut,
} from '../test/e2e/kit/adminClient.js';
import { log, readClusterEnv, REPO_ROOT, script, sleep } from '../test/e2e/kit/controlPlane.js';
import { clusterNodes, exitOnUsage, goDuration, positive, positiveInt, quantity } from './cliOptions.js';
import { StartingTracker, distribution, formatCounts, type Distribution } from './startingStats.js';
import { exitWith, startReport, tableOf, textTable, writeReport } from './report.js';
import type { Table } from './results.js';

const NAMESPACE = 'bench-starting';

export type Setup = 'limit off' | 'limit on' | 'default';

export interface Options {
  nodes: string;
  pods: number;
  podCpu: string;
  podMemory: string;
  readyDelay: string;
  perNode: number | undefined;
  perCore: number | undefined;
  runs: number;
  concurrency: number;
  reuse: boolean;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

export interface RunResult {
  setup: Setup;
  run: number;
  pods: number;
  createSeconds: number;
  allBoundSeconds: number;
  allReadySeconds: number;
  podsPerSecond: number;
  /** Per node, from the API's pod states (exact, in watch order). */
  apiPeaks: Distribution;
  /** Per node, from the extender's model (starting + reserved), sampled; null for default-scheduler. */
  modelPeaks: Distribution | null;
  startingLimitHeld: number | null;
  filterRequests: number | null;
  /** Times the API server closed the bench's pod watch (reopened from the last resourceVersion). */
  watchReopens: number;
}

async function oneRun(
  setup: Setup,
  runIndex: number,
  o: Options,
  env: Record<string, string>,
  k: Kube,
  nodeNames: string[],
): Promise<RunResult> {
  await ensureNamespace(k, NAMESPACE);
  const sandbox = setup !== 'default';
  const names = Array.from({ length: o.pods }, (_, i) => `sbx-${String(i).padStart(4, '0')}`);
  const tracker = new StartingTracker();
  const boundAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const watch = new PodWatch(k, NAMESPACE, (type, pod) => {
    const { name, node, ready } = tracker.observePod(pod, type === 'DELETED');
    const t = performance.now();
    if (node && !boundAt.has(name)) boundAt.set(name, t);
    if (ready && !readyAt.has(name)) readyAt.set(name, t);
  });
  await watch.start();
  const modelPeak = new Map<string, number>();
  let sampling = sandbox;
  const sampler = (async () => {
    while (sampling) {
      try {
        for (const n of await getJson<{ name: string; sandboxes: { starting: number; reserved: number } }[]>(
          `${env.EXTENDER_URL}/debug/nodes`,
        )) {
          modelPeak.set(n.name, Math.max(modelPeak.get(n.name) ?? 0, n.sandboxes.starting + n.sandboxes.reserved));
        }
      } catch (err) {
        log(`debug/nodes: ${(err as Error).message}`);
      }
      await sleep(200);
    }
  })();
  const held = () => metric(env.EXTENDER_URL!, 'sandbox_extender_starting_limit_held_total');
  const filters = () => metric(env.EXTENDER_URL!, 'sandbox_extender_http_requests_total', { verb: 'filter' });
  const heldBefore = sandbox ? await held() : 0;
  const filterBefore = sandbox ? await filters() : 0;
  await sleep(500);
  const t0 = performance.now();
  const pods = names.map((name) =>
    benchPod(name, NAMESPACE, {
      schedulerName: sandbox ? env.SANDBOX_SCHEDULER_NAME! : null,
      cpu: o.podCpu,
      memory: o.podMemory,
      labels: { app: 'bench-starting' },
    }),
  );

  await createPods(k, NAMESPACE, pods, o.concurrency);
  const created = performance.now();
  const deadline = Date.now() + 15 * 60_000;
  let listedAllReadySince: number | undefined;
  for (let i = 1; readyAt.size < o.pods; i++) {
    if (Date.now() > deadline) throw new Error(`${setup}: only ${readyAt.size} of ${o.pods} pods Ready after 15 min`);
    await sleep(100);
    if (i % 50 !== 0) continue;
    // Every 5 s, the API's own count: the watch must not fall behind it for long.
    const list = await k.api.listNamespacedPod({ namespace: NAMESPACE });
    const listedReady = list.items.filter((p) =>
      (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
    if (listedReady < o.pods) listedAllReadySince = undefined;
    else if (listedAllReadySince === undefined) listedAllReadySince = Date.now();
    else if (Date.now() - listedAllReadySince > 15_000)
      throw new Error(`${setup}: the API lists all ${o.pods} pods Ready but the watch saw ${readyAt.size}`);
  }
  sampling = false;
  await sampler;
  watch.stop();
  const last = (m: Map<string, number>) => Math.max(...m.values());
  const allReadySeconds = (last(readyAt) - t0) / 1000;
  const result: RunResult = {
    setup,
    run: runIndex,
    pods: o.pods,
    createSeconds: (created - t0) / 1000,
    allBoundSeconds: (last(boundAt) - t0) / 1000,
    allReadySeconds,
    podsPerSecond: o.pods / allReadySeconds,
    apiPeaks: distribution(tracker.peaks(nodeNames).values()),
    modelPeaks: sandbox ? distribution(nodeNames.map((n) => modelPeak.get(n) ?? 0)) : null,
    startingLimitHeld: sandbox ? (await held()) - heldBefore : null,
    filterRequests: sandbox ? (await filters()) - filterBefore : null,
    watchReopens: watch.reopens,
  };
  log(
    `${setup} run ${runIndex}: all Ready in ${allReadySeconds.toFixed(1)} s, peak starting ${result.apiPeaks.max}; deleting the pods`,
  );
  // The extender sends its Events rate-limited after the decisions: let the queue drain (an outcome per decision)
  // before the namespace goes, or the late ones meet a terminating namespace (403).
  if (sandbox) await waitEventsOut(env.EXTENDER_URL!);
  await kubectl(env, ['delete', 'namespace', NAMESPACE, '--wait=true', '--timeout=300s']);
  // The extender has settled when it holds no reservation and no pod of the namespace.
  for (let i = 0; i < 600; i++) {
    if (
      (await metric(env.EXTENDER_URL!, 'sandbox_extender_reservations_pending')) === 0 &&
      (await metric(env.EXTENDER_URL!, 'sandbox_extender_snapshot_objects', { kind: 'pod' })) === 0
    )
      break;
    await sleep(500);
  }
  return result;
}

function kubectl(env: Record<string, string>, args: readonly string[]): Promise<string> {
  return new Promise((ok, bad) => {
    const child = spawn(env.KUBECTL!, [`--kubeconfig=${env.KUBECONFIG}`, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) =>
      code === 0 ? ok(out) : bad(new Error(`kubectl ${args.join(' ')}: exit ${code}: ${err.trim()}`)),
    );
  });
}

/** Waits until no node carries the node lifecycle controller's not-ready/unreachable taint (pods do not tolerate it). */
async function waitNodesUntainted(env: Record<string, string>): Promise<string[]> {
  for (let i = 0; ; i++) {
    const nodes = JSON.parse(await kubectl(env, ['get', 'nodes', '-o', 'json'])) as {
      items: { metadata: { name: string }; spec?: { taints?: { key: string }[] } }[];
    };
    const tainted = nodes.items.filter((n) =>
      (n.spec?.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/')),
    );
    if (tainted.length === 0) return nodes.items.map((n) => n.metadata.name);
    if (i > 600) throw new Error(`${tainted.length} nodes still tainted`);
    if (i % 10 === 0)
      log(`${tainted.length} of ${nodes.items.length} nodes still carry a node.kubernetes.io/ taint; waiting`);
    await sleep(1000);
  }
}

const f1 = (x: number) => x.toFixed(1);

/** The table `burst` of bench/results/starting.json: peaks per run, times the median of the runs. */
export function burstTable(results: readonly RunResult[], o: Options): Table {
  const setups: Setup[] = ['limit off', 'limit on', 'default'];
  const med = (xs: number[]) => median(xs) ?? NaN;
  const rows = [['figure', 'limit off (sandbox)', `limit on, ${limitText(o)} (sandbox)`, 'stock']];
  const of = (s: Setup) => results.filter((r) => r.setup === s);
  const cell = (s: Setup, f: (rs: RunResult[]) => string) => (of(s).length ? f(of(s)) : '-');
  rows.push([
    'peak starting on any node (API)',
    ...setups.map((s) => cell(s, (rs) => rs.map((r) => r.apiPeaks.max).join(' / '))),
  ]);
  rows.push([
    'per-node peaks, API, last run (value×nodes)',
    ...setups.map((s) => cell(s, (rs) => formatCounts(rs.at(-1)!.apiPeaks))),
  ]);
  rows.push([
    'peak starting on any node (extender model)',
    ...setups.map((s) =>
      cell(s, (rs) => (rs.some((r) => r.modelPeaks) ? rs.map((r) => r.modelPeaks?.max ?? '-').join(' / ') : '-')),
    ),
  ]);
  rows.push([
    'first create → all created (s)',
    ...setups.map((s) => cell(s, (rs) => f1(med(rs.map((r) => r.createSeconds))))),
  ]);
  rows.push([
    'first create → all bound (s)',
    ...setups.map((s) => cell(s, (rs) => f1(med(rs.map((r) => r.allBoundSeconds))))),
  ]);
  rows.push([
    'first create → all Ready (s)',
    ...setups.map((s) =>
      cell(
        s,
        (rs) => `${f1(med(rs.map((r) => r.allReadySeconds)))} (${rs.map((r) => f1(r.allReadySeconds)).join(', ')})`,
      ),
    ),
  ]);
  rows.push([
    'pods/s (pods / time to all Ready)',
    ...setups.map((s) => cell(s, (rs) => f1(med(rs.map((r) => r.podsPerSecond))))),
  ]);
  rows.push([
    'Filter calls / held by the limit (median of the runs)',
    ...setups.map((s) =>
      cell(s, (rs) =>
        rs[0]!.filterRequests === null
          ? '-'
          : `${med(rs.map((r) => r.filterRequests!))} / ${med(rs.map((r) => r.startingLimitHeld!))}`,
      ),
    ),
  ]);
  return tableOf(
    'burst',
    `Starting burst: ${o.pods} pods of ${o.podCpu} / ${o.podMemory} on ${o.nodes} (KWOK), each Ready ${o.readyDelay} after it is bound; ${o.runs} run(s) per setup`,
    rows,
  );
}

function limitText(o: Options): string {
  return [o.perNode !== undefined ? `perNode ${o.perNode}` : '', o.perCore !== undefined ? `perCore ${o.perCore}` : '']
    .filter(Boolean)
    .join(', ');
}

async function main(): Promise<void> {
  const program = new Command('bench:starting')
    .exitOverride(exitOnUsage)
    .description(
      'A burst of sandbox pods on KWOK nodes that become Ready after a delay: the starting limit off, on, and the stock default-scheduler.',
    )
    .option('--nodes <shape>', 'CLUSTER_NODES of cluster-up.sh', clusterNodes, '100x32/128Gi')
    .option('--pods <n>', 'pods per burst', positiveInt, 1000)
    .option('--pod-cpu <q>', 'cpu request (= limit) per pod', quantity, '250m')
    .option('--pod-memory <q>', 'memory request (= limit) per pod', quantity, '512Mi')
    .option('--ready-delay <d>', 'KWOK_POD_READY_DELAY: a pod is Ready this long after it is bound', goDuration, '5s')
    .option('--per-node <n>', 'startingLimit.perNode of the "limit on" runs', positiveInt)
    .option('--per-core <x>', 'startingLimit.perCore of the "limit on" runs', positive)
    .option('--runs <n>', 'bursts per setup (interleaved: off, on, default, off, ...)', positiveInt, 1)
    .option('--concurrency <n>', 'pod creates in flight', positiveInt, 32)
    .option(
      '--reuse',
      'use the cluster that is up (started with the same --nodes and --ready-delay) and leave it running',
      false,
    )
    .parse();
  const o = program.opts<Options>();
  if (o.perNode === undefined && o.perCore === undefined) o.perNode = 4;
  const report = startReport('starting', o);
  mkdirSync(join(REPO_ROOT, '.e2e-bench'), { recursive: true });
  const limitConfig = join(REPO_ROOT, '.e2e-bench', 'starting-limit-on.yaml');
  const offConfig = join(REPO_ROOT, '.e2e-bench', 'starting-limit-off.yaml');
  writeFileSync(
    limitConfig,
    `startingLimit: {${[o.perNode !== undefined ? `perNode: ${o.perNode}` : '', o.perCore !== undefined ? `perCore: ${o.perCore}` : ''].filter(Boolean).join(', ')}}\n`,
  );
  writeFileSync(offConfig, 'startingLimit: {}\n');
  if (!o.reuse)
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: o.nodes,
      KWOK_POD_READY_DELAY: o.readyDelay,
      EXTENDER_BIND: '0',
      AGENT_SANDBOX: '0',
    }); // kube-scheduler binds, as the chart installs it
  const results: RunResult[] = [];
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL']);
    if (env.EXTENDER_MODE !== 'cluster') throw new Error('the bench needs the extender in cluster mode');
    const k = await Kube.connect(env.KUBECONFIG!, o.concurrency);
    const nodeNames = await waitNodesUntainted(env);
    log(
      `${nodeNames.length} nodes, pods Ready ${env.KWOK_POD_READY_DELAY_MS ?? '?'} ms after binding; ${o.pods} pods of ${o.podCpu} / ${o.podMemory} per burst`,
    );
    let current = '';
    for (let run = 1; run <= o.runs; run++) {
      for (const setup of ['limit off', 'limit on', 'default'] as const) {
        const want = setup === 'limit on' ? limitConfig : offConfig;
        if (setup !== 'default' && current !== want) {
          await script('component.sh', ['restart', 'sandbox-extender', '--config', want]);
          current = want;
        }
        results.push(await oneRun(setup, run, o, env, k, nodeNames));
      }
    }
  } finally {
    if (!o.reuse) await script('cluster-down.sh', ['--keep-logs']).catch((e: Error) => log(e.message));
    else await script('component.sh', ['restart', 'sandbox-extender']).catch((e: Error) => log(e.message));
  }
  const table = burstTable(results, o);
  console.log(textTable(table));
  report.runs = results;
  report.tables = [table];
  writeReport(report);
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:starting'));
