/**
 * The whole replies of Filter and Prioritize as the core returns them (PlacementService.filterReply,
 * prioritizeReply; core/decide/replies.ts): which nodes are returned, how the others are sorted into FailedNodes
 * (may clear) and FailedAndUnresolvableNodes (never on this node: noderesources/fit.go), the reservation made,
 * and the pass-through of another scheduler's pods.
 */
import { explainDecision } from '../../../src/core/text/explain.js';
import type { Node } from '../../../src/core/objects/kubeObjects.js';
import { Placer } from '../../../src/core/fit/placer.js';
import { PlacementService } from '../../../src/core/decide/placementService.js';
import type {
  ExtenderArgs,
  FilterAnswer,
  FilterReply,
  PrioritizeAnswer,
  PrioritizeReply,
  ReplyContext,
} from '../../../src/core/decide/replies.js';
import { toNodeRecord, type Dimensions } from '../../../src/core/objects/records.js';
import { SchedulerCache, type SchedulerCacheOptions } from '../../../src/core/cache/schedulerCache.js';
import { makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const TTL_MS = 600_000;

/** Nodes of 16, 64 and 192 CPUs (4 GiB per CPU), empty. */
function cluster(
  options: { chooseInFilter?: boolean; cache?: Partial<SchedulerCacheOptions>; cpus?: readonly number[] } = {},
) {
  const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS, ...options.cache });
  for (const cpus of options.cpus ?? [16, 64, 192])
    cache.upsertNode(toNodeRecord(makeNode(`n${cpus}`, { cpu: String(cpus), memory: `${cpus * 4}Gi` }), DIMS));
  const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
    schedulerName: 'sandbox-scheduler',
    chooseInFilter: options.chooseInFilter ?? false,
    recordOffers: false,
    offerTtlMs: TTL_MS,
  });
  return { cache, service };
}

/** A context whose clock reads `nowMs` and counts its reads, and whose readiness gate says `notReady` (counted too). */
function context(nowMs = 5, notReady: string | null = null) {
  const calls = { now: 0, notReady: 0 };
  const ctx: ReplyContext = {
    pausedLabel: 'sandbox-extender.io/paused',
    now: () => (calls.now++, nowMs),
    notReady: () => (calls.notReady++, notReady),
  };
  return { ctx, calls };
}

const byNames = (pod: ReturnType<typeof makePod>, names: string[]): ExtenderArgs => ({
  Pod: pod.obj(),
  Nodes: null,
  NodeNames: names,
});
const byObjects = (pod: ReturnType<typeof makePod>, items: Node[]): ExtenderArgs => ({
  Pod: pod.obj(),
  Nodes: { items },
  NodeNames: null,
});

function answer(reply: FilterReply): FilterAnswer {
  if (reply.kind !== 'answer') throw new Error(`expected an answer, got ${JSON.stringify(reply)}`);
  return reply;
}

function prioritized(reply: PrioritizeReply): PrioritizeAnswer {
  if (reply.kind !== 'answer') throw new Error(`expected an answer, got ${JSON.stringify(reply)}`);
  return reply;
}

/** 48 CPUs held on n64 by another pod's reservation. */
function hold48OnN64(cache: SchedulerCache): void {
  cache.assume({ uid: 'other', key: 'ns/other', request: [48_000, 0] }, 'n64', 0);
}

const UNKNOWN_REASON = "node ghost is not in the extender's cluster snapshot";
const N64_INSUFFICIENT =
  'Insufficient cpu: requested 20000m + in use 48000m (allocated 0m, paused 0m, reserved 48000m) > allocatable 64000m';

