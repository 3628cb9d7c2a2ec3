/**
 * End to end on a real control plane (etcd, kube-apiserver, kube-controller-manager, two kube-schedulers,
 * KWOK fake nodes) with the sandbox-extender wired into the "sandbox-scheduler" kube-scheduler.
 *
 * Cluster: examples/cluster/heterogeneous.yaml (nodes of 16, 64 and 192 CPUs, 4 GiB per CPU).
 * 1. 30 pods of 2 CPU / 4 GiB with schedulerName sandbox-scheduler: kube-scheduler calls the extender
 *    (its own request counters grow by at least one filter call per pod, and no prioritize: one call per pod),
 *    every pod ends Running and Ready on
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
import {
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  fetchText,
  setUpCluster,
  sumCounterBy,
  tearDownCluster,
  waitExtenderSettled,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import {
  HETEROGENEOUS_NODES,
  Kubectl,
  columns,
  createNamespace as createNs,
  deleteNamespace as deleteNs,
  heterogeneousNodes,
  milliCpu,
  podManifests as pods,
  waitAllRunningReady as waitReady,
  type NodeView,
} from './kit/kubectl.js';

const POD_COUNT = 30;
const POD_CPU = '2';
const POD_MEMORY = '4Gi';
const SCHEDULER = 'sandbox-scheduler';
const REQUESTS_METRIC = 'sandbox_extender_http_requests_total';
const EXPECTED_NODES = HETEROGENEOUS_NODES;

type Placement = Map<string, string>; // pod name -> node name

let env: ClusterEnv;
let kubectl: Kubectl;
let nodes: NodeView[] = [];
const placements: { scheduler: string; placement: Placement }[] = [];

async function extenderCounts(): Promise<Map<string, number>> {
  return sumCounterBy(await fetchText(`${env.EXTENDER_URL}/metrics`), REQUESTS_METRIC, 'verb');
}

function podManifests(namespace: string, prefix: string, schedulerName?: string): object[] {
  return pods({
    namespace,
    prefix,
    count: POD_COUNT,
    cpu: POD_CPU,
    memory: POD_MEMORY,
    labels: { app: 'e2e-placement' },
    ...(schedulerName ? { schedulerName } : {}),
  });
}

const createNamespace = (name: string) => createNs(kubectl, name);
const deleteNamespace = (name: string) => deleteNs(kubectl, name);

/** Waits until every pod of the namespace is bound, Running and Ready; returns pod -> node. */
async function waitAllRunningReady(namespace: string): Promise<Placement> {
  const list = await waitReady(kubectl, namespace, POD_COUNT);
  return new Map(list.map((p) => [p.metadata.name, p.spec.nodeName!] as const));
}

/** `kubectl describe pod` output has, per pod, "Normal  Scheduled  <age>  <from>  Successfully assigned <ns>/<pod> to <node>". */
async function scheduledEvents(namespace: string): Promise<Map<string, { from: string; node: string }>> {
  const out = await kubectl.run(['-n', namespace, 'describe', 'pods', '--show-events=true']);
  const seen = new Map<string, { from: string; node: string }>();
  for (const m of out.matchAll(
    /^\s*Normal\s+Scheduled\s+\S+\s+(\S+)\s+Successfully assigned ([^/\s]+)\/(\S+) to (\S+)\s*$/gm,
  )) {
    if (m[2] === namespace) seen.set(m[3]!, { from: m[1]!, node: m[4]! });
  }
  return seen;
}

/** The comparison: pod i -> node under each scheduler, then pods and CPU requested per node. */
function table(): string {
  const index = (pod: string) => pod.slice(pod.lastIndexOf('-') + 1); // sbx-07 and dflt-07 are both pod #07
  const byIndex = placements.map((p) => new Map([...p.placement].map(([pod, node]) => [index(pod), node] as const)));
  const ids = [...new Set(byIndex.flatMap((m) => [...m.keys()]))].sort();
  const podRows = ids.map((id) => [`#${id}`, ...byIndex.map((m) => m.get(id) ?? '-')]);
  const cpu = (n: NodeView) => milliCpu(n.status.allocatable.cpu ?? '0');
  const nodeRows = [...nodes]
    .sort((a, b) => cpu(a) - cpu(b))
    .map((n) => [
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
  env = await setUpCluster();
  kubectl = new Kubectl(env);
  nodes = await heterogeneousNodes(kubectl);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (placements.length > 0) {
    const text = table();
    console.log(text);
    mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
    writeFileSync(join(STATE_DIR, 'logs', 'placement.txt'), `${text}\n`);
  }
  await tearDownCluster();
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

    // kube-scheduler really called the extender: its own counters grew by at least one filter per pod, and with one
    // call per pod (chooseInFilter, the default) it never needed Prioritize.
    const after = await extenderCounts();
    const delta = (verb: string) => (after.get(verb) ?? 0) - (before.get(verb) ?? 0);
    console.log(
      `extender requests during the ${SCHEDULER} run: filter +${delta('filter')}, prioritize +${delta('prioritize')}`,
    );
    expect(delta('filter')).toBeGreaterThanOrEqual(POD_COUNT);
    expect(delta('prioritize')).toBe(0);

    // Every pod is on one of the cluster's nodes.
    for (const node of placement.values()) expect(Object.keys(EXPECTED_NODES)).toContain(node);

    // `kubectl describe pod` shows the Scheduled event from sandbox-scheduler, naming the pod's node.
    const events = await waitFor(
      `Scheduled events for the ${POD_COUNT} pods`,
      60_000,
      async () => {
        const seen = await scheduledEvents(ns);
        return seen.size === POD_COUNT ? seen : undefined;
      },
      () => kubectl.run(['-n', ns, 'get', 'events']),
    );
    for (const [pod, node] of placement) expect(events.get(pod)).toEqual({ from: SCHEDULER, node });
  }, 600_000);

  test(`the same pods under default-scheduler, on the emptied cluster, are placed without the extender`, async () => {
    await waitExtenderSettled(env); // its Events for the first batch are out before their namespace goes
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
