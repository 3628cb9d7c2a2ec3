/**
 * The product as users install it, on a cluster of its own with real nodes (test/e2e/cluster-up.sh with
 * SANDBOX_E2E_STATE .cache/e2e-install, REAL_NODES=2: a containerd and a kubelet v1.36 each, test/e2e/kubelet.sh,
 * beside the KWOK nodes of examples/cluster/beside-real-nodes.yaml, which a taint keeps for the pods that tolerate
 * it; no extender and no sandbox-scheduler of the cluster's own: the chart brings them).
 *
 * The container engine, the loopback registry and the images come from the image tier (test/image/engine.sh,
 * test/image/images.sh): the base images under the names the Dockerfile defaults to, the pause image and a
 * kube-scheduler image of the control plane's version under the chart's default name, copied into each node's
 * containerd (nothing can be pulled from their registries here), while the extender's image is pushed to and pulled
 * from the loopback registry, as users do.
 *
 * 1. The real nodes: Ready, kubelet v1.36, InternalIP 127.0.0.1, the KWOK nodes tainted.
 * 2. The README's "Install with Helm" block (marked `<!-- runnable: install -->`), as written, with REGISTRY replaced
 *    by the registry's address: docker build and push, helm install with the chart's defaults, rollout status, the
 *    lease. Pods here only run in the node's network namespace and reach the API server only at 127.0.0.1, so the
 *    cluster stands in for a pod network (test/e2e/manifests/pod-network-stand-in.yaml: pods created without
 *    hostNetwork get it, and the API server's address); the chart's defaults are left as users get them. Then: the
 *    scheduler pod Running in containers on a real node, its lease held and renewed, and pods with schedulerName
 *    sandbox-scheduler placed by its extender onto KWOK and real nodes (Running there).
 * 3. The chart's own host-network values (hostNetwork.enabled, apiServer.host/port): the same checks without the
 *    stand-in touching the pods (they ask for the host network themselves), kube-scheduler and the gateway on the
 *    node's address at the host-network ports.
 * Each release is uninstalled at the end of its test. The cluster is stopped in afterAll unless INSTALL_E2E_KEEP=1.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allRunnableBlocks, runBlock } from '../docs/runnable.js';
import {
  E2E_DIR,
  REPO_ROOT,
  fetchText,
  keyValues,
  run,
  sumCounterBy,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import { Kubectl } from './kit/kubectl.js';
import { releaseStateLock, takeStateLock } from './stateLock.js';

const STATE = process.env.SANDBOX_INSTALL_E2E_STATE ?? join(REPO_ROOT, '.cache', 'e2e-install');
const KEEP = process.env.INSTALL_E2E_KEEP === '1';
const SETUP_TIMEOUT_MS = Number(process.env.E2E_SETUP_TIMEOUT_MS ?? 45 * 60_000);
const STEP_TIMEOUT_MS = 10 * 60_000;
const REAL_NODES = 2;
const SANDBOXES = 'install-sandboxes';
const K8S_VERSION = keyValues(
  readFileSync(join(E2E_DIR, 'tools', 'versions.env'), 'utf8').replace(/ *#.*$/gm, ''),
).K8S_VERSION;
const KWOK_TAINT = { key: 'kwok.x-k8s.io/node', operator: 'Equal', value: 'fake', effect: 'NoSchedule' };

let env: ClusterEnv;
let kubectl: Kubectl;
let image: Record<string, string>;
let names: Record<string, string>;
let engineStarted = false;
let locked = false;

// ---------------------------------------------------------------------------------------------- helpers
function log(message: string): void {
  process.stderr.write(`[install e2e] ${message}\n`);
}

async function imageScript(script: 'engine.sh' | 'images.sh', args: string[]): Promise<string> {
  const { stdout } = await run('bash', [join(REPO_ROOT, 'test', 'image', script), ...args], {
    timeoutMs: SETUP_TIMEOUT_MS,
  });
  return stdout;
}

function clusterScript(name: 'cluster-up.sh' | 'cluster-down.sh', args: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, SANDBOX_E2E_STATE: STATE, ...extraEnv };
  for (const k of ['CLUSTER_NODES', 'EXTENDER_CONFIG', 'E2E_REUSE_CLUSTER']) delete childEnv[k];
  return run('bash', [join(E2E_DIR, name), ...args], { env: childEnv, timeoutMs: SETUP_TIMEOUT_MS });
}

async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(join(env.E2E_BIN!, 'helm'), args, {
    env: { ...process.env, KUBECONFIG: env.KUBECONFIG },
    timeoutMs: STEP_TIMEOUT_MS,
  });
  return stdout;
}

/** GET over HTTPS without verifying the certificate, as a kubelet probe does. */
function probe(url: string): Promise<number> {
  return new Promise((ok, bad) => {
    const req = httpsRequest(url, { method: 'GET', rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    req.on('error', bad);
    req.end();
  });
}

const realNodes = () => env.REAL_NODES!.split(' ').filter(Boolean);

interface ContainerStatus {
  name: string;
  ready: boolean;
  state: { running?: { startedAt: string }; waiting?: { reason: string }; terminated?: { reason: string } };
}
interface Pod {
  metadata: { name: string; namespace: string; creationTimestamp: string };
  spec: {
    nodeName?: string;
    hostNetwork?: boolean;
    dnsPolicy?: string;
    containers: {
      name: string;
      env?: { name: string; value?: string }[];
      ports?: { containerPort: number; hostPort?: number }[];
    }[];
  };
  status: {
    phase?: string;
    podIP?: string;
    containerStatuses?: ContainerStatus[];
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
  };
}

const runningInContainers = (p: Pod) =>
  p.status.phase === 'Running' &&
  (p.status.containerStatuses ?? []).length === p.spec.containers.length &&
  (p.status.containerStatuses ?? []).every((c) => c.ready && c.state.running);

async function describeNamespace(namespace: string): Promise<string> {
  const [pods, events] = await Promise.all([
    kubectl.run(['-n', namespace, 'get', 'pods', '-o', 'wide']).catch((e: Error) => e.message),
    kubectl.run(['-n', namespace, 'get', 'events', '--sort-by=.lastTimestamp']).catch((e: Error) => e.message),
  ]);
  return `pods:\n${pods}\nevents:\n${events.split('\n').slice(-25).join('\n')}\nlogs: ${join(STATE, 'logs')}`;
}

/** The chart's scheduler pod of RELEASE in NAMESPACE, once it is Running with every container ready. */
async function schedulerPod(namespace: string, release: string): Promise<Pod> {
  return waitFor(
    `the ${release} scheduler pod Running in containers`,
    5 * 60_000,
    async () => {
      const pods = (
        await kubectl.json<{ items: Pod[] }>([
          '-n',
          namespace,
          'get',
          'pods',
          '-l',
          `app.kubernetes.io/instance=${release},app.kubernetes.io/component=scheduler`,
        ])
      ).items;
      return pods.length === 1 && runningInContainers(pods[0]!) ? pods[0] : undefined;
    },
    () => describeNamespace(namespace),
  );
}

/** The lease's holder, once it has renewed the lease at least once after we first read it. */
async function leaseRenewed(namespace: string, name: string): Promise<string> {
  const read = () =>
    kubectl
      .json<{ spec: { holderIdentity?: string; renewTime?: string } }>(['-n', namespace, 'get', 'lease', name])
      .then((l) => l.spec);
  const first = await waitFor(`lease ${namespace}/${name} held`, 120_000, async () =>
    (await read().catch(() => undefined))?.holderIdentity ? read() : undefined,
  );
  await waitFor(`lease ${namespace}/${name} renewed`, 120_000, async () => {
    const now = await read();
    return now.holderIdentity === first.holderIdentity && now.renewTime !== first.renewTime ? true : undefined;
  });
  return first.holderIdentity!;
}

/**
 * Sandbox pods with schedulerName SCHEDULER: three for the KWOK nodes (they tolerate the taint) and as many for the
 * real nodes as there are (pause image, already on the nodes; the extender picks among them, so two may share a
 * node), all in the host network with ports of their own. Waits until each is
 * bound and Running (on a real node: in its container) and has the extender's ProjectedPlacement Event; deletes
 * them. Returns the nodes they went to.
 */
async function placeSandboxes(schedulerName: string, firstPort: number): Promise<Map<string, string>> {
  await kubectl.run(['delete', 'namespace', SANDBOXES, '--ignore-not-found', '--wait=true', '--timeout=180s']); // a failed test's
  await kubectl.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SANDBOXES } }]);
  await waitFor(`ServiceAccount ${SANDBOXES}/default`, 60_000, async () =>
    (
      await kubectl.run(['-n', SANDBOXES, 'get', 'serviceaccount', 'default', '--ignore-not-found', '-o', 'name'])
    ).trim()
      ? true
      : undefined,
  );
  const pod = (name: string, type: 'kwok' | 'real', port: number) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: SANDBOXES, labels: { app: 'install-sandbox' } },
    spec: {
      schedulerName,
      hostNetwork: true,
      nodeSelector: { type },
      tolerations: type === 'kwok' ? [KWOK_TAINT] : [],
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'sandbox',
          image: names.PAUSE_IMAGE,
          imagePullPolicy: 'IfNotPresent',
          ports: [{ containerPort: port }],
          resources: { requests: { cpu: '100m', memory: '32Mi' } },
        },
      ],
    },
  });
  const pods = [
    ...[0, 1, 2].map((i) => pod(`kwok-${i}`, 'kwok', firstPort + i)),
    ...realNodes().map((_, i) => pod(`real-${i}`, 'real', firstPort + 10 + i)),
  ];
  const t0 = Date.now();
  await kubectl.apply(pods);
  const placed = await waitFor(
    `${pods.length} sandbox pods bound and Running`,
    5 * 60_000,
    async () => {
      const list = (await kubectl.json<{ items: Pod[] }>(['-n', SANDBOXES, 'get', 'pods', '-l', 'app=install-sandbox']))
        .items;
      const done = list.filter(
        (p) =>
          p.spec.nodeName &&
          (p.metadata.name.startsWith('real-') ? runningInContainers(p) : p.status.phase === 'Running'),
      );
      return done.length === pods.length ? list : undefined;
    },
    () => describeNamespace(SANDBOXES),
  );
  log(
    `${pods.length} sandbox pods bound and Running in ${Date.now() - t0} ms: ${placed.map((p) => `${p.metadata.name}→${p.spec.nodeName}`).join(', ')}`,
  );
  for (const p of placed) {
    await waitFor(`the extender's ProjectedPlacement Event of ${p.metadata.name}`, 60_000, async () => {
      const events = (
        await kubectl.json<{
          items: { reason: string; reportingComponent?: string; source?: { component?: string } }[];
        }>(['-n', SANDBOXES, 'get', 'events', '--field-selector', `involvedObject.name=${p.metadata.name}`])
      ).items;
      const placement = events.find((e) => e.reason === 'ProjectedPlacement');
      const scheduled = events.find((e) => e.reason === 'Scheduled');
      return placement && scheduled
        ? [
            placement.reportingComponent || placement.source?.component,
            scheduled.reportingComponent || scheduled.source?.component,
          ]
        : undefined;
    }).then((by) => expect(by).toEqual(['sandbox-extender', schedulerName]));
  }
  const nodes = new Map(placed.map((p) => [p.metadata.name, p.spec.nodeName!]));
  await kubectl.run(['delete', 'namespace', SANDBOXES, '--wait=true', '--timeout=180s']);
  return nodes;
}

