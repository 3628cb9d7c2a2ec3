#!/usr/bin/env node
// Checks a `helm template` rendering of charts/sandbox-extender (test/e2e/helm-check.sh runs it for each value
// set) with the project's own code: the extender's config file is parsed by parseConfig (the schema the extender
// starts with), and the KubeSchedulerConfiguration is checked against it (profile = the extender's
// schedulerName, urlPrefix = its listen address, verbs it serves, own lease). Also: standard labels, namespaces,
// the pod security settings, probes and resources.
//
//   node scripts/check-rendered-chart.mjs RENDERED.yaml --namespace NS [--ksc-out FILE]
// --ksc-out writes the rendered KubeSchedulerConfiguration (scheduler mode) for `kube-scheduler --write-config-to`.
// Needs `npm run build` (dist/src/config/load.js).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLUSTER_SCOPED = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'Namespace',
  'CustomResourceDefinition',
  'PriorityClass',
]);
const LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/name',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/part-of',
];
const VERBS = new Set(['filter', 'prioritize', 'bind']);

const positional = [];
const options = {};
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--namespace' || a === '--ksc-out') options[a] = process.argv[++i];
  else positional.push(a);
}
const [file] = positional;
const namespace = options['--namespace'];
const kscOut = options['--ksc-out'];
if (!file || !namespace) {
  process.stderr.write('usage: check-rendered-chart.mjs RENDERED.yaml --namespace NS [--ksc-out FILE]\n');
  process.exit(2);
}
const loadJs = join(REPO, 'dist/src/config/load.js');
if (!existsSync(loadJs)) {
  process.stderr.write(`check-rendered-chart: ${loadJs} not found: run npm run build\n`);
  process.exit(2);
}
const { parseConfig } = await import(pathToFileURL(loadJs).href);

const problems = [];
const notes = [];
const problem = (msg) => problems.push(msg);

const docs = parseAllDocuments(readFileSync(file, 'utf8'))
  .map((d) => {
    if (d.errors.length) problem(`YAML: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS();
  })
  .filter((o) => o && typeof o === 'object');
const id = (o) => `${o.kind}/${o.metadata?.name}`;
const find = (kind, pred = () => true) => docs.filter((o) => o.kind === kind && pred(o));

// ---------------------------------------------------------------------------------------------- every object
for (const o of docs) {
  if (!o.apiVersion || !o.kind || !o.metadata?.name) {
    problem(`an object without apiVersion, kind or metadata.name: ${JSON.stringify(o).slice(0, 200)}`);
    continue;
  }
  if (!CLUSTER_SCOPED.has(o.kind) && !o.metadata.namespace) problem(`${id(o)}: no metadata.namespace`);
  if (CLUSTER_SCOPED.has(o.kind) && o.metadata.namespace) problem(`${id(o)}: cluster-scoped but has a namespace`);
  for (const l of LABELS) if (!o.metadata.labels?.[l]) problem(`${id(o)}: label ${l} missing`);
}

// ---------------------------------------------------------------------------------------------- extender config
const extenderCm = find('ConfigMap', (o) => o.metadata.name.endsWith('-extender'))[0];
let config;
if (!extenderCm?.data?.['config.yaml']) problem('no ConfigMap *-extender with config.yaml');
else {
  try {
    config = parseConfig(parseYaml(extenderCm.data['config.yaml']), `${id(extenderCm)} config.yaml`);
    notes.push(
      `extender config: parseConfig ok (strategy ${config.strategy}, dimensions ${config.dimensions.join(',')}, schedulerName ${config.schedulerName}, listen ${config.server.host}:${config.server.port}${config.server.tls ? ' https' : ''})`,
    );
  } catch (err) {
    problem(err.message);
  }
}

// ---------------------------------------------------------------------------------------------- workload
const deployments = find('Deployment');
if (deployments.length !== 1) problem(`expected one Deployment, found ${deployments.length}`);
const deployment = deployments[0];
const pod = deployment?.spec?.template?.spec;
if (pod) {
  const sc = pod.securityContext ?? {};
  if (sc.runAsNonRoot !== true) problem(`${id(deployment)}: pod securityContext.runAsNonRoot is not true`);
  if (!pod.serviceAccountName) problem(`${id(deployment)}: no serviceAccountName`);
  for (const c of pod.containers ?? []) {
    const where = `${id(deployment)} container ${c.name}`;
    const csc = c.securityContext ?? {};
    if (csc.allowPrivilegeEscalation !== false) problem(`${where}: allowPrivilegeEscalation is not false`);
    if (csc.readOnlyRootFilesystem !== true) problem(`${where}: readOnlyRootFilesystem is not true`);
    if (!csc.capabilities?.drop?.includes('ALL')) problem(`${where}: capabilities.drop lacks ALL`);
    if (!c.livenessProbe) problem(`${where}: no livenessProbe`);
    // The kubelet resolves a probe's named port among the ports of the probe's own container only (a name of
    // another container's port fails the probe: "strconv.Atoi: parsing ...: invalid syntax").
    for (const kind of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
      const port = c[kind]?.httpGet?.port ?? c[kind]?.tcpSocket?.port;
      if (typeof port === 'string' && !(c.ports ?? []).some((p) => p.name === port))
        problem(`${where}: ${kind} names port "${port}", which is not one of this container's ports`);
    }
    if (!c.resources?.requests) problem(`${where}: no resource requests`);
  }
  const ext = (pod.containers ?? []).find((c) => c.name === 'extender');
  if (!ext) problem(`${id(deployment)}: no container "extender"`);
  else {
    if (!ext.readinessProbe) problem(`${id(deployment)}: the extender has no readinessProbe`);
    const cfgPath = ext.args?.[ext.args.indexOf('--config') + 1];
    if (ext.args?.[0] !== 'serve' || !cfgPath)
      problem(`${id(deployment)}: the extender's args are not "serve --config FILE": ${JSON.stringify(ext.args)}`);
    const mounted = (p) => (ext.volumeMounts ?? []).some((m) => p === m.mountPath || p.startsWith(`${m.mountPath}/`));
    if (cfgPath && !mounted(cfgPath)) problem(`${id(deployment)}: ${cfgPath} is not mounted in the extender`);
    for (const f of [config?.server.tls?.certFile, config?.server.tls?.keyFile, config?.server.tls?.clientCaFile]) {
      if (f && !mounted(f)) problem(`${id(deployment)}: the extender's TLS file ${f} is not mounted`);
    }
  }
}

