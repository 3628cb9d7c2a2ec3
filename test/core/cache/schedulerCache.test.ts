import type { Pod } from '../../../src/core/objects/kubeObjects.js';
import {
  sandboxState,
  toNodeRecord,
  toPodRecord,
  type Dimensions,
  type SandboxState,
} from '../../../src/core/objects/records.js';
import type { Release } from '../../../src/core/cache/reservations.js';
import type { CapacityFreed } from '../../../src/core/cache/cacheView.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import { GiB, loadFixture, makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const PAUSED = 'sandbox-extender.io/paused';
const record = (pod: Pod) => toPodRecord(pod, DIMS, { pausedLabel: PAUSED });

const TTL_MS = 600_000;
const UNCONFIRMED_TTL_MS = 30_000;

/** A cache with nodes n1 (16 CPU / 64Gi) and n2 (64 CPU / 256Gi), every release recorded. */
function cacheWithNodes(): { c: SchedulerCache; releases: Release[]; freed: CapacityFreed[] } {
  const releases: Release[] = [];
  const freed: CapacityFreed[] = [];
  const c = new SchedulerCache(
    DIMS,
    { ttlMs: TTL_MS, unconfirmedTtlMs: UNCONFIRMED_TTL_MS },
    { released: (r) => releases.push(r), capacityFreed: (f) => freed.push(f) },
  );
  c.upsertNode(toNodeRecord(makeNode('n1', { cpu: '16', memory: '64Gi' }), DIMS));
  c.upsertNode(toNodeRecord(makeNode('n2', { cpu: '64', memory: '256Gi' }), DIMS));
  freed.length = 0;
  return { c, releases, freed };
}

/** The parts of a NodeInfo the tests compare (copies). */
function totals(c: SchedulerCache, name: string) {
  const info = c.nodeInfo(name);
  if (!info) return undefined;
  const { allocated, paused, reserved, starting, running, pausedCount, reservedCount } = info;
  return {
    allocated: [...allocated],
    paused: [...paused],
    reserved: [...reserved],
    starting,
    running,
    pausedCount,
    reservedCount,
  };
}

const reasons = (releases: readonly Release[]) => releases.map((r) => r.reason);

describe('sandbox state of the realistic fixture pods', () => {
  it.each<[string, SandboxState]>([
    ['running-ready-coredns.json', 'running'], // bound, Running, Ready=True
    ['bound-pending-containercreating.json', 'starting'], // bound, Pending, not Ready
    ['terminating-deletiontimestamp.json', 'starting'], // still bound and occupying; Ready flipped to False
    ['succeeded-job.json', 'inactive'], // terminal: counts nothing
    ['pending-unschedulable.json', 'pending'], // never bound
    ['init-larger-than-containers.json', 'running'],
  ])('%s is %s', (file, state) => {
    expect(sandboxState(loadFixture<Pod>(`pods/${file}`), PAUSED)).toBe(state);
  });

  it('the paused label makes a bound pod paused whatever its phase, even Succeeded', () => {
    const pod = loadFixture<Pod>('pods/succeeded-job.json') as { metadata: { labels?: Record<string, string> } };
    pod.metadata.labels = { ...pod.metadata.labels, [PAUSED]: 'true' };
    expect(sandboxState(pod as Pod, PAUSED)).toBe('paused');
    expect(sandboxState(pod as Pod, 'example.com/other-key')).toBe('inactive');
  });

  it('only the exact value "true" pauses', () => {
    expect(sandboxState(makePod('p').node('n1').label(PAUSED, 'false').obj(), PAUSED)).toBe('running');
    expect(sandboxState(makePod('p').node('n1').label(PAUSED, 'True').obj(), PAUSED)).toBe('running');
  });
});

