/**
 * The cluster's objects through kubectl (child_process, no client library), as the e2e tests read and make them:
 * nodes, pods, namespaces, waits on them; and the quantities and pressure the tests check placements
 * against. The control plane itself: controlPlane.ts.
 */
import { join } from 'node:path';
import { formatTable } from '../../../src/cli/commands.js';
import { milliValue, parseQuantity, value } from '../../../src/core/objects/quantity.js';
import { benchPod } from './adminClient.js';
import { STATE_DIR, run, waitFor, type ClusterEnv } from './controlPlane.js';

// ------------------------------------------------------------------------------------------ kubectl

/** kubectl of the cluster (cluster.env KUBECTL) on its admin kubeconfig. */
export class Kubectl {
  constructor(private readonly env: ClusterEnv) {}

  async run(args: readonly string[], input?: string): Promise<string> {
    const { stdout } = await run(
      this.env.KUBECTL!,
      [`--kubeconfig=${this.env.KUBECONFIG}`, ...args],
      input === undefined ? {} : { input },
    );
    return stdout;
  }

  async json<T>(args: readonly string[]): Promise<T> {
    return JSON.parse(await this.run([...args, '-o', 'json'])) as T;
  }

  async apply(objects: readonly object[]): Promise<void> {
    await this.run(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  }
}

// ------------------------------------------------------------------------------------------ cluster objects

export interface PodView {
  metadata: { name: string; namespace: string; uid?: string; deletionTimestamp?: string };
  spec: {
    nodeName?: string;
    schedulerName?: string;
    containers: { resources?: { requests?: Record<string, string> } }[];
  };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}
export interface NodeView {
  metadata: { name: string };
  status: { allocatable: Record<string, string> };
}

/** The nodes of examples/cluster/heterogeneous.yaml (name -> CPUs), which the e2e tests are written for. */
export const HETEROGENEOUS_NODES: Readonly<Record<string, string>> = {
  'cpu16-0': '16',
  'cpu64-0': '64',
  'cpu192-0': '192',
};

/** The cluster's nodes; throws unless they are those of examples/cluster/heterogeneous.yaml. */
export async function heterogeneousNodes(kubectl: Kubectl): Promise<NodeView[]> {
  const nodes = (await kubectl.json<{ items: NodeView[] }>(['get', 'nodes'])).items;
  const shape = Object.fromEntries(nodes.map((n) => [n.metadata.name, n.status.allocatable.cpu]));
  if (JSON.stringify(Object.entries(shape).sort()) !== JSON.stringify(Object.entries(HETEROGENEOUS_NODES).sort())) {
    throw new Error(
      `these tests need the cluster of examples/cluster/heterogeneous.yaml (nodes ${JSON.stringify(HETEROGENEOUS_NODES)}), found ${JSON.stringify(shape)}`,
    );
  }
  return nodes;
}

export interface PodSpecOptions {
  readonly namespace: string;
  readonly prefix: string;
  readonly count: number;
  readonly cpu: string;
  readonly memory: string;
  /** Omitted: default-scheduler. */
  readonly schedulerName?: string;
  readonly labels?: Record<string, string>;
}

/** `count` identical pods named PREFIX-000.. with requests = limits (benchPod; KWOK nodes run no containers). */
export function podManifests(o: PodSpecOptions): object[] {
  const width = Math.max(2, String(o.count - 1).length);
  const { cpu, memory, schedulerName, labels } = o;
  return Array.from({ length: o.count }, (_, i) =>
    benchPod(`${o.prefix}-${String(i).padStart(width, '0')}`, o.namespace, {
      cpu,
      memory,
      schedulerName,
      labels: { ...labels },
      image: 'registry.invalid/e2e/sandbox:1',
    }),
  );
}

export async function createNamespace(kubectl: Kubectl, name: string): Promise<void> {
  await kubectl.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }]);
  // ServiceAccount admission rejects pods until kube-controller-manager has created the default ServiceAccount.
  await waitFor(`ServiceAccount ${name}/default`, 60_000, async () =>
    (await kubectl.run(['-n', name, 'get', 'serviceaccount', 'default', '--ignore-not-found', '-o', 'name'])).trim()
      ? true
      : undefined,
  );
}

/** Deletes the namespace and waits until it (and so every pod in it) is gone. */
export async function deleteNamespace(kubectl: Kubectl, name: string): Promise<void> {
  // KWOK's pod-delete stage finishes the deletion that a kubelet would; the namespace controller does the rest.
  await kubectl.run(['delete', 'namespace', name, '--ignore-not-found', '--wait=true', '--timeout=120s']);
}

