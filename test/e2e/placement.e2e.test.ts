/**
 * End to end on a real control plane (etcd, kube-apiserver, kube-controller-manager, two kube-schedulers,
 * KWOK fake nodes) with the sandbox-extender wired into the "sandbox-scheduler" kube-scheduler.
 *
 * Cluster: examples/cluster/heterogeneous.yaml (nodes of 16, 64 and 192 CPUs, 4 GiB per CPU).
 * 1. 30 pods of 2 CPU / 4 GiB with schedulerName sandbox-scheduler: kube-scheduler calls the extender
 *    (its own request counters grow by at least one filter call per pod), every pod ends Running and Ready on
 *    a node, and `kubectl describe pod` shows the Scheduled event from sandbox-scheduler.
 * 2. The same 30 pods under default-scheduler, on the emptied cluster, for comparison: placed, Running and
 *    Ready, and the extender is not called for them.
 * Both placements are printed as a table (and written to .e2e/logs/placement.txt).
 *
 * The cluster is started in beforeAll (test/e2e/cluster-up.sh) and stopped in afterAll, unless
 * E2E_REUSE_CLUSTER=1: then an already running cluster (npm run cluster:up) is used and left running.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { E2E_DIR, Kubectl, STATE_DIR, fetchText, milliCpu, readClusterEnv, run, sumCounterBy, waitFor, type ClusterEnv } from './kube.js';

const REUSE = process.env.E2E_REUSE_CLUSTER === '1';
const SETUP_TIMEOUT_MS = Number(process.env.E2E_SETUP_TIMEOUT_MS ?? 45 * 60_000); // a cold tools build included
const POD_COUNT = 30;
const POD_CPU = '2';
const POD_MEMORY = '4Gi';
const SCHEDULER = 'sandbox-scheduler';
const REQUESTS_METRIC = 'sandbox_extender_http_requests_total';
const EXPECTED_NODES: Record<string, string> = { 'cpu16-0': '16', 'cpu64-0': '64', 'cpu192-0': '192' };

interface PodView {
  metadata: { name: string; namespace: string; deletionTimestamp?: string };
  spec: { nodeName?: string; schedulerName?: string };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}
interface NodeView {
  metadata: { name: string };
  status: { allocatable: Record<string, string> };
}
type Placement = Map<string, string>; // pod name -> node name

let env: ClusterEnv;
let kubectl: Kubectl;
let nodes: NodeView[] = [];
const placements: { scheduler: string; placement: Placement }[] = [];

async function clusterScript(name: 'cluster-up.sh' | 'cluster-down.sh', args: string[] = []): Promise<void> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, CLUSTER: 'examples/cluster/heterogeneous.yaml' };
  delete childEnv.CLUSTER_NODES;
  const { stderr } = await run('bash', [join(E2E_DIR, name), ...args], { env: childEnv, timeoutMs: SETUP_TIMEOUT_MS });
  process.stderr.write(stderr.split('\n').filter((l) => /cluster (up|stopped)|tools (up to date|built)/.test(l)).map((l) => `${l}\n`).join(''));
}

async function extenderCounts(): Promise<Map<string, number>> {
  return sumCounterBy(await fetchText(`${env.EXTENDER_URL}/metrics`), REQUESTS_METRIC, 'verb');
}

function podManifests(namespace: string, prefix: string, schedulerName?: string): object[] {
  return Array.from({ length: POD_COUNT }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${prefix}-${String(i).padStart(2, '0')}`, namespace, labels: { app: 'e2e-placement' } },
    spec: {
      ...(schedulerName ? { schedulerName } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'sandbox',
          image: 'registry.invalid/e2e/sandbox:1', // never pulled: KWOK nodes run no containers
          resources: { requests: { cpu: POD_CPU, memory: POD_MEMORY }, limits: { cpu: POD_CPU, memory: POD_MEMORY } },
        },
      ],
    },
  }));
}

async function createNamespace(name: string): Promise<void> {
  await kubectl.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }]);
  // ServiceAccount admission rejects pods until kube-controller-manager has created the default ServiceAccount.
  await waitFor(`ServiceAccount ${name}/default`, 60_000, async () => ((await kubectl.run(['-n', name, 'get', 'serviceaccount', 'default', '--ignore-not-found', '-o', 'name'])).trim() ? true : undefined));
}

const isReady = (p: PodView) => p.status.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

async function describePods(namespace: string): Promise<string> {
  const [pods, events] = await Promise.all([
    kubectl.run(['-n', namespace, 'get', 'pods', '-o', 'wide']),
    kubectl.run(['-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp']),
  ]);
  return `pods:\n${pods}\nevents:\n${events.split('\n').slice(-30).join('\n')}\nlogs: ${join(STATE_DIR, 'logs')}`;
}

/** Waits until every pod of the namespace is bound, Running and Ready; returns pod -> node. */
async function waitAllRunningReady(namespace: string): Promise<Placement> {
  return waitFor(`${POD_COUNT} pods in ${namespace} Running and Ready`, 180_000, async () => {
    const list = await kubectl.json<{ items: PodView[] }>(['-n', namespace, 'get', 'pods']);
    if (list.items.length !== POD_COUNT || !list.items.every((p) => p.spec.nodeName && isReady(p))) return undefined;
    return new Map(list.items.map((p) => [p.metadata.name, p.spec.nodeName!] as const));
  }, () => describePods(namespace));
}

