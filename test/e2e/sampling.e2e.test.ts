/**
 * kube-scheduler's sampling of nodes against the replay's model of it (src/cli/replay.ts, `sampling`), on a
 * cluster of its own (test/e2e/cluster-up.sh with SANDBOX_E2E_STATE .cache/e2e-sampling; E2E_REUSE_CLUSTER does not
 * apply): 200 KWOK nodes in two pools whose names sort them in blocks, 150 of 16 CPU / 64 GiB (cpu16-000 …
 * cpu16-149), then 50 of 192 CPU / 768 GiB (cpu192-00 … cpu192-49); no zone labels. Bursts of pods of 2 CPU /
 * 4 GiB go through sandbox-scheduler, each onto the empty cluster.
 *
 * kube-scheduler walks its nodes in its node tree's order: zones in turn, within a zone the order it added the
 * nodes. Which order that is, is read from kube-scheduler-sandbox itself (started with --v=2, it logs "Added node to
 * NodeTree" for each node, in order, and "Removed node from NodeTree"), and fed to the model with the same pods:
 *
 * A1. percentageOfNodesToScore 0 (adaptive, as cluster-up starts it here), the nodes there before kube-scheduler
 *     started: it looks for max(100, 200 × (50 − 200/125) / 100) = 100 fitting nodes per pod, from where the
 *     previous pod's search stopped, and offers the extender those. Its node tree then holds the nodes in the order
 *     of its informer's initial list, which v1.36 streams (WatchListClient) into a map-backed store: no particular
 *     order, not by name. Each window of 100 holds both pools, and the small pool gets nothing. 300 pods: with 500, a
 *     window holding fewer than 23 of the 50 large nodes fills them to 11 pods (11/96 of their CPU), where the next
 *     pod ties with one on an empty small node (the extender's tie-break, fewer sandboxes, takes the small node);
 *     which large nodes the windows' tails take in (below) then decides those picks, and the model cannot.
 * A2. 500 pods, the same after the nodes were deleted and created again (by name) while kube-scheduler ran, as a
 *     node pool that joins a running cluster in one go (with one scheduling cycle in between, see the test): now
 *     the tree holds them by name, the windows alternate between cpu16-000 … 099 (small nodes only: the extender
 *     can only choose a small node) and cpu16-100 … cpu192-49 (the large nodes are the least loaded), and half the
 *     pods land on the small pool, where the optimum puts none.
 * B.  500 pods at percentageOfNodesToScore 100 (`component.sh percentage 100`): every node offered; model and
 *     optimum put every pod on the large pool.
 *
 * Per run, against `replay` (least_loaded, the extender's default) on the nodes in the tree's order, and the optimum
 * (`discreteOptimum`):
 *   - the window: every Filter call offered the extender exactly the model's window (100 nodes in A, 200 in B; the
 *     candidates of the extender's debug `filter` line; kube-scheduler stops at exactly that many when all fit);
 *   - per pool: the real small-pool count within a tolerance of the model's (below); in A2 far above the optimum's
 *     share (none), with the peak more than twice the optimum; the peak within one small-node pod of the model's;
 *     in B the peak within one pod of the optimum and no pod on the small pool;
 *   - A2, the order: the tree's order is the creation order (by name), the pools of consecutive decisions alternate
 *     as the model's do (each window starts where the previous one stopped), and the small pool's pods sit on the
 *     first small nodes by name.
 * These fail if kube-scheduler walked the nodes in another order than its log says, did not rotate its windows
 * (every window would start at the first node: in A2 all 500 pods small), or sized them otherwise.
 *
 * The tolerance. kube-scheduler checks the nodes with 16 goroutines that take chunks of 13 nodes in order (200
 * nodes, parallelism 16: parallelize.chunkSizeFor = min(√200, 200/16 + 1)) and stops at the 100th that fits, so a
 * window can take in nodes past its 100th in place of some of its own: with one chunk in flight per core (2 here),
 * up to two chunks; more when workers wait on the scheduling queue's lock (each check reads the nominated pods under
 * it, and every pod created or bound takes it) and others take the next chunks. Measured once on this cluster with a
 * recording proxy in front of the extender (not kept), 1,040 windows (a burst and a drain of 500 pods, 40 single
 * pods): every start where the model puts it (0, 100, 0, …), 88 % exactly the 100 nodes from there, none spanning
 * more than 122 tree positions. The model does not do this. In A2 whatever a window takes in past cpu16-099 is a
 * small node too (why 150 + 50 and not 100 + 100: then a window of small nodes would often take in a large node,
 * which the extender would choose), so the pool of each pod is the model's; in A1 the large nodes stay far from the
 * ties (above), so that a large node more or less in a window does not change the pool either. Not always, though: a
 * window that reaches past its 100th node also moves where the next one starts, and in one CI run 4 of A2's 500
 * decisions went to the other pool (246 small against the model's 250; within 1 in the runs before). Tolerance: the
 * scheduling attempts beyond one per pod (a failed one still moves the next start) + 10, 2 % of a run; the model's
 * effect it checks is 250 pods against an optimum of 0.
 *
 * Preconditions checked: kube-scheduler's log says signatures (OpportunisticBatching, beta and on in 1.36) are off
 * for the profile because it has an extender, so no pod skips the window through a batch hint; /configz shows each
 * run's percentage and parallelism 16; every node Ready and without a not-ready taint before and after each run (a
 * node failing a filter would shift the windows; the taints the node lifecycle controller put on new nodes are
 * lifted from Ready ones as `npm run bench -- cluster` does, kit/adminClient.ts untaintNodes). The extender runs with
 * `logLevel: debug` (its `filter` lines: the window's size and the node chosen, in kube-scheduler's order of
 * cycles) and without Events (not what this file is about; 1,500 rate-limited Events would keep it busy for over a
 * minute). Report: .e2e/logs/sampling.txt; the cluster's logs: .cache/e2e-sampling/logs.
 */
import { closeSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kube, untaintNodes } from './kit/adminClient.js';
import { numFeasibleNodesToFind } from '../../src/core/fit/kubeSchedulerSampling.js';
import {
  discreteOptimum,
  podsAbove,
  pressureWith,
  replay,
  type ReplayResult,
  type ReplaySpec,
} from '../../src/cli/replay.js';
import { E2E_DIR, REPO_ROOT, STATE_DIR, fetchText, keyValues, metricValue, run, waitFor } from './kit/controlPlane.js';
import {
  Kubectl,
  allocatableOf,
  bytes,
  columns,
  createNamespace,
  milliCpu,
  podManifests,
  type Amounts,
  type NodeView,
  type PodView,
} from './kit/kubectl.js';
import { releaseStateLock, takeStateLock } from './stateLock.js';

const STATE = process.env.SANDBOX_SAMPLING_E2E_STATE ?? join(REPO_ROOT, '.cache', 'e2e-sampling');
/** Outside STATE: cluster-up.sh empties the state folder before it starts the extender with this file. */
const EXTENDER_CONFIG = `${STATE}-extender.yaml`;
const SETUP_TIMEOUT_MS = Number(process.env.E2E_SETUP_TIMEOUT_MS ?? 45 * 60_000);
const RUN_TIMEOUT_MS = 10 * 60_000;
/** cluster-nodes.mjs shorthand: names cpu16-000 … cpu16-149, then cpu192-00 … cpu192-49 (created in this order). */
const CLUSTER_NODES = '150x16/64Gi,50x192/768Gi';
const NODE_COUNT = 200;
const SMALL_CPU = 16_000;
/** Pods per burst (A2, B); A1's burst is smaller (the header says why). */
const POD_COUNT = 500;
const POD_COUNT_A1 = 300;
const POD_CPU = '2';
const POD_MEMORY = '4Gi';
const SCHEDULER = 'sandbox-scheduler';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** Tolerance on the small pool beyond the extra scheduling attempts (see the header): 2 % of a run's 500 pods. */
const SLACK = 10;
/** How far past its 100th node a window may reach: three chunks of 13 (the header: 22 seen). */
const WINDOW_REACH = 3 * 13;

interface ModelNode {
  name: string;
  hasNode: boolean;
  allocated: Amounts;
  reserved: Amounts;
}

interface FilterLine {
  pod: string;
  candidates: number;
  reserved: string | null;
}

interface SchedulerSettings {
  readonly percentageOfNodesToScore: unknown;
  readonly parallelism: unknown;
}

/** kube-scheduler's node tree as its log shows it: zone -> node names in the order added (zones in order of appearance). */
type NodeTree = Map<string, string[]>;

interface RunResult {
  readonly label: string;
  readonly percentage: number;
  readonly podCount: number;
  /** kube-scheduler-sandbox's settings during the run (/configz). */
  readonly configured: SchedulerSettings;
  /** The node tree during the run. */
  readonly tree: NodeTree;
  /** The tree was not the same after the run (a node added or removed meanwhile). */
  readonly treeChanged: boolean;
  /** Nodes not Ready or tainted right after the run (a filter would have failed them: the windows shift). */
  readonly uncleanAfter: string[];
  /** Pods per node name: the real placement and the model's. */
  readonly real: Map<string, number>;
  readonly modelPods: Map<string, number>;
  readonly model: ReplayResult;
  /** The model's spec: the nodes in the tree's order. */
  readonly spec: ReplaySpec;
  readonly optimum: number;
  /** The model's small-pool count had it walked the nodes by name (the order a fresh start was assumed to give). */
  readonly byNameSmall: number;
  readonly peak: number;
  readonly peakNode: string;
  readonly decisions: FilterLine[];
  /** Pods whose node is not the one the extender's last Filter call for them reserved. */
  readonly notByExtender: string[];
  readonly attempts: number;
  readonly seconds: number;
}

let env: Record<string, string> = {};
let kubectl: Kubectl;
let admin: Kube | undefined;
/** The nodes by name (the API's order). */
let nodes: (NodeView & { metadata: { labels?: Record<string, string> } })[] = [];
let locked = false;
let clusterUpSeconds = 0;
const startedAt = Date.now();
const report: string[] = [];