function expectPlacedOnBothKinds(nodes: Map<string, string>): void {
  const kwok = new Set(['cpu16-0', 'cpu64-0', 'cpu192-0']);
  for (const [pod, node] of nodes) {
    if (pod.startsWith('kwok-'))
      expect(`${pod} on ${kwok.has(node) ? 'a KWOK node' : node}`).toBe(`${pod} on a KWOK node`);
    else expect(`${pod} on ${realNodes().includes(node) ? 'a real node' : node}`).toBe(`${pod} on a real node`);
  }
}

const envOf = (pod: Pod, container: string) =>
  Object.fromEntries((pod.spec.containers.find((c) => c.name === container)?.env ?? []).map((e) => [e.name, e.value]));

// ---------------------------------------------------------------------------------------------- lifecycle
beforeAll(async () => {
  locked = takeStateLock(STATE, 'install.e2e.test.ts', 'SANDBOX_INSTALL_E2E_STATE');
  // The image tier: engine and registry (started unless running), base images, pause and kube-scheduler images.
  engineStarted = await run('bash', [join(REPO_ROOT, 'test', 'image', 'engine.sh'), 'status']).then(
    () => false,
    () => true,
  );
  image = keyValues(readFileSync((await imageScript('engine.sh', ['up'])).trim().split('\n').at(-1)!, 'utf8'));
  await run('bash', [join(E2E_DIR, 'build-tools.sh')], { timeoutMs: SETUP_TIMEOUT_MS }); // kube-scheduler for its image
  for (const step of ['base', 'pause', 'kube-scheduler']) await imageScript('images.sh', [step]);
  names = keyValues(readFileSync((await imageScript('images.sh', ['env'])).trim().split('\n').at(-1)!, 'utf8'));
  const archives = (await imageScript('images.sh', ['export', names.PAUSE_IMAGE!, names.KUBE_SCHEDULER_IMAGE!]))
    .trim()
    .split('\n');

  await clusterScript('cluster-down.sh', ['--keep-logs']); // what a killed run of this file left
  const t0 = Date.now();
  const { stderr } = await clusterScript('cluster-up.sh', [], {
    CLUSTER: 'examples/cluster/beside-real-nodes.yaml',
    AGENT_SANDBOX: '0',
    SANDBOX_SCHEDULER: '0',
    REAL_NODES: String(REAL_NODES),
    REAL_NODE_PAUSE_IMAGE: names.PAUSE_IMAGE,
    REAL_NODE_IMAGE_ARCHIVES: archives.join(' '),
    REAL_NODE_REGISTRY: image.IMAGE_REGISTRY,
  });
  process.stderr.write(
    stderr
      .split('\n')
      .filter((l) => /cluster up|real nodes Ready|tools (up to date|built)/.test(l))
      .map((l) => `${l}\n`)
      .join(''),
  );
  log(`cluster with ${REAL_NODES} real nodes up in ${Date.now() - t0} ms`);
  env = keyValues(readFileSync(join(STATE, 'cluster.env'), 'utf8'));
  kubectl = new Kubectl(env);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    if (!locked) return; // another run owns the state folder: touch nothing
    if (KEEP) log(`INSTALL_E2E_KEEP=1: cluster left running (SANDBOX_E2E_STATE=${STATE})`);
    else await clusterScript('cluster-down.sh', ['--keep-logs']);
    if (engineStarted && !KEEP) await imageScript('engine.sh', ['down']);
  } finally {
    if (locked) releaseStateLock(STATE);
  }
}, 5 * 60_000);

