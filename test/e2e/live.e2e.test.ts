/**
 * The extender in cluster mode on the local control plane (issue 4): it list+watches Nodes and Pods as its own
 * user (sandbox-extender, least-privilege RBAC), binds pods (kube-scheduler's bindVerb) and records an Event per
 * decision. On examples/cluster/heterogeneous.yaml (16, 64 and 192 CPUs = 272 CPUs, 4 GiB per CPU):
 *
 * a. a burst of 100 pods of 2 CPU / 4 GiB created at once, bind on: every pod bound, Running and Ready; no node
 *    over allocatable; the peak pressure at most one pod above the best possible spread; binds_total{bound} +100;
 *    reservations_pending back to 0, each reservation released as bound.
 * b. the same burst with bind off (kube-scheduler binds; the extender learns the placement from its watch).
 * c. replay within capacity: 115 pods (85 % of the CPUs) under least_loaded, round_robin (the extender restarted
 *    with `strategy: round_robin`) and default-scheduler: peak pressure side by side; least_loaded ≤ round_robin.
 * d. `kubectl describe pod` shows the ProjectedPlacement event with its numbers.
 * e. the extender restarted in the middle of a 100-pod burst: every pod placed, no node over allocatable, the new
 *    process settles with no reservation pending.
 * f. the extender's identity has exactly the permissions it needs, and the API server never refused it (403).
 *
 * Each case prints its table; all of them are written to .e2e/logs/live.txt as well. The cluster is started and
 * stopped here unless E2E_REUSE_CLUSTER=1 (then the running one is used, and left as it was found: bind and
 * extender config are restored).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  E2E_DIR,
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  component,
  fetchText,
  forbiddenLines,
  metricValue,
  readClusterEnv,
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
  milliCpu,
  optimumPeak,
  podManifests,
  pressureOf,
  requestedPerNode,
  waitAllRunningReady,
  type Amounts,
  type NodeView,
  type PodView,
} from './kit/kubectl.js';

const SCHEDULER = 'sandbox-scheduler';
const POD_CPU = '2';
const POD_MEMORY = '4Gi';
const POD: Amounts = { cpu: milliCpu(POD_CPU), memory: bytes(POD_MEMORY) };
const BURST = 100;
const REPLAY = 115; // 230 of 272 CPUs: ~85 %
const RESTART_AFTER_BOUND = 30;
const TEST_TIMEOUT_MS = 600_000;

let env: ClusterEnv;
let kubectl: Kubectl;
let nodes: NodeView[] = [];
let initialBind = '1';
let extenderConfigChanged = false;
const report: string[] = [];

function say(text: string): void {
  console.log(text);
  report.push(text, '');
}

const metrics = () => fetchText(`${env.EXTENDER_URL}/metrics`);
const nodeNames = () => nodes.map((n) => n.metadata.name);
const byCpu = (a: NodeView, b: NodeView) => allocatableOf(a).cpu - allocatableOf(b).cpu;
const f3 = (x: number) => x.toFixed(3);

/** No pod anywhere, and the extender's model agrees: nothing allocated or reserved on any node. */
async function waitClusterEmpty(): Promise<void> {
  await waitFor(
    'an empty cluster (no pods; nothing allocated or reserved in the extender)',
    180_000,
    async () => {
      const pods = await kubectl.json<{ items: PodView[] }>(['get', 'pods', '-A']);
      if (pods.items.length > 0) return undefined;
      const view = JSON.parse(await fetchText(`${env.EXTENDER_URL}/debug/nodes`)) as {
        allocated: Amounts;
        reserved: Amounts;
      }[];
      return view.every(
        (n) => n.allocated.cpu === 0 && n.reserved.cpu === 0 && n.allocated.memory === 0 && n.reserved.memory === 0,
      )
        ? true
        : undefined;
    },
    async () => `${await kubectl.run(['get', 'pods', '-A'])}\n${await fetchText(`${env.EXTENDER_URL}/debug/nodes`)}`,
  );
}

