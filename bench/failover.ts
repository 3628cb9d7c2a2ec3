/**
 * `npm run bench -- failover`: the Helm chart's HA mode as processes (two sandbox-scheduler + extender pairs on one
 * lease, `test/e2e/component.sh standby up`), a burst, and the leading pair SIGKILLed half-way, so its lease expires
 * before the standby takes it (leaseDuration 15 s, retryPeriod 2 s: the chart's and kube-scheduler's defaults).
 * Per run: the standby's model at the kill, kill → lease → first and last bind, pods/s before and after, nothing
 * over allocatable (bench/overcommit.ts), the new leader's reservations. `-- --help` for the options.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { Command } from 'commander';
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import {
  benchPod,
  createPods,
  deleteBurst,
  ensureNamespace,
  httpsGet,
  Kube,
  PodChangeLog,
  scrape,
  taintsToClear,
  untaintNodes,
} from '../test/e2e/kit/adminClient.js';
import { log, nowMs, readClusterEnv, script, sleep, waitUntil, type ClusterEnv } from '../test/e2e/kit/controlPlane.js';
import { milliCpu } from '../test/e2e/kit/kubectl.js';
import { parsePrometheusText, podsPerSecond, sumDelta, sumSamples } from './clusterStats.js';
import { replayOvercommit } from './overcommit.js';
import { exitWith, startReport, tableOf, textTable, writeReport } from './report.js';
import type { Table } from './results.js';
import { clusterNodes, exitOnUsage, positiveInt, quantity } from './cliOptions.js';

const NAMESPACE = 'bench-failover';

interface Options {
  nodes: string;
  pods: number;
  killAt: number;
  podCpu: string;
  podMemory: string;
  concurrency: number;
  reuse: boolean;
  out?: string | undefined;
}

interface ModelTotals {
  allocatedMilliCpu: number;
  reservedMilliCpu: number;
  pods: number;
}

async function modelTotals(url: string, kube: Kube): Promise<ModelTotals> {
  const view = (await (await fetch(`${url}/debug/nodes`)).json()) as {
    allocated: { cpu: number };
    reserved: { cpu: number };
  }[];
  const m = await scrape(url, kube);
  return {
    allocatedMilliCpu: view.reduce((s, n) => s + n.allocated.cpu, 0),
    reservedMilliCpu: view.reduce((s, n) => s + n.reserved.cpu, 0),
    pods: sumSamples(m, 'sandbox_extender_snapshot_objects', { kind: 'pod' }),
  };
}

/**
 * kube-scheduler's own gauge: 1 while it leads its lease (its /metrics, with the admin client certificate). The
 * gauge's `name` is the component's name, `kube-scheduler`, whatever the lease is called (`_lease` names it for the reader).
 */
async function leads(url: string, kube: Kube, _lease: string): Promise<boolean> {
  try {
    return (
      sumSamples(
        parsePrometheusText(await httpsGet(`${url}/metrics`, kube.clientCert)),
        'leader_election_master_status',
        { name: 'kube-scheduler' },
      ) === 1
    );
  } catch {
    return false;
  }
}

function leaseHolder(env: ClusterEnv, lease: string): string {
  return execFileSync(
    env.KUBECTL!,
    [
      `--kubeconfig=${env.KUBECONFIG}`,
      '-n',
      'kube-system',
      'get',
      'lease',
      lease,
      '-o',
      'jsonpath={.spec.holderIdentity}',
    ],
    { encoding: 'utf8' },
  ).trim();
}