export const isRunningReady = (p: PodView) =>
  p.status.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export async function describePods(kubectl: Kubectl, namespace: string): Promise<string> {
  const [pods, events] = await Promise.all([
    kubectl.run(['-n', namespace, 'get', 'pods', '-o', 'wide']),
    kubectl.run(['-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp']),
  ]);
  return `pods:\n${pods.split('\n').slice(0, 40).join('\n')}\nevents:\n${events.split('\n').slice(-30).join('\n')}\nlogs: ${join(STATE_DIR, 'logs')}`;
}

/** Waits until `count` pods of the namespace are bound, Running and Ready; returns them. */
export async function waitAllRunningReady(
  kubectl: Kubectl,
  namespace: string,
  count: number,
  timeoutMs = 180_000,
): Promise<PodView[]> {
  return waitFor(
    `${count} pods in ${namespace} Running and Ready`,
    timeoutMs,
    async () => {
      const list = await kubectl.json<{ items: PodView[] }>(['-n', namespace, 'get', 'pods']);
      if (list.items.length !== count || !list.items.every((p) => p.spec.nodeName && isRunningReady(p)))
        return undefined;
      return list.items;
    },
    () => describePods(kubectl, namespace),
  );
}

/** Aligns columns of text (first row: headers), as the CLI's rank does (formatTable); one string a row. */
export const columns = (rows: string[][]): string[] => formatTable(rows).split('\n');

// ------------------------------------------------------------------------------------------ quantities, pressure

/** A CPU quantity ("2", "500m", "1.5") in millicores, as kube-scheduler counts it (parseQuantity, milliValue). */
export const milliCpu = (q: string): number => Number(milliValue(parseQuantity(q)));

/** A memory quantity ("4Gi", "512Mi", "1G", "1000") in bytes, as kube-scheduler counts it (parseQuantity, value). */
export const bytes = (q: string): number => Number(value(parseQuantity(q)));

/** CPU (millicores) and memory (bytes) of one node. */
export interface Amounts {
  cpu: number;
  memory: number;
}

export function allocatableOf(node: NodeView): Amounts {
  return { cpu: milliCpu(node.status.allocatable.cpu ?? '0'), memory: bytes(node.status.allocatable.memory ?? '0') };
}

/** Sum of the container requests of the pods bound to each node (pods that hold resources: not Succeeded/Failed). */
export function requestedPerNode(pods: readonly PodView[]): Map<string, Amounts & { pods: number }> {
  const used = new Map<string, Amounts & { pods: number }>();
  for (const p of pods) {
    if (!p.spec.nodeName || p.status.phase === 'Succeeded' || p.status.phase === 'Failed') continue;
    const u = used.get(p.spec.nodeName) ?? { cpu: 0, memory: 0, pods: 0 };
    for (const c of p.spec.containers) {
      u.cpu += milliCpu(c.resources?.requests?.cpu ?? '0');
      u.memory += bytes(c.resources?.requests?.memory ?? '0');
    }
    u.pods++;
    used.set(p.spec.nodeName, u);
  }
  return used;
}

/** The extender's pressure of a node: the larger of the CPU and memory shares requested. */
export const pressureOf = (used: Amounts, allocatable: Amounts) =>
  Math.max(used.cpu / allocatable.cpu, used.memory / allocatable.memory);

/**
 * The best peak pressure any placement of `count` identical pods can reach (on top of `base`, the requests already
 * on each node, none by default): a node holding k pods is at pressure
 * p_n(k) = k · max_r(request_r / allocatable_r), so with peak P it can hold #{k ≥ 1 : p_n(k) ≤ P} pods, and the
 * optimum is the smallest P that holds them all: the count-th smallest p_n(k) over every node and k (p_n(k) ≤ 1).
 */
export function optimumPeak(
  nodes: readonly NodeView[],
  pod: Amounts,
  count: number,
  base: ReadonlyMap<string, Amounts> = new Map(),
): number {
  const levels: number[] = [];
  for (const n of nodes) {
    // With a base load b already on the node: p_n(k) = max_r (b_r + k · request_r) / allocatable_r, still increasing in k.
    const b = base.get(n.metadata.name) ?? { cpu: 0, memory: 0 };
    const level = (k: number) =>
      pressureOf({ cpu: b.cpu + k * pod.cpu, memory: b.memory + k * pod.memory }, allocatableOf(n));
    for (let k = 1; level(k) <= 1 + 1e-12; k++) levels.push(level(k));
  }
  levels.sort((a, b) => a - b);
  if (levels.length < count) throw new Error(`${count} pods do not fit in the cluster (room for ${levels.length})`);
  return levels[count - 1]!;
}
