/**
 * manifests/: the plain-YAML default install (its extender config parses with the extender's schema and its
 * KubeSchedulerConfiguration points at that extender) and the examples (extender blocks the extender answers,
 * with TLS and a CA, in both nodeCacheCapable modes; a Deployment for the sandbox scheduler).
 * That manifests/sandbox-extender.yaml is exactly the chart's rendering is checked with helm by
 * test/e2e/helm-check.sh.
 */
import { pino } from 'pino';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createApp } from '../../src/server/app.js';
import { buildExtender } from '../../src/runtime/extender.js';
import {
  CHART,
  MANIFESTS,
  readText,
  readYaml,
  readYamlDocuments,
  type ExtenderBlock,
  type K8sObject,
  type KubeSchedulerConfiguration,
} from './chartFiles.js';

const DEFAULTS = parseConfig({});
const objects = readYamlDocuments<K8sObject>(`${MANIFESTS}sandbox-extender.yaml`);
const byKindName = (kind: string, suffix: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name.endsWith(suffix));

/** POSTs to each verb of `block` on an in-process extender and returns the HTTP statuses (404: no such route). */
async function verbStatuses(block: ExtenderBlock, config: Config): Promise<Record<string, number>> {
  const { service, metrics } = buildExtender(config);
  const app = createApp(
    { service, metrics, pausedLabel: config.pausedLabel, logger: pino({ level: 'silent' }), now: () => 0 },
    {
      maxRequestBodyBytes: 1e6,
      maxRequestDepth: config.server.maxRequestDepth,
      maxRequestElements: config.server.maxRequestElements,
    },
  );
  const base = new URL(block.urlPrefix).pathname.replace(/\/$/, '');
  const out: Record<string, number> = {};
  for (const field of ['filterVerb', 'prioritizeVerb', 'bindVerb'] as const) {
    const verb = block[field];
    if (!verb) continue;
    const body =
      field === 'bindVerb'
        ? { PodName: 'p', PodNamespace: 'n', PodUID: 'u', Node: 'x' }
        : { Pod: { metadata: { name: 'p', uid: 'u' }, spec: {} }, NodeNames: [] };
    out[verb] = (await request(app).post(`${base}/${verb}`).send(body)).status;
  }
  return out;
}

