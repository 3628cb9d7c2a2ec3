import { Placer } from '../../../src/core/fit/placer.js';
import { PlacementService, type Candidates, type Decision } from '../../../src/core/decide/placementService.js';
import type { Pod } from '../../../src/core/objects/kubeObjects.js';
import { startingCount } from '../../../src/core/cache/nodeInfo.js';
import { toNodeRecord, toPodRecord, type Dimensions } from '../../../src/core/objects/records.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import type { Strategy } from '../../../src/core/fit/strategies/index.js';
import { GiB, makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const TTL_MS = 600_000;
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };

/** The 16/64/192-CPU cluster with 4 GiB per CPU, empty. */
function cluster(
  strategy: Strategy = 'least_loaded',
  options: { chooseInFilter?: boolean; recordOffers?: boolean } = {},
) {
  const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS });
  for (const cpus of [16, 64, 192])
    cache.upsertNode(toNodeRecord(makeNode(`n${cpus}`, { cpu: String(cpus), memory: `${cpus * 4}Gi` }), DIMS));
  const service = new PlacementService(cache, new Placer(strategy, () => 0.5), {
    schedulerName: 'sandbox-scheduler',
    chooseInFilter: options.chooseInFilter ?? false,
    recordOffers: options.recordOffers ?? false,
    offerTtlMs: TTL_MS,
  });
  return { cache, service };
}

const NAMES: Candidates = { names: ['n16', 'n64', 'n192'] };
const sandbox = (name: string, cpu = '2', memory = '4Gi') =>
  toPodRecord(makePod(name).req({ cpu, memory }).obj(), DIMS, OPTIONS);
const chosenName = (d: Decision) => (d.chosen >= 0 ? d.scan.names[d.chosen]! : null);
const feasibleNames = (d: Decision) => d.scan.names.filter((_, i) => d.scan.fits(i));
const scores = (service: PlacementService, d: Decision) => d.scan.names.map((_, i) => service.score(d, i));

describe('PlacementService.prioritize', () => {
  it('scores the least projected pressure node 10 and reserves it at once', () => {
    const { cache, service } = cluster();
    const out = service.prioritize(sandbox('p1'), NAMES, 0);
    // projected cpu: n16 2/16 = 0.125 → floor(9 × 0.875) = 7; n64 2/64 → floor(9 × 0.96875) = 8; n192 2/192 → chosen
    expect(scores(service, out)).toEqual([7, 8, 10]);
    expect(chosenName(out)).toBe('n192');
    expect(out.scan.names[out.runnerUp]).toBe('n64');
    expect(out.reserved).toBe('n192');
    expect(cache.nodeInfo('n192')).toMatchObject({ reserved: [2000, 4 * GiB], reservedCount: 1 });
  });

  it('back-to-back decisions see the reservations before them and spread by projected pressure', () => {
    const { service } = cluster();
    const picks = Array.from({ length: 12 }, (_, i) => chosenName(service.prioritize(sandbox(`p${i}`), NAMES, i))!);
    // Water-filling on projected cpu pressure (k pods on a c-CPU node: 2k/c):
    // n192 takes pods while 2(k+1)/192 < 2/64 → k+1 < 3 → 2 pods, then n64 (2/64 = 0.03125) ties n192 at 3/96 = 0.03125:
    // equal pressure → fewer starting (n64 has 0 reservations) → n64. The 16-CPU node waits until pressure reaches 2/16.
    expect(picks.slice(0, 4)).toEqual(['n192', 'n192', 'n64', 'n192']);
    const counts = Object.fromEntries(['n16', 'n64', 'n192'].map((n) => [n, picks.filter((p) => p === n).length]));
    // after 12 pods: n192 9 (18/192 = 0.09375), n64 3 (6/64 = 0.09375), n16 0 (next would be 2/16 = 0.125)
    expect(counts).toEqual({ n16: 0, n64: 3, n192: 9 });
  });

  it('the same UID again replaces its reservation, never doubles it, and does not compete with itself', () => {
    const { cache, service } = cluster();
    const pod = sandbox('again');
    service.prioritize(pod, NAMES, 0);
    const second = service.prioritize(pod, NAMES, 1);
    // Without its own reservation n192 is empty again: it is still the pick, with pressure 2/192.
    expect(second.scan.evaluation(second.chosen)).toMatchObject({ name: 'n192', pressure: 2000 / 192000 });
    expect(cache.size.reservations).toBe(1);
    expect(cache.nodeInfo('n192')!.reservedCount).toBe(1);
  });

  it('unreserve with the decision it undoes releases that reservation only: a later decision for the pod is kept', () => {
    const { cache, service } = cluster();
    const pod = sandbox('undo');
    const first = service.prioritize(pod, NAMES, 0);
    service.unreserve(pod.uid, { nodeName: first.reserved!, atMs: 1 }); // not the time it was made
    expect(cache.reservation(pod.uid)?.nodeName).toBe('n192');
    service.unreserve(pod.uid, { nodeName: first.reserved!, atMs: 0 });
    expect(cache.reservation(pod.uid)).toBeUndefined();

    const earlier = service.prioritize(pod, NAMES, 10);
    service.prioritize(pod, NAMES, 20); // kube-scheduler retried the pod: a later decision
    service.unreserve(pod.uid, { nodeName: earlier.reserved!, atMs: 10 });
    expect(cache.reservation(pod.uid)).toMatchObject({ nodeName: 'n192', reservedAtMs: 20 });
  });

  it('scores every node 0 and reserves nothing when nothing fits', () => {
    const { cache, service } = cluster();
    const out = service.prioritize(sandbox('huge', '500', '1Gi'), NAMES, 0);
    expect(out).toMatchObject({ result: 'no_fit', chosen: -1, reserved: null });
    expect(scores(service, out)).toEqual([0, 0, 0]);
    expect(cache.size.reservations).toBe(0);
  });

  it('expires reservations past their deadline before deciding', () => {
    const { cache, service } = cluster();
    service.prioritize(sandbox('old'), NAMES, 0);
    service.prioritize(sandbox('new'), NAMES, TTL_MS);
    expect([...cache.reservations()].map((r) => r.uid)).toEqual(['uid-new']);
  });
});

