/**
 * Leader failover mid-burst (issue 20, part 2): the Helm chart's HA mode — two sandbox-scheduler + extender
 * pairs, the kube-schedulers competing for one lease (chart: scheduler.leaderElection, 15 s / 10 s / 2 s, the
 * e2e cluster's defaults too) — run as processes (`component.sh standby up`: KWOK runs no containers). In the
 * middle of a burst the leader's pair (its kube-scheduler and its extender) is killed with SIGKILL
 * (`component.sh kill`), so its lease is not given up and must expire. Asserted:
 *
 * - the standby's model is warm before it leads: its extender listed and watched while standing by (ready, its
 *   one initial list, no Filter call yet), and just before the kill its model holds the requests of the pods the
 *   leader had bound (it counted the leader's bindings from its watch);
 * - after the kill the standby leads and places the rest without relisting (its lists stay one initial, no
 *   relist): every pod bound, and no node over allocatable at any time (replayed from a pod watch);
 * - no reservation outlives its pod: the dead leader's reservations lived only in its process; the new leader
 *   settles with none pending, and each it made was released when its pod was seen bound.
 *
 * The time from the kill to the next binding is printed (bounded by the lease: about leaseDuration, give or take
 * the candidate's retry intervals; docs/cluster-mode.md#leader-failover), not asserted; `npm run bench -- failover` measures it on a
 * 1,000-pod burst. The first pair is restored afterwards (standby down, extender restarted, scheduler started).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { replayOvercommit, type PodChange } from '../../bench/overcommit.js';
import type { Node } from '../../src/core/objects/kubeObjects.js';
import {
  STATE_DIR,
  component,
  fetchText,
  metricValue,
  readClusterEnv,
  run,
  setUpCluster,
  tearDownCluster,
  nowMs,
  waitFor,
  waitUntil,
  type ClusterEnv,
} from './kit/controlPlane.js';
import { Kube, PodChangeLog } from './kit/adminClient.js';
import {
  Kubectl,
  columns,
  createNamespace,
  deleteNamespace,
  heterogeneousNodes,
  podManifests,
  type NodeView,
  type PodView,
} from './kit/kubectl.js';

const SCHEDULER = 'sandbox-scheduler';
const NAMESPACE = 'failover';
const BURST = 100;
const KILL_AFTER_BOUND = 30;

let env: ClusterEnv;
let kubectl: Kubectl;
let kube: Kube;
let nodes: NodeView[] = [];
let standby: ClusterEnv = {};
let killed = false;
const report: string[] = [];

interface ModelNode {
  name: string;
  allocated: { cpu: number };
  reserved: { cpu: number };
}
const modelCpu = async (url: string) => {
  const view = JSON.parse(await fetchText(`${url}/debug/nodes`)) as ModelNode[];
  return {
    allocated: view.reduce((s, n) => s + n.allocated.cpu, 0),
    reserved: view.reduce((s, n) => s + n.reserved.cpu, 0),
  };
};
/**
 * kube-scheduler's own gauge: 1 while it leads the lease. Its /metrics is open without authorization (always-allow
 * paths). The gauge's `name` is the component's name, `kube-scheduler`, whatever the lease is called.
 */
const leads = async (schedulerUrl: string) => {
  const { stdout } = await run('curl', ['-ksS', `${schedulerUrl}/metrics`]);
  return metricValue(stdout, 'leader_election_master_status', { name: 'kube-scheduler' }) === 1;
};

beforeAll(async () => {
  env = await setUpCluster();
  if (env.EXTENDER_MODE !== 'cluster')
    throw new Error(`failover.e2e needs the extender in cluster mode, not ${env.EXTENDER_MODE}`);
  kubectl = new Kubectl(env);
  kube = await Kube.connect(env.KUBECONFIG!, 4);
  nodes = await heterogeneousNodes(kubectl);
}, 45 * 60_000);

afterAll(async () => {
  try {
    await deleteNamespace(kubectl, NAMESPACE).catch(() => undefined);
    await component(['standby', 'down']);
    if (killed) {
      await component(['restart', 'sandbox-extender']);
      await component(['start', 'kube-scheduler-sandbox']);
    }
  } finally {
    mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
    writeFileSync(join(STATE_DIR, 'logs', 'failover.txt'), report.join('\n'));
    kube?.agent.destroy();
    await tearDownCluster();
  }
}, 300_000);

