/**
 * The Helm chart on a real control plane (its own cluster: test/e2e/cluster-up.sh with SANDBOX_E2E_STATE
 * .cache/e2e-helm, so it never touches the cluster of the other e2e tests):
 *
 * 1. test/e2e/helm-check.sh: lint, template, values schema, rendered configs parsed by the extender's schema
 *    and loaded by kube-scheduler, bad values rejected, manifests/ in sync.
 * 2. `helm install` of the default (scheduler) mode and of the extender mode (HTTPS + client certificates):
 *    every object is accepted by the API server and exists, the Deployments become available (KWOK runs no
 *    containers: pods only turn Running and Ready), and the plain manifests pass a server-side dry run.
 * 3. RBAC: the extender-mode ServiceAccount (which holds only the extender's ClusterRole) may do exactly the
 *    extender's calls (`kubectl auth can-i`); the extender, run here as that ServiceAccount with the chart's
 *    rendered config, lists and watches, answers filter/prioritize/bind over mTLS, creates the Binding and the
 *    ProjectedPlacement Event, and its log shows no refused request.
 * 4. kube-scheduler with the chart's rendered KubeSchedulerConfiguration, authenticated as the chart's
 *    ServiceAccount, with the chart's extender config beside it (and the chart's metrics gateway in front),
 *    holds its own lease and places a pod of manifests/examples/sandbox-deployment.yaml through the extender:
 *    the extender's request counters rise, the pod is bound, `kubectl describe pod` shows ProjectedPlacement.
 * 5. replicas > 1: a second pod's extender keeps its watches synced and is not called while its kube-scheduler
 *    is a standby; when the leader stops, the standby takes the lease and places through its own extender.
 * 6. `helm uninstall` removes both releases.
 *
 * The cluster's own sandbox-scheduler already schedules `sandbox-scheduler` pods, so the releases here use
 * other scheduler names (a chart value). Everything started here is stopped by pid in afterAll; the cluster is
 * stopped too unless HELM_E2E_KEEP=1. Logs: .cache/e2e-helm/logs/helm-*.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import { E2E_DIR, REPO_ROOT, fetchText, run, sumCounterBy, waitFor, type ClusterEnv } from './kit/controlPlane.js';
import { Kubectl } from './kit/kubectl.js';
import { releaseStateLock, takeStateLock } from './stateLock.js';

const STATE = process.env.SANDBOX_HELM_E2E_STATE ?? join(REPO_ROOT, '.cache', 'e2e-helm');
const KEEP = process.env.HELM_E2E_KEEP === '1';
const SETUP_TIMEOUT_MS = Number(process.env.E2E_SETUP_TIMEOUT_MS ?? 45 * 60_000); // a cold tools build included
const STEP_TIMEOUT_MS = 5 * 60_000;
const CHART = join(REPO_ROOT, 'charts', 'sandbox-extender');

/** Default (scheduler) mode. */
const SCHED = {
  namespace: 'sandbox-system',
  release: 'sandbox-extender',
  fullname: 'sandbox-extender',
  schedulerName: 'helm-sandbox-scheduler',
};
/** Extender mode: release "edge" in its own namespace (the chart's ClusterRoles are named after the release). */
const EDGE = {
  namespace: 'sandbox-edge',
  release: 'edge',
  fullname: 'edge-sandbox-extender',
  schedulerName: 'edge-scheduler',
};
const PODS_NS = 'helm-sandboxes';
const FORBIDDEN = /forbidden|HTTP(-Code)?:? *403|"(code|statusCode)": *403/i;

let env: ClusterEnv;
let kubectl: Kubectl;
let helmBin: string;
let logs: string;
let pki: string;
const children: { name: string; child: ChildProcess; log: string }[] = [];
/** Set by the placement test for the standby test: the leader's processes, files and the rendered configs. */
let leader:
  | {
      kc: string;
      extenderConfig: { server: { port: number } };
      ksc: { extenders: { urlPrefix: string }[] };
      scheduler: { name: string; child: ChildProcess; log: string };
    }
  | undefined;

// ---------------------------------------------------------------------------------------------- helpers
function readEnvFile(file: string): ClusterEnv {
  const out: ClusterEnv = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

function clusterScript(name: 'cluster-up.sh' | 'cluster-down.sh', args: string[] = []) {
  // The chart's own cluster needs no agent-sandbox controller.
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX_E2E_STATE: STATE,
    CLUSTER: 'examples/cluster/heterogeneous.yaml',
    AGENT_SANDBOX: '0',
  };
  delete childEnv.CLUSTER_NODES;
  delete childEnv.EXTENDER_CONFIG;
  return run('bash', [join(E2E_DIR, name), ...args], { env: childEnv, timeoutMs: SETUP_TIMEOUT_MS });
}