describe('PlacementService.filter, two calls per pod (chooseInFilter: false)', () => {
  it('keeps nodes that fit and reserves nothing when several fit', () => {
    const { cache, service } = cluster();
    cache.upsertPod(toPodRecord(makePod('busy').req({ cpu: '15', memory: '1Gi' }).node('n16').obj(), DIMS, OPTIONS));
    const out = service.filter(sandbox('p'), NAMES, 0);
    // n16: 15000m + 2000m = 17000m > 16000m → Insufficient cpu (resolvable)
    expect(feasibleNames(out)).toEqual(['n64', 'n192']);
    expect(out.scan.evaluation(0).failures).toEqual([
      {
        code: 'InsufficientResource',
        resource: 'cpu',
        requested: 2000,
        allocated: 15000,
        paused: 0,
        reserved: 0,
        allocatable: 16000,
      },
    ]);
    expect(out).toMatchObject({ result: 'placed', chosen: -1, reserved: null });
    expect(cache.size.reservations).toBe(0);
  });

  it('reserves the only feasible node, because kube-scheduler skips prioritize then', () => {
    const { cache, service } = cluster();
    const out = service.filter(sandbox('big', '100', '8Gi'), NAMES, 0);
    // 100 CPUs fit only on n192
    expect(out).toMatchObject({ reserved: 'n192', result: 'placed' });
    expect(feasibleNames(out)).toEqual(['n192']);
    expect(cache.reservation('uid-big')?.nodeName).toBe('n192');
    // The next such pod sees it: n192 has 100 + 100 = 200 > 192 CPUs → fits nowhere
    const next = service.filter(sandbox('big2', '100', '8Gi'), NAMES, 1);
    expect(next).toMatchObject({ result: 'no_fit', reserved: null });
    expect(next.scan.feasible).toBe(0);
    expect(next.scan.evaluation(2).failures[0]).toMatchObject({ code: 'InsufficientResource', reserved: 100_000 });
  });

  it('reports a node it does not know as not in the snapshot', () => {
    const { service } = cluster();
    const out = service.filter(sandbox('p'), { names: ['n16', 'ghost'] }, 0);
    expect(out.scan.evaluation(1).failures).toEqual([{ code: 'NodeNotInSnapshot', node: 'ghost' }]);
    expect(feasibleNames(out)).toEqual(['n16']);
  });

  it('uses the allocatable of Node objects sent with the request (nodeCacheCapable: false)', () => {
    const { service } = cluster();
    // The request says n16 has only 1 CPU now: a 2-CPU pod does not fit it, whatever the cache says.
    const out = service.filter(sandbox('p'), { names: ['n16', 'n64'], allocatable: [[1000, 64 * GiB], undefined] }, 0);
    expect(out.scan.evaluation(0).failures[0]).toMatchObject({ code: 'RequestExceedsAllocatable', allocatable: 1000 });
    expect(feasibleNames(out)).toEqual(['n64']);
  });
});