test('the leader pair killed mid-burst: the warm standby leads, places the rest, nothing over allocatable, no reservation left', async () => {
  await component(['standby', 'up']);
  standby = readClusterEnv();
  const standbyExt = standby.STANDBY_EXTENDER_URL!;
  // The primary leads (an earlier file may have restarted it: its lease is taken again within a few retry periods).
  await waitFor('kube-scheduler-sandbox to hold the lease', 60_000, async () =>
    (await leads(env.SANDBOX_SCHEDULER_URL!)) ? true : undefined,
  );
  expect(await leads(standby.STANDBY_SCHEDULER_URL!)).toBe(false);
  const before = await fetchText(`${standbyExt}/metrics`);
  expect(metricValue(before, 'sandbox_extender_watch_lists_total', { resource: 'pods', kind: 'initial' })).toBe(1);
  expect(metricValue(before, 'sandbox_extender_http_requests_total', { verb: 'filter' })).toBe(0);

  await deleteNamespace(kubectl, NAMESPACE);
  await createNamespace(kubectl, NAMESPACE);
  // Every pod change from a list, each with its arrival on the monotonic clock (nowMs); wall-clock times (the
  // lease's acquireTime) are brought onto it.
  const watch = new PodChangeLog(kube);
  await watch.start();
  const monotonicOf = (wallMs: number) => wallMs - Date.now() + nowMs();
  let killAtMs = 0;
  try {
    const bound = () =>
      watch.changes.filter(
        (c) => c.pod.metadata?.namespace === NAMESPACE && c.pod.spec?.nodeName && c.type !== 'DELETED',
      );
    const boundNames = () => new Set(bound().map((c) => c.pod.metadata?.name));
    const applying = kubectl.apply(
      podManifests({
        namespace: NAMESPACE,
        prefix: 'sbx',
        count: BURST,
        cpu: '2',
        memory: '4Gi',
        schedulerName: SCHEDULER,
      }),
    );
    await waitUntil(`${KILL_AFTER_BOUND} pods bound`, 120_000, () => boundNames().size >= KILL_AFTER_BOUND);
    // The standby's model just before the kill: the requests of what the leader bound (its own decisions: none).
    const apiBound = boundNames().size;
    // The standby's model a moment before the kill: its watch is as fresh as the leader's (a few ms behind the
    // test's own), so it shows at least the pods bound by then once it has applied them.
    const warm = await waitFor("the standby's model to hold the bound pods", 5_000, async () => {
      const m = await modelCpu(standbyExt);
      return m.allocated >= KILL_AFTER_BOUND * 2000 ? m : undefined;
    }).catch(() => modelCpu(standbyExt));
    const holder = (
      await kubectl.run(['-n', 'kube-system', 'get', 'lease', SCHEDULER, '-o', 'jsonpath={.spec.holderIdentity}'])
    ).trim();
    killAtMs = nowMs();
    await component(['kill', 'sandbox-extender', 'kube-scheduler-sandbox']);
    killed = true;
    await applying;
    // The lease changes hands once it expired (nobody renews it) and the standby's next try takes it.
    // The moment it led is the lease's own acquireTime (a MicroTime written by the new holder, same clock as this
    // test's): polling the lease with kubectl sees it up to a few hundred ms late on a busy machine, and the new
    // leader binds within that time. The dead leader's last bindings land before then (the lease outlives the kill
    // by about leaseDuration), so acquireTime splits the bindings between the two leaders.
    const leadAtMs = await waitFor('the standby to take the lease', 60_000, async () => {
      const [now, acquired] = (
        await kubectl.run([
          '-n',
          'kube-system',
          'get',
          'lease',
          SCHEDULER,
          '-o',
          'jsonpath={.spec.holderIdentity} {.spec.acquireTime}',
        ])
      )
        .trim()
        .split(' ');
      return now !== undefined && now !== '' && now !== holder && acquired !== undefined
        ? monotonicOf(Date.parse(acquired))
        : undefined;
    });
    expect(Number.isFinite(leadAtMs)).toBe(true);
    expect(warm.reserved).toBe(0);
    expect(warm.allocated).toBeGreaterThanOrEqual(KILL_AFTER_BOUND * 2000);

    const all = await waitFor(
      `all ${BURST} pods bound after the failover`,
      180_000,
      async () => {
        const list = await kubectl.json<{ items: PodView[] }>(['-n', NAMESPACE, 'get', 'pods']);
        return list.items.length === BURST && list.items.every((p) => p.spec.nodeName) ? list.items : undefined;
      },
      async () => kubectl.run(['-n', NAMESPACE, 'get', 'pods', '-o', 'wide']),
    );
    expect(all).toHaveLength(BURST);
    expect(await leads(standby.STANDBY_SCHEDULER_URL!)).toBe(true);
    await waitUntil('the last binding', 30_000, () => boundNames().size >= BURST);
    // Each pod's binding (its first change with a node); those before the standby led were the dead leader's.
    const bindAt = new Map<string, number>();
    for (const c of bound()) if (!bindAt.has(c.pod.metadata!.name!)) bindAt.set(c.pod.metadata!.name!, c.atMs);
    const byNewLeader = [...bindAt.values()].filter((t) => t >= leadAtMs).sort((a, b) => a - b);
    const byOldLeader = bindAt.size - byNewLeader.length;
    const leadSeconds = (leadAtMs - killAtMs) / 1000;
    const nextBindSeconds = byNewLeader.length > 0 ? (byNewLeader[0]! - killAtMs) / 1000 : NaN;
    const lastBindSeconds = byNewLeader.length > 0 ? (byNewLeader.at(-1)! - killAtMs) / 1000 : NaN;

    // Nothing over allocatable at any time; the new leader's reservations all released as bound, none left.
    const changes: PodChange[] = watch.changes.map((c) => ({ type: c.type, pod: c.pod }));
    const replay = replayOvercommit(nodes as unknown as Node[], changes);
    expect({ nodesEverOver: replay.nodesEverOver, unbound: [...replay.unbound] }).toEqual({
      nodesEverOver: 0,
      unbound: [],
    });
    const settled = await waitFor("the new leader's extender to settle (no reservation pending)", 60_000, async () => {
      const m = await fetchText(`${standbyExt}/metrics`);
      return metricValue(m, 'sandbox_extender_reservations_pending') === 0 ? m : undefined;
    });
    const placed = metricValue(settled, 'sandbox_extender_placements_total', { result: 'placed' });
    const releasedBound = metricValue(settled, 'sandbox_extender_reservations_released_total', { reason: 'bound' });
    // Every pod the new leader bound released its reservation as bound, once; none expired, none is left.
    expect(releasedBound).toBe(byNewLeader.length);
    expect(byOldLeader).toBeGreaterThanOrEqual(apiBound);
    expect(metricValue(settled, 'sandbox_extender_reservations_released_total', { reason: 'expired' })).toBe(0);
    expect((await modelCpu(standbyExt)).reserved).toBe(0);
    expect(metricValue(settled, 'sandbox_extender_watch_lists_total', { resource: 'pods', kind: 'relist' })).toBe(0);
    expect(metricValue(settled, 'sandbox_extender_watch_lists_total', { resource: 'pods', kind: 'initial' })).toBe(1);

    const rows = [
      ['bound when the leader pair was killed (API)', String(apiBound)],
      [
        "standby's model then: CPU allocated / reserved",
        `${warm.allocated / 1000} / ${warm.reserved / 1000} CPUs (${apiBound} pods of 2 CPUs = ${apiBound * 2})`,
      ],
      ['kill → the standby holds the lease', `${leadSeconds.toFixed(1)} s`],
      ['kill → its first binding', `${nextBindSeconds.toFixed(1)} s`],
      ['kill → its last binding', `${lastBindSeconds.toFixed(1)} s`],
      ['bound by the dead leader / the new one', `${byOldLeader} / ${byNewLeader.length}`],
      ['decisions of the new leader (reservations released as bound)', `${placed} (${releasedBound})`],
      ['nodes over allocatable at any time', String(replay.nodesEverOver)],
      ["new leader's relists", '0'],
    ];
    const text = `Failover: ${BURST} pods of 2 CPU / 4Gi, the leader's kube-scheduler and extender killed (SIGKILL) after ${KILL_AFTER_BOUND} were bound:\n\n${columns(rows).join('\n')}`;
    console.log(text);
    report.push(text, '');
  } finally {
    watch.stop();
  }
}, 600_000);