/** `kubectl describe pod` output has, per pod, "Normal  Scheduled  <age>  <from>  Successfully assigned <ns>/<pod> to <node>". */
async function scheduledEvents(namespace: string): Promise<Map<string, { from: string; node: string }>> {
  const out = await kubectl.run(['-n', namespace, 'describe', 'pods', '--show-events=true']);
  const seen = new Map<string, { from: string; node: string }>();
  for (const m of out.matchAll(/^\s*Normal\s+Scheduled\s+\S+\s+(\S+)\s+Successfully assigned ([^/\s]+)\/(\S+) to (\S+)\s*$/gm)) {
    if (m[2] === namespace) seen.set(m[3]!, { from: m[1]!, node: m[4]! });
  }
  return seen;
}

async function deleteNamespace(name: string): Promise<void> {
  // KWOK's pod-delete stage finishes the deletion that a kubelet would; the namespace controller does the rest.
  await kubectl.run(['delete', 'namespace', name, '--ignore-not-found', '--wait=true', '--timeout=120s']);
}

/** Aligns columns of text. */
function columns(rows: string[][]): string[] {
  const width = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(width[i]!)).join('  ').trimEnd());
}

/** The comparison: pod i -> node under each scheduler, then pods and CPU requested per node. */
function table(): string {
  const index = (pod: string) => pod.slice(pod.lastIndexOf('-') + 1); // sbx-07 and dflt-07 are both pod #07
  const byIndex = placements.map((p) => new Map([...p.placement].map(([pod, node]) => [index(pod), node] as const)));
  const ids = [...new Set(byIndex.flatMap((m) => [...m.keys()]))].sort();
  const podRows = ids.map((id) => [`#${id}`, ...byIndex.map((m) => m.get(id) ?? '-')]);
  const cpu = (n: NodeView) => milliCpu(n.status.allocatable.cpu ?? '0');
  const nodeRows = [...nodes].sort((a, b) => cpu(a) - cpu(b)).map((n) => [
    n.metadata.name,
    String(cpu(n) / 1000),
    ...placements.map((p) => {
      const count = [...p.placement.values()].filter((node) => node === n.metadata.name).length;
      return `${String(count).padStart(2)} pods, ${((100 * count * milliCpu(POD_CPU)) / cpu(n)).toFixed(1).padStart(5)}% CPU`;
    }),
  ]);
  const names = placements.map((p) => p.scheduler);
  return [
    `Placement of ${POD_COUNT} pods of ${POD_CPU} CPU / ${POD_MEMORY}, each scheduler starting from an empty cluster:`,
    '',
    ...columns([['pod', ...names], ...podRows]),
    '',
    ...columns([['node', 'CPUs', ...names], ...nodeRows]),
  ].join('\n');
}