describe('PlacementService.filter expires before deciding', () => {
  it('a reservation past its deadline no longer takes the node at the next filter', () => {
    const { service } = cluster();
    // 100 CPUs fit only on n192, and only once: the first pod's reservation keeps the second out until it lapses.
    expect(service.filter(sandbox('first', '100', '8Gi'), NAMES, 0).reserved).toBe('n192');
    expect(service.filter(sandbox('second', '100', '8Gi'), NAMES, TTL_MS - 1).result).toBe('no_fit');
    expect(service.filter(sandbox('second', '100', '8Gi'), NAMES, TTL_MS).reserved).toBe('n192');
  });
});

describe('PlacementService.filter, one call per pod (chooseInFilter: true)', () => {
  it('chooses and reserves the strategy’s pick; its runner-up is named', () => {
    const { cache, service } = cluster('least_loaded', { chooseInFilter: true });
    const out = service.filter(sandbox('p'), NAMES, 0);
    expect({ chosen: chosenName(out), runnerUp: out.scan.names[out.runnerUp], reserved: out.reserved }).toEqual({
      chosen: 'n192',
      runnerUp: 'n64',
      reserved: 'n192',
    });
    expect(cache.reservation('uid-p')?.nodeName).toBe('n192');
  });

  it('places a burst exactly as Prioritize would (the same picks, in the same order)', () => {
    const one = cluster('least_loaded', { chooseInFilter: true });
    const two = cluster('least_loaded');
    const viaFilter = Array.from({ length: 40 }, (_, i) => chosenName(one.service.filter(sandbox(`p${i}`), NAMES, i)));
    const viaPrioritize = Array.from({ length: 40 }, (_, i) =>
      chosenName(two.service.prioritize(sandbox(`p${i}`), NAMES, i)),
    );
    expect(viaFilter).toEqual(viaPrioritize);
  });

  it('chooses nothing and reserves nothing when nothing fits', () => {
    const { cache, service } = cluster('least_loaded', { chooseInFilter: true });
    expect(service.filter(sandbox('huge', '500'), NAMES, 0)).toMatchObject({
      result: 'no_fit',
      chosen: -1,
      reserved: null,
    });
    expect(cache.size.reservations).toBe(0);
  });
});