describe('manifests/sandbox-extender.yaml (the default install)', () => {
  it('is a set of objects in kube-system with the standard labels', () => {
    expect(objects.length).toBeGreaterThanOrEqual(10);
    for (const o of objects) {
      expect(o.metadata.labels).toMatchObject({
        'app.kubernetes.io/name': 'sandbox-extender',
        'app.kubernetes.io/instance': 'sandbox-extender',
        'app.kubernetes.io/managed-by': 'Helm',
      });
      if (!['ClusterRole', 'ClusterRoleBinding'].includes(o.kind))
        expect(`${o.kind}/${o.metadata.name} ${o.metadata.namespace}`).toBe(`${o.kind}/${o.metadata.name} kube-system`);
    }
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Role',
        'RoleBinding',
        'ConfigMap',
        'Deployment',
        'Service',
        'PodDisruptionBudget',
      ]),
    );
  });

  const config = parseConfig(parseYaml(byKindName('ConfigMap', '-extender')!.data!['config.yaml']!));
  const ksc = parseYaml(byKindName('ConfigMap', '-scheduler')!.data!['config.yaml']!) as KubeSchedulerConfiguration;

  it("holds an extender config that parses with the extender's schema: loopback, the default scheduler name", () => {
    expect(config.server.host).toBe('127.0.0.1');
    expect(config.schedulerName).toBe(DEFAULTS.schedulerName);
    expect(config.strategy).toBe(DEFAULTS.strategy);
    expect(config.server.tls).toBeUndefined();
  });

  it('turns template locality on (band as the extender has it) and sets no starting limit, as ADR 0009 decides', () => {
    expect(DEFAULTS.locality.enabled).toBe(false); // the extender alone leaves it off: the chart is what turns it on
    expect(config.locality).toEqual({ ...DEFAULTS.locality, enabled: true });
    expect(config.startingLimit).toEqual({});
    const values = readYaml<{ extender: { config: Record<string, unknown> } }>(`${CHART}values.yaml`);
    expect(values.extender.config.locality).toEqual({ enabled: true });
    expect(values.extender.config.startingLimit).toBeUndefined();
  });

  it('chooses in Filter (one call per pod): the profile runs no score plugins, so the extender alone decides', () => {
    expect(config.chooseInFilter).toBe(true);
  });

  it("tells the extender the profile's percentageOfNodesToScore (100 by default: never a sampled window)", () => {
    const values = readYaml<{
      scheduler: { percentageOfNodesToScore: number };
      extender: { config: Record<string, unknown> };
    }>(`${CHART}values.yaml`);
    expect(values.extender.config.kubeScheduler).toBeUndefined(); // the chart sets it, from scheduler.percentageOfNodesToScore
    expect(config.kubeScheduler.percentageOfNodesToScore).toBe(values.scheduler.percentageOfNodesToScore);
    expect(config.kubeScheduler.percentageOfNodesToScore).toBe(ksc.percentageOfNodesToScore);
    expect(byKindName('ConfigMap', '-extender')!.data!['config.yaml']).toMatch(
      /^kubeScheduler:\n {2}percentageOfNodesToScore: 100$/m,
    );
  });

  it('holds a KubeSchedulerConfiguration for that extender: one profile, no score plugins, its own lease', () => {
    expect(ksc).toMatchObject({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      percentageOfNodesToScore: 100,
    });
    expect(ksc.profiles).toEqual([
      { schedulerName: config.schedulerName, plugins: { score: { disabled: [{ name: '*' }] } } },
    ]);
    expect(ksc.leaderElection).toMatchObject({
      leaderElect: true,
      resourceLock: 'leases',
      resourceName: config.schedulerName,
      resourceNamespace: 'kube-system',
    });
    expect(ksc.clientConnection?.kubeconfig).toBeUndefined();
    const [extender] = ksc.extenders;
    expect(ksc.extenders).toHaveLength(1);
    const url = new URL(extender!.urlPrefix);
    expect([url.protocol, url.hostname, Number(url.port)]).toEqual(['http:', config.server.host, config.server.port]);
    expect(extender).toMatchObject({
      filterVerb: 'filter',
      prioritizeVerb: 'prioritize',
      nodeCacheCapable: true,
      ignorable: false,
    });
    // kube-scheduler binds by default: with one call per pod the extender knows the chosen node already.
    expect(extender!.bindVerb).toBeUndefined();
    expect(extender!.weight).toBeGreaterThan(0);
  });

  it('names verbs the extender serves', async () => {
    const statuses = await verbStatuses(ksc.extenders[0]!, config);
    expect(Object.keys(statuses)).toEqual(['filter', 'prioritize']);
    for (const status of Object.values(statuses)) expect(status).toBe(200);
  });

  it('runs kube-scheduler, the extender and the gateway non-root, read-only, without privileges, with probes', () => {
    interface Container {
      name: string;
      args?: string[];
      ports?: { name: string; containerPort: number }[];
      securityContext: Record<string, unknown>;
      resources: { requests?: Record<string, string> };
      startupProbe?: { httpGet?: { path: string; port: number | string } };
      livenessProbe?: { httpGet?: { path: string; port: number | string } };
      readinessProbe?: { httpGet?: { path: string; port: number | string } };
    }
    const pod = (
      byKindName('Deployment', 'sandbox-extender')!.spec as {
        template: { spec: { securityContext: Record<string, unknown>; containers: Container[] } };
      }
    ).template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    expect(pod.containers.map((c) => c.name)).toEqual(['kube-scheduler', 'extender', 'metrics-gateway']);
    for (const c of pod.containers) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        privileged: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(c.livenessProbe).toBeDefined();
      expect(c.resources.requests).toBeDefined();
    }
    const extender = pod.containers.find((c) => c.name === 'extender')!;
    expect(extender.args).toEqual(['serve', '--config', '/etc/sandbox-extender/config.yaml']);
    expect(extender.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(extender.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(extender.ports).toBeUndefined();
    // A kubelet looks a probe's port name up among the probe's own container's ports: the extender's probes go to
    // the gateway's port by number (a name of the gateway's port failed them on a real node).
    const gatewayPort = pod.containers
      .find((c) => c.name === 'metrics-gateway')!
      .ports!.find((p) => p.name === 'metrics')!.containerPort;
    expect(
      [extender.startupProbe, extender.livenessProbe, extender.readinessProbe].map((p) => p?.httpGet?.port),
    ).toEqual([gatewayPort, gatewayPort, gatewayPort]);
    for (const c of pod.containers) {
      for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe]) {
        const port = probe?.httpGet?.port;
        if (typeof port === 'string')
          expect(`${c.name}: ${port}`).toBe(`${c.name}: ${(c.ports ?? []).find((p) => p.name === port)?.name}`);
      }
    }
  });

  it('ships the chart’s metrics gateway unchanged', () => {
    expect(byKindName('ConfigMap', '-extender')!.data!['metrics-gateway.mjs']).toBe(
      readText(`${CHART}files/metrics-gateway.mjs`),
    );
  });

  it('grants the extender exactly its own calls (no Bindings: kube-scheduler binds by default)', () => {
    const role = objects.find(
      (o) => o.kind === 'ClusterRole' && o.metadata.name === 'sandbox-extender-extender',
    ) as unknown as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['nodes', 'pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
  });

  it('creates the requeue object and lets the extender patch that one object, nothing else of its kind', () => {
    const config = parseYaml(byKindName('ConfigMap', '-extender')!.data!['config.yaml']!) as {
      requeue: { namespace: string; name: string };
    };
    expect(config.requeue).toEqual({ namespace: 'kube-system', name: 'sandbox-extender-requeue' });
    expect(
      objects.filter((o) => o.kind === 'CSIStorageCapacity').map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ).toEqual(['kube-system/sandbox-extender-requeue']);
    const role = objects.find(
      (o) => o.kind === 'Role' && o.metadata.name === 'sandbox-extender-requeue',
    ) as unknown as { rules: unknown[] };
    expect(role.rules).toEqual([
      {
        apiGroups: ['storage.k8s.io'],
        resources: ['csistoragecapacities'],
        resourceNames: ['sandbox-extender-requeue'],
        verbs: ['patch'],
      },
    ]);
    const binding = objects.find(
      (o) => o.kind === 'RoleBinding' && o.metadata.name === 'sandbox-extender-requeue',
    ) as unknown as { roleRef: { name: string }; subjects: { kind: string; name: string }[] };
    expect(binding.roleRef.name).toBe('sandbox-extender-requeue');
    expect(binding.subjects.map((x) => `${x.kind}/${x.name}`)).toEqual(['ServiceAccount/sandbox-extender']);
  });
});

