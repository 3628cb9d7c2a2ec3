/**
 * kube-apiserver restarted in the middle of a burst: the extender's scheduler cache must follow the cluster
 * afterwards. On examples/cluster/heterogeneous.yaml (16, 64 and 192 CPUs), with the extender in cluster
 * mode:
 *
 * 1. the extender is restarted with `watch.maxBrokenSeconds: 5` (restored afterwards), so that the outage below
 *    outlasts the bound;
 * 2. 200 pods of 1 CPU / 2 GiB are created at once; once 40 are bound, kube-apiserver is stopped as an operator
 *    would (component.sh stop: SIGTERM, SIGKILL after 10 s);
 * 3. while it is down, one bound pod is deleted directly in etcd (its key under /registry/pods), so no client can
 *    ever see a DELETED event for it: only a relist can release what it held; and the extender, its watches broken
 *    for longer than the bound, must refuse to decide (/readyz 503 and /filter an Error, both saying "stale");
 * 4. kube-apiserver is started again with the same command (component.sh start: waits for /readyz, then starts again
 *    a kube-scheduler that exited because it could not renew its lease); its watch cache now begins at the current
 *    resourceVersion, so the extender's watches, resumed from older ones, get 410 Gone in the stream;
 * 5. a Node (tainted, so the burst stays off it) and a Pod bound to it are created after the outage.
 *
 * Asserted: every pod of the burst is placed, Running and Ready; no node is over allocatable; the extender's cache
 * (/debug/nodes) has the new Node with the new Pod's requests, and on every other node exactly the requests of the
 * pods bound there (so the pod deleted during the outage was released); `watch_lists_total{kind="relist"}` rose for
 * nodes and pods, after a 410 the extender logged as an ERROR event in the stream; no reservation is left pending;
 * /readyz is 200 again with no watch failing; every component of the cluster runs; and no 403 is counted (those
 * answered while the new API server was still loading RBAC are not). The figures (time to relist after the restart
 * among them) are printed and written to .e2e/logs/apiserver-restart.txt.
 *
 * On a shared cluster (E2E_REUSE_CLUSTER=1, as in run-ci.sh) it leaves the cluster as it found it: the new Node and
 * the namespace deleted, the extender back on its own config, both schedulers running and leading.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { bootstrapWindows } from './forbidden.mjs';
import {
  E2E_DIR,
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  component,
  fetchText,
  forbiddenLines,
  metricValue,
  run,
  setUpCluster,
  tearDownCluster,
  waitExtenderSettled,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import {
  Kubectl,
  allocatableOf,
  bytes,
  columns,
  createNamespace,
  deleteNamespace,
  heterogeneousNodes,
  podManifests,
  requestedPerNode,
  waitAllRunningReady,
  type Amounts,
  type NodeView,
  type PodView,
} from './kit/kubectl.js';

const NAMESPACE = 'e2e-apiserver-restart';
const SCHEDULER = 'sandbox-scheduler';
const BURST = 200;
const POD_CPU = '1';
const POD_MEMORY = '2Gi';
const STOP_AFTER_BOUND = 40;
const MAX_BROKEN_SECONDS = 5;
const LATE_NODE = 'cpu8-late';
const LATE_TAINT = 'sandbox-extender.io/e2e-late';
const LATE_POD = 'late';
const TEST_TIMEOUT_MS = 600_000;

let env: ClusterEnv;
let kubectl: Kubectl;
let nodes: NodeView[] = [];
let extenderConfigChanged = false;
const report: string[] = [];

function say(text: string): void {
  console.log(text);
  report.push(text, '');
}

const metrics = () => fetchText(`${env.EXTENDER_URL}/metrics`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface ModelNode {
  name: string;
  allocatable: Amounts | null;
  allocated: Amounts;
  reserved: Amounts;
  reservations: unknown[];
}
const modelNodes = async () => JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as ModelNode[];

/** component.sh stop NAME (it prints nothing on stdout); its progress lines go to stderr. */
async function componentStop(name: string): Promise<void> {
  const { stderr } = await run('bash', [join(E2E_DIR, 'component.sh'), 'stop', name], { timeoutMs: 60_000 });
  process.stderr.write(
    stderr
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => `component.sh stop ${name}: ${l}\n`)
      .join(''),
  );
}