// ---------------------------------------------------------------------------------------------- scheduler mode
const schedulerCm = find('ConfigMap', (o) => o.metadata.name.endsWith('-scheduler'))[0];
if (schedulerCm && config) {
  const text = schedulerCm.data?.['config.yaml'];
  const ksc = parseYaml(text ?? '');
  const where = `${id(schedulerCm)} KubeSchedulerConfiguration`;
  if (ksc?.apiVersion !== 'kubescheduler.config.k8s.io/v1' || ksc?.kind !== 'KubeSchedulerConfiguration')
    problem(`${where}: not a v1 KubeSchedulerConfiguration`);
  const profiles = ksc?.profiles ?? [];
  if (profiles.length !== 1 || profiles[0].schedulerName !== config.schedulerName)
    problem(`${where}: expected the one profile ${config.schedulerName}, got ${profiles.map((p) => p.schedulerName)}`);
  if (JSON.stringify(profiles[0]?.plugins?.score?.disabled) !== JSON.stringify([{ name: '*' }]))
    problem(`${where}: the score plugins are not all disabled`);
  const pct = ksc?.percentageOfNodesToScore;
  if (!Number.isInteger(pct) || pct < 0 || pct > 100)
    problem(`${where}: percentageOfNodesToScore is not an integer 0–100: ${JSON.stringify(pct)}`);
  // The extender tells a sampled window by the same percentage (kubeScheduler.percentageOfNodesToScore).
  if (config.kubeScheduler.percentageOfNodesToScore !== pct)
    problem(
      `${where}: percentageOfNodesToScore ${pct} is not the extender's kubeScheduler.percentageOfNodesToScore ${config.kubeScheduler.percentageOfNodesToScore}`,
    );
  const le = ksc?.leaderElection ?? {};
  if (le.resourceName !== config.schedulerName || le.resourceNamespace !== namespace || le.resourceLock !== 'leases')
    problem(`${where}: leader election is not the lease ${namespace}/${config.schedulerName}: ${JSON.stringify(le)}`);
  if (ksc?.clientConnection?.kubeconfig)
    problem(`${where}: has a kubeconfig (in a pod it must use the ServiceAccount)`);
  const extenders = ksc?.extenders ?? [];
  if (extenders.length !== 1) problem(`${where}: expected one extender, got ${extenders.length}`);
  const e = extenders[0] ?? {};
  const url = new URL(e.urlPrefix ?? 'invalid:');
  if (
    url.protocol !== 'http:' ||
    url.hostname !== config.server.host ||
    Number(url.port) !== config.server.port ||
    config.server.host !== '127.0.0.1'
  ) {
    problem(
      `${where}: urlPrefix ${e.urlPrefix} is not the extender's loopback address ${config.server.host}:${config.server.port}`,
    );
  }
  for (const v of ['filterVerb', 'prioritizeVerb', 'bindVerb'])
    if (e[v] !== undefined && !VERBS.has(e[v])) problem(`${where}: ${v} ${e[v]} is not a verb the extender serves`);
  if (e.filterVerb !== 'filter' || e.prioritizeVerb !== 'prioritize')
    problem(`${where}: filterVerb/prioritizeVerb are not filter/prioritize`);
  if (!(e.weight > 0)) problem(`${where}: weight must be > 0`);
  // The gateway forwards to the same port.
  const gw = pod?.containers?.find((c) => c.name === 'metrics-gateway');
  const upstream = gw?.env?.find((v) => v.name === 'GATEWAY_UPSTREAM')?.value;
  if (upstream !== `http://127.0.0.1:${config.server.port}`)
    problem(`${id(deployment)}: the metrics gateway's upstream ${upstream} is not the extender`);
  notes.push(
    `KubeSchedulerConfiguration: profile ${profiles[0]?.schedulerName}, lease ${le.resourceNamespace}/${le.resourceName}, percentageOfNodesToScore ${pct} (the extender's too), extender ${e.urlPrefix} (${[e.filterVerb, e.prioritizeVerb, e.bindVerb].filter(Boolean).join(', ')}), nodeCacheCapable ${e.nodeCacheCapable}`,
  );
  if (kscOut) writeFileSync(kscOut, text);
} else if (config) {
  // Extender mode: HTTPS behind a Service whose target is the extender's port.
  if (!config.server.tls) problem('extender mode without server.tls');
  if (config.server.host === '127.0.0.1') problem('extender mode listens on loopback');
  const svc = find('Service')[0];
  const port = svc?.spec?.ports?.find((p) => p.name === 'https');
  const cport = pod?.containers?.find((c) => c.name === 'extender')?.ports?.find((p) => p.name === port?.targetPort);
  if (!cport || cport.containerPort !== config.server.port)
    problem(
      `Service ${svc?.metadata?.name}: targetPort ${port?.targetPort} is not the extender's port ${config.server.port}`,
    );
  notes.push(
    `extender mode: Service ${svc?.metadata?.name}:${port?.port} -> ${config.server.port} (https${config.server.tls?.clientCaFile ? ', client certificates' : ''})`,
  );
}