describe('node records', () => {
  it.each([
    // cpu in millicores, memory in bytes (status.allocatable, rounded up like Quantity.MilliValue()/Value())
    ['gke-e2-standard-4.json', [3920, 13926600704]],
    ['huge-r7i-48xlarge-karpenter.json', [191450, 1612985061376]],
    ['gpu-8x-h100-hugepages.json', [220000, 2073885552640]],
  ])('%s allocatable is %j', (file, expected) => {
    expect(toNodeRecord(loadFixture(`nodes/${file}`), DIMS).allocatable).toEqual(expected);
  });

  it('a node registered without status has unknown capacity', () => {
    expect(toNodeRecord(loadFixture('nodes/registered-no-status.json'), DIMS).allocatable).toBeNull();
  });

  it('a node whose allocatable is zero in every dimension has unknown capacity', () => {
    expect(toNodeRecord(makeNode('z', { cpu: '0', memory: '0' }), DIMS).allocatable).toBeNull();
  });

  it('extra dimensions read their allocatable, 0 when the node has none', () => {
    const dims = { names: ['cpu', 'nvidia.com/gpu', 'pods'] };
    expect(toNodeRecord(loadFixture('nodes/gpu-8x-h100-hugepages.json'), dims).allocatable).toEqual([220000, 8, 110]);
    expect(toNodeRecord(loadFixture('nodes/gke-e2-standard-4.json'), dims).allocatable).toEqual([3920, 0, 110]);
  });

  it('the pods dimension requests one slot per pod', () => {
    expect(
      toPodRecord(makePod('p').req({ cpu: '1' }).obj(), { names: ['cpu', 'pods'] }, { pausedLabel: PAUSED }).request,
    ).toEqual([1000, 1]);
  });
});

describe('SchedulerCache node totals (NodeInfo)', () => {
  it('counts bound non-terminal pods as allocated, paused pods as paused, and nothing else', () => {
    const { c } = cacheWithNodes();
    c.upsertPod(record(makePod('run').req({ cpu: '2', memory: '4Gi' }).node('n1').obj()));
    c.upsertPod(record(makePod('start').req({ cpu: '1', memory: '1Gi' }).node('n1', { ready: false }).obj()));
    c.upsertPod(record(makePod('pause').req({ cpu: '4', memory: '8Gi' }).node('n1').paused().phase('Succeeded').obj()));
    c.upsertPod(record(makePod('done').req({ cpu: '8', memory: '8Gi' }).node('n1').phase('Failed').obj()));
    c.upsertPod(record(makePod('wait').req({ cpu: '8', memory: '8Gi' }).obj()));
    // allocated: 2000m + 1000m = 3000m; 4Gi + 1Gi = 5Gi. paused: 4000m, 8Gi. Failed and unbound: nothing.
    expect(totals(c, 'n1')).toEqual({
      allocated: [3000, 5 * GiB],
      paused: [4000, 8 * GiB],
      reserved: [0, 0],
      starting: 1,
      running: 1,
      pausedCount: 1,
      reservedCount: 0,
    });
    expect(c.size).toEqual({ nodes: 2, pods: 5, reservations: 0 });
  });

  it('an update replaces the pod’s contribution (starting → running, then deleted)', () => {
    const { c } = cacheWithNodes();
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: false }).obj()));
    expect(totals(c, 'n1')).toMatchObject({ allocated: [2000, 4 * GiB], starting: 1, running: 0 });
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1').obj()));
    expect(totals(c, 'n1')).toMatchObject({ allocated: [2000, 4 * GiB], starting: 0, running: 1 });
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1').phase('Succeeded').obj()));
    expect(totals(c, 'n1')).toMatchObject({ allocated: [0, 0], starting: 0, running: 0 });
    c.deletePod('uid-p');
    expect(c.size.pods).toBe(0);
  });

  it('pods bound to a node not seen yet count under its name, and show once the node arrives', () => {
    const { c } = cacheWithNodes();
    c.upsertPod(record(makePod('early').req({ cpu: '1' }).node('n9').obj()));
    expect(c.nodeInfo('n9')).toMatchObject({ hasNode: false, allocatable: null, allocated: [1000, 0] });
    expect(c.hasNode('n9')).toBe(false);
    c.upsertNode(toNodeRecord(makeNode('n9', { cpu: '8', memory: '8Gi' }), DIMS));
    expect(c.nodeInfo('n9')).toMatchObject({ hasNode: true, allocatable: [8000, 8 * GiB], allocated: [1000, 0] });
    expect([...c.nodeNames()].sort()).toEqual(['n1', 'n2', 'n9']);
  });

  it('a deleted node keeps the pods still bound to it under its name; a NodeInfo with nothing left goes', () => {
    const { c } = cacheWithNodes();
    c.upsertPod(record(makePod('p').req({ cpu: '1' }).node('n1').obj()));
    c.deleteNode('n1');
    expect(c.nodeInfo('n1')).toMatchObject({ hasNode: false, allocatable: null, allocated: [1000, 0], running: 1 });
    expect(c.size.nodes).toBe(1);
    c.deletePod('uid-p');
    expect(c.nodeInfo('n1')).toBeUndefined();
    c.deleteNode('n2');
    expect(c.nodeInfo('n2')).toBeUndefined();
    expect(c.size.nodes).toBe(0);
  });

  it('NodeInfo ids are never reused, even after a NodeInfo is dropped', () => {
    const { c } = cacheWithNodes();
    const ids = [c.nodeInfo('n1')!.id, c.nodeInfo('n2')!.id];
    c.deleteNode('n1');
    c.upsertNode(toNodeRecord(makeNode('n1', { cpu: '16', memory: '64Gi' }), DIMS));
    c.upsertNode(toNodeRecord(makeNode('n3', { cpu: '16', memory: '64Gi' }), DIMS));
    const fresh = [c.nodeInfo('n1')!.id, c.nodeInfo('n3')!.id];
    expect(fresh.filter((id) => ids.includes(id))).toEqual([]);
    expect(c.nodeIdBound).toBe(4);
  });

  it('the realistic pod list charges each node what the scheduler would', () => {
    const c = new SchedulerCache(DIMS, { ttlMs: TTL_MS });
    const list = loadFixture<{ items: Pod[] }>('lists/kubectl-get-pods-all-namespaces.json');
    for (const pod of list.items) c.upsertPod(record(pod));
    // kind-control-plane: coredns 100m/70Mi + kube-apiserver mirror 250m + pod-level pod 1000m/2Gi.
    expect(c.nodeInfo('kind-control-plane')!.allocated).toEqual([100 + 250 + 1000, 73400320 + 0 + 2147483648]);
    // GKE node: the init-heavy StatefulSet pod (2 cpu / 4Gi); the Succeeded job is not charged.
    expect(c.nodeInfo('gke-prod-cluster-default-pool-7c1d2e3f-b8kq')!.allocated).toEqual([2000, 4294967296]);
  });

  it('rejects TTLs that are not positive, or an unconfirmed TTL above the TTL', () => {
    expect(() => new SchedulerCache(DIMS, { ttlMs: 0 })).toThrow(/ttlMs must be > 0/);
    expect(() => new SchedulerCache(DIMS, { ttlMs: 10, unconfirmedTtlMs: 11 })).toThrow(
      /unconfirmedTtlMs must be > 0 and ≤ ttlMs/,
    );
  });
});