// ---------------------------------------------------------------------------------------------- tests
describe('installed as users install it, on real nodes', () => {
  it('has real nodes: Ready, kubelet v1.36, InternalIP 127.0.0.1, beside the tainted KWOK nodes', async () => {
    interface NodeObj {
      metadata: { name: string; labels: Record<string, string> };
      spec: { taints?: { key: string; effect: string }[] };
      status: {
        addresses: { type: string; address: string }[];
        nodeInfo: { kubeletVersion: string; containerRuntimeVersion: string };
        conditions: { type: string; status: string }[];
      };
    }
    const nodes = (await kubectl.json<{ items: NodeObj[] }>(['get', 'nodes'])).items;
    const real = nodes.filter((n) => n.metadata.labels.type === 'real');
    expect(real.map((n) => n.metadata.name).sort()).toEqual(realNodes().sort());
    for (const n of real) {
      expect(n.status.nodeInfo.kubeletVersion).toBe(K8S_VERSION);
      expect(n.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//);
      expect(n.status.addresses).toEqual([{ type: 'InternalIP', address: '127.0.0.1' }]);
      expect(n.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(n.spec.taints ?? []).toEqual([]);
    }
    const kwok = nodes.filter((n) => n.metadata.labels.type === 'kwok');
    expect(kwok).toHaveLength(3);
    for (const n of kwok)
      expect(n.spec.taints).toEqual([{ key: 'kwok.x-k8s.io/node', value: 'fake', effect: 'NoSchedule' }]);
  });

  it(
    "runs the README's Helm block as written (REGISTRY: the loopback registry) and the chart's pods on a real node",
    async () => {
      const blocks = allRunnableBlocks().filter((b) => b.tier === 'install');
      expect(blocks.map((b) => b.where.split(':')[0])).toEqual(['README.md']);
      const block = blocks[0]!;
      expect(block.body).toContain('helm install sandbox-extender charts/sandbox-extender');
      // Debian's docker client first on PATH (a newer one may come first on this machine), then helm and kubectl.
      const bin = mkdtempSync(join(tmpdir(), 'install-e2e-bin-'));
      symlinkSync(image.DOCKER_CLI!, join(bin, 'docker'));
      const t0 = Date.now();
      try {
        const results = runBlock(
          { ...block, body: block.body.replaceAll('REGISTRY', image.IMAGE_REGISTRY!) },
          {
            KUBECONFIG: env.KUBECONFIG,
            DOCKER_HOST: image.DOCKER_HOST,
            PATH: `${bin}:${env.E2E_BIN}:${process.env.PATH}`,
          },
          STEP_TIMEOUT_MS,
        );
        const transcript = results
          .map(
            (r) => `$ ${r.command}\n--- exit ${r.status}\n${r.stdout}\n${r.stderr.split('\n').slice(-30).join('\n')}`,
          )
          .join('\n');
        writeFileSync(join(STATE, 'logs', 'readme-helm-block.txt'), transcript);
        expect([results.map((r) => r.status), transcript]).toEqual([[0], transcript]);
      } finally {
        rmSync(bin, { recursive: true, force: true });
      }
      log(`README block (docker build + push, helm install, rollout status, lease) in ${Date.now() - t0} ms`);

      const pod = await schedulerPod('sandbox-system', 'sandbox-extender');
      log(
        `scheduler pod ${pod.metadata.name} Running on ${pod.spec.nodeName}, ${Date.parse(pod.status.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!) - Date.parse(pod.metadata.creationTimestamp)} ms from creation to Ready`,
      );
      expect(realNodes()).toContain(pod.spec.nodeName);
      // The stand-in for a pod network put it on the host network with the API server's address; nothing else.
      expect([pod.spec.hostNetwork, pod.spec.dnsPolicy]).toEqual([true, 'ClusterFirstWithHostNet']);
      expect(envOf(pod, 'extender')).toEqual({
        KUBERNETES_SERVICE_HOST: '127.0.0.1',
        KUBERNETES_SERVICE_PORT: new URL(env.APISERVER_URL!).port,
      });
      const deployment = await kubectl.json<{ spec: { template: { spec: { hostNetwork?: boolean } } } }>([
        '-n',
        'sandbox-system',
        'get',
        'deployment',
        'sandbox-extender',
      ]);
      expect(deployment.spec.template.spec.hostNetwork).toBeUndefined(); // the chart's default
      const images = (
        await kubectl.json<{ spec: { containers: { image: string }[] } }>([
          '-n',
          'sandbox-system',
          'get',
          'pod',
          pod.metadata.name,
        ])
      ).spec.containers.map((c) => c.image);
      // The chart's defaults: kube-scheduler of the control plane's version, the extender tagged as the package.
      const extenderImage = `${image.IMAGE_REGISTRY}/sandbox-extender:${(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;
      expect(images).toEqual([`registry.k8s.io/kube-scheduler:${K8S_VERSION}`, extenderImage, extenderImage]);
      expect(names.KUBE_SCHEDULER_IMAGE).toBe(`registry.k8s.io/kube-scheduler:${K8S_VERSION}`);

      const holder = await leaseRenewed('sandbox-system', 'sandbox-scheduler');
      log(`lease sandbox-system/sandbox-scheduler held and renewed by ${holder}`);

      const nodes = await placeSandboxes('sandbox-scheduler', 31000);
      expectPlacedOnBothKinds(nodes);
      // The extender in the pod answered kube-scheduler (its gateway on the chart's default port, in the host network).
      const filters =
        sumCounterBy(
          await fetchText(`http://${pod.status.podIP}:9090/metrics`),
          'sandbox_extender_http_requests_total',
          'verb',
        ).get('filter') ?? 0;
      expect(filters).toBeGreaterThanOrEqual(nodes.size);

      await helm(['uninstall', 'sandbox-extender', '-n', 'sandbox-system', '--wait']);
    },
    2 * STEP_TIMEOUT_MS,
  );

  it(
    "runs the chart's own host-network values: host network, the API server's address, the host-network ports",
    async () => {
      const apiPort = new URL(env.APISERVER_URL!).port;
      const ns = 'sandbox-hostnet';
      // The README's release uses the same scheduler name: gone unless its test failed half-way.
      await helm(['uninstall', 'sandbox-extender', '-n', 'sandbox-system', '--ignore-not-found', '--wait']);
      const t0 = Date.now();
      const out = await helm([
        'install',
        'hostnet',
        join(REPO_ROOT, 'charts', 'sandbox-extender'),
        '-n',
        ns,
        '--create-namespace',
        '--set',
        `extender.image.repository=${image.IMAGE_REGISTRY}/sandbox-extender`,
        '--set',
        'hostNetwork.enabled=true',
        '--set',
        'apiServer.host=127.0.0.1',
        '--set',
        `apiServer.port=${apiPort}`,
        '--wait',
        '--timeout',
        '5m',
      ]);
      expect(out).toMatch(/STATUS: deployed/);
      const pod = await schedulerPod(ns, 'hostnet');
      log(`helm install --wait with host-network values: ${Date.now() - t0} ms; pod on ${pod.spec.nodeName}`);
      expect(realNodes()).toContain(pod.spec.nodeName);
      const deployment = await kubectl.json<{
        spec: { template: { spec: { hostNetwork?: boolean; dnsPolicy?: string } } };
      }>(['-n', ns, 'get', 'deployment', 'hostnet-sandbox-extender']);
      expect([deployment.spec.template.spec.hostNetwork, deployment.spec.template.spec.dnsPolicy]).toEqual([
        true,
        'ClusterFirstWithHostNet',
      ]);
      for (const c of ['kube-scheduler', 'extender']) {
        expect(envOf(pod, c)).toMatchObject({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: apiPort });
      }
      expect(
        pod.spec.containers.flatMap((c) => (c.ports ?? []).map((p) => `${p.containerPort}/${p.hostPort}`)).sort(),
      ).toEqual(['10357/10357', '10358/10358', '10359/10359']);
      // On the node's address (the pod's IP in the host network), at the host-network ports.
      expect(pod.status.podIP).toBe('127.0.0.1');
      expect(await probe(`https://${pod.status.podIP}:10359/readyz`)).toBe(200);
      expect((await fetch(`http://${pod.status.podIP}:10357/readyz`)).status).toBe(200);

      const holder = await leaseRenewed(ns, 'sandbox-scheduler');
      log(`lease ${ns}/sandbox-scheduler held and renewed by ${holder}`);
      const nodes = await placeSandboxes('sandbox-scheduler', 31100);
      expectPlacedOnBothKinds(nodes);
      const filters =
        sumCounterBy(
          await fetchText(`http://${pod.status.podIP}:10357/metrics`),
          'sandbox_extender_http_requests_total',
          'verb',
        ).get('filter') ?? 0;
      expect(filters).toBeGreaterThanOrEqual(nodes.size);

      await helm(['uninstall', 'hostnet', '-n', ns, '--wait']);
    },
    2 * STEP_TIMEOUT_MS,
  );
});