// ---------------------------------------------------------------------------------------------- network
// Host network: cluster DNS kept, the declared ports distinct (they are the node's), the old pod stopped before
// the new one starts. The API server's address, when given, reaches both clients of the API alike.
if (pod) {
  const ports = (pod.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.containerPort));
  if (pod.hostNetwork) {
    if (pod.dnsPolicy !== 'ClusterFirstWithHostNet')
      problem(`${id(deployment)}: hostNetwork without dnsPolicy ClusterFirstWithHostNet`);
    if (new Set(ports).size !== ports.length)
      problem(`${id(deployment)}: hostNetwork with ports used twice: ${ports.join(', ')}`);
    if (config?.server.host === '127.0.0.1' && !ports.includes(config.server.port))
      problem(`${id(deployment)}: hostNetwork, but the extender's loopback port ${config.server.port} is not declared`);
    const ru = deployment.spec?.strategy?.rollingUpdate;
    if (ru?.maxSurge !== 0 || ru?.maxUnavailable !== 1)
      problem(
        `${id(deployment)}: hostNetwork with a rolling update that starts the new pod first: ${JSON.stringify(deployment.spec?.strategy)}`,
      );
    notes.push(`host network: ports ${ports.join(', ')}`);
  } else if (pod.dnsPolicy) problem(`${id(deployment)}: dnsPolicy ${pod.dnsPolicy} without hostNetwork`);
  const apiEnv = (name) => {
    const c = pod.containers?.find((x) => x.name === name);
    const get = (k) => c?.env?.find((v) => v.name === k)?.value;
    return c ? `${get('KUBERNETES_SERVICE_HOST') ?? ''}:${get('KUBERNETES_SERVICE_PORT') ?? ''}` : undefined;
  };
  const clients = ['kube-scheduler', 'extender'].map(apiEnv).filter((v) => v !== undefined);
  if (new Set(clients).size > 1)
    problem(
      `${id(deployment)}: kube-scheduler and the extender are given different API server addresses: ${clients.join(' / ')}`,
    );
  if (clients[0] && clients[0] !== ':') {
    if (/^:|:$/.test(clients[0])) problem(`${id(deployment)}: the API server's address is incomplete: ${clients[0]}`);
    notes.push(`API server: ${clients[0]} (KUBERNETES_SERVICE_HOST/PORT)`);
  }
}