describe('SchedulerCache reservation lifecycle (the diagram in schedulerCache.ts)', () => {
  const pod = (name: string, cpu = '2') => record(makePod(name).req({ cpu, memory: '4Gi' }).obj());

  it('assume: adds the request and one reservation to the node, with the full TTL for a pod the cache has seen', () => {
    const { c } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    expect(c.assume(p, 'n1', 1_000)).toBe('assumed');
    expect(totals(c, 'n1')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    expect(c.reservation('uid-p')).toMatchObject({
      nodeName: 'n1',
      podKey: 'sandboxes/p',
      reservedAtMs: 1_000,
      expiresAtMs: 1_000 + TTL_MS,
      podSeen: true,
      bindingFinished: false,
    });
  });

  it('assume for a pod the cache has never seen lapses after the unconfirmed TTL, unless the pod shows up', () => {
    const { c, releases } = cacheWithNodes();
    c.assume(pod('ghost'), 'n1', 0);
    c.assume(pod('late'), 'n1', 0);
    expect(c.reservation('uid-ghost')).toMatchObject({ expiresAtMs: UNCONFIRMED_TTL_MS, podSeen: false });
    // The watch shows `late` (still unbound) at 10 s: it gets the full TTL from its reservation time.
    c.upsertPod(pod('late'));
    expect(c.reservation('uid-late')).toMatchObject({ expiresAtMs: TTL_MS, podSeen: true });
    expect(c.expire(UNCONFIRMED_TTL_MS - 1)).toEqual([]);
    expect(c.expire(UNCONFIRMED_TTL_MS).map((r) => r.reservation.uid)).toEqual(['uid-ghost']);
    expect(c.reservation('uid-late')).toBeDefined();
    expect(reasons(releases)).toEqual(['expired']);
  });

  it('assume again for the same UID replaces the reservation (new node, new deadline), never doubles it', () => {
    const { c } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.assume(p, 'n1', 1_000);
    c.assume(p, 'n2', 2_000);
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
    expect(totals(c, 'n2')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    c.assume(p, 'n2', 3_000);
    expect(totals(c, 'n2')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    expect(c.size.reservations).toBe(1);
    expect(c.reservation('uid-p')!.expiresAtMs).toBe(3_000 + TTL_MS);
  });

  it('does not assume for a pod it already sees bound (its requests count through the pod)', () => {
    const { c } = cacheWithNodes();
    const bound = record(makePod('p').req({ cpu: '2' }).node('n1').obj());
    c.upsertPod(bound);
    expect(c.assume(bound, 'n2', 0)).toBe('bound');
    expect(c.size.reservations).toBe(0);
  });

  it('refuses to assume for a pod it has seen deleted (a late request holds nothing)', () => {
    const { c } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.deletePod(p.uid);
    expect(c.wasDeleted(p.uid)).toBe(true);
    expect(c.assume(p, 'n1', 0)).toBe('deleted');
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
  });

  it('remembers only the last rememberDeletedPods deletions', () => {
    const c = new SchedulerCache(DIMS, { ttlMs: TTL_MS, rememberDeletedPods: 2 });
    for (const uid of ['a', 'b', 'c']) c.deletePod(uid);
    expect(['a', 'b', 'c'].map((uid) => c.wasDeleted(uid))).toEqual([false, true, true]);
  });

  it('a pod seen bound releases its reservation in the same update: no gap, no double count', () => {
    const { c, releases } = cacheWithNodes();
    const pending = pod('p');
    c.upsertPod(pending);
    c.assume(pending, 'n1', 0);
    const inUse = () => c.nodeInfo('n1')!.allocated[0]! + c.nodeInfo('n1')!.reserved[0]!;
    expect(inUse()).toBe(2000); // reserved 2000m, allocated 0
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: false }).obj()));
    expect(inUse()).toBe(2000); // allocated 2000m, reserved 0
    expect(c.nodeInfo('n1')!.reservedCount).toBe(0);
    expect(reasons(releases)).toEqual(['bound']);
  });

  it('a pod bound elsewhere moves its load: the reserved node is freed (moved)', () => {
    const { c, releases } = cacheWithNodes();
    c.assume(pod('p'), 'n1', 0);
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n2').obj()));
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
    expect(c.nodeInfo('n2')!.allocated).toEqual([2000, 4 * GiB]);
    expect(reasons(releases)).toEqual(['moved']);
  });

  it('deleting a pod releases its reservation (deleted)', () => {
    const { c, releases } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.assume(p, 'n1', 0);
    expect(c.deletePod(p.uid)?.reason).toBe('deleted');
    expect(c.size.reservations).toBe(0);
    expect(reasons(releases)).toEqual(['deleted']);
  });

  it('an unrelated update of a still-pending pod neither releases nor re-ages its reservation', () => {
    const { c } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.assume(p, 'n1', 1_000);
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).label('team', 'x').obj()));
    expect(c.reservation(p.uid)).toMatchObject({ nodeName: 'n1', reservedAtMs: 1_000, expiresAtMs: 1_000 + TTL_MS });
  });

  it('forget (Unreserve) releases as unreserved, once; releasing an absent UID is a no-op', () => {
    const { c, releases } = cacheWithNodes();
    c.assume(pod('a'), 'n1', 0);
    c.assume(pod('b'), 'n1', 0);
    expect(c.forget('uid-a')?.reason).toBe('unreserved');
    expect(c.forget('uid-a')).toBeNull();
    expect(c.forget('never')).toBeNull();
    expect(c.deletePod('never')).toBeNull();
    expect(totals(c, 'n1')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    expect(reasons(releases)).toEqual(['unreserved']);
  });

  it('expire releases exactly the reservations whose deadline has passed, earliest first, whatever their order', () => {
    const { c, releases } = cacheWithNodes();
    for (const name of ['seen-old', 'seen-mid']) c.upsertPod(pod(name));
    c.assume(pod('seen-old'), 'n1', 0); // deadline 600 000
    c.assume(pod('seen-mid'), 'n1', 100_000); // deadline 700 000
    c.assume(pod('unseen'), 'n2', 500_000); // deadline 530 000: made last, lapses first
    expect(c.expire(529_999)).toEqual([]);
    expect(c.expire(600_000).map((r) => r.reservation.uid)).toEqual(['uid-unseen', 'uid-seen-old']);
    expect(c.expire(699_999)).toEqual([]);
    expect(c.expire(700_000).map((r) => r.reservation.uid)).toEqual(['uid-seen-mid']);
    expect(reasons(releases)).toEqual(['expired', 'expired', 'expired']);
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
  });

  it('finishBinding moves the reservation to the bound node and gives it a full TTL from the bind', () => {
    const { c, releases } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.assume(p, 'n1', 0);
    expect(c.finishBinding(p.uid, 'n2', 500_000)).toBe(true);
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n2',
      reservedAtMs: 0,
      expiresAtMs: 500_000 + TTL_MS,
      bindingFinished: true,
    });
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
    expect(totals(c, 'n2')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    expect(c.expire(TTL_MS)).toEqual([]); // the assume's deadline no longer applies
    c.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n2').obj()));
    expect(reasons(releases)).toEqual(['bound']);
  });

  it('BindingFinished → assume → Assumed (kube-scheduler retried the pod), and finishBinding again renews it (a retried bind)', () => {
    const { c, releases } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.assume(p, 'n1', 0);
    c.finishBinding(p.uid, 'n1', 1_000);
    expect(c.assume(p, 'n2', 2_000)).toBe('assumed');
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n2',
      reservedAtMs: 2_000,
      expiresAtMs: 2_000 + TTL_MS,
      bindingFinished: false,
    });
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
    expect(totals(c, 'n2')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    expect(c.finishBinding(p.uid, 'n2', 3_000)).toBe(true);
    expect(c.finishBinding(p.uid, 'n2', 4_000)).toBe(true);
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n2',
      reservedAtMs: 2_000,
      expiresAtMs: 4_000 + TTL_MS,
      bindingFinished: true,
    });
    expect(c.size.reservations).toBe(1);
    expect(releases).toEqual([]); // replaced, never released
  });

  it("startBinding holds the reservation on the bind's node for a full TTL from the bind; finishBinding and assume go on from it", () => {
    const { c, releases } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    c.assume(p, 'n1', 0);
    expect(c.startBinding(p.uid, 'n2', 500_000)).toBe(true);
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n2',
      reservedAtMs: 0,
      expiresAtMs: 500_000 + TTL_MS,
      bindingStarted: true,
      bindingFinished: false,
    });
    expect(totals(c, 'n1')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
    expect(totals(c, 'n2')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
    expect(c.finishBinding(p.uid, 'n2', 500_010)).toBe(true);
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n2',
      expiresAtMs: 500_010 + TTL_MS,
      bindingStarted: true,
      bindingFinished: true,
    });
    expect(c.startBinding(p.uid, 'n2', 500_020)).toBe(true); // a retried bind: still finished
    expect(c.reservation(p.uid)).toMatchObject({
      expiresAtMs: 500_020 + TTL_MS,
      bindingStarted: true,
      bindingFinished: true,
    });
    expect(c.assume(p, 'n1', 600_000)).toBe('assumed'); // kube-scheduler retried the pod: a new cycle
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n1',
      reservedAtMs: 600_000,
      bindingStarted: false,
      bindingFinished: false,
    });
    expect(c.size.reservations).toBe(1);
    expect(releases).toEqual([]);
  });

  it('a pod first seen after startBinding keeps the deadline the bind gave its reservation', () => {
    const { c } = cacheWithNodes();
    c.assume(pod('p'), 'n1', 0); // never seen: deadline 0 + the unconfirmed TTL
    c.startBinding('uid-p', 'n1', 10);
    c.upsertPod(pod('p'));
    expect(c.reservation('uid-p')).toMatchObject({ podSeen: true, reservedAtMs: 0, expiresAtMs: 10 + TTL_MS });
  });

  it('startBinding without a reservation makes one for a pod seen unbound, and nothing otherwise', () => {
    const { c } = cacheWithNodes();
    c.upsertPod(pod('p'));
    expect(c.startBinding('uid-p', 'n1', 7)).toBe(true);
    expect(c.reservation('uid-p')).toMatchObject({
      nodeName: 'n1',
      request: [2000, 4 * GiB],
      reservedAtMs: 7,
      bindingStarted: true,
      bindingFinished: false,
    });
    expect(c.startBinding('never-seen', 'n1', 0)).toBe(false);
    c.upsertPod(record(makePod('q').req({ cpu: '1' }).node('n2').obj()));
    expect(c.startBinding('uid-q', 'n2', 0)).toBe(false);
    expect(c.size.reservations).toBe(1);
  });

  it('finishBinding without a reservation makes one for a pod seen unbound, and nothing otherwise', () => {
    const { c } = cacheWithNodes();
    const p = pod('p');
    c.upsertPod(p);
    expect(c.finishBinding(p.uid, 'n1', 7)).toBe(true);
    expect(c.reservation(p.uid)).toMatchObject({
      nodeName: 'n1',
      request: [2000, 4 * GiB],
      reservedAtMs: 7,
      bindingFinished: true,
    });
    expect(c.finishBinding('never-seen', 'n1', 0)).toBe(false);
    c.upsertPod(record(makePod('q').req({ cpu: '1' }).node('n2').obj()));
    expect(c.finishBinding('uid-q', 'n2', 0)).toBe(false);
    expect(c.size.reservations).toBe(1);
  });
});