describe('PlacementService.filterReply: the nodes that do not fit, sorted', () => {
  it('a request above a node’s allocatable is unresolvable; too little room left, or a node it does not know, is not', () => {
    const { cache, service } = cluster({ cpus: [16, 64, 128, 192] });
    hold48OnN64(cache);
    const reply = answer(
      service.filterReply(
        byNames(makePod('p').req({ cpu: '20', memory: '8Gi' }), ['n16', 'n64', 'ghost', 'n128', 'n192']),
        context().ctx,
      ),
    );
    expect(reply.nodeNames).toEqual(['n128', 'n192']);
    expect(reply.nodes).toBeNull();
    expect([...reply.failedNodes]).toEqual([
      ['n64', N64_INSUFFICIENT],
      ['ghost', UNKNOWN_REASON],
    ]);
    expect([...reply.failedAndUnresolvableNodes]).toEqual([
      ['n16', "cpu request 20000m exceeds the node's allocatable 16000m"],
    ]);
    // Two nodes fit: the choice is Prioritize's; nothing is reserved, counted or explained.
    expect(reply.reservation).toBeNull();
    expect(reply.counted).toBeNull();
    expect(reply.startingLimitHeld).toBe(false);
    expect(reply.decided).toMatchObject({ candidates: 5, feasible: 2, explanation: null });
    expect(cache.reservation('uid-p')).toBeUndefined();
  });

  it('a node with one failure that can never clear is unresolvable whatever else it has, with every reason in order', () => {
    const { cache, service } = cluster();
    hold48OnN64(cache);
    const reply = answer(
      service.filterReply(byNames(makePod('p').req({ cpu: '20', memory: '300Gi' }), ['n64', 'n192']), context().ctx),
    );
    expect(reply.failedNodes.size).toBe(0);
    expect([...reply.failedAndUnresolvableNodes]).toEqual([
      ['n64', `${N64_INSUFFICIENT}; memory request 300Gi exceeds the node's allocatable 256Gi`],
    ]);
  });

  it('one node fits (two calls per pod): it is returned and reserved, with the reservation and its Event in the reply', () => {
    const { cache, service } = cluster();
    hold48OnN64(cache);
    const { ctx, calls } = context(7);
    const reply = answer(
      service.filterReply(byNames(makePod('p').req({ cpu: '20', memory: '8Gi' }), ['n16', 'n64', 'n192']), ctx),
    );
    expect(reply.nodeNames).toEqual(['n192']);
    expect([...reply.failedNodes.keys()]).toEqual(['n64']);
    expect([...reply.failedAndUnresolvableNodes.keys()]).toEqual(['n16']);
    expect(reply.reservation).toEqual({ uid: 'uid-p', nodeName: 'n192', atMs: 7 });
    expect(cache.reservation('uid-p')).toMatchObject({ nodeName: 'n192', reservedAtMs: 7 });
    expect(reply.counted).toBe('placed');
    expect(reply.decided?.explanation).toMatchObject({
      result: 'placed',
      chosen: { name: 'n192' },
      candidates: 3,
      feasible: 1,
    });
    expect(explainDecision(reply.decided!.explanation!)).toMatch(
      /^placed on n192 by least_loaded: .*; 3 candidates, 1 fit; no runner-up$/,
    );
    expect(calls).toEqual({ now: 1, notReady: 1 });
  });

  it('with chooseInFilter only the chosen node is returned, and the others are not reported', () => {
    const { cache, service } = cluster({ chooseInFilter: true });
    const reply = answer(
      service.filterReply(
        byNames(makePod('p').req({ cpu: '20', memory: '8Gi' }), ['n16', 'n64', 'n192']),
        context(3).ctx,
      ),
    );
    expect(reply.nodeNames).toEqual(['n192']);
    expect(reply.failedNodes.size + reply.failedAndUnresolvableNodes.size).toBe(0);
    expect(reply.reservation).toEqual({ uid: 'uid-p', nodeName: 'n192', atMs: 3 });
    expect(cache.reservation('uid-p')?.nodeName).toBe('n192');
    expect(reply.decided?.explanation).toMatchObject({
      result: 'placed',
      chosen: { name: 'n192' },
      runnerUp: { name: 'n64' },
    });
  });

  it('nothing fits: every node sorted, counted no_fit, and the Event says why; nothing is reserved', () => {
    const { cache, service } = cluster();
    cache.assume({ uid: 'other', key: 'ns/other', request: [100_000, 0] }, 'n192', 0);
    const reply = answer(
      service.filterReply(
        byNames(makePod('p').req({ cpu: '100', memory: '8Gi' }), ['n16', 'n64', 'n192', 'ghost']),
        context().ctx,
      ),
    );
    expect(reply.nodeNames).toEqual([]);
    expect([...reply.failedAndUnresolvableNodes.keys()]).toEqual(['n16', 'n64']);
    expect([...reply.failedNodes]).toEqual([
      [
        'n192',
        'Insufficient cpu: requested 100000m + in use 100000m (allocated 0m, paused 0m, reserved 100000m) > allocatable 192000m',
      ],
      ['ghost', UNKNOWN_REASON],
    ]);
    expect(reply.counted).toBe('no_fit');
    expect(reply.startingLimitHeld).toBe(false);
    expect(reply.reservation).toBeNull();
    expect(reply.decided?.explanation).toMatchObject({ result: 'no_fit', candidates: 4 });
    expect(explainDecision(reply.decided!.explanation!)).toMatch(
      /^0\/4 nodes fit projected capacity: 2 cpu request exceeds allocatable, 1 Insufficient cpu \(projected\), 1 not in the extender’s snapshot\. e\.g\. n16: /,
    );
    expect(cache.reservation('uid-p')).toBeUndefined();
  });
});