describe('manifests/examples', () => {
  const values = readYaml<{ extenderService: { service: { port: number } } }>(`${CHART}values.yaml`);
  const examples = ['kube-scheduler-extender-node-names.yaml', 'kube-scheduler-extender-full-nodes.yaml'].map(
    (file) => ({ file, ksc: readYaml<KubeSchedulerConfiguration>(`${MANIFESTS}examples/${file}`) }),
  );

  it.each(examples)(
    '$file adds the extender to a kube-scheduler over HTTPS, verifying it with a CA',
    async ({ ksc }) => {
      expect(ksc).toMatchObject({
        apiVersion: 'kubescheduler.config.k8s.io/v1',
        kind: 'KubeSchedulerConfiguration',
        percentageOfNodesToScore: 100,
      });
      expect(ksc.profiles.map((p) => p.schedulerName)).toEqual(['default-scheduler', DEFAULTS.schedulerName]);
      expect(ksc.profiles[1]!.plugins?.score?.disabled).toEqual([{ name: '*' }]);
      const [extender] = ksc.extenders;
      const url = new URL(extender!.urlPrefix);
      // The Service of `helm install sandbox-extender charts/sandbox-extender -n sandbox-system --set mode=extender`.
      expect([url.protocol, url.hostname, Number(url.port || 443)]).toEqual([
        'https:',
        'sandbox-extender.sandbox-system.svc',
        values.extenderService.service.port,
      ]);
      expect(extender!.enableHTTPS).toBe(true);
      expect(extender!.tlsConfig).toMatchObject({
        serverName: url.hostname,
        caFile: expect.any(String),
        certFile: expect.any(String),
        keyFile: expect.any(String),
      });
      expect(extender!.weight).toBeGreaterThan(0);
      for (const status of Object.values(await verbStatuses(extender!, DEFAULTS))) expect(status).toBe(200);
    },
  );

  it('cover both nodeCacheCapable modes', () => {
    expect(examples.map((e) => e.ksc.extenders[0]!.nodeCacheCapable).sort()).toEqual([false, true]);
  });

  it('include a sandbox Deployment for the sandbox scheduler, with requests', () => {
    const deployment = readYaml<{
      kind: string;
      spec: {
        template: {
          spec: { schedulerName: string; containers: { resources: { requests: Record<string, string> } }[] };
        };
      };
    }>(`${MANIFESTS}examples/sandbox-deployment.yaml`);
    expect(deployment.kind).toBe('Deployment');
    expect(deployment.spec.template.spec.schedulerName).toBe(DEFAULTS.schedulerName);
    for (const c of deployment.spec.template.spec.containers)
      expect(Object.keys(c.resources.requests)).toEqual(expect.arrayContaining(DEFAULTS.dimensions as string[]));
  });
});