async function run(o: Options): Promise<Record<string, unknown>> {
  const env = readClusterEnv([
    'KUBECONFIG',
    'KUBECTL',
    'EXTENDER_URL',
    'SANDBOX_SCHEDULER_URL',
    'SANDBOX_SCHEDULER_NAME',
  ]);
  const kube = await Kube.connect(env.KUBECONFIG!, o.concurrency);
  const lease = env.SANDBOX_SCHEDULER_NAME!;
  if ((await kube.nodes()).some((n) => taintsToClear(n).length > 0)) await untaintNodes(kube);
  await ensureNamespace(kube, NAMESPACE);
  await script('component.sh', ['standby', 'up']);
  const standby = readClusterEnv(['STANDBY_EXTENDER_URL', 'STANDBY_SCHEDULER_URL']);
  if (
    !(await leads(env.SANDBOX_SCHEDULER_URL!, kube, lease)) ||
    (await leads(standby.STANDBY_SCHEDULER_URL!, kube, lease))
  )
    throw new Error('the first pair should lead and the standby stand by');
  const standbyBefore = await scrape(standby.STANDBY_EXTENDER_URL!, kube);

  const changes = new PodChangeLog(kube);
  await changes.start();
  const ours = (p: Pod) => p.metadata?.namespace === NAMESPACE;
  const width = String(o.pods - 1).length;
  const manifests = Array.from({ length: o.pods }, (_, i) =>
    benchPod(`sbx-${String(i).padStart(width, '0')}`, NAMESPACE, {
      schedulerName: lease,
      cpu: o.podCpu,
      memory: o.podMemory,
    }),
  );

  const t0 = nowMs();
  const creating = createPods(kube, NAMESPACE, manifests, o.concurrency);
  await waitUntil(`${o.killAt} pods bound`, 600_000, () => changes.boundAt(ours).size >= o.killAt, 10);
  // The standby's model just before the kill, against what the API server had bound by then.
  const apiBound = changes.boundAt(ours).size;
  const warm = await modelTotals(standby.STANDBY_EXTENDER_URL!, kube);
  const apiBoundAfterRead = changes.boundAt(ours).size;
  const holder = leaseHolder(env, lease);
  const killMs = nowMs();
  await script('component.sh', ['kill', 'sandbox-extender', 'kube-scheduler-sandbox']);
  let leadMs = NaN;
  await waitUntil(
    'the standby to take the lease',
    120_000,
    () => {
      const h = leaseHolder(env, lease);
      if (h !== '' && h !== holder) leadMs = nowMs();
      return !Number.isNaN(leadMs);
    },
    50,
  );
  await creating;
  await waitUntil(`all ${o.pods} pods bound`, 900_000, () => changes.boundAt(ours).size >= o.pods, 50);
  changes.stop();
  const binds = [...changes.boundAt(ours).values()];
  const byNew = binds.filter((t) => t >= leadMs - 200).sort((a, b) => a - b);
  const byOld = binds.filter((t) => t < leadMs - 200);
  const replay = replayOvercommit((await kube.nodes()) as unknown as Node[], changes.changes);
  let settled: Awaited<ReturnType<typeof scrape>> = [];
  await waitUntil(
    "the new leader's extender to settle",
    120_000,
    async () => {
      settled = await scrape(standby.STANDBY_EXTENDER_URL!, kube);
      return sumSamples(settled, 'sandbox_extender_reservations_pending') === 0;
    },
    500,
  );
  const d = (name: string, match: Record<string, string> = {}) => sumDelta(settled, standbyBefore, name, match);
  const result = {
    pods: o.pods,
    boundAtKill: apiBound,
    standbyModelAtKill: {
      ...warm,
      expectedMilliCpu: [apiBound * milliCpu(o.podCpu), apiBoundAfterRead * milliCpu(o.podCpu)],
    },
    standbyFilterCallsBeforeLeading: sumSamples(standbyBefore, 'sandbox_extender_http_requests_total', {
      verb: 'filter',
    }),
    killToLeaseSeconds: (leadMs - killMs) / 1000,
    killToFirstBindSeconds: byNew.length ? (byNew[0]! - killMs) / 1000 : null,
    killToLastBindSeconds: byNew.length ? (byNew.at(-1)! - killMs) / 1000 : null,
    boundByOld: byOld.length,
    boundByNew: byNew.length,
    podsPerSecondBefore: podsPerSecond(byOld),
    podsPerSecondAfter: podsPerSecond(byNew),
    burstSeconds: (Math.max(...binds) - t0) / 1000,
    nodesEverOver: replay.nodesEverOver,
    unbound: Object.fromEntries(replay.unbound),
    newLeader: {
      placed: d('sandbox_extender_placements_total', { result: 'placed' }),
      releasedBound: d('sandbox_extender_reservations_released_total', { reason: 'bound' }),
      releasedExpired: d('sandbox_extender_reservations_released_total', { reason: 'expired' }),
      reservationsPending: sumSamples(settled, 'sandbox_extender_reservations_pending'),
      relists: d('sandbox_extender_watch_lists_total', { resource: 'pods', kind: 'relist' }),
    },
  };
  // Restore the first pair (the standby leads now): standby down (it gives the lease up), then the first pair again.
  await deleteBurst(kube, NAMESPACE, { timeoutMs: 300_000, everyMs: 1000 });
  await script('component.sh', ['standby', 'down']);
  await script('component.sh', ['restart', 'sandbox-extender']);
  await script('component.sh', ['start', 'kube-scheduler-sandbox']);
  return result;
}