describe('PlacementService.filterReply: the starting limit', () => {
  it('a node at its limit is resolvable (FailedNodes); nothing fitting, held by the limit alone somewhere, says so', () => {
    const { cache, service } = cluster({ cpus: [16, 64], cache: { startingLimit: { perNode: 1 } } });
    cache.assume({ uid: 'a', key: 'ns/a', request: [1000, 0] }, 'n16', 0);
    cache.assume({ uid: 'b', key: 'ns/b', request: [1000, 0] }, 'n64', 0);
    const reply = answer(
      service.filterReply(byNames(makePod('p').req({ cpu: '20', memory: '8Gi' }), ['n16', 'n64']), context().ctx),
    );
    expect(reply.nodeNames).toEqual([]);
    expect([...reply.failedNodes]).toEqual([['n64', '1 sandboxes starting, limit 1']]);
    expect([...reply.failedAndUnresolvableNodes]).toEqual([
      ['n16', "1 sandboxes starting, limit 1; cpu request 20000m exceeds the node's allocatable 16000m"],
    ]);
    expect(reply.startingLimitHeld).toBe(true);
    expect(reply.counted).toBe('no_fit');
  });

  it('not held by the limit when every node at it fails for capacity too', () => {
    const { cache, service } = cluster({ cpus: [16], cache: { startingLimit: { perNode: 1 } } });
    cache.assume({ uid: 'a', key: 'ns/a', request: [1000, 0] }, 'n16', 0);
    const reply = answer(
      service.filterReply(byNames(makePod('p').req({ cpu: '20', memory: '8Gi' }), ['n16']), context().ctx),
    );
    expect(reply.failedAndUnresolvableNodes.size).toBe(1);
    expect(reply.startingLimitHeld).toBe(false);
  });
});

describe('PlacementService.filterReply: Node objects (nodeCacheCapable: false)', () => {
  it('echoes the very objects of the nodes that fit, each name once; an unreadable object goes to FailedNodes', () => {
    const { cache, service } = cluster();
    const n16 = makeNode('n16', { cpu: '16', memory: '64Gi' });
    const n64 = makeNode('n64', { cpu: '64', memory: '256Gi' });
    const fresh = makeNode('fresh', { cpu: '32', memory: '128Gi' }); // not in the cache: its object's allocatable counts
    const bad = makeNode('bad', { cpu: '2x', memory: '8Gi' });
    const reply = answer(
      service.filterReply(
        byObjects(makePod('p').req({ cpu: '20', memory: '8Gi' }), [
          n16,
          n64,
          makeNode('n64', { cpu: '1' }),
          bad,
          fresh,
        ]),
        context().ctx,
      ),
    );
    expect(reply.nodeNames).toBeNull();
    expect(reply.nodes).toHaveLength(2);
    expect(reply.nodes![0]).toBe(n64);
    expect(reply.nodes![1]).toBe(fresh);
    expect([...reply.failedAndUnresolvableNodes.keys()]).toEqual(['n16']);
    expect([...reply.failedNodes.keys()]).toEqual(['bad']);
    expect(reply.failedNodes.get('bad')).toMatch(/^invalid Node object: .*invalid quantity "2x"/);
    expect(reply.duplicates).toBe(1);
    expect(reply.reservation).toBeNull();
    expect(reply.decided).toMatchObject({ candidates: 3, feasible: 2 });
    expect(cache.size.reservations).toBe(0);
  });

  it('a single object that fits is echoed and reserved', () => {
    const { cache, service } = cluster();
    const n64 = makeNode('n64', { cpu: '64', memory: '256Gi' });
    const reply = answer(
      service.filterReply(
        byObjects(makePod('p').req({ cpu: '20', memory: '8Gi' }), [
          makeNode('n16', { cpu: '16', memory: '64Gi' }),
          n64,
        ]),
        context(9).ctx,
      ),
    );
    expect(reply.nodes).toEqual([n64]);
    expect(reply.nodes![0]).toBe(n64);
    expect(reply.reservation).toEqual({ uid: 'uid-p', nodeName: 'n64', atMs: 9 });
    expect(cache.reservation('uid-p')?.nodeName).toBe('n64');
  });
});

