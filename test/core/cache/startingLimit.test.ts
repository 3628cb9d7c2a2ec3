/**
 * The starting limit (src/core/cache/startingLimit.ts): the per-node arithmetic, the limit the cache keeps on each
 * NodeInfo, and the fit rule — reservations and bound-not-Ready pods count as starting, the pod's own
 * reservation does not, a node at its limit fails with a resolvable reason, and the slot frees when a pod is Ready.
 */
import { evaluateCandidate } from '../../../src/core/fit/evaluation.js';
import { explainNoFit } from '../../../src/core/text/explain.js';
import { Placer } from '../../../src/core/fit/placer.js';
import { PlacementService } from '../../../src/core/decide/placementService.js';
import { formatFailure, isUnresolvable, onlyStartingLimit, type FitFailure } from '../../../src/core/fit/reasons.js';
import { toNodeRecord, toPodRecord, type Dimensions, type PodRecord } from '../../../src/core/objects/records.js';
import { CandidateScan, DOES_NOT_FIT, FITS, FITS_CAPACITY_UNKNOWN } from '../../../src/core/fit/scan.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import {
  checkStartingLimit,
  hasAtMostThreeDecimals,
  startingLimitOf,
  type StartingLimitConfig,
} from '../../../src/core/cache/startingLimit.js';
import { makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const PAUSED = 'sandbox-extender.io/paused';
const Gi = 1024 ** 3;

describe('startingLimitOf: one node’s limit', () => {
  it.each<[string, StartingLimitConfig, number | null, number]>([
    ['off', {}, 32_000, Infinity],
    ['perNode alone, whatever the cores', { perNode: 4 }, 32_000, 4],
    ['perNode alone on a node of unknown capacity', { perNode: 4 }, null, 4],
    ['perCore 0.125 × 32 cores', { perCore: 0.125 }, 32_000, 4],
    ['perCore 0.125 × 16 cores', { perCore: 0.125 }, 16_000, 2],
    ['perCore 0.125 × 4 cores = 0.5: at least 1', { perCore: 0.125 }, 4_000, 1],
    ['perCore 1.5 × 3.92 cores = 5.88: floor 5', { perCore: 1.5 }, 3_920, 5],
    ['perCore 0.5 × 3.92 cores = 1.96: floor 1', { perCore: 0.5 }, 3_920, 1],
    // 0.29 * 100 is 28.999999999999996 in floating point; the limit is taken in integers.
    ['perCore 0.29 × 100 cores is exactly 29', { perCore: 0.29 }, 100_000, 29],
    ['perCore 0.001 × 1 core: at least 1', { perCore: 0.001 }, 1_000, 1],
    ['perCore on a node of unknown capacity: no limit', { perCore: 0.125 }, null, Infinity],
    ['perCore on a node without cpu allocatable: no limit', { perCore: 0.125 }, 0, Infinity],
    ['both: perCore the smaller (16 cores → 2 < 6)', { perNode: 6, perCore: 0.125 }, 16_000, 2],
    ['both: perNode the smaller (192 cores → 24 > 6)', { perNode: 6, perCore: 0.125 }, 192_000, 6],
    ['both on a node of unknown capacity: perNode', { perNode: 6, perCore: 0.125 }, null, 6],
  ])('%s', (_name, config, milliCpu, limit) => {
    expect(startingLimitOf(config, milliCpu)).toBe(limit);
  });

  it('perCore keeps exact integers at the largest allocatable (2^53 − 1 millicores)', () => {
    // floor(2 × (2^53 − 1) / 1000): BigInt arithmetic, no rounding of the product.
    expect(startingLimitOf({ perCore: 2 }, Number.MAX_SAFE_INTEGER)).toBe(
      Number((2n * BigInt(Number.MAX_SAFE_INTEGER)) / 1000n),
    );
  });

  it.each<[StartingLimitConfig, string]>([
    [{ perNode: 0 }, 'startingLimit.perNode must be an integer ≥ 1, got 0'],
    [{ perNode: 1.5 }, 'startingLimit.perNode must be an integer ≥ 1, got 1.5'],
    [{ perCore: 0 }, 'startingLimit.perCore must be a number > 0 with at most three decimals, got 0'],
    [{ perCore: 0.0625 }, 'startingLimit.perCore must be a number > 0 with at most three decimals, got 0.0625'],
    [{ perCore: Infinity }, 'startingLimit.perCore must be a number > 0 with at most three decimals, got Infinity'],
  ])('checkStartingLimit(%j) throws', (config, message) => {
    expect(() => checkStartingLimit(config)).toThrow(new RangeError(message));
    expect(() => new SchedulerCache(DIMS, { ttlMs: 1000, startingLimit: config })).toThrow(new RangeError(message));
  });

  it('at most three decimals, as written', () => {
    expect([0.125, 0.29, 1, 2.5, 0.001, 1000.999].map(hasAtMostThreeDecimals)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect([0.0625, 0.0001, 1 / 3].map(hasAtMostThreeDecimals)).toEqual([false, false, false]);
  });
});

describe('the limit on each NodeInfo (set by the cache on upsertNode)', () => {
  const cache = (startingLimit: StartingLimitConfig, dims: Dimensions = DIMS) =>
    new SchedulerCache(dims, { ttlMs: 600_000, startingLimit });

  it('follows the node’s allocatable cpu, and its updates', () => {
    const c = cache({ perNode: 6, perCore: 0.125 });
    c.upsertNode(toNodeRecord(makeNode('n16', { cpu: '16', memory: '64Gi' }), DIMS));
    c.upsertNode(toNodeRecord(makeNode('n192', { cpu: '192', memory: '768Gi' }), DIMS));
    c.upsertNode(toNodeRecord(makeNode('unknown', null), DIMS));
    expect(['n16', 'n192', 'unknown'].map((n) => c.nodeInfo(n)!.startingLimit)).toEqual([2, 6, 6]);
    c.upsertNode(toNodeRecord(makeNode('n16', { cpu: '40', memory: '64Gi' }), DIMS)); // resized: 0.125 × 40 = 5
    expect(c.nodeInfo('n16')!.startingLimit).toBe(5);
  });

  it('off: no limit on any node', () => {
    const c = cache({});
    c.upsertNode(toNodeRecord(makeNode('n', { cpu: '16', memory: '64Gi' }), DIMS));
    expect(c.nodeInfo('n')!.startingLimit).toBe(Infinity);
  });

  it('a node known only by its pods, and a deleted node, have the limit of unknown capacity', () => {
    const c = cache({ perNode: 3, perCore: 0.5 });
    c.upsertPod(
      toPodRecord(makePod('p').req({ cpu: '1' }).node('ghost', { ready: false }).obj(), DIMS, { pausedLabel: PAUSED }),
    );
    expect(c.nodeInfo('ghost')!.startingLimit).toBe(3);
    c.upsertNode(toNodeRecord(makeNode('ghost', { cpu: '2', memory: '8Gi' }), DIMS));
    expect(c.nodeInfo('ghost')!.startingLimit).toBe(1); // max(1, floor(0.5 × 2)) = 1 < 3
    c.deleteNode('ghost');
    expect(c.nodeInfo('ghost')!.startingLimit).toBe(3);
  });

  it('without cpu among the dimensions, perCore cannot apply (the config refuses it; the cache ignores it)', () => {
    const dims = { names: ['memory'] };
    const c = cache({ perCore: 0.5 }, dims);
    c.upsertNode(toNodeRecord(makeNode('n', { cpu: '16', memory: '64Gi' }), dims));
    expect(c.nodeInfo('n')!.startingLimit).toBe(Infinity);
  });
});

describe('the fit rule: starting = bound and not Ready + reservations, the pod’s own left out', () => {
  const POD = [1000, 1 * Gi];
  let c: SchedulerCache;
  beforeEach(() => {
    c = new SchedulerCache(DIMS, { ttlMs: 600_000, startingLimit: { perNode: 2 } });
    c.upsertNode(toNodeRecord(makeNode('n', { cpu: '16', memory: '64Gi' }), DIMS));
  });
  /** The pod `new` evaluated on n, its own reservation (if any) left out; `evaluateWithout` as if it held none. */
  const evaluate = () => evaluateCandidate('n', c.nodeInfo('n'), undefined, POD, c.reservation('new'), DIMS);
  const evaluateWithout = () => evaluateCandidate('n', c.nodeInfo('n'), undefined, POD, undefined, DIMS);
  const scanStatus = () =>
    new CandidateScan((name) => c.nodeInfo(name), DIMS).run(POD, ['n'], { own: c.reservation('new') }).status[0];
  const bound = (name: string, ready: boolean) =>
    c.upsertPod(
      toPodRecord(makePod(name).req({ cpu: '1', memory: '1Gi' }).node('n', { ready }).obj(), DIMS, {
        pausedLabel: PAUSED,
      }),
    );

  it('two reservations reach the limit of 2: the third pod fails with StartingLimit (resolvable)', () => {
    c.assume({ uid: 'a', key: 'ns/a', request: POD }, 'n', 0);
    expect(evaluate().failures).toEqual([]);
    expect(scanStatus()).toBe(FITS);
    c.assume({ uid: 'b', key: 'ns/b', request: POD }, 'n', 0);
    const failures = evaluate().failures;
    expect(failures).toEqual([{ code: 'StartingLimit', starting: 2, limit: 2 }]);
    expect(failures.map(formatFailure)).toEqual(['2 sandboxes starting, limit 2']);
    expect(failures.some(isUnresolvable)).toBe(false);
    expect(onlyStartingLimit(failures)).toBe(true);
    expect(scanStatus()).toBe(DOES_NOT_FIT);
  });

  it('a bound pod not yet Ready counts like a reservation; once Ready it frees its slot', () => {
    bound('a', false);
    c.assume({ uid: 'b', key: 'ns/b', request: POD }, 'n', 0);
    expect(evaluate().failures).toEqual([{ code: 'StartingLimit', starting: 2, limit: 2 }]);
    bound('a', true); // Ready: running, no longer starting
    expect(evaluate().failures).toEqual([]);
    expect(scanStatus()).toBe(FITS);
  });

  it('the reservation moves to the pod when it is seen bound: still one starting sandbox, never two', () => {
    c.assume({ uid: 'uid-a', key: 'sandboxes/a', request: POD }, 'n', 0);
    c.assume({ uid: 'b', key: 'ns/b', request: POD }, 'n', 0);
    bound('a', false); // releases a's reservation (bound) in the same update
    expect(c.nodeInfo('n')).toMatchObject({ starting: 1, reservedCount: 1 });
    expect(evaluate().failures).toEqual([{ code: 'StartingLimit', starting: 2, limit: 2 }]);
  });

  it('a retried pod never counts its own reservation against itself', () => {
    c.assume({ uid: 'a', key: 'ns/a', request: POD }, 'n', 0);
    c.assume({ uid: 'new', key: 'ns/new', request: POD }, 'n', 0);
    expect(evaluate().starting).toBe(1);
    expect(evaluate().failures).toEqual([]);
    expect(scanStatus()).toBe(FITS);
    expect(evaluateWithout().failures).toEqual([{ code: 'StartingLimit', starting: 2, limit: 2 }]);
  });

  it('paused and running sandboxes do not count', () => {
    c.upsertPod(
      toPodRecord(makePod('p').req({ cpu: '1' }).label(PAUSED, 'true').node('n', { ready: false }).obj(), DIMS, {
        pausedLabel: PAUSED,
      }),
    );
    bound('r1', true);
    bound('r2', true);
    expect(evaluate().failures).toEqual([]);
  });

  it('a node of unknown capacity at its limit fails too (and keeps no pressure)', () => {
    c.upsertNode(toNodeRecord(makeNode('n', null), DIMS));
    c.assume({ uid: 'a', key: 'ns/a', request: POD }, 'n', 0);
    expect(scanStatus()).toBe(FITS_CAPACITY_UNKNOWN);
    c.assume({ uid: 'b', key: 'ns/b', request: POD }, 'n', 0);
    const e = evaluate();
    expect([e.capacityKnown, e.failures]).toEqual([false, [{ code: 'StartingLimit', starting: 2, limit: 2 }]]);
    const scan = new CandidateScan((name) => c.nodeInfo(name), DIMS).run(POD, ['n']);
    expect([scan.status[0], scan.capacityKnown(0), scan.feasible]).toEqual([DOES_NOT_FIT, false, 0]);
  });

  it('a node over capacity and at its limit reports both failures (not only the limit)', () => {
    c.upsertNode(toNodeRecord(makeNode('n', { cpu: '2', memory: '64Gi' }), DIMS));
    c.assume({ uid: 'a', key: 'ns/a', request: POD }, 'n', 0);
    c.assume({ uid: 'b', key: 'ns/b', request: POD }, 'n', 0);
    const failures = evaluate().failures;
    expect(failures.map((f) => f.code)).toEqual(['StartingLimit', 'InsufficientResource']);
    expect(onlyStartingLimit(failures)).toBe(false);
  });
});

describe('Filter with the limit (one call per pod)', () => {
  const pod = (name: string): PodRecord =>
    toPodRecord(makePod(name).req({ cpu: '1', memory: '1Gi' }).obj(), DIMS, { pausedLabel: PAUSED });

  it('spreads a burst over the nodes with a free start slot, then places nowhere with the reasons; a Ready pod frees a slot', () => {
    const c = new SchedulerCache(DIMS, { ttlMs: 600_000, startingLimit: { perCore: 0.125 } });
    c.upsertNode(toNodeRecord(makeNode('n8', { cpu: '8', memory: '32Gi' }), DIMS)); // limit 1
    c.upsertNode(toNodeRecord(makeNode('n16', { cpu: '16', memory: '64Gi' }), DIMS)); // limit 2
    const service = new PlacementService(c, new Placer('least_loaded', () => 0), {
      schedulerName: 'sandbox-scheduler',
      chooseInFilter: true,
      recordOffers: false,
      offerTtlMs: 1000,
    });
    const names = ['n8', 'n16'];
    // p0: n16 (cpu 1/16 < 1/8); p1: an exact tie at cpu 0.125, fewer starting wins (n8); p2: n8 is at its limit of 1.
    const placed = ['p0', 'p1', 'p2'].map((p) => service.filter(pod(p), { names }, 0).reserved);
    expect(placed).toEqual(['n16', 'n8', 'n16']);
    const held = service.filter(pod('p3'), { names }, 0);
    expect(held.result).toBe('no_fit');
    const failed: [string, FitFailure[]][] = [
      ['n8', [{ code: 'StartingLimit', starting: 1, limit: 1 }]],
      ['n16', [{ code: 'StartingLimit', starting: 2, limit: 2 }]],
    ];
    expect(held.failed).toEqual(failed);
    expect(explainNoFit(2, held.failed)).toBe(
      '0/2 nodes fit projected capacity: 2 at the starting limit. e.g. n8: 1 sandboxes starting, limit 1',
    );
    // p0 is bound and becomes Ready on n16: its slot frees, and p3 goes there.
    c.upsertPod(
      toPodRecord(makePod('p0').req({ cpu: '1', memory: '1Gi' }).node('n16', { ready: true }).obj(), DIMS, {
        pausedLabel: PAUSED,
      }),
    );
    expect(service.filter(pod('p3'), { names }, 0).reserved).toBe('n16');
  });
});