/** The table `takeover` of bench/results/failover.json, from a run's figures. */
export function takeoverTable(r: Awaited<ReturnType<typeof run>>, title: string): Table {
  const x = r as Record<string, unknown> & {
    standbyModelAtKill: ModelTotals & { expectedMilliCpu: number[] };
    newLeader: Record<string, number>;
  };
  const f = (v: unknown, digits = 1) => (typeof v === 'number' ? v.toFixed(digits) : String(v));
  const rows = [
    ['figure', 'value'],
    ['pods bound when the leader pair was killed (API)', String(x.boundAtKill)],
    [
      "standby's model then: CPU allocated (expected from the API) / reserved",
      `${x.standbyModelAtKill.allocatedMilliCpu / 1000} (${x.standbyModelAtKill.expectedMilliCpu.map((m) => m / 1000).join('–')}) / ${x.standbyModelAtKill.reservedMilliCpu / 1000} CPUs`,
    ],
    ['standby Filter calls before it led', String(x.standbyFilterCallsBeforeLeading)],
    [
      'kill → the standby holds the lease / its first binding / its last binding',
      `${f(x.killToLeaseSeconds)} / ${f(x.killToFirstBindSeconds)} / ${f(x.killToLastBindSeconds)} s`,
    ],
    ['bound by the dead leader / the new one', `${x.boundByOld} / ${x.boundByNew}`],
    ['pods/s before the kill / after the takeover', `${f(x.podsPerSecondBefore)} / ${f(x.podsPerSecondAfter)}`],
    ['whole burst (first create → last binding)', `${f(x.burstSeconds)} s`],
    ['nodes over allocatable at any time', String(x.nodesEverOver)],
    ['pods left unbound', Object.keys(x.unbound as object).length === 0 ? 'none' : JSON.stringify(x.unbound)],
    [
      'new leader: decisions / released as bound / expired / pending / pod relists',
      `${x.newLeader.placed} / ${x.newLeader.releasedBound} / ${x.newLeader.releasedExpired} / ${x.newLeader.reservationsPending} / ${x.newLeader.relists}`,
    ],
  ];
  return tableOf('takeover', title, rows);
}

async function main(): Promise<void> {
  const program = new Command('bench:failover')
    .exitOverride(exitOnUsage)
    .description('Leader failover mid-burst with two sandbox-scheduler + extender pairs (see bench/failover.ts)')
    .option('--nodes <shape>', 'CLUSTER_NODES of the cluster', clusterNodes, '100x32/128Gi')
    .option('--pods <n>', 'pods in the burst', positiveInt, 1000)
    .option('--kill-at <n>', 'kill the leading pair once this many pods are bound', positiveInt, 500)
    .option('--pod-cpu <q>', 'cpu request of each pod', quantity, '250m')
    .option('--pod-memory <q>', 'memory request of each pod', quantity, '512Mi')
    .option('--concurrency <n>', 'creates in flight', positiveInt, 32)
    .option('--reuse', 'use the running cluster and leave it up', false)
    .option('--out <file>', 'the report (default .e2e-bench/failover-DATE.json; bench/report.ts)')
    .parse(['node', 'bench:failover', ...process.argv.slice(2)]);
  const o = program.opts<Options>();
  if (o.killAt >= o.pods) program.error('error: --kill-at must be below --pods');
  const report = startReport('failover', o);
  if (!o.reuse) {
    log(`cluster up: ${o.nodes}`);
    await script('cluster-up.sh', [], { CLUSTER_NODES: o.nodes, AGENT_SANDBOX: '0' });
  }
  try {
    await sleep(1000);
    const result = await run(o);
    const table = takeoverTable(
      result,
      `Failover mid-burst: ${o.pods} pods of ${o.podCpu} / ${o.podMemory} on ${o.nodes}, the leading pair killed (SIGKILL) at ${o.killAt} bound`,
    );
    report.runs.push(result);
    report.tables.push(table);
    process.stdout.write(`${textTable(table)}\n\n`);
    writeReport(report, o.out ? resolve(o.out) : undefined);
  } finally {
    if (!o.reuse) await script('cluster-down.sh', ['--keep-logs']);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:failover'));