describe('PlacementService.filterReply: pods of another scheduler, not ready, unreadable', () => {
  it('passes another scheduler’s pod through: every node once, in order, nothing read, reported or reserved (ready or not)', () => {
    const { cache, service } = cluster();
    const { ctx, calls } = context(5, 'the initial sync is incomplete');
    const pod = makePod('other').scheduler('default-scheduler').req({ cpu: '1000' });
    const reply = answer(service.filterReply(byNames(pod, ['n16', 'n64', 'n16', 'ghost']), ctx));
    expect(reply.nodeNames).toEqual(['n16', 'n64', 'ghost']);
    expect(reply.duplicates).toBe(1);
    expect(reply.failedNodes.size + reply.failedAndUnresolvableNodes.size).toBe(0);
    expect(reply).toMatchObject({ counted: 'passthrough', reservation: null, decided: null, startingLimitHeld: false });
    expect(calls.notReady).toBe(0);
    expect(cache.size.reservations).toBe(0);

    const items = [makeNode('n16', { cpu: '16' }), makeNode('bad', { cpu: '2x' })];
    const objects = answer(service.filterReply(byObjects(pod, items), ctx));
    expect(objects.nodeNames).toBeNull();
    expect(objects.nodes).toBe(items); // echoed as given, no copy
    expect(objects.duplicates).toBe(0);
  });

  it('not ready: refuses the extender’s own pod before reading it, without reading the clock', () => {
    const { cache, service } = cluster();
    const { ctx, calls } = context(5, 'the initial sync is incomplete');
    expect(service.filterReply(byNames(makePod('p').req({ cpu: '2x' }), ['n16']), ctx)).toEqual({
      kind: 'not_ready',
      reason: 'the initial sync is incomplete',
    });
    expect(calls).toEqual({ now: 0, notReady: 1 });
    expect(cache.size.reservations).toBe(0);
  });

  it('a pod that cannot be read is refused with why, nothing decided', () => {
    const { cache, service } = cluster();
    const reply = service.filterReply(byNames(makePod('p').req({ cpu: '2x' }), ['n16']), context().ctx);
    expect(reply.kind).toBe('unreadable');
    expect(reply.kind === 'unreadable' && reply.message).toMatch(
      /^spec\.containers\[0\]\.resources\.requests\.cpu: invalid quantity "2x"/,
    );
    expect(cache.size.reservations).toBe(0);
  });
});

describe('PlacementService.prioritizeReply', () => {
  it('scores each candidate (the pick 10, reserved), an unreadable Node object last with 0', () => {
    const { cache, service } = cluster();
    const items = [
      makeNode('n16', { cpu: '16', memory: '64Gi' }),
      makeNode('bad', { cpu: '2x' }),
      makeNode('n64', { cpu: '64', memory: '256Gi' }),
      makeNode('n192', { cpu: '192', memory: '768Gi' }),
    ];
    const reply = prioritized(
      service.prioritizeReply(byObjects(makePod('p').req({ cpu: '2', memory: '4Gi' }), items), context(4).ctx),
    );
    expect(reply.hosts).toEqual(['n16', 'n64', 'n192', 'bad']);
    // projected cpu: n16 2/16 → floor(9 × 0.875) = 7; n64 2/64 → 8; n192 the pick, 10 (as PlacementService.score).
    expect(reply.scores).toEqual([7, 8, 10]);
    expect(reply.reservation).toEqual({ uid: 'uid-p', nodeName: 'n192', atMs: 4 });
    expect(cache.reservation('uid-p')?.nodeName).toBe('n192');
    expect(reply.counted).toBe('placed');
    expect(reply.decided?.explanation).toMatchObject({
      result: 'placed',
      chosen: { name: 'n192' },
      runnerUp: { name: 'n64' },
    });
  });

  it('nothing fits: every score 0, counted no_fit, no Event', () => {
    const { service } = cluster();
    const reply = prioritized(
      service.prioritizeReply(byNames(makePod('p').req({ cpu: '500' }), ['n16', 'n64']), context().ctx),
    );
    expect(reply.hosts).toEqual(['n16', 'n64']);
    expect(reply.scores).toEqual([0, 0]);
    expect(reply).toMatchObject({ counted: 'no_fit', reservation: null });
    expect(reply.decided?.explanation).toBeNull();
  });

  it('another scheduler’s pod: every node once with 0, not counted (Filter counted it)', () => {
    const { service } = cluster();
    const reply = prioritized(
      service.prioritizeReply(
        byNames(makePod('o').scheduler('default-scheduler'), ['n64', 'n16', 'n64']),
        context().ctx,
      ),
    );
    expect(reply.hosts).toEqual(['n64', 'n16']);
    expect(reply.scores).toEqual([]);
    expect(reply).toMatchObject({ counted: null, duplicates: 1, reservation: null, decided: null });
  });
});