async function helm(args: string[]): Promise<string> {
  const { stdout } = await run(helmBin, args, {
    env: { ...process.env, KUBECONFIG: env.KUBECONFIG },
    timeoutMs: STEP_TIMEOUT_MS,
  });
  return stdout;
}

function freePort(): Promise<number> {
  return new Promise((ok, bad) => {
    const s = createServer();
    s.once('error', bad);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

/** Starts a long-running process with its output in logs/NAME.log; stopped by pid in afterAll. */
function start(
  name: string,
  file: string,
  args: string[],
  extraEnv: NodeJS.ProcessEnv = {},
): { child: ChildProcess; log: string } {
  const log = join(logs, `${name}.log`);
  const fd = openSync(log, 'a');
  const child = spawn(file, args, { cwd: REPO_ROOT, env: { ...process.env, ...extraEnv }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.push({ name, child, log });
  process.stderr.write(`[helm e2e] started ${name} (pid ${child.pid}), log ${log}\n`);
  return { child, log };
}

async function stop(entry: { name: string; child: ChildProcess }): Promise<void> {
  const { child } = entry;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  process.stderr.write(`[helm e2e] stopped ${entry.name} (pid ${child.pid})\n`);
}

function forbiddenLines(log: string): string[] {
  return existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => FORBIDDEN.test(l))
    : [];
}

async function createNamespace(name: string): Promise<void> {
  await kubectl.apply([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }]);
  await waitFor(`ServiceAccount ${name}/default`, 60_000, async () =>
    (await kubectl.run(['-n', name, 'get', 'serviceaccount', 'default', '--ignore-not-found', '-o', 'name'])).trim()
      ? true
      : undefined,
  );
}

/** A kubeconfig that authenticates as ServiceAccount NS/SA with a fresh token (as the pod's would). */
async function serviceAccountKubeconfig(namespace: string, sa: string): Promise<string> {
  const token = (await kubectl.run(['-n', namespace, 'create', 'token', sa, '--duration=2h'])).trim();
  const file = join(STATE, `kubeconfig-${namespace}-${sa}`);
  const kc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'e2e', cluster: { server: env.APISERVER_URL, 'certificate-authority': join(STATE, 'pki', 'ca.crt') } },
    ],
    users: [{ name: sa, user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: sa, namespace } }],
    'current-context': 'e2e',
  };
  writeFileSync(file, stringifyYaml(kc), { mode: 0o600 });
  return file;
}

async function configMapFile(namespace: string, name: string): Promise<string> {
  const cm = await kubectl.json<{ data: Record<string, string> }>(['-n', namespace, 'get', 'configmap', name]);
  const text = cm.data['config.yaml'];
  if (!text) throw new Error(`ConfigMap ${namespace}/${name} has no config.yaml`);
  return text;
}

/** HTTPS request with a client certificate (or none), as kube-scheduler's extender client makes it. */
function tlsCall(
  port: number,
  method: string,
  path: string,
  tls: { ca: Buffer; cert?: Buffer; key?: Buffer },
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((ok, bad) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        servername: `${EDGE.fullname}.${EDGE.namespace}.svc`,
        headers: payload ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (data += d));
        res.on('end', () => ok({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', bad);
    req.end(payload);
  });
}

/** GET on kube-scheduler's secure port as a kubelet probe does it: no credentials, certificate not verified. */
function probe(port: number, path: string): Promise<number> {
  return new Promise((ok, bad) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => ok(res.statusCode ?? 0));
    });
    req.on('error', bad);
    req.end();
  });
}

async function verbCounts(base: string): Promise<Map<string, number>> {
  return sumCounterBy(await fetchText(`${base}/metrics`), 'sandbox_extender_http_requests_total', 'verb');
}

interface PodView {
  metadata: { name: string; namespace: string; uid: string };
  spec: { nodeName?: string; schedulerName?: string };
  status: { phase?: string };
}
interface EventView {
  reason: string;
  message: string;
  source?: { component?: string };
  reportingComponent?: string;
}

async function podEvents(namespace: string, pod: string): Promise<EventView[]> {
  return (
    await kubectl.json<{ items: EventView[] }>([
      '-n',
      namespace,
      'get',
      'events',
      '--field-selector',
      `involvedObject.name=${pod}`,
    ])
  ).items;
}

// ---------------------------------------------------------------------------------------------- lifecycle
let locked = false;

