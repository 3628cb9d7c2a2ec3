/**
 * `npm run bench -- agent-sandbox`: the pods of kubernetes-sigs/agent-sandbox, created by its own controller (the
 * version test/e2e/tools/agent-sandbox pins), placed by sandbox-scheduler or by the stock default-scheduler of the
 * same local control plane, interleaved run by run: a warm-pool fill (pool) and a burst of cold claims (claims).
 * Never part of CI; one e2e control plane on a machine at a time: it brings the cluster up and down itself
 * unless --reuse. The runs and their figures: docs/agent-sandbox.md#measured-figures; `--help` lists the options.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { Command, Option } from 'commander';
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import { sandboxClaim, sandboxTemplate, sandboxWarmPool } from './agentSandboxObjects.js';
import { fmt, medianOf, percentile, placementSoundness, podsPerSecond, ratio, type Soundness } from './clusterStats.js';
import {
  ensureNamespace,
  inParallel,
  Kube,
  metricSum as metric,
  notReadyTainted,
  PodWatch,
  retryBusy,
  untaintNodes,
  waitEventsOut,
  type PodEventType,
} from '../test/e2e/kit/adminClient.js';
import { log, readClusterEnv, script, sleep, type ClusterEnv } from '../test/e2e/kit/controlPlane.js';
import { clusterNodes, exitOnUsage, goDuration, listOf, oneOf, positiveInt, quantity } from './cliOptions.js';
import { exitWith, startReport, tableOf, textTable, writeReport } from './report.js';
import { StartingTracker, distribution, type Distribution } from './startingStats.js';

const NAMESPACE = 'bench-agent-sandbox';
const GROUP = 'extensions.agents.x-k8s.io';
const VERSION = 'v1beta1';
const NAME_HASH_LABEL = 'agents.x-k8s.io/sandbox-name-hash';

export type Kind = 'pool' | 'claims';
type Scheduler = 'sandbox' | 'default';

interface Options {
  nodes: string;
  pool: number;
  claims: number;
  podCpu: string;
  podMemory: string;
  readyDelay: string;
  runs: number;
  first: 'sandbox' | 'default';
  concurrency: number;
  kinds: Kind[];
  reuse: boolean;
}

export interface RunResult {
  kind: Kind;
  scheduler: Scheduler;
  run: number;
  pods: number;
  podsPerSecond: number | null;
  bindWindowSeconds: number;
  createToBoundP50Ms: number | null;
  createToBoundP99Ms: number | null;
  allReadySeconds: number;
  soundness: Soundness;
  startingPeaks: Distribution;
  filterRequests: number;
  watchReopens: number;
}

const now = () => performance.now();

/** Creates one extensions.agents.x-k8s.io object (plural: sandboxtemplates, ...); 409 is fine; retryBusy. */
async function createExtension(k: Kube, plural: string, body: object): Promise<void> {
  try {
    await retryBusy(() =>
      k.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: NAMESPACE, plural, body }),
    );
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

/**
 * Deletes every pool, claim and sandbox of the namespace and the sandboxes' pods (collections: left to the garbage
 * collector, 1,000 sandboxes would take minutes), then waits until no pod is left and the extender holds none.
 */
async function clearNamespace(k: Kube, env: ClusterEnv): Promise<void> {
  for (const plural of ['sandboxwarmpools', 'sandboxclaims'])
    await k.custom.deleteCollectionNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: NAMESPACE,
      plural,
    });
  await k.custom.deleteCollectionNamespacedCustomObject({
    group: 'agents.x-k8s.io',
    version: VERSION,
    namespace: NAMESPACE,
    plural: 'sandboxes',
  });
  for (let i = 0; ; i++) {
    await k.api.deleteCollectionNamespacedPod({ namespace: NAMESPACE, labelSelector: NAME_HASH_LABEL });
    const left = (await k.api.listNamespacedPod({ namespace: NAMESPACE })).items.length;
    const held = await metric(env.EXTENDER_URL!, 'sandbox_extender_snapshot_objects', { kind: 'pod' });
    const pending = await metric(env.EXTENDER_URL!, 'sandbox_extender_reservations_pending');
    if (left === 0 && held === 0 && pending === 0) return;
    if (i > 600)
      throw new Error(
        `after 5 min, ${left} pods are left in ${NAMESPACE}; the extender holds ${held} pods and ${pending} reservations`,
      );
    await sleep(500);
  }
}