function say(text: string): void {
  console.log(text);
  report.push(text, '');
}

/** Times a step of the file; the times go to the report's last lines. */
const steps: string[] = [];
async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    steps.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  }
}

/** cluster-up.sh / cluster-down.sh / component.sh on this file's own state folder. */
async function script(
  name: 'cluster-up.sh' | 'cluster-down.sh' | 'component.sh',
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<string> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, SANDBOX_E2E_STATE: STATE, ...extraEnv };
  // Only what this file asks for: none of a developer's cluster-up settings (they shape the shared cluster).
  for (const k of [
    'CLUSTER',
    'CLUSTER_NODES',
    'E2E_REUSE_CLUSTER',
    'SANDBOX_PERCENTAGE',
    'STOCK_PERCENTAGE',
    'EXTENDER_MODE',
    'EXTENDER_BIND',
    'EXTENDER_CONFIG',
    'AGENT_SANDBOX',
    'SANDBOX_SCHEDULER',
    'SANDBOX_SCHEDULER_VERBOSITY',
    'REAL_NODES',
    'KWOK_POD_READY_DELAY',
  ]) {
    if (!(k in extraEnv)) delete childEnv[k];
  }
  const { stdout, stderr } = await run('bash', [join(E2E_DIR, name), ...args], {
    env: childEnv,
    timeoutMs: SETUP_TIMEOUT_MS,
  });
  process.stderr.write(
    stderr
      .split('\n')
      .filter((l) => /cluster (up|stopped)|tools (up to date|built)|percentageOfNodesToScore/.test(l))
      .map((l) => `[sampling e2e] ${l}\n`)
      .join(''),
  );
  return stdout;
}

/** GET on kube-scheduler-sandbox's secure port with the admin client certificate (/configz needs it). */
async function schedulerGet(path: string): Promise<string> {
  const pki = join(STATE, 'pki');
  const { stdout } = await run('curl', [
    '-ksSf',
    '--cert',
    join(pki, 'admin.crt'),
    '--key',
    join(pki, 'admin.key'),
    `${env.SANDBOX_SCHEDULER_URL}${path}`,
  ]);
  return stdout;
}

/** kube-scheduler's scheduling attempts of the sandbox profile, every result. */
async function schedulingAttempts(): Promise<number> {
  return metricValue(await schedulerGet('/metrics'), 'scheduler_schedule_attempts_total', { profile: SCHEDULER });
}

/** kube-scheduler-sandbox's effective configuration (its /configz: the file plus defaults). */
async function schedulerSettings(): Promise<SchedulerSettings> {
  const configz = JSON.parse(await schedulerGet('/configz')) as { componentconfig?: Partial<SchedulerSettings> };
  return {
    percentageOfNodesToScore: configz.componentconfig?.percentageOfNodesToScore,
    parallelism: configz.componentconfig?.parallelism,
  };
}

const logFile = (name: string) => join(STATE, 'logs', `${name}.log`);

/** The text of a log from byte `from` on. */
function logSince(name: string, from: number): string {
  const fd = openSync(logFile(name), 'r');
  try {
    const buf = Buffer.alloc(Math.max(0, statSync(logFile(name)).size - from));
    readSync(fd, buf, 0, buf.length, from);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * kube-scheduler-sandbox's node tree, from its log since its last start (--v=2: pkg/scheduler/backend/cache/
 * node_tree.go logs "Added node to NodeTree" and "Removed node from NodeTree" with the node and its zone): each zone's
 * nodes in the order added, a node removed taken out, a zone left empty dropped (a new node of it starts it again
 * at the end), as node_tree.go keeps them.
 */
function nodeTree(): NodeTree {
  let tree: NodeTree = new Map();
  for (const line of readFileSync(logFile('kube-scheduler-sandbox'), 'utf8').split('\n')) {
    if (/^--- e2e \S+: starting /.test(line)) tree = new Map(); // a new process (lib.sh e2e_start)
    const m = /"(Added|Removed) node (?:to|from) NodeTree".*?\bnode="([^"]+)".*?\bzone="([^"]*)"/.exec(line);
    if (!m) continue;
    const [, op, node, zone] = m as unknown as [string, string, string, string];
    const list = tree.get(zone) ?? [];
    if (op === 'Added') {
      list.push(node);
      tree.set(zone, list);
    } else {
      const i = list.indexOf(node);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) tree.delete(zone);
    }
  }
  return tree;
}

const treeSize = (tree: NodeTree) => [...tree.values()].reduce((n, list) => n + list.length, 0);
/** The tree's walk (node_tree.go list: one node of each zone in turn). */
function treeWalk(tree: NodeTree): string[] {
  const lists = [...tree.values()];
  const out: string[] = [];
  for (let k = 0; out.length < treeSize(tree); k++) for (const list of lists) if (k < list.length) out.push(list[k]!);
  return out;
}