// ---------------------------------------------------------------------------------------------- requeue object
// The extender patches config.requeue's CSIStorageCapacity (docs/adr/0006-requeue-nudge.md): it must be rendered,
// and a Role bound to the extender's ServiceAccount must allow exactly `patch` on it.
if (config?.requeue.enabled) {
  const { namespace: rns, name: rname } = config.requeue;
  if (find('CSIStorageCapacity', (o) => o.metadata.name === rname && o.metadata.namespace === rns).length !== 1)
    problem(`the requeue object CSIStorageCapacity ${rns}/${rname} is not rendered`);
  const sa = pod?.serviceAccountName;
  const roles = find(
    'Role',
    (o) =>
      o.metadata.namespace === rns &&
      (o.rules ?? []).some(
        (r) => r.apiGroups?.includes('storage.k8s.io') && r.resources?.includes('csistoragecapacities'),
      ),
  );
  const granted = roles.filter(
    (role) =>
      find(
        'RoleBinding',
        (b) =>
          b.metadata.namespace === rns &&
          b.roleRef?.name === role.metadata.name &&
          (b.subjects ?? []).some((x) => x.kind === 'ServiceAccount' && x.name === sa),
      ).length > 0,
  );
  const exact = granted.flatMap((r) => r.rules).filter((r) => r.resources?.includes('csistoragecapacities'));
  if (
    JSON.stringify(exact) !==
    JSON.stringify([
      { apiGroups: ['storage.k8s.io'], resources: ['csistoragecapacities'], resourceNames: [rname], verbs: ['patch'] },
    ])
  ) {
    problem(
      `the extender's ServiceAccount ${sa} should have exactly patch on CSIStorageCapacity ${rns}/${rname}, has ${JSON.stringify(exact)}`,
    );
  }
  notes.push(`requeue object: CSIStorageCapacity ${rns}/${rname}, patch only, for ServiceAccount ${sa}`);
} else if (config && find('CSIStorageCapacity').length > 0)
  problem('requeue is disabled but a CSIStorageCapacity is rendered');

// ---------------------------------------------------------------------------------------------- selectors
for (const o of [...find('Service'), ...find('PodDisruptionBudget')]) {
  const sel = o.kind === 'Service' ? o.spec?.selector : o.spec?.selector?.matchLabels;
  const podLabels = deployment?.spec?.template?.metadata?.labels ?? {};
  if (!sel || Object.entries(sel).some(([k, v]) => podLabels[k] !== v))
    problem(`${id(o)}: its selector does not match the Deployment's pods`);
}

const path = posix.basename(file);
for (const n of notes) process.stdout.write(`check-rendered-chart ${path}: ${n}\n`);
if (problems.length) {
  for (const p of problems) process.stderr.write(`check-rendered-chart ${path}: ${p}\n`);
  process.exit(1);
}
process.stdout.write(
  `check-rendered-chart ${path}: ${docs.length} objects ok (${[...new Set(docs.map((o) => o.kind))].join(', ')})\n`,
);