beforeAll(async () => {
  locked = takeStateLock(STATE, 'helm.e2e.test.ts', 'SANDBOX_HELM_E2E_STATE');
  mkdirSync(STATE, { recursive: true });
  await clusterScript('cluster-down.sh', ['--keep-logs']); // a cluster left by a killed run of this test
  const { stderr } = await clusterScript('cluster-up.sh');
  process.stderr.write(
    stderr
      .split('\n')
      .filter((l) => /cluster up|tools (up to date|built)/.test(l))
      .map((l) => `${l}\n`)
      .join(''),
  );
  env = readEnvFile(join(STATE, 'cluster.env'));
  kubectl = new Kubectl(env);
  helmBin = join(env.E2E_BIN!, 'helm');
  logs = join(STATE, 'logs');
  pki = join(STATE, 'helm-pki');
  mkdirSync(pki, { recursive: true });
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  for (const c of [...children].reverse()) await stop(c);
  // The ServiceAccount tokens and private keys made here; configs and logs stay for inspection.
  if (locked && existsSync(STATE))
    for (const f of readdirSync(STATE).filter((n) => n.startsWith('kubeconfig-'))) rmSync(join(STATE, f));
  if (locked && pki) rmSync(pki, { recursive: true, force: true });
  try {
    if (!locked) return; // another run owns the state folder: touch nothing
    if (KEEP) process.stderr.write(`[helm e2e] HELM_E2E_KEEP=1: cluster left running (SANDBOX_E2E_STATE=${STATE})\n`);
    else await clusterScript('cluster-down.sh', ['--keep-logs']);
  } finally {
    if (locked) releaseStateLock(STATE);
  }
}, 5 * 60_000);

