import { Placer } from '../../../src/core/fit/placer.js';
import { PlacementService } from '../../../src/core/decide/placementService.js';
import { RejectedPods, seenByScheduler } from '../../../src/core/requeue/rejections.js';
import { toNodeRecord, toPodRecord, type Dimensions } from '../../../src/core/objects/records.js';
import type { CapacityFreed } from '../../../src/core/cache/cacheView.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import { makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };
const RACE_WINDOW_MS = 5_000;
const NODES = { names: ['n1', 'n2'] };

/**
 * The cache's capacityFreed listener is fixed when the cache is made: this one forwards to `to`,
 * which a test points where it wants (as the runtime's wiring points it at the requeue).
 */
function freedRelay() {
  const relay = { to: (_freed: CapacityFreed): void => undefined, listener: (freed: CapacityFreed) => relay.to(freed) };
  return relay;
}

/**
 * Two nodes of 8 CPU / 32 GiB, each full with four paused Succeeded pods of 2 CPU (counted by the
 * extender only), and a service that remembers rejections. Every freed capacity is noted at `clock.now`.
 */
function fullCluster(maxPods = 100, dropped?: () => void) {
  const relay = freedRelay();
  const cache = new SchedulerCache(DIMS, { ttlMs: 600_000 }, { capacityFreed: relay.listener });
  for (const n of ['n1', 'n2']) cache.upsertNode(toNodeRecord(makeNode(n, { cpu: '8', memory: '32Gi' }), DIMS));
  for (const n of ['n1', 'n2']) for (let i = 0; i < 4; i++) cache.upsertPod(paused(`${n}-p${i}`, n));
  const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
    schedulerName: 'sandbox-scheduler',
    chooseInFilter: true,
    recordOffers: false,
    offerTtlMs: 600_000,
    rejectedPods: { maxPods, raceWindowMs: RACE_WINDOW_MS, ...(dropped ? { dropped } : {}) },
  });
  const rejected = service.rejectedPods!;
  const clock = { now: 0 };
  relay.to = (f) => rejected.capacityFreed(f, clock.now);
  return { cache, service, rejected, clock };
}
const paused = (name: string, node: string, cpu = '2', phase = 'Succeeded') =>
  toPodRecord(makePod(name).req({ cpu, memory: '4Gi' }).node(node).paused().phase(phase).obj(), DIMS, OPTIONS);
const sandbox = (name: string, cpu = '2') =>
  toPodRecord(makePod(name).req({ cpu, memory: '4Gi' }).obj(), DIMS, OPTIONS);
const uids = (targets: readonly { uid: string }[]) => targets.map((t) => t.uid);

describe('seenByScheduler: which of the cache’s facts kube-scheduler sees (the table in rejections.ts)', () => {
  const freed = (cause: CapacityFreed['cause'], podTerminal = false): CapacityFreed => ({
    nodeName: 'n1',
    cause,
    podTerminal,
  });
  it.each<[CapacityFreed['cause'], boolean]>([
    ['pod-deleted', true],
    ['pod-updated', true],
    ['pod-started', false],
    ['bound', true],
    ['moved', true],
    ['binding-started', true],
    ['binding-finished', true],
    ['node-added', true],
    ['node-grown', true],
    ['deleted', false],
    ['unschedulable', false],
    ['unreserved', false],
    ['expired', false],
    ['reassumed', false],
  ])('%s: seen %s', (cause, seen) => {
    expect(seenByScheduler(freed(cause))).toBe(seen);
  });

  it('a terminal pod’s record deleted or updated is hidden: kube-scheduler’s informer never held it', () => {
    expect(seenByScheduler(freed('pod-deleted', true))).toBe(false);
    expect(seenByScheduler(freed('pod-updated', true))).toBe(false);
  });
});