interface Run {
  readonly label: string;
  readonly namespace: string;
  readonly pods: PodView[];
  /** Requests of every pod in the cluster, per node, once the run's pods are all Running. */
  readonly perNode: Map<string, Amounts & { pods: number }>;
  readonly peak: number;
  readonly peakNode: string;
  /** From the first create to the last pod Running and Ready. */
  readonly seconds: number;
}

/**
 * Creates `count` pods at once in a new namespace (one `kubectl apply` of a List), runs `during` while they are
 * being created and scheduled, and waits until all are Running and Ready.
 */
async function runBatch(
  label: string,
  namespace: string,
  count: number,
  schedulerName: string | undefined,
  during?: () => Promise<void>,
): Promise<Run> {
  await deleteNamespace(kubectl, namespace);
  await createNamespace(kubectl, namespace);
  const t0 = Date.now();
  const applying = kubectl.apply(
    podManifests({
      namespace,
      prefix: 'sbx',
      count,
      cpu: POD_CPU,
      memory: POD_MEMORY,
      labels: { app: 'e2e-live' },
      ...(schedulerName ? { schedulerName } : {}),
    }),
  );
  if (during) await Promise.all([applying, during()]);
  else await applying;
  const pods = await waitAllRunningReady(kubectl, namespace, count, 240_000);
  const seconds = (Date.now() - t0) / 1000;
  const all = (await kubectl.json<{ items: PodView[] }>(['get', 'pods', '-A'])).items;
  const perNode = requestedPerNode(all);
  let peak = 0;
  let peakNode = '';
  for (const n of nodes) {
    const p = pressureOf(perNode.get(n.metadata.name) ?? { cpu: 0, memory: 0 }, allocatableOf(n));
    if (p > peak) [peak, peakNode] = [p, n.metadata.name];
  }
  return { label, namespace, pods, perNode, peak, peakNode, seconds };
}

/** Every node's summed requests are within its allocatable (CPU and memory). */
function expectWithinAllocatable(run: Run): void {
  for (const n of nodes) {
    const used = run.perNode.get(n.metadata.name) ?? { cpu: 0, memory: 0, pods: 0 };
    const alloc = allocatableOf(n);
    expect({
      run: run.label,
      node: n.metadata.name,
      cpuOver: used.cpu > alloc.cpu,
      memoryOver: used.memory > alloc.memory,
    }).toEqual({ run: run.label, node: n.metadata.name, cpuOver: false, memoryOver: false });
  }
  expect([...run.perNode.keys()].every((name) => nodeNames().includes(name))).toBe(true);
}

/** Rows per node (pods, CPU requested, pressure) for each run, then the peak. */
function placementTable(runs: readonly Run[], optimum: number, extraRows: string[][] = []): string[] {
  const sorted = [...nodes].sort(byCpu);
  const rows = sorted.map((n) => {
    const alloc = allocatableOf(n);
    return [
      n.metadata.name,
      String(alloc.cpu / 1000),
      ...runs.map((r) => {
        const used = r.perNode.get(n.metadata.name) ?? { cpu: 0, memory: 0, pods: 0 };
        return `${String(used.pods).padStart(3)} pods ${String(used.cpu / 1000).padStart(4)} CPU  ${f3(pressureOf(used, alloc))}`;
      }),
    ];
  });
  return columns([
    ['node', 'CPUs', ...runs.map((r) => r.label)],
    ...rows,
    ['peak', '', ...runs.map((r) => `${f3(r.peak)} on ${r.peakNode}`)],
    ['optimum', '', ...runs.map(() => f3(optimum))],
    ['all Running', '', ...runs.map((r) => `${r.seconds.toFixed(1)} s`)],
    ...extraRows,
  ]);
}