// ---------------------------------------------------------------------------------------------- tests
describe('Helm chart', () => {
  it(
    'passes helm-check.sh (lint, template, schemas, kube-scheduler loads the configs, bad values fail, manifests in sync)',
    async () => {
      const { stdout } = await run('bash', [join(E2E_DIR, 'helm-check.sh')], {
        env: { ...process.env, HELM_CHECK_BUILD: '0' },
        timeoutMs: STEP_TIMEOUT_MS,
      });
      writeFileSync(join(logs, 'helm-check.txt'), stdout);
      expect(stdout).toMatch(/^helm-check: \d+ passed, 0 failed$/m);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'installs in scheduler mode: every object accepted, the Deployment available',
    async () => {
      await createNamespace(SCHED.namespace);
      const out = await helm([
        'install',
        SCHED.release,
        CHART,
        '--namespace',
        SCHED.namespace,
        '--set',
        `schedulerName=${SCHED.schedulerName}`,
        '--wait',
        '--timeout',
        '3m',
      ]);
      writeFileSync(join(logs, 'helm-install.txt'), out);
      process.stderr.write(`[helm e2e] helm install (scheduler mode):\n${out}\n`);
      expect(out).toMatch(/STATUS: deployed/);
      expect(out).toContain(`schedulerName: ${SCHED.schedulerName}`); // NOTES.txt

      const status = JSON.parse(await helm(['status', SCHED.release, '-n', SCHED.namespace, '-o', 'json'])) as {
        info: { status: string };
      };
      expect(status.info.status).toBe('deployed');
      const manifest = await helm(['get', 'manifest', SCHED.release, '-n', SCHED.namespace]);
      const objects = parseAllDocuments(manifest)
        .map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } })
        .filter(Boolean);
      expect(objects.map((o) => o.kind)).toEqual(
        expect.arrayContaining([
          'ServiceAccount',
          'ClusterRole',
          'ClusterRoleBinding',
          'Role',
          'RoleBinding',
          'ConfigMap',
          'Service',
          'Deployment',
          'PodDisruptionBudget',
        ]),
      );
      for (const o of objects) {
        const got = await kubectl.run([
          ...(o.metadata.namespace ? ['-n', o.metadata.namespace] : []),
          'get',
          o.kind,
          o.metadata.name,
          '-o',
          'name',
        ]);
        expect(got.trim()).toMatch(new RegExp(`/${o.metadata.name}$`));
      }
      const deployment = await kubectl.json<{ status: { availableReplicas?: number } }>([
        '-n',
        SCHED.namespace,
        'get',
        'deployment',
        SCHED.fullname,
      ]);
      expect(deployment.status.availableReplicas).toBe(1);

      // The plain manifests and the sample are accepted by the API server as they are (strict field validation).
      for (const file of ['manifests/sandbox-extender.yaml', 'manifests/examples/sandbox-deployment.yaml']) {
        const dry = await kubectl.run(['apply', '--dry-run=server', '--validate=strict', '-f', join(REPO_ROOT, file)]);
        expect(dry).toMatch(/\(server dry run\)/);
      }
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'installs in extender mode (HTTPS from a Secret, client certificates): every object accepted',
    async () => {
      // One CA signs the extender's serving certificate (the Service's names, and 127.0.0.1 for the local run
      // below) and the client certificate a kube-scheduler would present.
      const ssl = (args: string[]) => run('openssl', args, { timeoutMs: 60_000 });
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
      await ssl([
        'req',
        '-x509',
        ...ec,
        '-days',
        '1',
        '-subj',
        '/CN=helm-e2e-ca',
        '-keyout',
        `${pki}/ca.key`,
        '-out',
        `${pki}/ca.crt`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign',
      ]);
      const svc = `${EDGE.fullname}.${EDGE.namespace}.svc`;
      for (const [name, subj, ext] of [
        [
          'server',
          `/CN=${svc}`,
          `extendedKeyUsage=serverAuth\nsubjectAltName=DNS:${svc},DNS:${EDGE.fullname},IP:127.0.0.1\n`,
        ],
        ['client', '/CN=kube-scheduler', 'extendedKeyUsage=clientAuth\n'],
      ] as const) {
        writeFileSync(
          `${pki}/${name}.ext`,
          `basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n${ext}`,
        );
        await ssl(['req', ...ec, '-subj', subj, '-keyout', `${pki}/${name}.key`, '-out', `${pki}/${name}.csr`]);
        await ssl([
          'x509',
          '-req',
          '-in',
          `${pki}/${name}.csr`,
          '-CA',
          `${pki}/ca.crt`,
          '-CAkey',
          `${pki}/ca.key`,
          '-CAcreateserial',
          '-days',
          '1',
          '-extfile',
          `${pki}/${name}.ext`,
          '-out',
          `${pki}/${name}.crt`,
        ]);
      }
      await createNamespace(EDGE.namespace);
      await kubectl.run([
        '-n',
        EDGE.namespace,
        'create',
        'secret',
        'tls',
        'sandbox-extender-tls',
        `--cert=${pki}/server.crt`,
        `--key=${pki}/server.key`,
      ]);
      await kubectl.run([
        '-n',
        EDGE.namespace,
        'create',
        'secret',
        'generic',
        'sandbox-extender-client-ca',
        `--from-file=ca.crt=${pki}/ca.crt`,
      ]);

      // ci/extender-only-values.yaml names those Secrets; its ServiceMonitor needs the prometheus-operator CRD,
      // which this cluster does not have (helm-check.sh renders it).
      const out = await helm([
        'install',
        EDGE.release,
        CHART,
        '--namespace',
        EDGE.namespace,
        '-f',
        join(CHART, 'ci', 'extender-only-values.yaml'),
        '--set',
        `schedulerName=${EDGE.schedulerName}`,
        '--set',
        'serviceMonitor.enabled=false',
        '--wait',
        '--timeout',
        '3m',
      ]);
      writeFileSync(join(logs, 'helm-install-extender-mode.txt'), out);
      expect(out).toMatch(/STATUS: deployed/);
      expect(out).toContain(`urlPrefix: "https://${svc}:443"`); // NOTES.txt prints the extender block
      const deployment = await kubectl.json<{ status: { availableReplicas?: number } }>([
        '-n',
        EDGE.namespace,
        'get',
        'deployment',
        EDGE.fullname,
      ]);
      expect(deployment.status.availableReplicas).toBe(2);
      const service = await kubectl.json<{ spec: { ports: { name: string; port: number }[] } }>([
        '-n',
        EDGE.namespace,
        'get',
        'service',
        EDGE.fullname,
      ]);
      expect(service.spec.ports).toEqual([expect.objectContaining({ name: 'https', port: 443 })]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "grants the extender's ServiceAccount its own calls and nothing more (kubectl auth can-i)",
    async () => {
      const as = `--as=system:serviceaccount:${EDGE.namespace}:${EDGE.fullname}`;
      const canI = async (args: string[]): Promise<boolean> => {
        try {
          return (await kubectl.run(['auth', 'can-i', ...args, as])).trim() === 'yes';
        } catch (err) {
          if (/\bno\b/.test((err as Error).message)) return false; // exit 1 with "no"
          throw err;
        }
      };
      const allowed = [
        ['get', 'nodes'],
        ['list', 'nodes'],
        ['watch', 'nodes'],
        ['get', 'pods', '-A'],
        ['list', 'pods', '-A'],
        ['watch', 'pods', '-A'],
        ['create', 'pods', '--subresource=binding', '-n', PODS_NS],
        ['create', 'events', '-n', PODS_NS],
        ['patch', 'events', '-n', PODS_NS],
      ];
      const denied = [
        ['create', 'pods', '-n', PODS_NS],
        ['delete', 'pods', '-n', PODS_NS],
        ['update', 'pods', '-n', PODS_NS],
        ['patch', 'pods', '--subresource=status', '-n', PODS_NS],
        ['update', 'nodes'],
        ['delete', 'nodes'],
        ['get', 'secrets', '-n', EDGE.namespace],
        ['list', 'configmaps', '-A'],
        ['create', 'leases.coordination.k8s.io', '-n', EDGE.namespace],
        ['delete', 'events', '-n', PODS_NS],
      ];
      const answers: string[] = [];
      for (const a of allowed) answers.push(`${a.join(' ')}: ${(await canI(a)) ? 'yes' : 'no'}`);
      for (const a of denied) answers.push(`${a.join(' ')}: ${(await canI(a)) ? 'yes' : 'no'}`);
      writeFileSync(join(logs, 'helm-can-i.txt'), `${answers.join('\n')}\n`);
      expect(answers).toEqual([
        ...allowed.map((a) => `${a.join(' ')}: yes`),
        ...denied.map((a) => `${a.join(' ')}: no`),
      ]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'runs the extender as that ServiceAccount with the chart’s config: watches, mTLS verbs, Binding and Event, no 403',
    async () => {
      await createNamespace(PODS_NS);
      const kc = await serviceAccountKubeconfig(EDGE.namespace, EDGE.fullname);
      // The chart's rendered config, with only what must point at this machine replaced: the listen address and
      // the TLS files (the pod mounts the same Secrets' files at /etc/sandbox-extender/...).
      const config = parseYaml(await configMapFile(EDGE.namespace, `${EDGE.fullname}-extender`)) as {
        schedulerName: string;
        server: { host: string; port: number; tls: Record<string, string> };
      };
      expect(config.schedulerName).toBe(EDGE.schedulerName);
      expect(config.server.tls).toEqual({
        certFile: '/etc/sandbox-extender/tls/tls.crt',
        keyFile: '/etc/sandbox-extender/tls/tls.key',
        clientCaFile: '/etc/sandbox-extender/client-ca/ca.crt',
      });
      const port = await freePort();
      config.server = {
        ...config.server,
        host: '127.0.0.1',
        port,
        tls: { certFile: `${pki}/server.crt`, keyFile: `${pki}/server.key`, clientCaFile: `${pki}/ca.crt` },
      };
      const configFile = join(STATE, 'helm-extender-mode-config.yaml');
      writeFileSync(configFile, stringifyYaml(config));
      const { log } = start('helm-extender-mode', process.execPath, [
        join(REPO_ROOT, 'dist/src/cli/main.js'),
        'serve',
        '--kubeconfig',
        kc,
        '--config',
        configFile,
      ]);

      const ca = readFileSync(`${pki}/ca.crt`);
      const client = { ca, cert: readFileSync(`${pki}/client.crt`), key: readFileSync(`${pki}/client.key`) };
      await waitFor(
        'the extender ready (initial lists applied)',
        60_000,
        async () =>
          (await tlsCall(port, 'GET', '/readyz', client).catch(() => undefined))?.status === 200 ? true : undefined,
        async () => readFileSync(log, 'utf8').slice(-3000),
      );
      // Without a client certificate, the TLS handshake is refused.
      await expect(tlsCall(port, 'GET', '/healthz', { ca })).rejects.toThrow();

      // A pod of that scheduler (nothing schedules it here: this test is its kube-scheduler).
      await kubectl.apply([
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'edge-sandbox', namespace: PODS_NS },
          spec: {
            schedulerName: EDGE.schedulerName,
            containers: [
              { name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '2', memory: '4Gi' } } },
            ],
          },
        },
      ]);
      const pod = await kubectl.json<PodView & Record<string, unknown>>(['-n', PODS_NS, 'get', 'pod', 'edge-sandbox']);
      const nodes = (await kubectl.json<{ items: { metadata: { name: string } }[] }>(['get', 'nodes'])).items.map(
        (n) => n.metadata.name,
      );
      await waitFor('the extender to see the pod', 30_000, async () => {
        const f = await tlsCall(port, 'POST', '/filter', client, { Pod: pod, NodeNames: nodes });
        const body = JSON.parse(f.body) as { NodeNames?: string[] };
        return f.status === 200 && (body.NodeNames?.length ?? 0) > 0 ? true : undefined;
      });
      const prioritize = await tlsCall(port, 'POST', '/prioritize', client, { Pod: pod, NodeNames: nodes });
      const scores = JSON.parse(prioritize.body) as { Host: string; Score: number }[];
      const best = scores.reduce((a, b) => (b.Score > a.Score ? b : a));
      const bind = await tlsCall(port, 'POST', '/bind', client, {
        PodName: pod.metadata.name,
        PodNamespace: PODS_NS,
        PodUID: pod.metadata.uid,
        Node: best.Host,
      });
      expect([bind.status, JSON.parse(bind.body).Error ?? '']).toEqual([200, '']);
      const bound = await kubectl.json<PodView>(['-n', PODS_NS, 'get', 'pod', 'edge-sandbox']);
      expect(bound.spec.nodeName).toBe(best.Host);
      const event = await waitFor('the ProjectedPlacement event', 30_000, async () =>
        (await podEvents(PODS_NS, 'edge-sandbox')).find((e) => e.reason === 'ProjectedPlacement'),
      );
      expect(event.source?.component ?? event.reportingComponent).toBe('sandbox-extender');
      // An Event's outcome reaches the metrics from the API worker in batches (every 250 ms), after the API server answered.
      const metrics = await waitFor('the Event counted as recorded', 10_000, async () => {
        const body = (await tlsCall(port, 'GET', '/metrics', client)).body;
        return (sumCounterBy(body, 'sandbox_extender_events_total', 'outcome').get('recorded') ?? 0) >= 1
          ? body
          : undefined;
      });
      expect(sumCounterBy(metrics, 'sandbox_extender_binds_total', 'result').get('bound')).toBe(1);
      expect(forbiddenLines(log)).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "places a sandbox pod through the extender with kube-scheduler on the chart's rendered config, as the chart's ServiceAccount",
    async () => {
      const kc = await serviceAccountKubeconfig(SCHED.namespace, SCHED.fullname);
      // The extender: the chart's config file, with only the loopback port changed (a free one on this machine).
      const extenderConfig = parseYaml(await configMapFile(SCHED.namespace, `${SCHED.fullname}-extender`)) as {
        schedulerName: string;
        server: { host: string; port: number };
      };
      expect(extenderConfig.schedulerName).toBe(SCHED.schedulerName);
      expect(extenderConfig.server.host).toBe('127.0.0.1');
      const extPort = await freePort();
      extenderConfig.server.port = extPort;
      const extenderConfigFile = join(STATE, 'helm-extender-config.yaml');
      writeFileSync(extenderConfigFile, stringifyYaml(extenderConfig));
      const extender = start('helm-extender', process.execPath, [
        join(REPO_ROOT, 'dist/src/cli/main.js'),
        'serve',
        '--kubeconfig',
        kc,
        '--config',
        extenderConfigFile,
      ]);

      // The chart's metrics gateway in front of it, as in the pod (probes and Prometheus use it).
      const gwPort = await freePort();
      const gatewayMain = join(STATE, 'metrics-gateway.mjs');
      const gatewayCm = await kubectl.json<{ data: Record<string, string> }>([
        '-n',
        SCHED.namespace,
        'get',
        'configmap',
        `${SCHED.fullname}-extender`,
      ]);
      writeFileSync(gatewayMain, gatewayCm.data['metrics-gateway.mjs']!);
      start('helm-metrics-gateway', process.execPath, [gatewayMain], {
        GATEWAY_LISTEN: `127.0.0.1:${gwPort}`,
        GATEWAY_UPSTREAM: `http://127.0.0.1:${extPort}`,
      });
      const gateway = `http://127.0.0.1:${gwPort}`;
      await waitFor(
        'the extender ready through the gateway',
        60_000,
        async () => ((await fetch(`${gateway}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined),
        async () => readFileSync(extender.log, 'utf8').slice(-3000),
      );

      // kube-scheduler: the chart's KubeSchedulerConfiguration, with only what must point at this machine
      // replaced: clientConnection.kubeconfig (in the pod: the ServiceAccount, in-cluster) and the urlPrefix port.
      const ksc = parseYaml(await configMapFile(SCHED.namespace, `${SCHED.fullname}-scheduler`)) as {
        clientConnection?: Record<string, unknown>;
        extenders: { urlPrefix: string }[];
        profiles: { schedulerName: string }[];
        leaderElection: { resourceName: string; resourceNamespace: string };
      };
      expect(ksc.clientConnection?.kubeconfig).toBeUndefined();
      expect(ksc.extenders[0]!.urlPrefix).toBe('http://127.0.0.1:8888');
      ksc.clientConnection = { ...ksc.clientConnection, kubeconfig: kc };
      ksc.extenders[0]!.urlPrefix = `http://127.0.0.1:${extPort}`;
      const kscFile = join(STATE, 'helm-kube-scheduler.yaml');
      writeFileSync(kscFile, stringifyYaml(ksc));
      const schedPort = await freePort();
      // The chart's args (--config, --bind-address, --secure-port), plus the delegated-auth kubeconfigs that a pod
      // takes from its ServiceAccount.
      const scheduler = start('helm-kube-scheduler', join(env.E2E_BIN!, 'kube-scheduler'), [
        `--config=${kscFile}`,
        `--authentication-kubeconfig=${kc}`,
        `--authorization-kubeconfig=${kc}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${schedPort}`,
        '--v=2',
      ]);
      const lease = `${ksc.leaderElection.resourceNamespace}/${ksc.leaderElection.resourceName}`;
      expect(lease).toBe(`${SCHED.namespace}/${SCHED.schedulerName}`);
      await waitFor(
        `kube-scheduler holding lease ${lease}`,
        90_000,
        async () => {
          const holder = (
            await kubectl.run([
              '-n',
              SCHED.namespace,
              'get',
              'lease',
              SCHED.schedulerName,
              '--ignore-not-found',
              '-o',
              'jsonpath={.spec.holderIdentity}',
            ])
          ).trim();
          return holder ? holder : undefined;
        },
        async () => readFileSync(scheduler.log, 'utf8').slice(-3000),
      );

      const before = sumCounterBy(
        await fetchText(`${gateway}/metrics`),
        'sandbox_extender_http_requests_total',
        'verb',
      );
      // manifests/examples/sandbox-deployment.yaml, with this release's scheduler name and one replica.
      const sample = parseYaml(readFileSync(join(REPO_ROOT, 'manifests/examples/sandbox-deployment.yaml'), 'utf8')) as {
        metadata: Record<string, unknown>;
        spec: { replicas: number; template: { spec: { schedulerName: string } } };
      };
      expect(sample.spec.template.spec.schedulerName).toBe('sandbox-scheduler');
      sample.metadata.namespace = PODS_NS;
      sample.spec.replicas = 1;
      sample.spec.template.spec.schedulerName = SCHED.schedulerName;
      await kubectl.apply([sample]);
      const pod = await waitFor(
        'the sample pod bound and Running',
        90_000,
        async () => {
          const pods = (
            await kubectl.json<{ items: PodView[] }>([
              '-n',
              PODS_NS,
              'get',
              'pods',
              '-l',
              'app.kubernetes.io/name=agent-sandbox',
            ])
          ).items;
          return pods.find((p) => p.spec.nodeName && p.status.phase === 'Running');
        },
        async () =>
          `${await kubectl.run(['-n', PODS_NS, 'describe', 'pods', '-l', 'app.kubernetes.io/name=agent-sandbox'])}\n${readFileSync(scheduler.log, 'utf8').slice(-3000)}`,
      );
      expect(pod.spec.schedulerName).toBe(SCHED.schedulerName);

      const after = sumCounterBy(await fetchText(`${gateway}/metrics`), 'sandbox_extender_http_requests_total', 'verb');
      // Scheduler mode: the chart sets chooseInFilter (one call per pod) and leaves binding to kube-scheduler,
      // so Filter only: never Prioritize, never Bind.
      const grew = (verb: string) => `${verb} +${(after.get(verb) ?? 0) - (before.get(verb) ?? 0)}`;
      expect(grew('filter')).toMatch(/^filter \+[1-9]/);
      expect([grew('prioritize'), grew('bind')]).toEqual(['prioritize +0', 'bind +0']);
      const events = await waitFor('ProjectedPlacement and Scheduled events', 30_000, async () => {
        const evs = await podEvents(PODS_NS, pod.metadata.name);
        return evs.some((e) => e.reason === 'ProjectedPlacement') && evs.some((e) => e.reason === 'Scheduled')
          ? evs
          : undefined;
      });
      expect(events.find((e) => e.reason === 'ProjectedPlacement')!.message).toContain(pod.spec.nodeName!);
      const describe = await kubectl.run(['-n', PODS_NS, 'describe', 'pod', pod.metadata.name, '--show-events=true']);
      writeFileSync(join(logs, 'helm-describe-pod.txt'), describe);
      process.stderr.write(
        `[helm e2e] kubectl describe pod ${pod.metadata.name}:\n${describe.slice(describe.indexOf('Events:'))}\n`,
      );
      expect(describe).toMatch(/Normal\s+ProjectedPlacement\s+.*sandbox-extender/);
      expect(describe).toMatch(new RegExp(`Normal\\s+Scheduled\\s+.*${SCHED.schedulerName}`));
      expect(forbiddenLines(extender.log)).toEqual([]);
      expect(forbiddenLines(scheduler.log)).toEqual([]);
      // The probes of the chart's kube-scheduler container answer without credentials.
      expect([await probe(schedPort, '/livez'), await probe(schedPort, '/readyz')]).toEqual([200, 200]);
      leader = { kc, extenderConfig, ksc, scheduler: children.find((c) => c.name === 'helm-kube-scheduler')! };
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'with a second replica: its extender keeps its watches warm but decides nothing, and takes over with its kube-scheduler',
    async () => {
      if (!leader) throw new Error('needs the placement test above');
      // A second pod of the Deployment, as replicas: 2 makes it: its own extender and kube-scheduler, same configs.
      const port = await freePort();
      const configFile = join(STATE, 'helm-extender-2-config.yaml');
      writeFileSync(
        configFile,
        stringifyYaml({ ...leader.extenderConfig, server: { ...leader.extenderConfig.server, port } }),
      );
      const extender2 = start('helm-extender-2', process.execPath, [
        join(REPO_ROOT, 'dist/src/cli/main.js'),
        'serve',
        '--kubeconfig',
        leader.kc,
        '--config',
        configFile,
      ]);
      const base2 = `http://127.0.0.1:${port}`;
      await waitFor(
        'the second extender ready',
        60_000,
        async () => ((await fetch(`${base2}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined),
        async () => readFileSync(extender2.log, 'utf8').slice(-3000),
      );
      const ksc2 = structuredClone(leader.ksc);
      ksc2.extenders[0]!.urlPrefix = base2;
      const kscFile2 = join(STATE, 'helm-kube-scheduler-2.yaml');
      writeFileSync(kscFile2, stringifyYaml(ksc2));
      const schedPort2 = await freePort();
      const scheduler2 = start('helm-kube-scheduler-2', join(env.E2E_BIN!, 'kube-scheduler'), [
        `--config=${kscFile2}`,
        `--authentication-kubeconfig=${leader.kc}`,
        `--authorization-kubeconfig=${leader.kc}`,
        '--bind-address=127.0.0.1',
        `--secure-port=${schedPort2}`,
        '--v=2',
      ]);
      const holder = () =>
        kubectl
          .run(['-n', SCHED.namespace, 'get', 'lease', SCHED.schedulerName, '-o', 'jsonpath={.spec.holderIdentity}'])
          .then((h) => h.trim());
      const leaderIdentity = await holder();
      await waitFor(
        'the standby kube-scheduler ready',
        60_000,
        async () => ((await probe(schedPort2, '/readyz').catch(() => 0)) === 200 ? true : undefined),
        async () => readFileSync(scheduler2.log, 'utf8').slice(-3000),
      );

      // A pod placed while both run: only the leader's extender is called; the standby's is synced and idle.
      const standbyBefore = await verbCounts(base2);
      await kubectl.run(['-n', PODS_NS, 'scale', 'deployment', 'agent-sandbox', '--replicas=2']);
      const running = async (n: number) => {
        const pods = (
          await kubectl.json<{ items: PodView[] }>([
            '-n',
            PODS_NS,
            'get',
            'pods',
            '-l',
            'app.kubernetes.io/name=agent-sandbox',
          ])
        ).items;
        return pods.filter((p) => p.spec.nodeName && p.status.phase === 'Running').length >= n ? true : undefined;
      };
      await waitFor('2 sample pods Running', 60_000, () => running(2));
      expect(await holder()).toBe(leaderIdentity);
      const standbyMetrics = await fetchText(`${base2}/metrics`);
      expect(sumCounterBy(standbyMetrics, 'sandbox_extender_cache_synced', 'resource')).toEqual(
        new Map([
          ['nodes', 1],
          ['pods', 1],
        ]),
      );
      for (const verb of ['filter', 'prioritize', 'bind'])
        expect(`${verb} ${(await verbCounts(base2)).get(verb) ?? 0}`).toBe(`${verb} ${standbyBefore.get(verb) ?? 0}`);

      // The leader goes away: the standby takes the lease (at most leaseDuration later) and places the next pod
      // through its own, already synced extender.
      await stop(leader.scheduler);
      await waitFor(
        'the standby holding the lease',
        60_000,
        async () => {
          const h = await holder();
          return h && h !== leaderIdentity ? h : undefined;
        },
        async () => readFileSync(scheduler2.log, 'utf8').slice(-3000),
      );
      await kubectl.run(['-n', PODS_NS, 'scale', 'deployment', 'agent-sandbox', '--replicas=3']);
      await waitFor('3 sample pods Running', 60_000, () => running(3));
      const after = await verbCounts(base2);
      expect((after.get('filter') ?? 0) - (standbyBefore.get('filter') ?? 0)).toBeGreaterThanOrEqual(1);
      expect((after.get('bind') ?? 0) - (standbyBefore.get('bind') ?? 0)).toBe(0); // kube-scheduler binds (bind off by default)
      expect(forbiddenLines(extender2.log)).toEqual([]);
      expect(forbiddenLines(scheduler2.log)).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'uninstalls both releases, cluster-scoped objects included',
    async () => {
      for (const c of [...children].reverse()) await stop(c); // before their ServiceAccounts go away
      await helm(['uninstall', SCHED.release, '-n', SCHED.namespace, '--wait']);
      await helm(['uninstall', EDGE.release, '-n', EDGE.namespace, '--wait']);
      const left = await kubectl.run([
        'get',
        'clusterroles,clusterrolebindings',
        '-l',
        'app.kubernetes.io/part-of=sandbox-extender',
        '-o',
        'name',
      ]);
      expect(left.trim()).toBe('');
      const leftNs = await kubectl.run([
        '-n',
        SCHED.namespace,
        'get',
        'deployments,configmaps,serviceaccounts,roles,rolebindings',
        '-l',
        `app.kubernetes.io/instance=${SCHED.release}`,
        '-o',
        'name',
      ]);
      expect(leftNs.trim()).toBe('');
    },
    STEP_TIMEOUT_MS,
  );
});