describe('RejectedPods: which pods rejected for capacity are requeued when capacity frees', () => {
  it('a paused Succeeded pod deleted: the pod rejected for capacity is nudged once, for the node that freed', () => {
    const { cache, service, rejected } = fullCluster();
    const filter = service.filter(sandbox('w'), NODES, 1_000);
    expect(filter.result).toBe('no_fit');
    expect(rejected.has('uid-w')).toBe(true);
    expect(rejected.takeNudges()).toEqual([]); // nothing freed yet
    cache.deletePod('uid-n2-p0');
    expect(rejected.takeNudges()).toEqual([{ uid: 'uid-w', key: 'sandboxes/w', nodeName: 'n2' }]);
    cache.deletePod('uid-n2-p1');
    expect(rejected.takeNudges()).toEqual([]); // nudged already for this rejection
  });

  it('a paused Succeeded pod losing its label nudges as well (paused → inactive, hidden from kube-scheduler)', () => {
    const { cache, service, rejected } = fullCluster();
    service.filter(sandbox('w'), NODES, 1_000);
    cache.upsertPod(
      toPodRecord(makePod('n1-p3').req({ cpu: '2', memory: '4Gi' }).node('n1').phase('Succeeded').obj(), DIMS, OPTIONS),
    );
    expect(uids(rejected.takeNudges())).toEqual(['uid-w']);
  });

  it('only pods that fit the freed node now, each on its own; a 1-CPU room nudges no 2-CPU pod', () => {
    const { cache, service, rejected } = fullCluster();
    cache.deletePod('uid-n1-p0');
    cache.upsertPod(paused('n1-small', 'n1', '1')); // n1: 6 + 1 = 7 of 8 CPU
    rejected.takeNudges(); // (nobody waited yet)
    service.filter(sandbox('big', '2'), NODES, 1_000);
    service.filter(sandbox('small', '1'), { names: ['n2'] }, 1_000); // n2 full; n1 not offered to it
    service.filter(sandbox('w2', '2'), NODES, 1_000);
    expect(rejected.size).toBe(3);
    cache.deletePod('uid-n2-p0'); // n2: 2 CPU free
    // Each fits n2 on its own: kube-scheduler's next cycle decides between them.
    expect(uids(rejected.takeNudges())).toEqual(['uid-big', 'uid-small', 'uid-w2']);
    service.filter(sandbox('late', '4'), NODES, 2_000);
    cache.deletePod('uid-n1-small'); // n1: 2 CPU free, not enough for 4
    expect(rejected.takeNudges()).toEqual([]);
  });

  it('a freed node that was not among the pod’s candidates nudges nothing', () => {
    const { cache, service, rejected } = fullCluster();
    service.filter(sandbox('w'), { names: ['n1'] }, 1_000);
    cache.deletePod('uid-n2-p0');
    expect(rejected.takeNudges()).toEqual([]);
    cache.deletePod('uid-n1-p0');
    expect(uids(rejected.takeNudges())).toEqual(['uid-w']);
  });

  it('a node added (or grown) nudges any remembered pod that fits it and raced the watch: it was no pod’s candidate', () => {
    const { cache, service, rejected, clock } = fullCluster();
    const large = (name: string) => toPodRecord(makePod(name).req({ cpu: '2', memory: '20Gi' }).obj(), DIMS, OPTIONS);
    service.filter(sandbox('early'), NODES, 0);
    service.filter(sandbox('racing'), NODES, 20_000);
    service.filter(large('large'), NODES, 20_000);
    expect(rejected.size).toBe(3);
    // n3 (8 CPU / 16 GiB) reaches the extender at 20.1 s: kube-scheduler saw it too and retried `early` itself;
    // `racing` was rejected on the model without it; `large` (20 GiB) does not fit it.
    clock.now = 20_100;
    cache.upsertNode(toNodeRecord(makeNode('n3', { cpu: '8', memory: '16Gi' }), DIMS));
    expect(rejected.takeNudges()).toEqual([{ uid: 'uid-racing', key: 'sandboxes/racing', nodeName: 'n3' }]);
    // The same Node object again frees nothing; a larger allocatable (32 GiB) is node-grown, seen as well.
    cache.upsertNode(toNodeRecord(makeNode('n3', { cpu: '8', memory: '16Gi' }), DIMS));
    expect(rejected.pendingFrees).toBe(0);
    clock.now = 20_200;
    cache.upsertNode(toNodeRecord(makeNode('n3', { cpu: '8', memory: '32Gi' }), DIMS));
    expect(uids(rejected.takeNudges())).toEqual(['uid-large']);
  });

  it('a change kube-scheduler saw nudges only pods rejected within the race window before the extender applied it', () => {
    const { cache, service, rejected, clock } = fullCluster();
    for (const n of ['n1', 'n2'])
      cache.upsertPod(toPodRecord(makePod(`${n}-run`).req({ cpu: '2', memory: '4Gi' }).node(n).obj(), DIMS, OPTIONS));
    for (const n of ['n1', 'n2']) cache.deletePod(`uid-${n}-p0`); // nodes full again, with one Running pod each
    rejected.takeNudges();
    service.filter(sandbox('early'), NODES, 0);
    service.filter(sandbox('racing'), NODES, 20_000);
    // The Running pod's deletion reaches the extender at 20.1 s: kube-scheduler saw it too and retried
    // `early` itself (it waited in its unschedulable pool), while `racing` was rejected on the stale model.
    clock.now = 20_100;
    cache.deletePod('uid-n1-run');
    expect(uids(rejected.takeNudges())).toEqual(['uid-racing']);
    // At the window's edge: rejected exactly raceWindowMs before is still nudged, one ms earlier is not.
    cache.upsertPod(toPodRecord(makePod('n1-run2').req({ cpu: '2', memory: '4Gi' }).node('n1').obj(), DIMS, OPTIONS)); // n1 full again
    service.filter(sandbox('edge'), NODES, 30_000);
    service.filter(sandbox('before-edge'), NODES, 29_999);
    clock.now = 30_000 + RACE_WINDOW_MS;
    cache.deletePod('uid-n2-run');
    expect(uids(rejected.takeNudges())).toEqual(['uid-edge']);
  });

  it('a start slot freeing nudges a pod held by the starting limit once the node is below its limit', () => {
    // One node of 8 CPU with room, limit 1 starting sandbox: a starting pod holds the slot.
    const relay = freedRelay();
    const cache = new SchedulerCache(
      DIMS,
      { ttlMs: 600_000, startingLimit: { perNode: 1 } },
      { capacityFreed: relay.listener },
    );
    cache.upsertNode(toNodeRecord(makeNode('n1', { cpu: '8', memory: '32Gi' }), DIMS));
    const starting = (ready: boolean) =>
      toPodRecord(makePod('s').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready }).obj(), DIMS, OPTIONS);
    cache.upsertPod(starting(false));
    const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
      schedulerName: 'sandbox-scheduler',
      chooseInFilter: true,
      recordOffers: false,
      offerTtlMs: 600_000,
      rejectedPods: { maxPods: 10, raceWindowMs: RACE_WINDOW_MS },
    });
    const rejected = service.rejectedPods!;
    const clock = { now: 0 };
    relay.to = (f) => rejected.capacityFreed(f, clock.now);
    const held = service.filter(sandbox('w'), { names: ['n1'] }, 1_000);
    expect(held.failed).toEqual([['n1', [{ code: 'StartingLimit', starting: 1, limit: 1 }]]]);
    expect(rejected.has('uid-w')).toBe(true);
    // Another reservation takes the slot back before the Ready update is applied: no nudge (still at the limit).
    clock.now = 1_100;
    expect(cache.assume({ uid: 'uid-x', key: 'sandboxes/x', request: [1000, 1024] }, 'n1', 1_050)).toBe('assumed');
    cache.upsertPod(starting(true));
    expect(rejected.takeNudges()).toEqual([]);
    // The reservation is released (unreserved): the slot frees, hidden from kube-scheduler: w is nudged once.
    cache.forget('uid-x');
    expect(rejected.takeNudges()).toEqual([{ uid: 'uid-w', key: 'sandboxes/w', nodeName: 'n1' }]);
  });

  it('a Ready update frees a start slot kube-scheduler does not act on (pod-started, hidden): pods held by the limit are nudged whatever their rejection’s age; running → running frees nothing', () => {
    const relay = freedRelay();
    const cache = new SchedulerCache(
      DIMS,
      { ttlMs: 600_000, startingLimit: { perNode: 1 } },
      { capacityFreed: relay.listener },
    );
    cache.upsertNode(toNodeRecord(makeNode('n1', { cpu: '8', memory: '32Gi' }), DIMS));
    const freed: string[] = [];
    relay.to = (f) => freed.push(`${f.nodeName}:${f.cause}:${seenByScheduler(f) ? 'seen' : 'hidden'}`);
    const pod = makePod('s').req({ cpu: '2', memory: '4Gi' });
    cache.upsertPod(toPodRecord(pod.node('n1', { ready: false }).obj(), DIMS, OPTIONS));
    cache.upsertPod(toPodRecord(pod.node('n1', { ready: true }).obj(), DIMS, OPTIONS));
    expect(freed).toEqual(['n1:pod-started:hidden']); // starting → running: only the start slot frees
    cache.upsertPod(toPodRecord(pod.node('n1', { ready: true }).obj(), DIMS, OPTIONS));
    expect(freed).toHaveLength(1); // running → running: nothing frees
    // Ready and resized down in one update: more than a start slot, an update kube-scheduler acts on.
    const r = makePod('r').req({ cpu: '4', memory: '4Gi' });
    cache.upsertPod(toPodRecord(r.node('n1', { ready: false }).obj(), DIMS, OPTIONS));
    cache.upsertPod(
      toPodRecord(makePod('r').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: true }).obj(), DIMS, OPTIONS),
    );
    expect(freed).toEqual(['n1:pod-started:hidden', 'n1:pod-updated:seen']);
    cache.deletePod('uid-r');
    freed.length = 0;
    // A reservation whose pod is first seen bound and already Ready: its start slot frees with the bind.
    cache.assume({ uid: 'uid-v', key: 'sandboxes/v', request: [2000, 4 * 1024 ** 3] }, 'n1', 0);
    cache.upsertPod(
      toPodRecord(makePod('v').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: true }).obj(), DIMS, OPTIONS),
    );
    expect(freed).toEqual(['n1:bound:seen']);
    cache.assume({ uid: 'uid-y', key: 'sandboxes/y', request: [2000, 4 * 1024 ** 3] }, 'n1', 0);
    cache.upsertPod(
      toPodRecord(makePod('y').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: false }).obj(), DIMS, OPTIONS),
    );
    expect(freed).toHaveLength(1); // bound and starting: the reservation's slot is the pod's now
    cache.deletePod('uid-y');
    cache.deletePod('uid-v');
    const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
      schedulerName: 'sandbox-scheduler',
      chooseInFilter: true,
      recordOffers: false,
      offerTtlMs: 600_000,
      rejectedPods: { maxPods: 10, raceWindowMs: RACE_WINDOW_MS },
    });
    const rejected = service.rejectedPods!;
    // w was rejected long before the slot freed (it sat in kube-scheduler's unschedulable pool): still nudged.
    relay.to = (f) => rejected.capacityFreed(f, 10_000 + RACE_WINDOW_MS + 60_000);
    cache.upsertPod(
      toPodRecord(makePod('t').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: false }).obj(), DIMS, OPTIONS),
    );
    expect(service.filter(sandbox('w'), { names: ['n1'] }, 10_000).result).toBe('no_fit');
    cache.upsertPod(
      toPodRecord(makePod('t').req({ cpu: '2', memory: '4Gi' }).node('n1', { ready: true }).obj(), DIMS, OPTIONS),
    );
    expect(uids(rejected.takeNudges())).toEqual(['uid-w']);
  });

  it('a hidden change nudges whatever the rejection’s age; seen and hidden changes on one node merge', () => {
    const { cache, service, rejected, clock } = fullCluster();
    cache.upsertPod(toPodRecord(makePod('n1-run').req({ cpu: '2', memory: '4Gi' }).node('n1').obj(), DIMS, OPTIONS));
    cache.deletePod('uid-n1-p0');
    rejected.takeNudges();
    service.filter(sandbox('old'), NODES, 0);
    clock.now = 3_600_000;
    cache.deletePod('uid-n1-run'); // seen, long after the rejection
    cache.deletePod('uid-n1-p1'); // hidden
    expect(uids(rejected.takeNudges())).toEqual(['uid-old']);
  });

  it('reservation releases hidden from kube-scheduler (expired, unreserved) nudge; moved within the window only', () => {
    const { cache, service, rejected, clock } = fullCluster();
    cache.deletePod('uid-n1-p0'); // 2 CPU free on n1 ...
    rejected.takeNudges();
    const holder = sandbox('holder');
    cache.upsertPod(holder);
    expect(service.filter(holder, NODES, 0).reserved).toBe('n1'); // ... reserved by `holder`
    service.filter(sandbox('w'), NODES, 1);
    expect(rejected.has('uid-w')).toBe(true);
    cache.forget('uid-holder');
    expect(uids(rejected.takeNudges())).toEqual(['uid-w']);
    // `w` comes back (kube-scheduler retried it) and is rejected again: eligible again.
    service.filter(holder, NODES, 10);
    service.filter(sandbox('w'), NODES, 11);
    cache.expire(600_010);
    expect(uids(rejected.takeNudges())).toEqual(['uid-w']);
    service.filter(holder, NODES, 20);
    service.filter(sandbox('w'), NODES, 21);
    clock.now = 21 + RACE_WINDOW_MS + 1;
    cache.upsertPod(toPodRecord(makePod('holder').req({ cpu: '2', memory: '4Gi' }).node('n2').obj(), DIMS, OPTIONS)); // moved: bound elsewhere
    expect(rejected.takeNudges()).toEqual([]); // n1 freed, but kube-scheduler saw the bind after `w` was rejected
  });

  it('is not told about rejections capacity cannot resolve: request above every allocatable, nodes unknown to the extender', () => {
    const { service, rejected } = fullCluster();
    expect(service.filter(sandbox('huge', '9'), NODES, 0).result).toBe('no_fit');
    expect(service.filter(sandbox('elsewhere'), { names: ['ghost'] }, 0).result).toBe('no_fit');
    expect(rejected.size).toBe(0);
  });

  it('forgets a pod a later Filter places, and at takeNudges one the cache sees bound or deleted', () => {
    const { cache, service, rejected } = fullCluster();
    for (const name of ['placed', 'bound', 'deleted', 'waiting']) service.filter(sandbox(name), NODES, 0);
    expect(rejected.size).toBe(4);
    cache.deletePod('uid-n1-p0');
    cache.deletePod('uid-n1-p1');
    cache.deletePod('uid-n1-p2');
    expect(service.filter(sandbox('placed'), NODES, 1).result).toBe('placed');
    expect(rejected.has('uid-placed')).toBe(false);
    cache.upsertPod(toPodRecord(makePod('bound').req({ cpu: '2', memory: '4Gi' }).node('n1').obj(), DIMS, OPTIONS));
    cache.deletePod('uid-deleted');
    expect(uids(rejected.takeNudges())).toEqual(['uid-waiting']);
    expect(rejected.size).toBe(1);
  });

  it('remembers at most maxPods, the oldest rejection dropped first (and told); a repeated rejection moves to the end', () => {
    let dropped = 0;
    const { cache, service, rejected } = fullCluster(2, () => dropped++);
    service.filter(sandbox('a'), NODES, 0);
    service.filter(sandbox('b'), NODES, 1);
    service.filter(sandbox('a'), NODES, 2);
    expect(dropped).toBe(0); // a again: the same pod, moved to the end
    service.filter(sandbox('c'), NODES, 3);
    expect([rejected.has('uid-a'), rejected.has('uid-b'), rejected.has('uid-c')]).toEqual([true, false, true]);
    expect(dropped).toBe(1);
    expect(rejected.size).toBe(2);
    cache.deletePod('uid-n1-p0');
    expect(uids(rejected.takeNudges())).toEqual(['uid-a', 'uid-c']);
  });

  it('a failed requeue hands the pods back: the next freed capacity nudges them again', () => {
    const { cache, service, rejected } = fullCluster();
    service.filter(sandbox('w'), NODES, 0);
    cache.deletePod('uid-n1-p0');
    const first = rejected.takeNudges();
    expect(uids(first)).toEqual(['uid-w']);
    rejected.nudgeFailed(first);
    expect(rejected.takeNudges()).toEqual([]); // nothing freed since
    cache.deletePod('uid-n1-p1');
    expect(uids(rejected.takeNudges())).toEqual(['uid-w']);
  });

  it('is off unless the service is given rejectedPods; its options are checked', () => {
    const cache = new SchedulerCache(DIMS, { ttlMs: 1000 });
    const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
      schedulerName: 's',
      chooseInFilter: true,
      recordOffers: false,
      offerTtlMs: 1000,
    });
    expect(service.rejectedPods).toBeNull();
    expect(() => new RejectedPods(cache, { maxPods: 0, raceWindowMs: 0 })).toThrow(
      /maxPods must be a positive integer/,
    );
    expect(() => new RejectedPods(cache, { maxPods: 1, raceWindowMs: -1 })).toThrow(/raceWindowMs must be ≥ 0/);
  });
});