describe('release when kube-scheduler gives up on the cycle (Unschedulable after the reservation)', () => {
  const failed = (message: string) =>
    ({
      ...makePod('p').req({ cpu: '2' }).obj(),
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
      },
    }) as Pod;

  it('a new scheduling failure on the still-unbound pod releases it as unschedulable', () => {
    const { c, releases } = cacheWithNodes();
    c.assume(record(makePod('p').req({ cpu: '2' }).obj()), 'n1', 0);
    c.upsertPod(record(failed('0/2 nodes are available: 2 Insufficient cpu.')));
    expect(c.size.reservations).toBe(0);
    expect(reasons(releases)).toEqual(['unschedulable']);
  });

  it('the failure the pod already had when reserved (an earlier cycle) does not release it', () => {
    const { c } = cacheWithNodes();
    const before = record(failed('0/2 nodes are available: 2 Insufficient cpu.'));
    expect(before.schedulingFailure).toBe('Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.');
    c.upsertPod(before);
    c.assume(before, 'n1', 0);
    // A label update re-delivers the same old condition: the reservation stays, with its deadline.
    c.upsertPod(
      record({
        ...failed('0/2 nodes are available: 2 Insufficient cpu.'),
        metadata: { name: 'p', namespace: 'sandboxes', uid: 'uid-p', labels: { team: 'x' } },
      } as Pod),
    );
    expect(c.reservation('uid-p')).toMatchObject({ nodeName: 'n1', reservedAtMs: 0, expiresAtMs: TTL_MS });
    // A different failure afterwards does release it.
    c.upsertPod(record(failed('0/2 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable.')));
    expect(c.size.reservations).toBe(0);
  });

  it("once the bind has started, a failure shown is an earlier cycle's: it releases nothing (startBinding, then finishBinding)", () => {
    const { c, releases } = cacheWithNodes();
    // Filter answered before the watch showed the failure of the cycle before: kube-scheduler's copy had none.
    c.upsertPod(record(makePod('p').req({ cpu: '2' }).obj()));
    c.assume(record(makePod('p').req({ cpu: '2' }).obj()), 'n1', 0);
    c.startBinding('uid-p', 'n1', 1);
    c.upsertPod(record(failed('0/2 nodes are available: 2 Insufficient cpu.')));
    expect(c.reservation('uid-p')).toMatchObject({ nodeName: 'n1', bindingStarted: true, bindingFinished: false });
    c.finishBinding('uid-p', 'n1', 2);
    c.upsertPod(record(failed('0/2 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable.')));
    expect(c.reservation('uid-p')).toMatchObject({ nodeName: 'n1', bindingFinished: true });
    expect(totals(c, 'n1')).toMatchObject({ reserved: [2000, 0], reservedCount: 1 });
    c.upsertPod(record(makePod('p').req({ cpu: '2' }).node('n1', { ready: false }).obj()));
    expect(reasons(releases)).toEqual(['bound']);
    expect(totals(c, 'n1')).toMatchObject({ allocated: [2000, 0], reserved: [0, 0], starting: 1, reservedCount: 0 });
  });

  it("a failure the record already carried before the update releases nothing, though kube-scheduler's copy had none when it reserved", () => {
    const { c, releases } = cacheWithNodes();
    c.upsertPod(record(failed('0/2 nodes are available: 2 Insufficient cpu.'))); // the watch shows it first
    c.assume(record(makePod('p').req({ cpu: '2' }).obj()), 'n1', 0); // kube-scheduler decided on its older copy
    expect(c.reservation('uid-p')).toMatchObject({ failureMark: null });
    // A label update re-delivers that earlier failure: nothing new happened to this cycle.
    c.upsertPod(
      record({
        ...failed('0/2 nodes are available: 2 Insufficient cpu.'),
        metadata: { name: 'p', namespace: 'sandboxes', uid: 'uid-p', labels: { team: 'x' } },
      } as Pod),
    );
    expect(c.reservation('uid-p')).toMatchObject({ nodeName: 'n1', reservedAtMs: 0 });
    expect(releases).toEqual([]);
    c.upsertPod(record(failed('0/2 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable.')));
    expect(reasons(releases)).toEqual(['unschedulable']);
  });

  it('a bound pod carries no scheduling failure', () => {
    expect(record(makePod('p').node('n1').obj()).schedulingFailure).toBeNull();
  });
});