/** The namespace's pods as a watch shows them: times seen created, bound and Ready, and the starting peaks. */
class PodTimes {
  readonly createdAt = new Map<string, number>();
  readonly boundAt = new Map<string, number>();
  readonly readyAt = new Map<string, number>();
  readonly starting = new StartingTracker();
  private readonly watch: PodWatch;

  constructor(k: Kube) {
    this.watch = new PodWatch(k, NAMESPACE, (type, pod) => this.observe(type, pod));
  }

  get reopens(): number {
    return this.watch.reopens;
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  private observe(type: PodEventType, pod: V1Pod): void {
    const t = now();
    const { name, node, ready } = this.starting.observePod(pod, type === 'DELETED');
    if (type === 'DELETED') return;
    if (!this.createdAt.has(name)) this.createdAt.set(name, t);
    if (node && !this.boundAt.has(name)) this.boundAt.set(name, t);
    if (ready && !this.readyAt.has(name)) this.readyAt.set(name, t);
  }

  stop(): void {
    this.watch.stop();
  }
}

async function oneRun(
  kind: Kind,
  scheduler: Scheduler,
  run: number,
  o: Options,
  env: ClusterEnv,
  k: Kube,
  nodes: V1Node[],
): Promise<RunResult> {
  const template = scheduler === 'sandbox' ? 'bench-sandbox' : 'bench-stock';
  const poolName = `${kind}-${scheduler}-${run}`;
  const count = kind === 'pool' ? o.pool : o.claims;
  log(
    `run ${run}: ${kind} of ${count} through ${scheduler === 'sandbox' ? env.SANDBOX_SCHEDULER_NAME : 'default-scheduler'}`,
  );
  const watch = new PodTimes(k);
  await watch.start();
  const filtersBefore = await metric(env.EXTENDER_URL!, 'sandbox_extender_http_requests_total', { verb: 'filter' });
  const claimedAt = new Map<string, number>();
  const t0 = now();
  if (kind === 'pool') {
    await createExtension(k, 'sandboxwarmpools', sandboxWarmPool(poolName, NAMESPACE, template, count));
  } else {
    await createExtension(k, 'sandboxwarmpools', sandboxWarmPool(poolName, NAMESPACE, template, 0));
    const width = String(count - 1).length;
    const names = Array.from({ length: count }, (_, i) => `${poolName}-${String(i).padStart(width, '0')}`);
    await inParallel(names, o.concurrency, async (name, i) => {
      await createExtension(k, 'sandboxclaims', sandboxClaim(name, NAMESPACE, poolName, { TASK: String(i) }));
      claimedAt.set(name, now()); // a cold claim's Sandbox, and its pod, are named after the claim
    });
  }
  const deadline = Date.now() + 20 * 60_000;
  while (watch.readyAt.size < count) {
    if (Date.now() > deadline)
      throw new Error(
        `${poolName}: only ${watch.readyAt.size} of ${count} pods Ready after 20 min (${watch.boundAt.size} bound)`,
      );
    await sleep(200);
  }
  const allReadySeconds = (Math.max(...watch.readyAt.values()) - t0) / 1000;
  const filterRequests =
    (await metric(env.EXTENDER_URL!, 'sandbox_extender_http_requests_total', { verb: 'filter' })) - filtersBefore;
  watch.stop();
  const bound = [...watch.boundAt.values()];
  const createToBound = [...watch.boundAt].map(
    ([name, at]) =>
      at - (kind === 'pool' ? watch.createdAt.get(name)! : (claimedAt.get(name) ?? watch.createdAt.get(name)!)),
  );
  const pods = (await k.api.listNamespacedPod({ namespace: NAMESPACE })).items;
  const result: RunResult = {
    kind,
    scheduler,
    run,
    pods: count,
    podsPerSecond: podsPerSecond(bound),
    bindWindowSeconds: (Math.max(...bound) - Math.min(...bound)) / 1000,
    createToBoundP50Ms: percentile(createToBound, 0.5),
    createToBoundP99Ms: percentile(createToBound, 0.99),
    allReadySeconds,
    soundness: placementSoundness(nodes as unknown as Node[], pods as unknown as Pod[]),
    startingPeaks: distribution(watch.starting.peaks(nodes.map((n) => n.metadata!.name!)).values()),
    filterRequests,
    watchReopens: watch.reopens,
  };
  log(
    `  ${fmt(result.podsPerSecond)} pods/s, creation → bound p50 ${fmt(result.createToBoundP50Ms, 0)} ms p99 ${fmt(result.createToBoundP99Ms, 0)} ms, all Ready in ${fmt(allReadySeconds)} s, peak pressure ${fmt(result.soundness.peakPressure, 4)}, peak starting ${result.startingPeaks.max}`,
  );
  if (scheduler === 'sandbox') await waitEventsOut(env.EXTENDER_URL!);
  await clearNamespace(k, env);
  return result;
}

/**
 * The figures of one kind, sandbox against stock, as bench/results/agent-sandbox.json's `pool` and `claims`
 * tables: each run's value, in run order, and the ratio of the medians. Rows, the header first.
 */
export function figureRows(results: readonly RunResult[], kind: Kind): string[][] {
  const of = (s: Scheduler) => results.filter((r) => r.kind === kind && r.scheduler === s);
  const med = medianOf<RunResult>;
  const each = (rs: readonly RunResult[], f: (r: RunResult) => number | null, digits: number) =>
    rs.map((r) => fmt(f(r), digits)).join(', ');
  const row = (label: string, f: (r: RunResult) => number | null, digits = 1): string[] => [
    label,
    each(of('sandbox'), f, digits),
    each(of('default'), f, digits),
    fmt(ratio(med(of('sandbox'), f), med(of('default'), f)), 2),
  ];
  const optimum = med([...of('sandbox'), ...of('default')], (r) => r.soundness.optimum);
  const runs = of('sandbox').length;
  return [
    ['figure', 'sandbox', 'stock', runs > 1 ? 'sandbox/stock (medians)' : 'sandbox/stock'],
    row('pods/s over the binding window', (r) => r.podsPerSecond),
    row('creation → bound p50 ms', (r) => r.createToBoundP50Ms, 0),
    row('creation → bound p99 ms', (r) => r.createToBoundP99Ms, 0),
    row('first create → all Ready s', (r) => r.allReadySeconds),
    row(`peak pressure (the optimum ${fmt(optimum, 4)})`, (r) => r.soundness.peakPressure, 4),
    row('nodes over allocatable', (r) => r.soundness.overAllocatable.length, 0),
    row('peak starting on a node', (r) => r.startingPeaks.max, 0),
    row('extender Filter calls', (r) => r.filterRequests, 0),
  ];
}

async function main(): Promise<void> {
  const program = new Command('bench:agent-sandbox')
    .exitOverride(exitOnUsage)
    .description(
      'agent-sandbox warm-pool fill and cold-claim burst (its own controller creating the pods), sandbox-scheduler against the stock default-scheduler, interleaved in one cluster.',
    )
    .option('--nodes <shape>', 'CLUSTER_NODES of cluster-up.sh', clusterNodes, '1000x32/128Gi')
    .option('--pool <n>', 'sandboxes of the warm pool', positiveInt, 1000)
    .option('--claims <n>', 'cold claims of the burst', positiveInt, 1000)
    .option('--pod-cpu <q>', 'cpu request (= limit) per sandbox pod', quantity, '500m')
    .option('--pod-memory <q>', 'memory request (= limit) per sandbox pod', quantity, '1Gi')
    .option('--ready-delay <d>', 'KWOK_POD_READY_DELAY: a pod is Ready this long after it is bound', goDuration, '1s')
    .option(
      '--runs <n>',
      'runs per kind and scheduler, interleaved and the order flipped each run (sandbox, default, default, sandbox, ...)',
      positiveInt,
      2,
    )
    .addOption(
      new Option('--first <scheduler>', 'which scheduler runs first in run 1')
        .choices(['sandbox', 'default'])
        .default('sandbox'),
    )
    .option('--kinds <list>', 'pool, claims or both (comma-separated)', listOf(oneOf(['pool', 'claims'] as const)), [
      'pool',
      'claims',
    ] as Kind[])
    .option('--concurrency <n>', 'claim creates in flight', positiveInt, 32)
    .option(
      '--reuse',
      'use the cluster that is up (started with the same --nodes and --ready-delay) and leave it running',
      false,
    )
    .parse();
  const o = program.opts<Options>();
  const kinds = o.kinds;
  const report = startReport('agent-sandbox', o);
  if (!o.reuse) {
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: o.nodes,
      KWOK_POD_READY_DELAY: o.readyDelay,
      AGENT_SANDBOX: '1',
      E2E_START_TIMEOUT: '300',
    });
  }
  const results: RunResult[] = [];
  let agentSandboxVersion = '?';
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL', 'SANDBOX_SCHEDULER_NAME']);
    agentSandboxVersion = env.AGENT_SANDBOX_VERSION ?? '?';
    if (env.AGENT_SANDBOX !== '1')
      throw new Error('the cluster runs no agent-sandbox-controller (cluster-up.sh with AGENT_SANDBOX=1)');
    const k = await Kube.connect(env.KUBECONFIG!, Math.max(o.concurrency, 8));
    const untaint = await untaintNodes(k);
    log(
      `no node carries a not-ready/unreachable taint (${untaint.removed} removed, ${fmt(untaint.waitedMs / 1000)} s)`,
    );
    const nodes = await k.nodes();
    await ensureNamespace(k, NAMESPACE);
    await clearNamespace(k, env);
    const template = (name: string, schedulerName?: string) =>
      sandboxTemplate({
        name,
        namespace: NAMESPACE,
        cpu: o.podCpu,
        memory: o.podMemory,
        labels: { app: 'bench-agent-sandbox' },
        ...(schedulerName ? { schedulerName } : {}),
      });
    await createExtension(k, 'sandboxtemplates', template('bench-sandbox', env.SANDBOX_SCHEDULER_NAME!));
    await createExtension(k, 'sandboxtemplates', template('bench-stock'));
    log(
      `${nodes.length} nodes; pods of ${o.podCpu} / ${o.podMemory}, Ready ${env.KWOK_POD_READY_DELAY_MS ?? '?'} ms after binding`,
    );
    for (const kind of kinds) {
      for (let run = 1; run <= o.runs; run++) {
        // ABBA: the first run after cluster start-up is the slowest (warm-up), and the machine drifts; flipping the
        // order each run spreads both over the two schedulers.
        const sandboxFirst = (run % 2 === 1) === (o.first === 'sandbox');
        for (const scheduler of sandboxFirst ? (['sandbox', 'default'] as const) : (['default', 'sandbox'] as const)) {
          if ((await k.nodes()).some(notReadyTainted)) await untaintNodes(k);
          results.push(await oneRun(kind, scheduler, run, o, env, k, nodes));
        }
      }
    }
    k.agent.destroy();
  } finally {
    if (!o.reuse) await script('cluster-down.sh', ['--keep-logs']).catch((e: Error) => log(e.message));
  }
  report.runs = results;
  report.tables = kinds.map((kind) =>
    tableOf(
      kind,
      kind === 'pool'
        ? `Warm-pool fill: a SandboxWarmPool of ${o.pool} created at once`
        : `Cold-claim burst: ${o.claims} SandboxClaims with env set (each a new sandbox), ${o.concurrency} creates in flight`,
      figureRows(results, kind as Kind),
    ),
  );
  console.log(
    `agent-sandbox ${agentSandboxVersion} on ${o.nodes} (KWOK), sandbox pods of ${o.podCpu} / ${o.podMemory}, Ready ${o.readyDelay} after binding; ${o.runs} run(s) per scheduler, interleaved (${o.first} first, the order flipped each run)`,
  );
  for (const t of report.tables) console.log(`\n${textTable(t)}`);
  writeReport(report);
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:agent-sandbox'));