/** The extender's readiness: status and body. */
async function readyz(): Promise<{ status: number; text: string }> {
  const res = await fetch(`${env.EXTENDER_URL}/readyz`);
  return { status: res.status, text: await res.text() };
}

/** No pod anywhere, only the three nodes, and the extender's cache agrees: nothing allocated or reserved. */
async function waitClusterEmpty(): Promise<void> {
  await waitFor(
    'an empty cluster (no pods; the 3 nodes; nothing allocated or reserved in the extender)',
    180_000,
    async () => {
      const pods = await kubectl.json<{ items: PodView[] }>(['get', 'pods', '-A']);
      if (pods.items.length > 0) return undefined;
      const view = await modelNodes();
      if (
        view
          .map((n) => n.name)
          .sort()
          .join() !==
        nodes
          .map((n) => n.metadata.name)
          .sort()
          .join()
      )
        return undefined;
      return view.every(
        (n) => n.allocated.cpu === 0 && n.reserved.cpu === 0 && n.allocated.memory === 0 && n.reserved.memory === 0,
      )
        ? true
        : undefined;
    },
    async () => `${await kubectl.run(['get', 'pods', '-A'])}\n${await fetchText(`${env.EXTENDER_URL}/debug/nodes`)}`,
  );
}

/** The extender's pino log lines (JSON) logged at or after `sinceMs`. */
function extenderLog(
  sinceMs: number,
): { time: number; msg: string; resource?: string; how?: string; relist?: boolean }[] {
  return readFileSync(join(STATE_DIR, 'logs', 'sandbox-extender.log'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { time: number; msg: string })
    .filter((l) => l.time >= sinceMs);
}

/** Deletes a key straight from etcd (its JSON gateway, /v3/kv/deleterange); returns how many keys went. */
async function etcdDelete(key: string): Promise<number> {
  const res = await fetch(`${env.ETCD_URL}/v3/kv/deleterange`, {
    method: 'POST',
    body: JSON.stringify({ key: Buffer.from(key).toString('base64') }),
  });
  if (!res.ok) throw new Error(`etcd deleterange ${key}: HTTP ${res.status} ${await res.text()}`);
  return Number(((await res.json()) as { deleted?: string }).deleted ?? 0);
}

const lateNode = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: LATE_NODE,
    labels: {
      'kubernetes.io/hostname': LATE_NODE,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      type: 'kwok',
    },
    annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
  },
  spec: { taints: [{ key: LATE_TAINT, value: 'true', effect: 'NoSchedule' }] },
  status: {
    allocatable: { cpu: '8', memory: '32Gi', pods: '110' },
    capacity: { cpu: '8', memory: '32Gi', pods: '110' },
  },
};
const latePod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: LATE_POD, namespace: NAMESPACE },
  spec: {
    nodeName: LATE_NODE,
    terminationGracePeriodSeconds: 0,
    tolerations: [{ key: LATE_TAINT, operator: 'Exists', effect: 'NoSchedule' }],
    containers: [
      {
        name: 'sandbox',
        image: 'registry.invalid/e2e/sandbox:1',
        resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } },
      },
    ],
  },
};

async function removeLateObjects(): Promise<void> {
  await deleteNamespace(kubectl, NAMESPACE);
  await kubectl.run(['delete', 'node', LATE_NODE, '--ignore-not-found', '--wait=true', '--timeout=60s']);
}

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(
      `apiserver-restart.e2e needs the extender in cluster mode; this cluster runs it in ${env.EXTENDER_MODE ?? 'snapshot'} mode (EXTENDER_MODE=cluster npm run cluster:up)`,
    );
  if (!env.ETCD_URL) throw new Error('cluster.env has no ETCD_URL');
  kubectl = new Kubectl(env);
  await removeLateObjects(); // left by an interrupted run
  nodes = await heterogeneousNodes(kubectl);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    if (env && extenderConfigChanged) await component(['restart', 'sandbox-extender']); // back on its own config
  } finally {
    if (report.length > 0) {
      mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
      writeFileSync(join(STATE_DIR, 'logs', 'apiserver-restart.txt'), `${report.join('\n')}\n`);
    }
    await tearDownCluster();
  }
}, 300_000);

