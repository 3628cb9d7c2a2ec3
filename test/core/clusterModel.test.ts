import { ClusterModel } from '../../src/core/clusterModel.js';
import type { Pod } from '../../src/core/kube.js';
import { sandboxState, toNodeRecord, toPodRecord, type Dimensions, type SandboxState } from '../../src/core/records.js';
import type { Release } from '../../src/core/reservations.js';
import { GiB, loadFixture, makeNode, makePod } from '../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const PAUSED = 'sandbox-extender.io/paused';
const record = (pod: Pod) => toPodRecord(pod, DIMS, { pausedLabel: PAUSED });

function model(): { m: ClusterModel; releases: Release[] } {
  const m = new ClusterModel(DIMS, 600_000);
  const releases: Release[] = [];
  m.onRelease = (r) => releases.push(r);
  m.upsertNode(toNodeRecord(makeNode('n1', { cpu: '16', memory: '64Gi' }), DIMS));
  m.upsertNode(toNodeRecord(makeNode('n2', { cpu: '64', memory: '256Gi' }), DIMS));
  return { m, releases };
}

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
    // cpu in millicores, memory in bytes (status.allocatable, quantity.md rounding)
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
    expect(toPodRecord(makePod('p').req({ cpu: '1' }).obj(), { names: ['cpu', 'pods'] }, { pausedLabel: PAUSED }).request).toEqual([1000, 1]);
  });
});

describe('ClusterModel node totals', () => {
  it('counts bound non-terminal pods as allocated, paused pods as paused, and nothing else', () => {
    const { m } = model();
    m.upsertPod(record(makePod('run').req({ cpu: '2', memory: '4Gi' }).node('n1').obj()));
    m.upsertPod(record(makePod('start').req({ cpu: '1', memory: '1Gi' }).node('n1', { ready: false }).obj()));
    m.upsertPod(record(makePod('pause').req({ cpu: '4', memory: '8Gi' }).node('n1').paused().phase('Succeeded').obj()));
    m.upsertPod(record(makePod('done').req({ cpu: '8', memory: '8Gi' }).node('n1').phase('Failed').obj()));
    m.upsertPod(record(makePod('wait').req({ cpu: '8', memory: '8Gi' }).obj()));
    // allocated: 2000m + 1000m = 3000m; 4Gi + 1Gi = 5Gi. paused: 4000m, 8Gi. Failed and unbound: nothing.
    expect(m.totalsOf('n1')).toEqual({ allocated: [3000, 5 * GiB], paused: [4000, 8 * GiB], starting: 1, running: 1, pausedCount: 1 });
  });

  it('an update replaces the pod’s contribution (starting → running, then deleted)', () => {
    const { m } = model();
    m.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: false }).obj()));
    expect(m.totalsOf('n1')).toMatchObject({ allocated: [2000, 4 * GiB], starting: 1, running: 0 });
    m.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1').obj()));
    expect(m.totalsOf('n1')).toMatchObject({ allocated: [2000, 4 * GiB], starting: 0, running: 1 });
    m.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1').phase('Succeeded').obj()));
    expect(m.totalsOf('n1')).toMatchObject({ allocated: [0, 0], starting: 0, running: 0 });
    m.deletePod('uid-p');
    expect(m.pods.size).toBe(0);
  });

  it('pods bound to a node not seen yet count under its name', () => {
    const { m } = model();
    m.upsertPod(record(makePod('early').req({ cpu: '1' }).node('n9').obj()));
    expect(m.totalsOf('n9').allocated).toEqual([1000, 0]);
  });

  it('a pod seen bound releases its reservation in the same update: no gap, no double count', () => {
    const { m, releases } = model();
    const pending = record(makePod('p').req({ cpu: '2', memory: '4Gi' }).obj());
    m.upsertPod(pending);
    expect(m.reserve(pending, 'n1', 0)).toBe(true);
    const inUse = () => m.totalsOf('n1').allocated[0]! + m.ledger.reservedOn('n1').request[0]!;
    expect(inUse()).toBe(2000); // reserved 2000m, allocated 0
    m.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: false }).obj()));
    expect(inUse()).toBe(2000); // allocated 2000m, reserved 0
    expect(m.ledger.reservedOn('n1').count).toBe(0);
    expect(releases.map((r) => r.reason)).toEqual(['bound']);
  });

  it('a pod bound elsewhere moves its load: the reserved node is freed', () => {
    const { m, releases } = model();
    const pod = record(makePod('p').req({ cpu: '2', memory: '4Gi' }).obj());
    m.reserve(pod, 'n1', 0);
    m.upsertPod(record(makePod('p').req({ cpu: '2', memory: '4Gi' }).node('n2').obj()));
    expect(m.ledger.reservedOn('n1').request).toEqual([0, 0]);
    expect(m.totalsOf('n2').allocated).toEqual([2000, 4 * GiB]);
    expect(releases.map((r) => r.reason)).toEqual(['moved']);
  });

  it('deleting a pod releases its reservation', () => {
    const { m, releases } = model();
    const pod = record(makePod('p').req({ cpu: '2' }).obj());
    m.upsertPod(pod);
    m.reserve(pod, 'n1', 0);
    m.deletePod(pod.uid);
    expect(m.ledger.size).toBe(0);
    expect(releases.map((r) => r.reason)).toEqual(['deleted']);
  });

  it('an unrelated update of a still-pending pod neither releases nor re-ages its reservation', () => {
    const { m } = model();
    const pod = record(makePod('p').req({ cpu: '2' }).obj());
    m.reserve(pod, 'n1', 1_000);
    m.upsertPod(record(makePod('p').req({ cpu: '2' }).label('team', 'x').obj()));
    expect(m.reservationOf(pod.uid)).toMatchObject({ nodeName: 'n1', reservedAtMs: 1_000 });
  });

  it('does not reserve for a pod it already sees bound (its requests count through the pod)', () => {
    const { m } = model();
    const bound = record(makePod('p').req({ cpu: '2' }).node('n1').obj());
    m.upsertPod(bound);
    expect(m.reserve(bound, 'n2', 0)).toBe(false);
    expect(m.ledger.size).toBe(0);
  });

  it('expire reports each expired reservation to onRelease', () => {
    const { m, releases } = model();
    m.reserve(record(makePod('a').req({ cpu: '1' }).obj()), 'n1', 0);
    m.reserve(record(makePod('b').req({ cpu: '1' }).obj()), 'n1', 1);
    expect(m.expire(600_000).length).toBe(1); // a is 600 000 ms old = TTL
    expect(releases.map((r) => [r.reservation.uid, r.reason])).toEqual([['uid-a', 'expired']]);
  });

  it('the realistic pod list charges each node what the scheduler would', () => {
    const m = new ClusterModel(DIMS, 600_000);
    const list = loadFixture<{ items: Pod[] }>('lists/kubectl-get-pods-all-namespaces.json');
    for (const pod of list.items) m.upsertPod(record(pod));
    // kind-control-plane: coredns 100m/70Mi + kube-apiserver mirror 250m + pod-level pod 1000m/2Gi.
    const kind = m.totalsOf('kind-control-plane');
    expect(kind.allocated).toEqual([100 + 250 + 1000, 73400320 + 0 + 2147483648]);
    // GKE node: the init-heavy StatefulSet pod (2 cpu / 4Gi); the Succeeded job is not charged.
    expect(m.totalsOf('gke-prod-cluster-default-pool-7c1d2e3f-b8kq').allocated).toEqual([2000, 4294967296]);
  });
});

