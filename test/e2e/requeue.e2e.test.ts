/**
 * Requeue after capacity frees where kube-scheduler cannot see it (issue 13; docs/adr/0006-requeue-nudge.md), on
 * examples/cluster/heterogeneous.yaml (16, 64 and 192 CPUs, 4 GiB per CPU). Every node is filled with pods bound
 * directly (spec.nodeName): a large one of (allocatable − 2 CPU, − 4 GiB) and a small one of 2 CPU / 4 GiB, so a
 * new 2-CPU sandbox fits nowhere until one small pod goes.
 *
 * a. fillers paused (label sandbox-extender.io/paused=true) and Succeeded: kube-scheduler does not see them and
 *    passes every node to the extender, whose Filter rejects the waiting pod. One small paused pod is deleted:
 *    the waiting pod is bound to that node within seconds (without the requeue: ~5 minutes, the unschedulable-pool
 *    flush), and sandbox_extender_pods_nudged_total{result="requeued"} moved.
 * b. the same, the small paused pod losing its label instead (its record goes paused → inactive).
 * c. kube-scheduler rejects first (fillers Running; the small one paused but Running, so both count it); the small
 *    one then turns Succeeded: kube-scheduler no longer sees it and retries at once, but the extender still counts
 *    it (paused, whatever the phase) and rejects; then it is deleted: bound within seconds.
 * d. the race of the issue: kube-scheduler rejects first (plain Running pods), a Running pod is deleted, and
 *    kube-scheduler retries at once — before or after the extender's watch removed the pod. ROUNDS rounds; each
 *    waiting pod bound within seconds, whichever came first. The table says in how many rounds the extender
 *    rejected the retry (the race) and nudged.
 *
 * Everything runs in one namespace, deleted at the end (the cluster is left empty, as found).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  fetchText,
  forbiddenLines,
  metricValue,
  setUpCluster,
  tearDownCluster,
  waitExtenderSettled,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import {
  Kubectl,
  allocatableOf,
  columns,
  createNamespace,
  deleteNamespace,
  describePods,
  heterogeneousNodes,
  type NodeView,
  type PodView,
} from './kit/kubectl.js';

const NAMESPACE = 'e2e-requeue';
const SCHEDULER = 'sandbox-scheduler';
const PAUSED = 'sandbox-extender.io/paused';
const GiB = 1024 ** 3;
/** Bound on the time from freeing the room to the waiting pod bound (kube-scheduler's own retry takes ~0.1 s; without the requeue ~300 s). */
const BIND_WITHIN_S = 10;
const ROUNDS = 10;
const TEST_TIMEOUT_MS = 240_000;

let env: ClusterEnv;
let kubectl: Kubectl;
let nodes: NodeView[] = [];
const report: string[] = [];
const results: string[][] = [['case', 'freed by', 'node', 'bound after', 'pods nudged']];

const metrics = () => fetchText(`${env.EXTENDER_URL}/metrics`);
const nudged = (m: string) => metricValue(m, 'sandbox_extender_pods_nudged_total', { result: 'requeued' });
const noFit = (m: string) => metricValue(m, 'sandbox_extender_placements_total', { result: 'no_fit' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pod(name: string, o: { cpu: number; memoryGiB: number; nodeName?: string; paused?: boolean }): object {
  const requests = { cpu: String(o.cpu), memory: `${o.memoryGiB}Gi` };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'e2e-requeue', ...(o.paused ? { [PAUSED]: 'true' } : {}) } },
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : { schedulerName: SCHEDULER }),
      terminationGracePeriodSeconds: 0,
      containers: [
        { name: 'sandbox', image: 'registry.invalid/e2e/sandbox:1', resources: { requests, limits: requests } },
      ],
    },
  };
}

const getPod = (name: string) => kubectl.json<PodView>(['-n', NAMESPACE, 'get', 'pod', name]);

async function setPhase(names: readonly string[], phase: 'Succeeded'): Promise<void> {
  for (const name of names)
    await kubectl.run([
      '-n',
      NAMESPACE,
      'patch',
      'pod',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { phase } }),
    ]);
}

interface NodeModel {
  name: string;
  allocated: { cpu: number };
  paused: { cpu: number };
  reserved: { cpu: number };
}
const extenderNodes = async () => JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as NodeModel[];