describe('PlacementService.authorizeBind (only what kube-scheduler just decided)', () => {
  it('allows the chosen node, or another offered node that fits now; refuses nodes never offered', () => {
    const { service } = cluster('least_loaded', { chooseInFilter: true, recordOffers: true });
    const pod = sandbox('p');
    service.filter(pod, { names: ['n64', 'n192'] }, 0); // chooses n192
    expect(service.authorizeBind(pod.uid, 'n192', 1)).toBeNull();
    expect(service.authorizeBind(pod.uid, 'n64', 1)).toBeNull(); // offered and fits
    expect(service.authorizeBind(pod.uid, 'n16', 1)).toEqual({
      doesNotFit: false,
      reason: 'node n16 was not among the candidates kube-scheduler offered for pod UID uid-p',
    });
  });

  it('refuses an offered node that does not fit the pod now', () => {
    const { cache, service } = cluster('least_loaded', { recordOffers: true });
    const pod = sandbox('p', '10');
    service.prioritize(pod, NAMES, 0); // chooses n192
    cache.upsertPod(toPodRecord(makePod('busy').req({ cpu: '12' }).node('n16').obj(), DIMS, OPTIONS));
    // n16: 12000m + 10000m = 22000m > 16000m
    expect(service.authorizeBind(pod.uid, 'n16', 1)).toMatchObject({
      doesNotFit: true,
      reason: expect.stringMatching(
        /^node n16 does not fit pod UID uid-p now: Insufficient cpu: requested 10000m \+ in use 12000m/,
      ),
    });
  });

  it("re-checks the node it chose against the model as it is now: another scheduler's pod bound there since the decision counts", () => {
    const { cache, service } = cluster('least_loaded', { chooseInFilter: true, recordOffers: true });
    const pod = sandbox('p', '10', '4Gi');
    expect(chosenName(service.filter(pod, { names: ['n16'] }, 0))).toBe('n16');
    expect(service.authorizeBind(pod.uid, 'n16', 1)).toBeNull(); // nothing changed: 10 of 16 CPUs with its own reservation left out
    // default-scheduler's pod of 8 CPUs, bound to n16 after the decision: 8000m + 10000m > 16000m
    cache.upsertPod(toPodRecord(makePod('foreign').req({ cpu: '8' }).node('n16').obj(), DIMS, OPTIONS));
    const refusal = service.authorizeBind(pod.uid, 'n16', 2);
    expect(refusal).toEqual({
      doesNotFit: true,
      reason:
        'node n16 does not fit pod UID uid-p now: Insufficient cpu: requested 10000m + in use 8000m (allocated 8000m, paused 0m, reserved 0m) > allocatable 16000m',
    });
    // Refused as kube-scheduler's Unreserve would be: the reservation goes, and the next Filter decides again.
    expect(cache.reservation(pod.uid)).toBeUndefined();
    expect(cache.nodeInfo('n16')).toMatchObject({ reserved: [0, 0], reservedCount: 0 });
  });

  it("the extender's own later decisions on the same node do not make an earlier one refuse (they were made seeing it)", () => {
    const { service } = cluster('least_loaded', { chooseInFilter: true, recordOffers: true });
    const first = sandbox('a', '8', '4Gi');
    const second = sandbox('b', '8', '4Gi');
    service.filter(first, { names: ['n16'] }, 0);
    service.filter(second, { names: ['n16'] }, 1); // 8 + 8 = 16 of 16: fits beside the first's reservation
    expect(service.authorizeBind(first.uid, 'n16', 2)).toBeNull();
    expect(service.authorizeBind(second.uid, 'n16', 2)).toBeNull();
  });

  it('a retried bind of a pod already bound to the node is allowed however full the node is now', () => {
    const { cache, service } = cluster('least_loaded', { chooseInFilter: true, recordOffers: true });
    const pod = makePod('p').req({ cpu: '10', memory: '4Gi' });
    service.filter(toPodRecord(pod.obj(), DIMS, OPTIONS), { names: ['n16'] }, 0);
    cache.upsertPod(toPodRecord(pod.node('n16').obj(), DIMS, OPTIONS));
    cache.upsertPod(toPodRecord(makePod('foreign').req({ cpu: '8' }).node('n16').obj(), DIMS, OPTIONS));
    expect(service.authorizeBind('uid-p', 'n16', 1)).toBeNull();
  });

  it("a node chosen from the request's Node object while the cache has no Node object for it is bound: nothing newer to check against", () => {
    const { cache, service } = cluster('least_loaded', { chooseInFilter: true, recordOffers: true });
    cache.upsertPod(toPodRecord(makePod('seen').req({ cpu: '1' }).node('n-new').obj(), DIMS, OPTIONS)); // the cache knows the name, not the Node
    const pod = sandbox('p');
    const decision = service.filter(pod, { names: ['n-new'], allocatable: [[8000, 32 * GiB]] }, 0);
    expect(decision.reserved).toBe('n-new');
    expect(service.authorizeBind(pod.uid, 'n-new', 1)).toBeNull();
  });

  it('refuses a pod it answered no request for, or too long ago', () => {
    const { service } = cluster('least_loaded', { recordOffers: true });
    expect(service.authorizeBind('uid-unknown', 'n16', 0)?.reason).toMatch(
      /^no filter or prioritize for pod UID uid-unknown was answered/,
    );
    service.prioritize(sandbox('p'), NAMES, 0);
    expect(service.authorizeBind('uid-p', 'n192', TTL_MS - 1)).toBeNull();
    expect(service.authorizeBind('uid-p', 'n192', TTL_MS)?.reason).toMatch(/^no filter or prioritize/);
  });

  it('for a pod of another scheduler, allows exactly the nodes of its pass-through', () => {
    const { service } = cluster('least_loaded', { recordOffers: true });
    service.passThrough('uid-foreign', ['n16', 'n64'], 0);
    expect(service.authorizeBind('uid-foreign', 'n16', 1)).toBeNull();
    expect(service.authorizeBind('uid-foreign', 'n192', 1)?.reason).toMatch(/not among the candidates/);
  });

  it('allows everything when offers are not recorded (no bind verb)', () => {
    const { service } = cluster();
    expect(service.authorizeBind('uid-any', 'n16', 0)).toBeNull();
  });
});

