/**
 * A runaway Pending queue, small (issue 20, part 3; `npm run bench -- pending` is the large one: 30,000 pods, 500
 * nodes added). Each node holds a paused sandbox that has Succeeded, leaving 4 CPUs in the extender's model
 * (kube-scheduler does not count a terminal pod): pods of 6 CPUs pass kube-scheduler's own filters everywhere and
 * are rejected by the extender's Filter for capacity. The extender is restarted with `requeue.maxPods: 5`.
 * Asserted:
 *
 * - 20 such pods: all rejected; the extender remembers 5 of them (sandbox_extender_rejected_pods) and says how
 *   many it dropped past the bound (sandbox_extender_rejected_pods_dropped_total ≥ 15);
 * - a burst of 9 pods that fit is bound beside them;
 * - no requeue write meanwhile: nothing that freed made a remembered pod fit (kube-scheduler is not flooded by
 *   the extender: each write would retry every pod an extender rejected);
 * - a node of 16 CPUs added: exactly the 2 waiting pods that now fit are bound there, the others wait.
 *
 * The node, the pods and the extender's configuration are restored afterwards.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import {
  STATE_DIR,
  component,
  fetchText,
  metricValue,
  setUpCluster,
  tearDownCluster,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import {
  Kubectl,
  allocatableOf,
  createNamespace,
  deleteNamespace,
  heterogeneousNodes,
  podManifests,
  type NodeView,
  type PodView,
} from './kit/kubectl.js';

const SCHEDULER = 'sandbox-scheduler';
const NAMESPACE = 'pending-queue';
const PAUSED = 'sandbox-extender.io/paused';
const ADDED_NODE = 'added-cpu16-0';
const MAX_PODS = 5;
const HOPELESS = 20;

let env: ClusterEnv;
let kubectl: Kubectl;
let nodes: NodeView[] = [];
let restarted = false;

const metrics = () => fetchText(`${env.EXTENDER_URL}/metrics`);

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(`pendingQueue.e2e needs the extender in cluster mode, not ${env.EXTENDER_MODE}`);
  kubectl = new Kubectl(env);
  nodes = await heterogeneousNodes(kubectl);
}, 45 * 60_000);

afterAll(async () => {
  try {
    await deleteNamespace(kubectl, NAMESPACE);
    await kubectl.run(['delete', 'node', ADDED_NODE, '--ignore-not-found', '--wait=true']);
    if (restarted)
      await component([
        'restart',
        'sandbox-extender',
        ...(env.EXTENDER_CONFIG ? ['--config', env.EXTENDER_CONFIG] : []),
      ]);
  } finally {
    await tearDownCluster();
  }
}, 300_000);

test('hopeless pods remembered up to requeue.maxPods (the rest counted as dropped), a burst bound beside them, no requeue write, a node added binds what fits', async () => {
  const base = env.EXTENDER_CONFIG
    ? ((parse(readFileSync(env.EXTENDER_CONFIG, 'utf8')) as Record<string, unknown> | null) ?? {})
    : {};
  const config = join(STATE_DIR, 'pending-queue-extender.yaml');
  writeFileSync(
    config,
    stringify({ ...base, requeue: { ...((base.requeue as object | undefined) ?? {}), maxPods: MAX_PODS } }),
  );
  await component(['restart', 'sandbox-extender', '--config', config]);
  restarted = true;
  await deleteNamespace(kubectl, NAMESPACE);
  await createNamespace(kubectl, NAMESPACE);

  // Every node full but 4 CPUs in the extender's model: a paused sandbox bound to it, then Succeeded.
  const fillers = nodes.map((n) => {
    const cpu = allocatableOf(n).cpu / 1000 - 4;
    const [p] = podManifests({
      namespace: NAMESPACE,
      prefix: `fill-${n.metadata.name}`,
      count: 1,
      cpu: String(cpu),
      memory: `${cpu * 2}Gi`,
      labels: { [PAUSED]: 'true' },
    }) as [{ metadata: { name: string }; spec: Record<string, unknown> }];
    p.spec.nodeName = n.metadata.name;
    return p;
  });
  await kubectl.apply(fillers);
  await waitFor('the fillers Running', 60_000, async () => {
    const list = await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods']);
    return list.items.filter((p) => p.status.phase === 'Running').length === fillers.length ? true : undefined;
  });
  for (const f of fillers)
    await kubectl.run([
      '-n',
      NAMESPACE,
      'patch',
      'pod',
      f.metadata.name,
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Succeeded"}}',
    ]);
  await waitFor("the extender's model to count the fillers as paused", 60_000, async () => {
    const view = JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as { paused: { cpu: number } }[];
    return view.reduce((s, n) => s + n.paused.cpu, 0) === nodes.reduce((s, n) => s + allocatableOf(n).cpu - 4000, 0)
      ? true
      : undefined;
  });

  const before = await metrics();
  const writes = (m: string) => metricValue(m, 'sandbox_extender_requeue_writes_total');
  await kubectl.apply(
    podManifests({
      namespace: NAMESPACE,
      prefix: 'hopeless',
      count: HOPELESS,
      cpu: '6',
      memory: '4Gi',
      schedulerName: SCHEDULER,
    }),
  );
  // Each tried at least once (its PodScheduled=False condition names the extender's reason).
  await waitFor(`all ${HOPELESS} hopeless pods rejected`, 120_000, async () => {
    const list = await kubectl.json<{
      items: (PodView & { status: { conditions?: { type: string; status: string; message?: string }[] } })[];
    }>(['-n', NAMESPACE, 'get', 'pods']);
    const rejected = list.items.filter(
      (p) =>
        p.metadata.name.startsWith('hopeless') &&
        (p.status.conditions ?? []).some((c) => c.type === 'PodScheduled' && c.status === 'False'),
    );
    return rejected.length === HOPELESS ? true : undefined;
  });
  await kubectl.apply(
    podManifests({
      namespace: NAMESPACE,
      prefix: 'burst',
      count: 9,
      cpu: '1',
      memory: '1Gi',
      schedulerName: SCHEDULER,
    }),
  );
  await waitFor('the 9 burst pods bound', 120_000, async () => {
    const list = await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods']);
    return list.items.filter((p) => p.metadata.name.startsWith('burst') && p.spec.nodeName).length === 9
      ? true
      : undefined;
  });
  const during = await metrics();
  expect(metricValue(during, 'sandbox_extender_rejected_pods')).toBe(MAX_PODS);
  expect(
    metricValue(during, 'sandbox_extender_rejected_pods_dropped_total') -
      metricValue(before, 'sandbox_extender_rejected_pods_dropped_total'),
  ).toBeGreaterThanOrEqual(HOPELESS - MAX_PODS);
  expect(writes(during) - writes(before)).toBe(0);

  // A node of 16 CPUs (KWOK): two pods of 6 CPUs fit there, a third does not.
  const added = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: ADDED_NODE,
      labels: { 'kubernetes.io/hostname': ADDED_NODE, type: 'kwok' },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    status: {
      allocatable: { cpu: '16', memory: '64Gi', pods: '110' },
      capacity: { cpu: '16', memory: '64Gi', pods: '110' },
    },
  };
  const addedAt = Date.now();
  await kubectl.run(['create', '-f', '-'], JSON.stringify(added));
  const placed = await waitFor(`2 hopeless pods bound to ${ADDED_NODE}`, 120_000, async () => {
    const list = await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods']);
    const bound = list.items.filter((p) => p.metadata.name.startsWith('hopeless') && p.spec.nodeName);
    return bound.length >= 2 ? bound : undefined;
  });
  const seconds = (Date.now() - addedAt) / 1000;
  await new Promise((r) => setTimeout(r, 3000)); // nothing else fits: no third pod may follow
  const after = await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods']);
  const hopelessBound = after.items.filter((p) => p.metadata.name.startsWith('hopeless') && p.spec.nodeName);
  expect(hopelessBound.map((p) => p.spec.nodeName)).toEqual([ADDED_NODE, ADDED_NODE]);
  expect(placed.length).toBe(2);
  console.log(
    `Pending queue: ${HOPELESS} pods of 6 CPUs rejected by the extender (${MAX_PODS} remembered, ` +
      `${metricValue(during, 'sandbox_extender_rejected_pods_dropped_total') - metricValue(before, 'sandbox_extender_rejected_pods_dropped_total')} drops counted), ` +
      `9 burst pods bound beside them, no requeue write; a 16-CPU node added: the 2 that fit bound within ${seconds.toFixed(1)} s.`,
  );
}, 600_000);