/** Every node full in the extender's model: fillers of (allocatable − 2 CPU) and 2 CPU per node, bound directly. */
async function fill(
  kind: 'paused-succeeded' | 'running' | 'running-small-paused',
  tag: string,
): Promise<Map<string, string>> {
  const small = new Map<string, string>();
  const objects: object[] = [];
  for (const n of nodes) {
    const cpu = allocatableOf(n).cpu / 1000;
    const memoryGiB = allocatableOf(n).memory / GiB;
    const name = n.metadata.name;
    objects.push(
      pod(`big-${tag}-${name}`, {
        cpu: cpu - 2,
        memoryGiB: memoryGiB - 4,
        nodeName: name,
        paused: kind === 'paused-succeeded',
      }),
    );
    objects.push(pod(`small-${tag}-${name}`, { cpu: 2, memoryGiB: 4, nodeName: name, paused: kind !== 'running' }));
    small.set(name, `small-${tag}-${name}`);
  }
  await kubectl.apply(objects);
  const names = objects.map((o) => (o as { metadata: { name: string } }).metadata.name);
  await waitFor(
    'the fillers Running',
    60_000,
    async () => {
      const pods = (await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods', '-l', 'app=e2e-requeue']))
        .items;
      return names.every((n) => pods.some((p) => p.metadata.name === n && p.status.phase === 'Running'))
        ? true
        : undefined;
    },
    () => describePods(kubectl, NAMESPACE),
  );
  if (kind === 'paused-succeeded') await setPhase(names, 'Succeeded');
  await waitFor(
    "every node full in the extender's model",
    30_000,
    async () => {
      const model = await extenderNodes();
      return nodes.every((n) => {
        const m = model.find((x) => x.name === n.metadata.name);
        return m !== undefined && m.allocated.cpu + m.paused.cpu === allocatableOf(n).cpu;
      })
        ? true
        : undefined;
    },
    async () => JSON.stringify(await extenderNodes()),
  );
  return small;
}

/** Creates a waiting pod of 2 CPU / 4 GiB and waits until kube-scheduler has marked it unschedulable; returns that message. */
async function createWaiting(name: string): Promise<string> {
  await kubectl.apply([pod(name, { cpu: 2, memoryGiB: 4 })]);
  const message = await waitFor(
    `${name} marked unschedulable`,
    30_000,
    async () => {
      const p = await getPod(name);
      if (p.spec.nodeName) throw new Error(`${name} was bound to ${p.spec.nodeName} although every node is full`);
      const conditions = (p.status.conditions ?? []) as { type: string; status: string; message?: string }[];
      return conditions.find((c) => c.type === 'PodScheduled' && c.status === 'False')?.message;
    },
    () => describePods(kubectl, NAMESPACE),
  );
  await sleep(1000); // in kube-scheduler's unschedulable pool, no longer in flight
  return message;
}

/** Runs `free`, then waits for `name` to be bound; returns the node and the seconds from `free` to the pod seen bound. */
async function boundAfter(name: string, free: () => Promise<void>): Promise<{ node: string; seconds: number }> {
  const t0 = Date.now();
  await free();
  const node = await waitFor(
    `${name} bound`,
    (BIND_WITHIN_S + 20) * 1000,
    async () => (await getPod(name)).spec.nodeName ?? undefined,
    () => describePods(kubectl, NAMESPACE),
  );
  return { node, seconds: (Date.now() - t0) / 1000 };
}

async function clearNamespace(): Promise<void> {
  await kubectl.run(['-n', NAMESPACE, 'delete', 'pods', '--all', '--grace-period=0', '--wait=true', '--timeout=120s']);
  await waitFor("nothing allocated, paused or reserved in the extender's model", 60_000, async () =>
    (await extenderNodes()).every((n) => n.allocated.cpu + n.paused.cpu + n.reserved.cpu === 0) ? true : undefined,
  );
}

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(`requeue.e2e needs the extender in cluster mode, not ${env.EXTENDER_MODE ?? 'snapshot'}`);
  kubectl = new Kubectl(env);
  nodes = await heterogeneousNodes(kubectl);
  await deleteNamespace(kubectl, NAMESPACE); // left by an interrupted run
  await createNamespace(kubectl, NAMESPACE);
  await waitFor(
    'an empty cluster',
    120_000,
    async () =>
      (await kubectl.json<{ items: PodView[] }>(['get', 'pods', '-A'])).items.length === 0 ? true : undefined,
    () => kubectl.run(['get', 'pods', '-A']),
  );
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (results.length > 1) {
    const text = [
      'Requeue after capacity frees (time from freeing the room to the waiting pod seen bound):',
      '',
      ...columns(results),
    ].join('\n');
    console.log(text);
    report.unshift(text, '');
  }
  try {
    if (kubectl) {
      await waitExtenderSettled(env).catch(() => undefined); // its Events are out before their namespace goes
      await deleteNamespace(kubectl, NAMESPACE);
    }
  } finally {
    if (report.length > 0) {
      mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
      writeFileSync(join(STATE_DIR, 'logs', 'requeue.txt'), `${report.join('\n')}\n`);
    }
    await tearDownCluster();
  }
}, 300_000);