describe('release when kube-scheduler gives up on the cycle (Unschedulable after the reservation)', () => {
  const failed = (message: string) =>
    ({ ...makePod('p').req({ cpu: '2' }).obj(), status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] } }) as Pod;

  it('a new scheduling failure on the still-unbound pod releases it as unschedulable', () => {
    const { m, releases } = model();
    m.reserve(record(makePod('p').req({ cpu: '2' }).obj()), 'n1', 0);
    m.upsertPod(record(failed('0/2 nodes are available: 2 Insufficient cpu.')));
    expect(m.ledger.size).toBe(0);
    expect(releases.map((r) => r.reason)).toEqual(['unschedulable']);
  });

  it('the failure the pod already had when reserved (an earlier cycle) does not release it', () => {
    const { m } = model();
    const before = record(failed('0/2 nodes are available: 2 Insufficient cpu.'));
    expect(before.schedulingFailure).toBe('Unschedulable: 0/2 nodes are available: 2 Insufficient cpu.');
    m.upsertPod(before);
    m.reserve(before, 'n1', 0);
    // A label update re-delivers the same old condition: the reservation stays, with its age.
    m.upsertPod(record({ ...failed('0/2 nodes are available: 2 Insufficient cpu.'), metadata: { ...before, name: 'p', namespace: 'sandboxes', uid: 'uid-p', labels: { team: 'x' } } } as Pod));
    expect(m.reservationOf('uid-p')).toMatchObject({ nodeName: 'n1', reservedAtMs: 0 });
    // A different failure afterwards does release it.
    m.upsertPod(record(failed('0/2 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable.')));
    expect(m.ledger.size).toBe(0);
  });

  it('a bound pod carries no scheduling failure', () => {
    expect(record(makePod('p').node('n1').obj()).schedulingFailure).toBeNull();
  });
});