describe('SchedulerCache capacity freed (the capacityFreed listener: the facts of the table in docs/cluster-mode.md)', () => {
  const sandbox = (name: string) => makePod(name).req({ cpu: '2', memory: '4Gi' });
  const failedScheduling = (name: string, message: string) =>
    ({
      ...sandbox(name).obj(),
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
      },
    }) as Pod;
  const watched = cacheWithNodes;

  it('a paused pod in a terminal phase: deleted, or losing its label, frees capacity, said to be a terminal pod’s', () => {
    const { c, freed } = watched();
    c.upsertPod(record(sandbox('a').node('n1').paused().phase('Succeeded').obj()));
    c.upsertPod(record(sandbox('b').node('n1').paused().phase('Failed').obj()));
    expect(freed).toEqual([]);
    c.deletePod('uid-a');
    c.upsertPod(record(sandbox('b').node('n1').phase('Failed').obj())); // paused label removed: paused → inactive
    expect(freed).toEqual([
      { nodeName: 'n1', cause: 'pod-deleted', podTerminal: true },
      { nodeName: 'n1', cause: 'pod-updated', podTerminal: true },
    ]);
    expect(totals(c, 'n1')).toMatchObject({ paused: [0, 0], pausedCount: 0 });
  });

  it('a pod not in a terminal phase frees capacity, said to be a live pod’s: deleted, finished, paused one deleted', () => {
    const { c, freed } = watched();
    c.upsertPod(record(sandbox('run').node('n1').obj()));
    c.upsertPod(record(sandbox('job').node('n1').obj()));
    c.upsertPod(record(sandbox('held').node('n2').paused().obj()));
    c.deletePod('uid-run');
    c.upsertPod(record(sandbox('job').node('n1').phase('Succeeded').obj()));
    c.deletePod('uid-held');
    expect(freed).toEqual([
      { nodeName: 'n1', cause: 'pod-deleted', podTerminal: false },
      { nodeName: 'n1', cause: 'pod-updated', podTerminal: false },
      { nodeName: 'n2', cause: 'pod-deleted', podTerminal: false },
    ]);
  });

  it('changes that free nothing in the model say nothing: paused ↔ running, a paused pod going terminal, unbound pods', () => {
    const { c, freed } = watched();
    c.upsertPod(record(sandbox('p').node('n1').obj()));
    c.upsertPod(record(sandbox('p').node('n1').paused().obj())); // running → paused: still counted
    c.upsertPod(record(sandbox('p').node('n1').paused().phase('Succeeded').obj())); // paused counts whatever its phase
    c.upsertPod(record(sandbox('q').node('n2').paused().obj()));
    c.upsertPod(record(sandbox('q').node('n2').obj())); // un-paused while running: paused → allocated
    c.upsertPod(record(sandbox('w').obj()));
    c.deletePod('uid-w');
    c.deletePod('uid-never-seen');
    expect(freed).toEqual([]);
  });

  it('reservation releases free capacity named by their reason; bound and starting frees nothing, bound and Ready its start slot', () => {
    const { c, freed } = watched();
    const names = ['bound', 'bound-ready', 'moved', 'deleted', 'unsched', 'unreserved', 'expired'];
    for (const name of names) {
      c.upsertPod(record(sandbox(name).obj()));
      c.assume(record(sandbox(name).obj()), 'n1', 0);
    }
    c.upsertPod(record(sandbox('bound').node('n1', { ready: false }).obj()));
    c.upsertPod(record(sandbox('bound-ready').node('n1').obj()));
    c.upsertPod(record(sandbox('moved').node('n2').obj()));
    c.deletePod('uid-deleted');
    c.upsertPod(record(failedScheduling('unsched', '0/2 nodes are available: 2 Insufficient cpu.')));
    c.forget('uid-unreserved');
    c.expire(TTL_MS);
    expect(freed).toEqual([
      { nodeName: 'n1', cause: 'bound', podTerminal: false },
      { nodeName: 'n1', cause: 'moved', podTerminal: false },
      { nodeName: 'n1', cause: 'deleted', podTerminal: false },
      { nodeName: 'n1', cause: 'unschedulable', podTerminal: false },
      { nodeName: 'n1', cause: 'unreserved', podTerminal: false },
      { nodeName: 'n1', cause: 'expired', podTerminal: false },
    ]);
  });

  it('a reservation replaced on another node frees the first, named by the transition: assumed again, or moved by the bind verb (started or finished)', () => {
    const { c, freed } = watched();
    const p = record(sandbox('p').obj());
    c.upsertPod(p);
    c.assume(p, 'n1', 0);
    c.assume(p, 'n1', 1); // the same node again: nothing frees
    c.assume(p, 'n2', 2);
    c.finishBinding('uid-p', 'n1', 3);
    c.startBinding('uid-p', 'n2', 4);
    c.finishBinding('uid-p', 'n2', 5); // where the bind started: nothing frees
    expect(freed).toEqual([
      { nodeName: 'n1', cause: 'reassumed', podTerminal: false },
      { nodeName: 'n2', cause: 'binding-finished', podTerminal: false },
      { nodeName: 'n1', cause: 'binding-started', podTerminal: false },
    ]);
  });

  it('records carry whether the pod is terminal', () => {
    expect(record(sandbox('a').node('n1').phase('Succeeded').obj()).terminal).toBe(true);
    expect(record(sandbox('b').node('n1').phase('Failed').obj()).terminal).toBe(true);
    expect(record(sandbox('c').node('n1').obj()).terminal).toBe(false);
    expect(record(sandbox('d').obj()).terminal).toBe(false);
  });
});

describe('capacity a Node object brings', () => {
  it('a Node new to the cache is node-added, a larger allocatable node-grown; the same or a smaller one frees nothing', () => {
    const { c, freed } = cacheWithNodes();
    c.upsertNode(toNodeRecord(makeNode('n3', { cpu: '8', memory: '32Gi' }), DIMS));
    c.upsertNode(toNodeRecord(makeNode('n3', { cpu: '8', memory: '32Gi' }), DIMS));
    c.upsertNode(toNodeRecord(makeNode('n3', { cpu: '4', memory: '32Gi' }), DIMS));
    c.upsertNode(toNodeRecord(makeNode('n3', { cpu: '4', memory: '64Gi' }), DIMS));
    c.deleteNode('n3');
    c.upsertNode(toNodeRecord(makeNode('n3', { cpu: '4', memory: '64Gi' }), DIMS));
    expect(freed).toEqual([
      { nodeName: 'n3', cause: 'node-added', podTerminal: false },
      { nodeName: 'n3', cause: 'node-grown', podTerminal: false },
      { nodeName: 'n3', cause: 'node-added', podTerminal: false },
    ]);
  });
});