beforeAll(async () => {
  if (!REUSE) await clusterScript('cluster-up.sh');
  env = readClusterEnv();
  kubectl = new Kubectl(env);
  nodes = (await kubectl.json<{ items: NodeView[] }>(['get', 'nodes'])).items;
  const shape = Object.fromEntries(nodes.map((n) => [n.metadata.name, n.status.allocatable.cpu]));
  if (JSON.stringify(Object.entries(shape).sort()) !== JSON.stringify(Object.entries(EXPECTED_NODES).sort())) {
    throw new Error(`these tests need the cluster of examples/cluster/heterogeneous.yaml (nodes ${JSON.stringify(EXPECTED_NODES)}), found ${JSON.stringify(shape)}`);
  }
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (placements.length > 0) {
    const text = table();
    console.log(text);
    mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
    writeFileSync(join(STATE_DIR, 'logs', 'placement.txt'), `${text}\n`);
  }
  if (!REUSE) await clusterScript('cluster-down.sh', ['--keep-logs']);
}, 120_000);

describe('kube-scheduler with the sandbox-extender, on fake nodes of 16/64/192 CPUs', () => {
  test(`${POD_COUNT} pods of ${POD_CPU} CPU / ${POD_MEMORY} with schedulerName ${SCHEDULER} go through the extender and end Running and Ready`, async () => {
    const ns = 'e2e-sandbox-scheduler';
    await deleteNamespace(ns);
    await createNamespace(ns);
    const before = await extenderCounts();

    await kubectl.apply(podManifests(ns, 'sbx', SCHEDULER));
    const placement = await waitAllRunningReady(ns);
    placements.push({ scheduler: SCHEDULER, placement });

    // kube-scheduler really called the extender: its own counters grew by at least one filter per pod.
    const after = await extenderCounts();
    const delta = (verb: string) => (after.get(verb) ?? 0) - (before.get(verb) ?? 0);
    console.log(`extender requests during the ${SCHEDULER} run: filter +${delta('filter')}, prioritize +${delta('prioritize')}`);
    expect(delta('filter')).toBeGreaterThanOrEqual(POD_COUNT);
    expect(delta('prioritize')).toBeGreaterThanOrEqual(1);

    // Every pod is on one of the cluster's nodes.
    for (const node of placement.values()) expect(Object.keys(EXPECTED_NODES)).toContain(node);

    // `kubectl describe pod` shows the Scheduled event from sandbox-scheduler, naming the pod's node.
    const events = await waitFor(`Scheduled events for the ${POD_COUNT} pods`, 60_000, async () => {
      const seen = await scheduledEvents(ns);
      return seen.size === POD_COUNT ? seen : undefined;
    }, () => kubectl.run(['-n', ns, 'get', 'events']));
    for (const [pod, node] of placement) expect(events.get(pod)).toEqual({ from: SCHEDULER, node });
  }, 600_000);

  test(`the same pods under default-scheduler, on the emptied cluster, are placed without the extender`, async () => {
    await deleteNamespace('e2e-sandbox-scheduler'); // start from an empty cluster, like the first run
    const ns = 'e2e-default-scheduler';
    await deleteNamespace(ns);
    await createNamespace(ns);
    const before = await extenderCounts();

    await kubectl.apply(podManifests(ns, 'dflt'));
    const placement = await waitAllRunningReady(ns);
    placements.push({ scheduler: 'default-scheduler', placement });

    const after = await extenderCounts();
    expect(after.get('filter') ?? 0).toBe(before.get('filter') ?? 0); // a separate kube-scheduler: extender not called
    for (const node of placement.values()) expect(Object.keys(EXPECTED_NODES)).toContain(node);

    const events = await waitFor(`Scheduled events for the ${POD_COUNT} pods`, 60_000, async () => {
      const seen = await scheduledEvents(ns);
      return seen.size === POD_COUNT ? seen : undefined;
    });
    for (const [pod, node] of placement) expect(events.get(pod)).toEqual({ from: 'default-scheduler', node });
    await deleteNamespace(ns);
  }, 600_000);
});