/** The extender's debug `filter` lines after byte `from` of its log, for pods of `namespace`, in order. */
function filterLines(from: number, namespace: string): FilterLine[] {
  const lines: FilterLine[] = [];
  for (const line of logSince('sandbox-extender', from).split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry: { msg?: unknown; pod?: unknown; candidates?: unknown; reserved?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (
      entry.msg !== 'filter' ||
      typeof entry.pod !== 'string' ||
      !entry.pod.startsWith(`${namespace}/`) ||
      typeof entry.candidates !== 'number'
    )
      continue;
    lines.push({
      pod: entry.pod,
      candidates: entry.candidates,
      reserved: typeof entry.reserved === 'string' ? entry.reserved : null,
    });
  }
  return lines;
}

const nodeNamed = (name: string) => nodes.find((n) => n.metadata.name === name)!;
const isSmall = (name: string) => allocatableOf(nodeNamed(name)).cpu === SMALL_CPU;
const sumOf = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0);
const smallPods = (pods: ReadonlyMap<string, number>) =>
  sumOf([...pods].filter(([name]) => isSmall(name)).map(([, k]) => k));
/** Pods on the small nodes whose place by name is in [lo, hi) (cpu16-000 is 0). */
const smallPodsByName = (pods: ReadonlyMap<string, number>, lo: number, hi: number) =>
  sumOf(
    nodes
      .slice(lo, hi)
      .filter((n) => isSmall(n.metadata.name))
      .map((n) => pods.get(n.metadata.name) ?? 0),
  );
const f4 = (x: number) => x.toFixed(4);
const POD_REQUEST = () => [milliCpu(POD_CPU), bytes(POD_MEMORY)];
const allocatableVector = (name: string) => [allocatableOf(nodeNamed(name)).cpu, allocatableOf(nodeNamed(name)).memory];

/** The most pods the small pool holds in any placement whose peak is `level` (the optimum): Σ its nodes' k with k pods ≤ level. */
function smallRoomAt(level: number): number {
  return sumOf(
    nodes
      .filter((n) => isSmall(n.metadata.name))
      .map((n) => Math.floor(level / pressureWith(allocatableVector(n.metadata.name), POD_REQUEST(), 1) + 1e-9)),
  );
}

/** The replay spec: the nodes in `order` (zones from their labels), `podCount` pods, at `percentage`. */
function specOf(order: readonly string[], percentage: number, podCount: number): ReplaySpec {
  return {
    dims: { names: ['cpu', 'memory'] },
    nodes: order.map((name) => ({ name, allocatable: allocatableVector(name) })),
    podRequest: POD_REQUEST(),
    podCount,
    honourCapacity: true,
    sampling: {
      percentageOfNodesToScore: percentage,
      zones: order.map((name) => nodeNamed(name).metadata.labels?.[ZONE_LABEL] ?? ''),
    },
  };
}

const byName = (spec: ReplaySpec, podsPerNode: readonly number[]) =>
  new Map(spec.nodes.map((n, i) => [n.name, podsPerNode[i] ?? 0] as const));
const inSpecOrder = (spec: ReplaySpec, pods: ReadonlyMap<string, number>) =>
  spec.nodes.map((n) => pods.get(n.name) ?? 0);

/** The model's first `k` decisions, as the pool of each ('S' small, 'L' large): replays of 1 … k pods. */
function modelFirstDecisions(order: readonly string[], percentage: number, k: number): string {
  let previous: readonly number[] = order.map(() => 0);
  let out = '';
  for (let i = 1; i <= k; i++) {
    const { podsPerNode } = replay(specOf(order, percentage, i), 'least_loaded', () => 0);
    const changed = podsPerNode.findIndex((c, j) => c !== previous[j]);
    out += changed >= 0 && isSmall(order[changed]!) ? 'S' : 'L';
    previous = podsPerNode;
  }
  return out;
}

const poolsOf = (decisions: readonly FilterLine[]) =>
  decisions
    .filter((d) => d.reserved)
    .map((d) => (isSmall(d.reserved!) ? 'S' : 'L'))
    .join('');

function sameAsPrevious(pools: string): number {
  let same = 0;
  for (let i = 1; i < pools.length; i++) if (pools[i] === pools[i - 1]) same++;
  return same;
}

/** No pod in the cluster, and the extender's model agrees: nothing allocated or reserved on any node. */
async function waitClusterEmpty(): Promise<void> {
  await waitFor('an empty cluster (no pods; nothing allocated or reserved in the extender)', 180_000, async () => {
    if ((await kubectl.run(['get', 'pods', '-A', '-o', 'name'])).trim()) return undefined;
    const view = JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as ModelNode[];
    return view.every(
      (n) => n.allocated.cpu === 0 && n.reserved.cpu === 0 && n.allocated.memory === 0 && n.reserved.memory === 0,
    )
      ? true
      : undefined;
  });
}