/** Counter deltas between two scrapes of the extender, for the table. */
function deltas(before: string, after: string) {
  const d = (metric: string, labels: Record<string, string> = {}) =>
    metricValue(after, metric, labels) - metricValue(before, metric, labels);
  return {
    'filter requests': d('sandbox_extender_http_requests_total', { verb: 'filter' }),
    'prioritize requests': d('sandbox_extender_http_requests_total', { verb: 'prioritize' }),
    'bind requests': d('sandbox_extender_http_requests_total', { verb: 'bind' }),
    'placements placed': d('sandbox_extender_placements_total', { result: 'placed' }),
    'binds bound': d('sandbox_extender_binds_total', { result: 'bound' }),
    'binds already_bound': d('sandbox_extender_binds_total', { result: 'already_bound' }),
    'binds error': d('sandbox_extender_binds_total', { result: 'error' }),
    'released bound': d('sandbox_extender_reservations_released_total', { reason: 'bound' }),
    'released moved': d('sandbox_extender_reservations_released_total', { reason: 'moved' }),
    'released other': ['deleted', 'unschedulable', 'expired'].reduce(
      (s, reason) => s + d('sandbox_extender_reservations_released_total', { reason }),
      0,
    ),
    'events recorded': d('sandbox_extender_events_total', { outcome: 'recorded' }),
    'reservations pending (after)': metricValue(after, 'sandbox_extender_reservations_pending'),
  };
}

function metricsTable(columnsByRun: { label: string; values: Change }[]): string[] {
  const keys = Object.keys(columnsByRun[0]!.values) as (keyof Change)[];
  return columns([
    ['extender metric (change)', ...columnsByRun.map((c) => c.label)],
    ...keys.map((k) => [k, ...columnsByRun.map((c) => String(c.values[k]))]),
  ]);
}

/** The burst of cases a and b: returns the run and the extender's counter changes. */
type Change = ReturnType<typeof deltas>;

async function burst(label: string, namespace: string): Promise<{ run: Run; change: Change }> {
  await waitClusterEmpty();
  const before = await metrics();
  const run = await runBatch(label, namespace, BURST, SCHEDULER);
  const after = await waitExtenderSettled(env);
  return { run, change: deltas(before, after) };
}

async function cleanUp(namespace: string): Promise<void> {
  await waitExtenderSettled(env).catch(() => undefined); // its Events are out before their namespace goes
  await deleteNamespace(kubectl, namespace);
  await waitClusterEmpty();
}

const bursts: { run: Run; change: Change }[] = [];

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(
      `live.e2e needs the extender in cluster mode; this cluster runs it in ${env.EXTENDER_MODE ?? 'snapshot'} mode (EXTENDER_MODE=cluster npm run cluster:up)`,
    );
  kubectl = new Kubectl(env);
  nodes = await heterogeneousNodes(kubectl);
  initialBind = env.EXTENDER_BIND ?? '1';
  for (const line of (await kubectl.run(['get', 'namespaces', '-o', 'name'])).split('\n')) {
    if (line.startsWith('namespace/e2e-live-')) await deleteNamespace(kubectl, line.slice('namespace/'.length)); // left by an interrupted run
  }
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    // Leave a reused cluster as it was found.
    if (env && extenderConfigChanged) await component(['restart', 'sandbox-extender']);
    if (env && readClusterEnv().EXTENDER_BIND !== initialBind)
      await component(['bind', initialBind === '1' ? 'on' : 'off']);
  } finally {
    if (report.length > 0) {
      mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
      writeFileSync(join(STATE_DIR, 'logs', 'live.txt'), `${report.join('\n')}\n`);
    }
    await tearDownCluster();
  }
}, 300_000);