test(
  `kube-apiserver restarted in the middle of a burst of ${BURST} pods: the cache follows the cluster afterwards`,
  async () => {
    // 1. The extender with a 5 s staleness bound (on top of the config it runs with, if any).
    const ownConfig = env.EXTENDER_CONFIG
      ? ((parseYaml(readFileSync(env.EXTENDER_CONFIG, 'utf8')) ?? {}) as { watch?: object })
      : {};
    const configFile = join(STATE_DIR, 'extender-max-broken.yaml');
    writeFileSync(
      configFile,
      stringifyYaml({ ...ownConfig, watch: { ...(ownConfig.watch ?? {}), maxBrokenSeconds: MAX_BROKEN_SECONDS } }),
    );
    extenderConfigChanged = true;
    await component(['restart', 'sandbox-extender', '--config', configFile]);
    await waitClusterEmpty();
    const before = await metrics();
    const relists = (m: string, resource: string) =>
      metricValue(m, 'sandbox_extender_watch_lists_total', { resource, kind: 'relist' });

    try {
      // 2. The burst; kube-apiserver stopped once 40 pods are bound.
      await createNamespace(kubectl, NAMESPACE);
      const t0 = Date.now();
      const applying = kubectl.apply(
        podManifests({
          namespace: NAMESPACE,
          prefix: 'sbx',
          count: BURST,
          cpu: POD_CPU,
          memory: POD_MEMORY,
          labels: { app: 'e2e-apiserver-restart' },
          schedulerName: SCHEDULER,
        }),
      );
      const bound = await waitFor(`${STOP_AFTER_BOUND} pods bound`, 120_000, async () => {
        const pods = (await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods'])).items.filter(
          (p) => p.spec.nodeName,
        );
        return pods.length >= STOP_AFTER_BOUND ? pods : undefined;
      });
      const victim = bound[0]!;
      const tStop = Date.now();
      await componentStop('kube-apiserver');
      const tStopped = Date.now();

      // 3. While it is down: a deletion no watch can report, and the extender refusing to decide on a stale view.
      const deleted = await etcdDelete(`/registry/pods/${NAMESPACE}/${victim.metadata.name}`);
      const stale = await waitFor(
        `the extender's /readyz to say its cache is stale (watches broken > ${MAX_BROKEN_SECONDS} s)`,
        60_000,
        async () => {
          const r = await readyz();
          return r.status === 503 && /cache is stale/.test(r.text) ? r : undefined;
        },
      );
      const tStale = Date.now();
      const probe = {
        Pod: {
          metadata: { name: 'probe', namespace: NAMESPACE, uid: 'e2e-probe-uid' },
          spec: { schedulerName: SCHEDULER, containers: [{ name: 'c', resources: { requests: { cpu: '1' } } }] },
        },
        NodeNames: nodes.map((n) => n.metadata.name),
      };
      const refused = (await (
        await fetch(`${env.EXTENDER_URL}/filter`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(probe),
        })
      ).json()) as { Error: string; NodeNames: string[] | null };
      const whileDown = await metrics();
      const brokenWhileDown = Math.max(
        ...['nodes', 'pods'].map((resource) =>
          metricValue(whileDown, 'sandbox_extender_watch_broken_seconds', { resource }),
        ),
      );

      // 4. Started again with the same command.
      await component(['start', 'kube-apiserver']);
      const tReady = Date.now();
      await applying.catch(() => undefined); // kubectl apply may have been cut by the outage: apply the burst again
      await kubectl.apply(
        podManifests({
          namespace: NAMESPACE,
          prefix: 'sbx',
          count: BURST,
          cpu: POD_CPU,
          memory: POD_MEMORY,
          labels: { app: 'e2e-apiserver-restart' },
          schedulerName: SCHEDULER,
        }).filter((p) => (p as { metadata: { name: string } }).metadata.name !== victim.metadata.name),
      );

      // 5. A Node and a Pod created after the outage.
      await kubectl.run(['create', '-f', '-'], JSON.stringify(lateNode));
      await kubectl.run(['create', '-f', '-'], JSON.stringify(latePod));

      const pods = await waitAllRunningReady(kubectl, NAMESPACE, BURST, 300_000); // 199 of the burst + the late pod
      const tPlaced = Date.now();
      const after = await waitExtenderSettled(env, 120_000);
      const all = (await kubectl.json<{ items: PodView[] }>(['get', 'pods', '-A'])).items;
      const perNode = requestedPerNode(all);
      const model = await waitFor(
        `the extender's cache to show ${LATE_NODE} with the late pod and every node's bound requests`,
        60_000,
        async () => {
          const view = await modelNodes();
          const late = view.find((n) => n.name === LATE_NODE);
          return late && late.allocated.cpu === 1000 ? view : undefined;
        },
        async () => fetchText(`${env.EXTENDER_URL}/debug/nodes`),
      );

      // The figures.
      const windows = bootstrapWindows(readFileSync(join(STATE_DIR, 'logs', 'kube-apiserver.log'), 'utf8'));
      const [apiStartMs, apiReadyMs] = windows.at(-1)!;
      const log = extenderLog(tStop);
      const expiries = log.filter((l) => l.msg.startsWith('watch expired'));
      const relisted = (resource: string) =>
        log.find((l) => l.msg === 'list applied' && l.relist === true && l.resource === resource);
      const relistNodes = relisted('nodes');
      const relistPods = relisted('pods');
      const afterStart = (l: { time: number } | undefined) =>
        l
          ? `${seconds(l.time - apiStartMs)} after the new process started (${seconds(l.time - apiReadyMs)} after it was seen ready)`
          : 'none';
      const rawRefusals = log.filter((l) => /403|forbidden/i.test(JSON.stringify(l))).length;
      const forbidden = await forbiddenLines();
      const burstPods = pods.filter((p) => p.metadata.name !== LATE_POD);
      const over = nodes.filter((n) => {
        const used = perNode.get(n.metadata.name) ?? { cpu: 0, memory: 0, pods: 0 };
        const alloc = allocatableOf(n);
        return used.cpu > alloc.cpu || used.memory > alloc.memory;
      });
      const modelRows = [...nodes.map((n) => n.metadata.name), LATE_NODE].map((name) => {
        const m = model.find((n) => n.name === name);
        const used = perNode.get(name) ?? { cpu: 0, memory: 0, pods: 0 };
        return [
          name,
          String(used.pods),
          `${used.cpu / 1000}`,
          m ? `${m.allocated.cpu / 1000}` : 'missing',
          m ? `${m.reserved.cpu / 1000}` : '-',
        ];
      });
      say(
        [
          `kube-apiserver restarted in the middle of a burst of ${BURST} pods of ${POD_CPU} CPU / ${POD_MEMORY} (extender watch.maxBrokenSeconds ${MAX_BROKEN_SECONDS}):`,
          '',
          ...columns([
            ['', ''],
            [
              'pods bound when kube-apiserver was stopped',
              `${bound.length} (${seconds(tStop - t0)} after the burst began)`,
            ],
            ['stop (SIGTERM, SIGKILL after 10 s)', seconds(tStopped - tStop)],
            [
              'deleted in etcd while it was down',
              `${NAMESPACE}/${victim.metadata.name} on ${victim.spec.nodeName} (${deleted} key)`,
            ],
            [
              'extender /readyz said "stale"',
              `${seconds(tStale - tStop)} after the stop: ${stale.text.split('\n')[0]!.slice(0, 120)}...`,
            ],
            ['extender /filter meanwhile', `Error "${refused.Error.slice(0, 100)}..."`],
            ['watch_broken_seconds while down (the larger)', String(brokenWhileDown)],
            ['new kube-apiserver: start -> ready', seconds(apiReadyMs - apiStartMs)],
            ['outage (stop began -> seen ready)', seconds(tReady - tStop)],
            ['410 seen by the extender', expiries.map((e) => `${e.resource}: ${e.how}`).join('; ') || 'none'],
            ['relist of nodes', afterStart(relistNodes)],
            ['relist of pods', afterStart(relistPods)],
            [
              'all pods Running and Ready',
              `${seconds(tPlaced - t0)} after the burst began, ${seconds(tPlaced - tReady)} after the restart`,
            ],
            ['nodes over allocatable', String(over.length)],
            ['reservations pending (settled)', String(metricValue(after, 'sandbox_extender_reservations_pending'))],
            [
              'relists (nodes, pods)',
              `${relists(after, 'nodes') - relists(before, 'nodes')}, ${relists(after, 'pods') - relists(before, 'pods')}`,
            ],
            [
              'watch restarts (nodes, pods)',
              ['nodes', 'pods']
                .map(
                  (r) =>
                    metricValue(after, 'sandbox_extender_watch_restarts_total', { resource: r }) -
                    metricValue(before, 'sandbox_extender_watch_restarts_total', { resource: r }),
                )
                .join(', '),
            ],
            [
              '403 lines in the extender log since the stop',
              `${rawRefusals} (counted, outside the API server's start -> ready window: ${forbidden.length})`,
            ],
          ]).slice(1),
          '',
          ...columns([
            ['node', 'pods (cluster)', 'CPU requested (cluster)', 'allocated (extender)', 'reserved (extender)'],
            ...modelRows,
          ]),
        ].join('\n'),
      );

      // All placed, nothing over-committed, nothing left reserved.
      expect(burstPods).toHaveLength(BURST - 1);
      expect(burstPods.every((p) => nodes.some((n) => n.metadata.name === p.spec.nodeName))).toBe(true);
      expect(over.map((n) => n.metadata.name)).toEqual([]);
      expect(metricValue(after, 'sandbox_extender_reservations_pending')).toBe(0);
      // The outage was real and the extender refused to decide blind meanwhile.
      expect(deleted).toBe(1);
      expect(stale.text).toMatch(
        /^not ready: the scheduler cache is stale: the (nodes|pods) list\/watch has been failing for/,
      );
      expect(refused.NodeNames).toBeNull();
      expect(refused.Error).toMatch(/^sandbox-extender: not ready: the scheduler cache is stale/);
      expect(brokenWhileDown).toBeGreaterThan(MAX_BROKEN_SECONDS);
      // Relisted after a 410 in the stream, for both resources.
      expect(relists(after, 'nodes')).toBeGreaterThan(relists(before, 'nodes'));
      expect(relists(after, 'pods')).toBeGreaterThan(relists(before, 'pods'));
      expect(
        new Set(
          expiries
            .filter((e) => /^ERROR event with a Status of code 410 .* in the stream/.test(e.how ?? ''))
            .map((e) => e.resource),
        ),
      ).toEqual(new Set(['nodes', 'pods']));
      // The cache follows the cluster: the late Node and Pod are in it; every node holds exactly its bound pods'
      // requests (the pod deleted in etcd is released), nothing reserved.
      const byName = new Map(model.map((n) => [n.name, n]));
      expect(byName.get(LATE_NODE)?.allocatable).toEqual({ cpu: 8000, memory: bytes('32Gi') });
      for (const name of [...nodes.map((n) => n.metadata.name), LATE_NODE]) {
        const used = perNode.get(name) ?? { cpu: 0, memory: 0, pods: 0 };
        expect({ node: name, allocated: byName.get(name)?.allocated, reserved: byName.get(name)?.reserved }).toEqual({
          node: name,
          allocated: { cpu: used.cpu, memory: used.memory },
          reserved: { cpu: 0, memory: 0 },
        });
      }
      expect(all.some((p) => p.metadata.name === victim.metadata.name && p.metadata.namespace === NAMESPACE)).toBe(
        false,
      );
      // Healthy again, and no refusal counted.
      const ready = await readyz();
      expect(ready.status).toBe(200);
      expect(ready.text).toMatch(
        /^ok\nnodes: synced; watch open; .*; not failing\npods: synced; watch open; .*; not failing$/,
      );
      expect(metricValue(after, 'sandbox_extender_watch_broken_seconds')).toBe(0);
      expect(forbidden).toEqual([]);
    } finally {
      await waitExtenderSettled(env).catch(() => undefined); // its Events are out before their namespace goes
      await removeLateObjects();
      await waitClusterEmpty();
    }
    // The shared cluster is whole: every component runs (the process recorded at its start), both schedulers lead.
    for (const name of [
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kwok',
      'sandbox-extender',
      'kube-scheduler-sandbox',
      'kube-scheduler-default',
    ]) {
      expect({ name, running: running(name) }).toEqual({ name, running: true });
    }
    for (const lease of [SCHEDULER, 'kube-scheduler']) {
      expect(
        (
          await kubectl.run(['-n', 'kube-system', 'get', 'lease', lease, '-o', 'jsonpath={.spec.holderIdentity}'])
        ).trim(),
      ).not.toBe('');
    }
  },
  TEST_TIMEOUT_MS,
);

/** True when pids/NAME names a live process with the start time recorded there (as lib.sh e2e_pidfile_alive). */
function running(name: string): boolean {
  const [pid, start] = readFileSync(join(STATE_DIR, 'pids', name), 'utf8')
    .trim()
    .split(' ');
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // after "pid (comm) ": state is field 3, starttime 22
    return fields[0] !== 'Z' && fields[19] === start;
  } catch {
    return false;
  }
}