describe('pods the extender rejected for capacity are requeued when capacity frees where kube-scheduler cannot see it', () => {
  let small = new Map<string, string>();

  test(
    'a. a paused Succeeded pod deleted: the waiting pod is bound within seconds, and the nudge is counted',
    async () => {
      small = await fill('paused-succeeded', 'p');
      const message = await createWaiting('wait-a');
      // kube-scheduler sees empty nodes: the extender's Filter rejected the pod, with its own reason per node.
      expect(message).toMatch(/Insufficient cpu: requested 2000m \+ in use/);
      const before = await metrics();
      const { node, seconds } = await boundAfter('wait-a', () =>
        kubectl
          .run(['-n', NAMESPACE, 'delete', 'pod', small.get('cpu64-0')!, '--grace-period=0'])
          .then(() => undefined),
      );
      const after = await metrics();
      results.push([
        'a',
        'paused Succeeded pod deleted',
        node,
        `${seconds.toFixed(1)} s`,
        String(nudged(after) - nudged(before)),
      ]);
      expect(node).toBe('cpu64-0');
      expect(seconds).toBeLessThan(BIND_WITHIN_S);
      expect(nudged(after)).toBeGreaterThanOrEqual(nudged(before) + 1);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'b. a paused Succeeded pod un-paused (label removed): the waiting pod is bound within seconds',
    async () => {
      await createWaiting('wait-b'); // cpu64-0 is full again (wait-a)
      const before = await metrics();
      const { node, seconds } = await boundAfter('wait-b', () =>
        kubectl.run(['-n', NAMESPACE, 'label', 'pod', small.get('cpu16-0')!, `${PAUSED}-`]).then(() => undefined),
      );
      const after = await metrics();
      results.push([
        'b',
        'paused Succeeded pod un-paused',
        node,
        `${seconds.toFixed(1)} s`,
        String(nudged(after) - nudged(before)),
      ]);
      expect(node).toBe('cpu16-0');
      expect(seconds).toBeLessThan(BIND_WITHIN_S);
      expect(nudged(after)).toBeGreaterThanOrEqual(nudged(before) + 1);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'c. kube-scheduler rejects first, then (the paused pod Succeeded) the extender; the paused pod deleted: bound within seconds',
    async () => {
      await clearNamespace();
      small = await fill('running-small-paused', 'c');
      const message = await createWaiting('wait-c');
      expect(message).toMatch(/Insufficient cpu/); // kube-scheduler's NodeResourcesFit: the extender was not asked
      const rejectedBefore = noFit(await metrics());
      // Succeeded: kube-scheduler drops the pod from its view and retries at once; the extender still counts it (paused).
      await setPhase([small.get('cpu192-0')!], 'Succeeded');
      await waitFor("the extender's Filter rejecting the retry", 30_000, async () =>
        noFit(await metrics()) > rejectedBefore ? true : undefined,
      );
      await sleep(1000);
      expect((await getPod('wait-c')).spec.nodeName).toBeUndefined();
      const before = await metrics();
      const { node, seconds } = await boundAfter('wait-c', () =>
        kubectl
          .run(['-n', NAMESPACE, 'delete', 'pod', small.get('cpu192-0')!, '--grace-period=0'])
          .then(() => undefined),
      );
      const after = await metrics();
      results.push([
        'c',
        'kube-scheduler, then extender rejected; paused pod deleted',
        node,
        `${seconds.toFixed(1)} s`,
        String(nudged(after) - nudged(before)),
      ]);
      expect(node).toBe('cpu192-0');
      expect(seconds).toBeLessThan(BIND_WITHIN_S);
      expect(nudged(after)).toBeGreaterThanOrEqual(nudged(before) + 1);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    `d. ${ROUNDS} rounds of the race: kube-scheduler rejects, a Running pod is deleted; each waiting pod bound within seconds`,
    async () => {
      await clearNamespace();
      await fill('running', 'd');
      let previous = 'small-d-cpu16-0';
      const rows: string[][] = [];
      let raced = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const name = `wait-d-${i}`;
        expect(await createWaiting(name)).toMatch(/Insufficient cpu/);
        const before = await metrics();
        // Deleted at once (one DELETE event, no graceful phase): kube-scheduler retries on that event alone.
        const { node, seconds } = await boundAfter(name, () =>
          kubectl
            .run(['-n', NAMESPACE, 'delete', 'pod', previous, '--grace-period=0', '--force'])
            .then(() => undefined),
        );
        await sleep(500); // the nudge, if any, is counted after its write
        const after = await metrics();
        const extenderRejected = noFit(after) - noFit(before);
        if (extenderRejected > 0) raced++;
        rows.push([
          String(i),
          previous,
          node,
          `${seconds.toFixed(2)} s`,
          String(extenderRejected),
          String(nudged(after) - nudged(before)),
        ]);
        expect({ round: i, within: seconds < BIND_WITHIN_S }).toEqual({ round: i, within: true });
        previous = name;
      }
      const slowest = Math.max(...rows.map((r) => Number.parseFloat(r[3]!)));
      results.push([
        'd',
        `Running pod deleted, ${ROUNDS} rounds (${raced} raced)`,
        '-',
        `${slowest.toFixed(2)} s (slowest)`,
        String(rows.reduce((s, r) => s + Number(r[5]), 0)),
      ]);
      const text = [
        `d. ${ROUNDS} rounds: kube-scheduler rejects (every node full of Running pods), the previous round's pod is deleted:`,
        '',
        ...columns([
          ['round', 'deleted', 'bound to', 'bound after', 'extender rejected the retry', 'pods nudged'],
          ...rows,
        ]),
      ].join('\n');
      console.log(text);
      report.push(text, '');
    },
    TEST_TIMEOUT_MS,
  );

  test('the extender was never refused by the API server (RBAC of the requeue object)', async () => {
    expect(await forbiddenLines()).toEqual([]);
  });
});