/** The nodes that are not Ready or carry a node.kubernetes.io/ taint (a filter would fail them). */
async function uncleanNodes(): Promise<string[]> {
  const list = (
    await kubectl.json<{
      items: {
        metadata: { name: string };
        spec: { taints?: { key: string }[] };
        status: { conditions?: { type: string; status: string }[] };
      }[];
    }>(['get', 'nodes'])
  ).items;
  const clean = (n: (typeof list)[number]) =>
    (n.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') &&
    !(n.spec.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/'));
  return [
    ...list.filter((n) => !clean(n)).map((n) => n.metadata.name),
    ...(list.length === NODE_COUNT ? [] : [`(${list.length} nodes, not ${NODE_COUNT})`]),
  ];
}

/**
 * Every node Ready and without a node.kubernetes.io/ taint. The node lifecycle controller taints new nodes and
 * lifts the taint tens of seconds after KWOK reports them Ready; it is lifted here from Ready nodes (untaintNodes).
 */
async function waitNodesClean(): Promise<void> {
  await untaintNodes(admin!, 180_000);
  await waitFor(`${NODE_COUNT} nodes Ready and without a not-ready taint`, 180_000, async () =>
    (await uncleanNodes()).length === 0 ? true : undefined,
  );
}

/** Waits until kube-scheduler-sandbox's node tree and the extender both hold every node. */
async function waitNodesKnown(): Promise<NodeTree> {
  const tree = await waitFor(
    `kube-scheduler-sandbox's node tree holding ${NODE_COUNT} nodes (its --v=2 log)`,
    60_000,
    async () => {
      const t = nodeTree();
      return treeSize(t) === NODE_COUNT ? t : undefined;
    },
  );
  await waitFor(`the extender holding ${NODE_COUNT} nodes`, 60_000, async () =>
    (JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as ModelNode[]).filter((n) => n.hasNode).length ===
    NODE_COUNT
      ? true
      : undefined,
  );
  return tree;
}

/**
 * `podCount` pods created at once for sandbox-scheduler, waited for until all are bound, and the model of the same
 * burst on the nodes in the tree's order; the cluster is emptied afterwards (also when the run fails).
 */
async function burst(label: string, percentage: number, podCount = POD_COUNT): Promise<RunResult> {
  const namespace = `sampling-${label.toLowerCase()}`;
  await step(`${label}: nodes clean`, waitNodesClean);
  const tree = await step(`${label}: nodes known`, waitNodesKnown);
  await createNamespace(kubectl, namespace); // the cluster is this file's own, new: nothing of an earlier run is left
  try {
    const configured = await schedulerSettings();
    const logFrom = statSync(logFile('sandbox-extender')).size;
    const attemptsBefore = await schedulingAttempts();
    const t0 = Date.now();
    // `create` (one POST per pod, no read first); kube-scheduler places them as they arrive, one cycle at a time.
    const items = podManifests({
      namespace,
      prefix: 'sbx',
      count: podCount,
      cpu: POD_CPU,
      memory: POD_MEMORY,
      labels: { app: 'e2e-sampling' },
      schedulerName: SCHEDULER,
    });
    await kubectl.run(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    const pods = await step(`${label}: ${podCount} pods bound`, () =>
      waitFor(
        `${podCount} pods in ${namespace} bound`,
        RUN_TIMEOUT_MS,
        async () => {
          const list = (await kubectl.json<{ items: PodView[] }>(['-n', namespace, 'get', 'pods'])).items;
          return list.length === podCount && list.every((p) => p.spec.nodeName) ? list : undefined;
        },
        async () =>
          (await kubectl.run(['-n', namespace, 'get', 'pods', '-o', 'wide'])).split('\n').slice(0, 30).join('\n'),
      ),
    );
    const seconds = (Date.now() - t0) / 1000;
    await waitFor('the extender to settle (reservations_pending 0)', 60_000, async () =>
      metricValue(await fetchText(`${env.EXTENDER_URL}/metrics`), 'sandbox_extender_reservations_pending') === 0
        ? true
        : undefined,
    );
    const attempts = (await schedulingAttempts()) - attemptsBefore;
    const decisions = filterLines(logFrom, namespace);
    const uncleanAfter = await uncleanNodes();
    const treeChanged = JSON.stringify(treeWalk(nodeTree())) !== JSON.stringify(treeWalk(tree));

    const placed = new Map(pods.map((p) => [`${namespace}/${p.metadata.name}`, p.spec.nodeName!] as const));
    const real = new Map<string, number>(nodes.map((n) => [n.metadata.name, 0]));
    for (const node of placed.values()) real.set(node, (real.get(node) ?? 0) + 1);
    let peak = 0;
    let peakNode = '';
    for (const [name, k] of real) {
      const p = pressureWith(allocatableVector(name), POD_REQUEST(), k);
      if (p > peak) [peak, peakNode] = [p, name];
    }
    // Placed by the extender: the pod's last reserving Filter call chose the node it is bound to.
    const lastReserved = new Map<string, string>();
    for (const d of decisions) if (d.reserved) lastReserved.set(d.pod, d.reserved);
    const notByExtender = [...placed]
      .filter(([pod, node]) => lastReserved.get(pod) !== node)
      .map(([pod, node]) => `${pod} on ${node}`);

    // The model: the same nodes in the tree's order (zones as node_tree.go interleaves them), the same pods.
    const order = [...tree.values()].flat();
    const spec = specOf(order, percentage, podCount);
    const model = replay(spec, 'least_loaded', () => 0);
    const byNameSpec = specOf(
      nodes.map((n) => n.metadata.name),
      percentage,
      podCount,
    );
    const byNameSmall = smallPods(byName(byNameSpec, replay(byNameSpec, 'least_loaded', () => 0).podsPerNode));
    const optimum = discreteOptimum(spec)!;
    return {
      label,
      percentage,
      podCount,
      configured,
      tree,
      treeChanged,
      uncleanAfter,
      real,
      modelPods: byName(spec, model.podsPerNode),
      model,
      spec,
      optimum,
      byNameSmall,
      peak,
      peakNode,
      decisions,
      notByExtender,
      attempts,
      seconds,
    };
  } finally {
    await step(`${label}: emptied`, async () => {
      // One DELETE of the collection (the pods' grace period is 0: gone at once), then the namespace, not waited for.
      await kubectl.run(['delete', '--raw', `/api/v1/namespaces/${namespace}/pods`]);
      await kubectl.run(['delete', 'namespace', namespace, '--wait=false']);
      await waitClusterEmpty();
    });
  }
}

/** How the tree's walk relates to the names: by name, or how the first windows mix the pools. */
function describeOrder(r: RunResult): string {
  const walk = treeWalk(r.tree);
  const names = nodes.map((n) => n.metadata.name);
  const window = numFeasibleNodesToFind(r.percentage, NODE_COUNT);
  if (JSON.stringify(walk) === JSON.stringify(names)) return `node tree: by name (${walk[0]} … ${walk.at(-1)})`;
  const large = (from: number) => walk.slice(from, from + window).filter((n) => !isSmall(n)).length;
  return `node tree: not by name (${walk.slice(0, 6).join(', ')} …); 192-CPU nodes among tree positions 0–${window - 1}: ${large(0)}, ${window}–${2 * window - 1}: ${large(window)}`;
}

/** The run's table: model against the real placement. */
function describeRun(r: RunResult): string {
  const sizes = r.decisions.map((d) => d.candidates);
  const modelPeakNode = r.model.peakNode ?? '-';
  const onePod = pressureWith(allocatableVector(r.peakNode), POD_REQUEST(), 1);
  const room = smallRoomAt(r.optimum);
  const rows = [
    ['', 'model (replay, tree order)', 'kube-scheduler v1.36.3 + extender', 'optimum'],
    [
      'nodes offered per pod (window)',
      `${r.model.offered?.min ?? '-'}–${r.model.offered?.max ?? '-'}`,
      `${Math.min(...sizes)}–${Math.max(...sizes)} (${sizes.length} Filter calls)`,
      '-',
    ],
    ['pods on the 16-CPU pool (150 nodes)', String(smallPods(r.modelPods)), String(smallPods(r.real)), `≤ ${room}`],
    [
      '  on cpu16-000 … 099',
      String(smallPodsByName(r.modelPods, 0, 100)),
      String(smallPodsByName(r.real, 0, 100)),
      '-',
    ],
    [
      '  on cpu16-100 … 149',
      String(smallPodsByName(r.modelPods, 100, 150)),
      String(smallPodsByName(r.real, 100, 150)),
      '-',
    ],
    [
      'pods on the 192-CPU pool (50 nodes)',
      String(r.podCount - smallPods(r.modelPods)),
      String(r.podCount - smallPods(r.real)),
      `≥ ${r.podCount - room}`,
    ],
    [
      'peak pressure',
      `${f4(r.model.peakPressure)} (${modelPeakNode})`,
      `${f4(r.peak)} (${r.peakNode}; one pod there ${f4(onePod)})`,
      f4(r.optimum),
    ],
    [
      'pods above the optimum',
      String(podsAbove(r.spec, r.model.podsPerNode, r.optimum)),
      String(podsAbove(r.spec, inSpecOrder(r.spec, r.real), r.optimum)),
      '0',
    ],
  ];
  const pools = poolsOf(r.decisions);
  const order = [...r.tree.values()].flat();
  return [
    `${r.label}. percentageOfNodesToScore ${r.percentage}${r.percentage === 0 ? ' (adaptive)' : ''} (/configz: ${JSON.stringify(r.configured)}): ${r.podCount} pods of ${POD_CPU} CPU / ${POD_MEMORY}, all bound ${r.seconds.toFixed(1)} s after the first create; ${r.attempts} scheduling attempts; ${describeOrder(r)}`,
    '',
    ...columns(rows),
    '',
    `the model walking the nodes by name instead would put ${r.byNameSmall} pods on the 16-CPU pool`,
    `pool of each decision, first 40 (S: 16-CPU, L: 192-CPU): model ${modelFirstDecisions(order, r.percentage, 40)}`,
    `                                                         real  ${pools.slice(0, 40)}`,
    `consecutive decisions in the same pool (real): ${sameAsPrevious(pools)} of ${Math.max(0, pools.length - 1)}`,
  ].join('\n');
}

/** Window, per-pool count and peak against the model; returns the tolerance used. */
function expectModelsRun(r: RunResult, window: number, slack: number): number {
  expect(r.model.offered).toEqual({ min: window, max: window });
  // Every Filter call offered the model's window: kube-scheduler stops at exactly `window` fitting nodes.
  expect(r.decisions.filter((d) => d.candidates !== window)).toEqual([]);
  expect(r.notByExtender).toEqual([]);
  expect({ treeChanged: r.treeChanged, uncleanAfter: r.uncleanAfter }).toEqual({
    treeChanged: false,
    uncleanAfter: [],
  });
  const extra = Math.max(0, r.attempts - r.podCount, r.decisions.length - r.podCount);
  const tolerance = extra + slack;
  say(
    `${r.label}: 16-CPU pool ${smallPods(r.real)} pods, model ${smallPods(r.modelPods)}, tolerance ±${tolerance} (${extra} scheduling attempts beyond one per pod + ${slack})`,
  );
  expect(Math.abs(smallPods(r.real) - smallPods(r.modelPods))).toBeLessThanOrEqual(tolerance);
  expect(Math.abs(r.peak - r.model.peakPressure)).toBeLessThanOrEqual(
    pressureWith([SMALL_CPU, 64 * 2 ** 30], POD_REQUEST(), 1) + 1e-9,
  ); // one pod on a 16-CPU node
  return tolerance;
}

beforeAll(async () => {
  locked = takeStateLock(STATE, 'sampling.e2e.test.ts', 'SANDBOX_SAMPLING_E2E_STATE');
  mkdirSync(join(STATE, '..'), { recursive: true });
  writeFileSync(EXTENDER_CONFIG, 'logLevel: debug\nevents: {enabled: false}\n');
  await script('cluster-down.sh', ['--keep-logs']); // a cluster left by a killed run of this file
  const t0 = Date.now();
  await script('cluster-up.sh', [], {
    CLUSTER_NODES,
    SANDBOX_PERCENTAGE: '0',
    SANDBOX_SCHEDULER_VERBOSITY: '2',
    AGENT_SANDBOX: '0',
    EXTENDER_CONFIG,
  });
  clusterUpSeconds = (Date.now() - t0) / 1000;
  env = keyValues(readFileSync(join(STATE, 'cluster.env'), 'utf8'));
  kubectl = new Kubectl(env);
  admin = await Kube.connect(env.KUBECONFIG!, 16);
  nodes = (await kubectl.json<{ items: typeof nodes }>(['get', 'nodes'])).items;
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    admin?.agent.destroy();
    if (!locked) return; // another run owns the state folder: touch nothing
    if (report.length > 0) {
      report.push(
        `cluster up ${clusterUpSeconds.toFixed(1)} s; ${steps.join('; ')}; start to report ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
      );
      mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
      writeFileSync(join(STATE_DIR, 'logs', 'sampling.txt'), `${report.join('\n')}\n`);
    }
    await script('cluster-down.sh', ['--keep-logs']);
    console.log(`sampling e2e: ${((Date.now() - startedAt) / 1000).toFixed(1)} s with the cluster up and down`);
  } finally {
    if (locked) releaseStateLock(STATE);
  }
}, 5 * 60_000);

describe("kube-scheduler's sampled window, against the replay's model of it", () => {
  test("the cluster: two pools whose names sort them in blocks, no zones, batching off for the extender's profile", async () => {
    const names = nodes.map((n) => n.metadata.name);
    expect(names).toHaveLength(NODE_COUNT);
    expect(names).toEqual([...names].sort());
    expect(names.slice(0, 150).every((n) => isSmall(n))).toBe(true);
    expect(names.slice(150).some((n) => isSmall(n))).toBe(false);
    expect(nodes.filter((n) => n.metadata.labels?.[ZONE_LABEL])).toEqual([]);
    const schedulerLog = readFileSync(logFile('kube-scheduler-sandbox'), 'utf8');
    expect(
      schedulerLog
        .split('\n')
        .some(
          (l) =>
            l.includes('Disabling signatures for profile because it has extenders configured') &&
            l.includes(`profile="${SCHEDULER}"`),
        ),
    ).toBe(true);
    say(
      `Cluster: ${NODE_COUNT} KWOK nodes (${CLUSTER_NODES}: cpu16-000 … cpu16-149, then cpu192-00 … cpu192-49), no zone labels; kube-scheduler-sandbox: signatures (OpportunisticBatching) off for ${SCHEDULER}, it has an extender.`,
    );
  });

  test(
    'A1. adaptive (0), the nodes there before kube-scheduler started: its tree order, walked in windows of 100, as the model says',
    async () => {
      const r = await burst('A1', 0, POD_COUNT_A1);
      say(describeRun(r));
      expect(r.configured).toEqual({ percentageOfNodesToScore: 0, parallelism: 16 }); // 16: the chunks of 13 (header)
      expectModelsRun(r, numFeasibleNodesToFind(0, NODE_COUNT), SLACK);
    },
    RUN_TIMEOUT_MS,
  );

  test(
    'A2. adaptive (0), the nodes created again by name while it runs: windows alternate between the pools, the small pool far above the optimum',
    async () => {
      // Gone from kube-scheduler's tree, then created in the order of their names (cluster-up's nodes.json). In between,
      // one scheduling cycle with no node: kube-scheduler walks its snapshot's node list, rebuilt from the tree only
      // when the snapshot meets a node name it does not hold (cache.go UpdateSnapshot), so nodes deleted and created
      // again under the same names between two cycles would keep the old order.
      await step('A2: nodes deleted', async () => {
        // --wait=false: kubectl's wait for 200 objects takes tens of seconds; kube-scheduler's log and the API say when.
        await kubectl.run(['delete', 'nodes', '--all', '--wait=false']);
        await waitFor("the nodes gone from the API and kube-scheduler-sandbox's node tree", 60_000, async () =>
          treeSize(nodeTree()) === 0 && !(await kubectl.run(['get', 'nodes', '-o', 'name'])).trim() ? true : undefined,
        );
      });
      await step('A2: a scheduling cycle with no node', async () => {
        const namespace = 'sampling-a2'; // the burst's, created here
        await createNamespace(kubectl, namespace);
        await kubectl.run(
          ['create', '-f', '-'],
          JSON.stringify({
            apiVersion: 'v1',
            kind: 'List',
            items: podManifests({
              namespace,
              prefix: 'probe',
              count: 1,
              cpu: POD_CPU,
              memory: POD_MEMORY,
              schedulerName: SCHEDULER,
            }),
          }),
        );
        await waitFor('the probe pod tried by kube-scheduler-sandbox (PodScheduled False)', 60_000, async () => {
          const pod = await kubectl.json<PodView>(['-n', namespace, 'get', 'pod', 'probe-00']);
          return (pod.status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False')
            ? true
            : undefined;
        });
        await kubectl.run(['-n', namespace, 'delete', 'pod', 'probe-00', '--wait=true']);
      });
      await step('A2: the extender without the nodes', async () => {
        await waitFor('the extender holding no Node object', 90_000, async () =>
          (JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as ModelNode[]).every((n) => !n.hasNode)
            ? true
            : undefined,
        );
      });
      await step('A2: nodes created by name', () => kubectl.run(['create', '-f', join(STATE, 'nodes.json')]));
      const r = await burst('A2', 0);
      say(describeRun(r));
      expect(r.configured).toEqual({ percentageOfNodesToScore: 0, parallelism: 16 });
      expect(treeWalk(r.tree)).toEqual(nodes.map((n) => n.metadata.name)); // added in creation order: by name
      const window = numFeasibleNodesToFind(0, NODE_COUNT);
      const tolerance = expectModelsRun(r, window, SLACK);
      // Far above the optimum (no placement at the optimum's peak puts a pod on the small pool): the model's effect, really.
      expect(smallPods(r.real) - smallRoomAt(r.optimum)).toBeGreaterThan(r.podCount / 4);
      expect(r.peak).toBeGreaterThan(2 * r.optimum);
      expect(podsAbove(r.spec, inSpecOrder(r.spec, r.real), r.optimum)).toBeGreaterThanOrEqual(
        podsAbove(r.spec, r.model.podsPerNode, r.optimum) - tolerance,
      );
      // Each window starts where the previous one stopped: the pools alternate, as in the model (none the same twice).
      const order = [...r.tree.values()].flat();
      expect(sameAsPrevious(modelFirstDecisions(order, 0, 40))).toBe(0);
      expect(sameAsPrevious(poolsOf(r.decisions))).toBeLessThanOrEqual(2 * tolerance);
      // The small windows are cpu16-000 … 099: what a window takes in past them is a few nodes (22 at most seen), which
      // hold no more than the level of the rest (3 pods: ≤ 66 of 250 even for 22), so at least three quarters of the
      // small pool's pods are on cpu16-000 … 099, and none past the reach of three chunks (cpu16-138).
      expect(smallPodsByName(r.real, window + WINDOW_REACH, 150)).toBe(0);
      expect(smallPodsByName(r.real, 0, window)).toBeGreaterThanOrEqual(0.75 * smallPods(r.real));
    },
    RUN_TIMEOUT_MS,
  );

  test(
    'B. 100 %: every node offered; the peak within one pod of the optimum, no pod on the small pool',
    async () => {
      await step('B: kube-scheduler-sandbox restarted at 100 %', () => script('component.sh', ['percentage', '100']));
      const r = await burst('B', 100);
      say(describeRun(r));
      expect(r.configured).toEqual({ percentageOfNodesToScore: 100, parallelism: 16 });
      expectModelsRun(r, NODE_COUNT, SLACK);
      // The small pool gets no more than any placement at the optimum's peak puts there (none).
      expect(smallPods(r.modelPods)).toBeLessThanOrEqual(smallRoomAt(r.optimum));
      expect(smallPods(r.real)).toBeLessThanOrEqual(smallRoomAt(r.optimum));
      const onePod = pressureWith(allocatableVector(r.peakNode), POD_REQUEST(), 1);
      expect(r.peak).toBeLessThanOrEqual(r.optimum + onePod + 1e-9);
      expect(r.model.peakPressure).toBeLessThanOrEqual(r.optimum + onePod + 1e-9);
    },
    RUN_TIMEOUT_MS,
  );
});