describe('the extender in cluster mode (watch, bind, events) on fake nodes of 16/64/192 CPUs', () => {
  test(
    `a. a burst of ${BURST} pods of ${POD_CPU} CPU / ${POD_MEMORY} with bind on: all bound by the extender, spread within one pod of the optimum`,
    async () => {
      await component(['bind', 'on']); // a no-op when it is on already
      const namespace = 'e2e-live-bind-on';
      try {
        const result = await burst('bind on', namespace);
        bursts.push(result);
        const { run, change } = result;
        const optimum = optimumPeak(nodes, POD, BURST);
        say(
          [
            `a. Burst of ${BURST} pods of ${POD_CPU} CPU / ${POD_MEMORY}, bind on (the extender creates the Bindings):`,
            '',
            ...placementTable([run], optimum),
            '',
            ...metricsTable([{ label: 'bind on', values: change }]),
          ].join('\n'),
        );

        expect(run.pods.every((p) => nodeNames().includes(p.spec.nodeName!))).toBe(true);
        expectWithinAllocatable(run);
        // At most one pod above the best spread: the step of one pod on the node holding the peak.
        const peakStep = pressureOf(POD, allocatableOf(nodes.find((n) => n.metadata.name === run.peakNode)!));
        expect(run.peak).toBeLessThanOrEqual(optimum + peakStep + 1e-9);
        expect(change['binds bound']).toBe(BURST);
        expect(change['binds error']).toBe(0);
        expect(change['reservations pending (after)']).toBe(0);
        expect(change['released bound']).toBeGreaterThan(0);
        // One call per pod (chooseInFilter, the default): Filter answered the chosen node, so kube-scheduler never prioritized.
        expect(change['filter requests']).toBeGreaterThanOrEqual(BURST);
        expect(change['prioritize requests']).toBe(0);
      } finally {
        await cleanUp(namespace);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    `a2. the same burst with two calls per pod (chooseInFilter: false, as for an extender beside other score plugins): the same spread`,
    async () => {
      const namespace = 'e2e-live-two-calls';
      const twoCallsConfig = join(STATE_DIR, 'extender-two-calls.yaml');
      writeFileSync(twoCallsConfig, 'chooseInFilter: false\n');
      extenderConfigChanged = true;
      try {
        await component(['restart', 'sandbox-extender', '--config', twoCallsConfig]);
        const result = await burst('two calls', namespace);
        bursts.push(result);
        const { run, change } = result;
        const optimum = optimumPeak(nodes, POD, BURST);
        say(
          [
            `a2. Burst of ${BURST} pods, two calls per pod (Filter answers every feasible node, Prioritize chooses):`,
            '',
            ...placementTable([run], optimum),
            '',
            ...metricsTable([{ label: 'two calls', values: change }]),
          ].join('\n'),
        );

        expectWithinAllocatable(run);
        const peakStep = pressureOf(POD, allocatableOf(nodes.find((n) => n.metadata.name === run.peakNode)!));
        expect(run.peak).toBeLessThanOrEqual(optimum + peakStep + 1e-9);
        // Every pod with more than one feasible node was prioritized; the extender's pick was bound.
        expect(change['prioritize requests']).toBeGreaterThanOrEqual(BURST / 2);
        expect(change['binds bound']).toBe(BURST);
        expect(change['reservations pending (after)']).toBe(0);
      } finally {
        await cleanUp(namespace);
        await component(['restart', 'sandbox-extender']);
        extenderConfigChanged = false;
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    `b. the same burst with bind off: kube-scheduler binds, the extender learns the placement from its watch`,
    async () => {
      await component(['bind', 'off']);
      const namespace = 'e2e-live-bind-off';
      try {
        const result = await burst('bind off', namespace);
        bursts.push(result);
        const { run, change } = result;
        const optimum = optimumPeak(nodes, POD, BURST);
        say(
          [
            `b. Burst of ${BURST} pods, bind on (a), two calls per pod (a2) and bind off (kube-scheduler binds; the extender sees the Binding through its watch):`,
            '',
            ...placementTable(
              bursts.map((b) => b.run),
              optimum,
            ),
            '',
            ...metricsTable(bursts.map((b) => ({ label: b.run.label, values: b.change }))),
          ].join('\n'),
        );

        expectWithinAllocatable(run);
        const peakStep = pressureOf(POD, allocatableOf(nodes.find((n) => n.metadata.name === run.peakNode)!));
        expect(run.peak).toBeLessThanOrEqual(optimum + peakStep + 1e-9);
        expect(change['bind requests']).toBe(0);
        expect(change['binds bound'] + change['binds already_bound'] + change['binds error']).toBe(0);
        expect(change['released bound']).toBeGreaterThan(0);
        expect(change['reservations pending (after)']).toBe(0);
      } finally {
        await cleanUp(namespace);
        await component(['bind', 'on']);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    `c. replay within capacity: ${REPLAY} pods (~85 % of the CPUs) under least_loaded, round_robin and default-scheduler`,
    async () => {
      const runs: Run[] = [];
      const strategies: string[] = [];
      const once = async (label: string, namespace: string, schedulerName: string | undefined) => {
        await waitClusterEmpty();
        const before = await metrics();
        try {
          const run = await runBatch(label, namespace, REPLAY, schedulerName);
          runs.push(run);
          const after = await waitExtenderSettled(env);
          // Which strategy really placed them (the extender labels its decisions by strategy).
          const used = ['least_loaded', 'round_robin', 'most_loaded', 'random'].filter(
            (s) =>
              metricValue(after, 'sandbox_extender_placements_total', { strategy: s, result: 'placed' }) >
              metricValue(before, 'sandbox_extender_placements_total', { strategy: s, result: 'placed' }),
          );
          strategies.push(used.length > 0 ? `extender ${used.join(',')}` : 'extender not asked');
        } finally {
          await cleanUp(namespace);
        }
      };

      await once('least_loaded', 'e2e-live-replay-least-loaded', SCHEDULER);
      const roundRobinConfig = join(STATE_DIR, 'extender-round-robin.yaml');
      writeFileSync(roundRobinConfig, 'strategy: round_robin\n');
      extenderConfigChanged = true;
      try {
        await component(['restart', 'sandbox-extender', '--config', roundRobinConfig]);
        await once('round_robin', 'e2e-live-replay-round-robin', SCHEDULER);
      } finally {
        await component(['restart', 'sandbox-extender']);
        extenderConfigChanged = false;
      }
      await once('default-scheduler', 'e2e-live-replay-default', undefined);

      const total = nodes.reduce((s, n) => s + allocatableOf(n).cpu, 0);
      const optimum = optimumPeak(nodes, POD, REPLAY);
      say(
        [
          `c. Replay within capacity: ${REPLAY} pods of ${POD_CPU} CPU / ${POD_MEMORY} (${(REPLAY * POD.cpu) / 1000} of ${total / 1000} CPUs, ${((100 * REPLAY * POD.cpu) / total).toFixed(1)} %), each run on the emptied cluster:`,
          '',
          ...placementTable(runs, optimum, [['placed by', '', ...strategies]]),
        ].join('\n'),
      );

      for (const run of runs) expectWithinAllocatable(run);
      expect(strategies).toEqual(['extender least_loaded', 'extender round_robin', 'extender not asked']);
      const [leastLoaded, roundRobin] = runs;
      expect(leastLoaded!.peak).toBeLessThanOrEqual(roundRobin!.peak);
    },
    TEST_TIMEOUT_MS,
  );

  test(
    'd. kubectl describe pod shows the ProjectedPlacement event with its numbers',
    async () => {
      const namespace = 'e2e-live-describe';
      const count = 10;
      try {
        await waitClusterEmpty();
        const run = await runBatch('describe', namespace, count, SCHEDULER);
        await waitExtenderSettled(env);
        const last = run.pods
          .map((p) => p.metadata.name)
          .sort()
          .at(-1)!;
        const node = run.pods.find((p) => p.metadata.name === last)!.spec.nodeName!;
        const pattern =
          /^\s*Normal\s+ProjectedPlacement\s+\S+\s+sandbox-extender\s+placed on (\S+) by (\S+): projected pressure cpu ([\d.]+)→([\d.]+), memory ([\d.]+)→([\d.]+) \(max ([\d.]+)\); (\d+) candidates, (\d+) fit; runner-up (\S+) at ([\d.]+)\s*$/m;
        const describe = await waitFor(
          `the ProjectedPlacement event of ${namespace}/${last}`,
          60_000,
          async () => {
            const out = await kubectl.run(['-n', namespace, 'describe', 'pod', last, '--show-events=true']);
            return pattern.test(out) ? out : undefined;
          },
          () => kubectl.run(['-n', namespace, 'get', 'events']),
        );
        const events = describe.slice(describe.indexOf('Events:'));
        say(
          [
            `d. kubectl describe pod ${last} (the ${count}th pod of ${count}, on ${node}), its Events:`,
            '',
            events.trimEnd(),
          ].join('\n'),
        );

        const m = pattern.exec(describe)!;
        expect(m[1]).toBe(node);
        expect(m[2]).toBe('least_loaded');
        expect(Number(m[4])).toBeGreaterThan(Number(m[3])); // cpu pressure before → after the pod
        expect(Number(m[7])).toBeCloseTo(Math.max(Number(m[4]), Number(m[6])), 3);
        expect(Number(m[8])).toBe(nodes.length);
        expect(Number(m[9])).toBe(nodes.length);
        expect(nodeNames()).toContain(m[10]);
        expect(m[10]).not.toBe(node);
        expect(describe).toMatch(
          new RegExp(
            `Normal\\s+Scheduled\\s+\\S+\\s+${SCHEDULER}\\s+Successfully assigned ${namespace}/${last} to ${node}`,
          ),
        );
      } finally {
        await cleanUp(namespace);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test(
    `e. the extender restarted in the middle of a ${BURST}-pod burst: every pod placed, nothing over allocatable, nothing left reserved`,
    async () => {
      const namespace = 'e2e-live-restart';
      await component(['bind', 'on']);
      await waitClusterEmpty();
      const pidFile = join(STATE_DIR, 'pids', 'sandbox-extender');
      const oldPid = Number(readFileSync(pidFile, 'utf8').split(' ')[0]);
      const first = await metrics();
      const oldStart = metricValue(first, 'sandbox_extender_process_start_time_seconds');
      const boundBase = metricValue(first, 'sandbox_extender_binds_total', { result: 'bound' });
      let boundAtRestart = 0;
      let boundWhenReady = 0;
      let restartSeconds = 0;
      let newPid = 0;
      try {
        const run = await runBatch('restart mid-burst', namespace, BURST, SCHEDULER, async () => {
          // Poll the old process's bind counter (cheap) until ~30 pods are bound, then restart it.
          const deadline = Date.now() + 120_000;
          for (;;) {
            boundAtRestart =
              metricValue(await metrics(), 'sandbox_extender_binds_total', { result: 'bound' }) - boundBase;
            if (boundAtRestart >= RESTART_AFTER_BOUND) break;
            if (Date.now() > deadline) throw new Error(`only ${boundAtRestart} pods bound after 120 s`);
            await new Promise((r) => setTimeout(r, 100));
          }
          const t = Date.now();
          newPid = await component(['restart', 'sandbox-extender']);
          restartSeconds = (Date.now() - t) / 1000;
          boundWhenReady = (await kubectl.json<{ items: PodView[] }>(['-n', namespace, 'get', 'pods'])).items.filter(
            (p) => p.spec.nodeName,
          ).length;
        });
        const after = await waitExtenderSettled(env, 120_000);
        const failed = (
          await kubectl.json<{ items: unknown[] }>([
            '-n',
            namespace,
            'get',
            'events',
            '--field-selector',
            'reason=FailedScheduling',
          ])
        ).items.length;
        const optimum = optimumPeak(nodes, POD, BURST);
        const newProcess = deltas('', after);
        say(
          [
            `e. Burst of ${BURST} pods with the extender restarted (component.sh restart sandbox-extender) once ${boundAtRestart} were bound:`,
            '',
            ...columns([
              ['', ''],
              ['pods bound when the restart began', String(boundAtRestart)],
              [
                'pods bound when the new extender was ready',
                `${boundWhenReady} (restart took ${restartSeconds.toFixed(1)} s)`,
              ],
              ['FailedScheduling events meanwhile', String(failed)],
              ['old pid -> new pid', `${oldPid} -> ${newPid}`],
            ]).slice(1),
            '',
            ...placementTable([run], optimum),
            '',
            ...metricsTable([{ label: 'new process (since start)', values: newProcess }]),
          ].join('\n'),
        );

        expect(boundAtRestart).toBeLessThan(BURST); // really in the middle
        expect(newPid).not.toBe(oldPid);
        expect(metricValue(after, 'sandbox_extender_process_start_time_seconds')).toBeGreaterThan(oldStart);
        expect(run.pods).toHaveLength(BURST);
        expectWithinAllocatable(run);
        expect(metricValue(after, 'sandbox_extender_reservations_pending')).toBe(0);
        expect(metricValue(after, 'sandbox_extender_cache_synced', { resource: 'pods' })).toBe(1);
      } finally {
        await cleanUp(namespace);
      }
    },
    TEST_TIMEOUT_MS,
  );

  test('f. the extender runs as user sandbox-extender with least privilege, and the API server never refused it', async () => {
    const user = env.EXTENDER_USER ?? 'sandbox-extender';
    const checks: { args: string[]; want: boolean }[] = [
      { args: ['list', 'nodes'], want: true },
      { args: ['watch', 'nodes'], want: true },
      { args: ['list', 'pods', '--all-namespaces'], want: true },
      { args: ['watch', 'pods', '--all-namespaces'], want: true },
      { args: ['get', 'pods', '--all-namespaces'], want: true },
      { args: ['create', 'pods', '--subresource=binding', '--all-namespaces'], want: true },
      { args: ['create', 'events', '--all-namespaces'], want: true },
      { args: ['patch', 'events', '--all-namespaces'], want: true },
      { args: ['create', 'pods', '--all-namespaces'], want: false },
      { args: ['delete', 'pods', '--all-namespaces'], want: false },
      { args: ['patch', 'pods', '--all-namespaces'], want: false },
      { args: ['update', 'pods', '--subresource=status', '--all-namespaces'], want: false },
      { args: ['update', 'nodes'], want: false },
      { args: ['list', 'secrets', '--all-namespaces'], want: false },
      { args: ['create', 'leases.coordination.k8s.io', '-n', 'kube-system'], want: false },
      // The requeue object (docs/adr/0006-requeue-nudge.md): that one object, patch only.
      {
        args: ['patch', 'csistoragecapacities.storage.k8s.io/sandbox-extender-requeue', '-n', 'kube-system'],
        want: true,
      },
      { args: ['patch', 'csistoragecapacities.storage.k8s.io/other', '-n', 'kube-system'], want: false },
      { args: ['create', 'csistoragecapacities.storage.k8s.io', '-n', 'kube-system'], want: false },
      { args: ['patch', 'pods', '--subresource=status', '--all-namespaces'], want: false },
    ];
    const canI = (args: string[]) =>
      new Promise<boolean>((ok, bad) => {
        execFile(
          env.KUBECTL!,
          [`--kubeconfig=${env.KUBECONFIG}`, 'auth', 'can-i', ...args, `--as=${user}`],
          { encoding: 'utf8' },
          (err, stdout) => {
            const answer = stdout.trim();
            if (answer === 'yes' || answer === 'no') ok(answer === 'yes');
            else bad(new Error(`kubectl auth can-i ${args.join(' ')}: ${err?.message ?? ''} ${stdout}`));
          },
        );
      });
    const answers = await Promise.all(checks.map((c) => canI(c.args)));
    const forbidden = await forbiddenLines();
    say(
      [
        `f. kubectl auth can-i ... --as=${user} (ClusterRole from ${join(E2E_DIR, 'manifests', 'sandbox-extender-rbac.yaml').slice(process.cwd().length + 1)}):`,
        '',
        ...columns([
          ['request', 'allowed', 'expected'],
          ...checks.map((c, i) => [c.args.join(' '), answers[i] ? 'yes' : 'no', c.want ? 'yes' : 'no']),
        ]),
        '',
        `403 / forbidden lines in logs/sandbox-extender.log (every process of this cluster): ${forbidden.length}`,
      ].join('\n'),
    );
    expect(answers).toEqual(checks.map((c) => c.want));
    expect(forbidden).toEqual([]);
  }, 120_000);
});