describe("the starting limit through the bind, when the watch shows a failure of the pod's earlier cycle late", () => {
  // A 16-CPU node at perCore 0.25 may start 4 sandboxes. kube-scheduler retried p at once after its first cycle
  // failed (the node was starting 4), before the watch showed that cycle's failure: the failure arrives while p's
  // Binding is being created (or after it), and must not hand p's start slot to q.
  const failedPod = (name: string, message: string) =>
    ({
      ...makePod(name).req({ cpu: '500m', memory: '1Gi' }).obj(),
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
      },
    }) as Pod;
  const small = (name: string) => makePod(name).req({ cpu: '500m', memory: '1Gi' });
  const record = (pod: Pod) => toPodRecord(pod, DIMS, OPTIONS);

  it.each(['while the Binding is created', 'after the Binding was created'])(
    'a late failure %s: q is held by the limit, the node starts 4, never 5',
    (when) => {
      const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS, startingLimit: { perCore: 0.25 } });
      cache.upsertNode(toNodeRecord(makeNode('n16', { cpu: '16', memory: '64Gi' }), DIMS));
      const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
        schedulerName: 'sandbox-scheduler',
        chooseInFilter: true,
        recordOffers: true,
        offerTtlMs: TTL_MS,
      });
      const n16 = { names: ['n16'] };
      for (const name of ['a', 'b', 'c', 'd']) {
        cache.upsertPod(record(small(name).obj()));
        expect(service.filter(record(small(name).obj()), n16, 0).reserved).toBe('n16');
      }
      cache.upsertPod(record(small('p').obj()));
      expect(service.filter(record(small('p').obj()), n16, 1).result).toBe('no_fit'); // cycle 1: 4 of 4 starting
      cache.upsertPod(record(small('a').node('n16').obj())); // a bound and Ready: a start slot frees
      expect(service.filter(record(small('p').obj()), n16, 2).reserved).toBe('n16'); // cycle 2, on p's copy without a failure
      expect(service.authorizeBind('uid-p', 'n16', 3)).toBeNull();
      service.startBinding('uid-p', 'n16', 3); // the bind verb, before its API call
      if (when === 'after the Binding was created') service.finishBinding('uid-p', 'n16', 4);
      cache.upsertPod(record(failedPod('p', '0/1 nodes are available: 1 4 sandboxes starting, limit 4.'))); // cycle 1's failure, late
      cache.upsertPod(record(small('q').obj()));
      const q = service.filter(record(small('q').obj()), n16, 5);
      if (when === 'while the Binding is created') service.finishBinding('uid-p', 'n16', 6);
      cache.upsertPod(record(small('p').node('n16', { ready: false }).obj())); // the watch shows p bound
      expect(q).toMatchObject({ result: 'no_fit', reserved: null });
      expect(q.failed).toEqual([['n16', [{ code: 'StartingLimit', starting: 4, limit: 4 }]]]);
      expect(startingCount(cache.nodeInfo('n16')!)).toBe(4); // b, c, d reserved; p starting (5 before the fix)
    },
  );
});

describe('PlacementService.rank', () => {
  it('orders nodes that fit by candidate order, then the others, without reserving', () => {
    const { cache, service } = cluster();
    const ranked = service.rank(sandbox('p', '32', '4Gi'), NAMES, 0);
    // n16 cannot take 32 CPUs; n192: 32/192 = 0.1667 < n64: 32/64 = 0.5
    expect(ranked.map((e) => e.name)).toEqual(['n192', 'n64', 'n16']);
    expect(cache.size.reservations).toBe(0);
  });
});
