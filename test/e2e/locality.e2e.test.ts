/**
 * Template locality on the local control plane: the extender restarted with `locality: {enabled: true}`, and
 * three equal KWOK nodes of 32 CPUs added for this file (label and taint e2e-locality, so that no other test's pod
 * lands on them; removed afterwards).
 *
 * a. node.status.images: one of the three nodes reports the pod's image (a status patch, as kubelet writes it):
 *    the pod is placed there, its ProjectedPlacement Event says "template warm on this node", the placements by
 *    locality metric counts it warm, and /debug/nodes shows the node's image.
 * b. the template memory: a pod with agent-sandbox's template label and an image no node reports is placed
 *    cold ("cold: no node within the band has it"); once it is deleted (the three nodes equal again), the next pod
 *    of that template goes to the same node, warm.
 *
 * The extender's config is restored afterwards.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  component,
  fetchText,
  metricValue,
  setUpCluster,
  tearDownCluster,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import { Kubectl, createNamespace, deleteNamespace, waitAllRunningReady, type PodView } from './kit/kubectl.js';

const SCHEDULER = 'sandbox-scheduler';
const NAMESPACE = 'e2e-locality';
const LABEL = 'e2e-locality';
const NODES = ['locality-0', 'locality-1', 'locality-2'];
const TEMPLATE_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
const WARM_IMAGE = 'registry.example/e2e/agent:v3';
const BY_LOCALITY = 'sandbox_extender_placements_by_locality_total';

let env: ClusterEnv;
let kubectl: Kubectl;
let changed = false;

function node(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, type: 'kwok', [LABEL]: 'true' },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { taints: [{ key: LABEL, value: 'true', effect: 'NoSchedule' }] },
    status: {
      allocatable: { cpu: '32', memory: '128Gi', pods: '110' },
      capacity: { cpu: '32', memory: '128Gi', pods: '110' },
    },
  };
}

function pod(name: string, image: string, labels: Record<string, string> = {}): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels },
    spec: {
      schedulerName: SCHEDULER,
      terminationGracePeriodSeconds: 0,
      nodeSelector: { [LABEL]: 'true' },
      tolerations: [{ key: LABEL, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
      containers: [
        {
          name: 'sandbox',
          image,
          resources: { requests: { cpu: '1', memory: '2Gi' }, limits: { cpu: '1', memory: '2Gi' } },
        },
      ],
    },
  };
}

async function placedOn(name: string): Promise<string> {
  const [p] = await waitAllRunningReady(kubectl, NAMESPACE, 1, 60_000);
  expect((p as PodView).metadata.name).toBe(name);
  return (p as PodView).spec.nodeName!;
}

async function placementMessage(name: string): Promise<string> {
  return waitFor(`the ProjectedPlacement Event of ${name}`, 30_000, async () => {
    const list = await kubectl.json<{ items: { reason: string; message: string; involvedObject: { name: string } }[] }>(
      ['-n', NAMESPACE, 'get', 'events', '--field-selector', `involvedObject.name=${name}`],
    );
    return list.items.find((e) => e.reason === 'ProjectedPlacement')?.message;
  });
}

const byLocality = async (locality: string) =>
  metricValue(await fetchText(`${env.EXTENDER_URL}/metrics`), BY_LOCALITY, { locality });

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(`locality.e2e needs the extender in cluster mode, not ${env.EXTENDER_MODE}`);
  kubectl = new Kubectl(env);
  await deleteNamespace(kubectl, NAMESPACE); // left by an interrupted run
  changed = true;
  await kubectl.run(['delete', 'nodes', ...NODES, '--ignore-not-found']);
  await kubectl.apply(NODES.map(node));
  // KWOK reports them Ready; the node lifecycle controller then lifts its not-ready taint.
  await waitFor('the three locality nodes Ready and without the not-ready taint', 120_000, async () => {
    const nodes = (
      await kubectl.json<{
        items: {
          metadata: { name: string };
          spec: { taints?: { key: string }[] };
          status: { conditions?: { type: string; status: string }[] };
        }[];
      }>(['get', 'nodes', '-l', `${LABEL}=true`])
    ).items;
    const ok = nodes.filter(
      (n) =>
        (n.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') &&
        !(n.spec.taints ?? []).some((t) => t.key.startsWith('node.kubernetes.io/')),
    );
    return ok.length === NODES.length ? true : undefined;
  });
  await kubectl.run([
    'patch',
    'node',
    'locality-1',
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: { images: [{ names: ['registry.example/e2e/agent@sha256:0123', WARM_IMAGE], sizeBytes: 1_500_000_000 }] },
    }),
  ]);
  const config = join(STATE_DIR, 'extender-locality.yaml');
  writeFileSync(config, 'locality: {enabled: true}\n');
  await component(['restart', 'sandbox-extender', '--config', config]);
  await createNamespace(kubectl, NAMESPACE);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    if (env && changed) {
      await deleteNamespace(kubectl, NAMESPACE);
      await kubectl.run(['delete', 'nodes', ...NODES, '--ignore-not-found']);
      await component(['restart', 'sandbox-extender']);
    }
  } finally {
    await tearDownCluster();
  }
}, 300_000);

describe('template locality (three equal nodes of 32 CPUs)', () => {
  test('a. the node whose status.images holds the pod’s image is chosen, and the Event says so', async () => {
    const view = JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes/locality-1`)) as {
      locality?: { images: { names: string[] }[] };
    };
    expect(view.locality?.images.map((i) => i.names)).toEqual([['registry.example/e2e/agent@sha256:0123', WARM_IMAGE]]);
    const warmBefore = await byLocality('warm');
    await kubectl.apply([pod('warm', WARM_IMAGE)]);
    expect(await placedOn('warm')).toBe('locality-1');
    expect(await placementMessage('warm')).toMatch(
      /^placed on locality-1 by least_loaded: .*; template warm on this node$/,
    );
    expect((await byLocality('warm')) - warmBefore).toBe(1);
    await kubectl.run(['-n', NAMESPACE, 'delete', 'pod', 'warm', '--wait=true']);
  });

  test('b. a template started on a node is warm there for the next pod of it', async () => {
    const labels = { [TEMPLATE_LABEL]: 'e2e-template-b' };
    await kubectl.apply([pod('first', 'registry.example/e2e/fresh:1', labels)]);
    const first = await placedOn('first');
    expect(await placementMessage('first')).toMatch(/; cold: no node within the band has it \(3 in the band\)$/);
    await kubectl.run(['-n', NAMESPACE, 'delete', 'pod', 'first', '--wait=true']);
    // the three nodes are equal again: only the memory of the template separates them
    await waitFor('the extender to drop the first pod', 30_000, async () => {
      const nodes = JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as {
        name: string;
        sandboxes: { running: number; starting: number; reserved: number };
      }[];
      return nodes
        .filter((n) => NODES.includes(n.name))
        .every((n) => n.sandboxes.running + n.sandboxes.starting + n.sandboxes.reserved === 0)
        ? true
        : undefined;
    });
    await kubectl.apply([pod('second', 'registry.example/e2e/fresh:1', labels)]);
    expect(await placedOn('second')).toBe(first);
    expect(await placementMessage('second')).toMatch(
      new RegExp(`^placed on ${first} by least_loaded: .*; template warm on this node$`),
    );
  });
});
