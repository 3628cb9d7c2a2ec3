import { evaluateCandidate } from '../../../src/core/fit/evaluation.js';
import type { NodeInfo, OwnReservation } from '../../../src/core/cache/nodeInfo.js';
import { Placer } from '../../../src/core/fit/placer.js';
import { formatFailure, isUnresolvable } from '../../../src/core/fit/reasons.js';
import type { Dimensions } from '../../../src/core/objects/records.js';
import { CandidateScan, DOES_NOT_FIT, FITS, FITS_CAPACITY_UNKNOWN, NOT_IN_CACHE } from '../../../src/core/fit/scan.js';
import { STRATEGIES, STRATEGY_TABLE, type Strategy } from '../../../src/core/fit/strategies/index.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const Gi = 1024 ** 3;

interface InfoSpec {
  name: string;
  allocatable: readonly number[] | null;
  hasNode?: boolean;
  allocated?: readonly number[];
  paused?: readonly number[];
  reserved?: readonly number[];
  reservedCount?: number;
  starting?: number;
  running?: number;
  pausedCount?: number;
}

let nextId = 0;
function info(s: InfoSpec): NodeInfo {
  const zero = s.allocatable?.map(() => 0) ?? [0, 0];
  return {
    name: s.name,
    id: nextId++,
    hasNode: s.hasNode ?? true,
    allocatable: s.allocatable,
    allocated: s.allocated ?? zero,
    paused: s.paused ?? zero,
    reserved: s.reserved ?? zero,
    starting: s.starting ?? 0,
    running: s.running ?? 0,
    pausedCount: s.pausedCount ?? 0,
    reservedCount: s.reservedCount ?? 0,
    warmPoolSandboxes: 0,
    claimedSandboxes: 0,
    standaloneSandboxes: 0,
  };
}

const POD: [number, number] = [2000, 4 * Gi];
const evaluate = (s: InfoSpec, request: readonly number[] = POD, own?: OwnReservation, dims = DIMS) =>
  evaluateCandidate(s.name, info(s), undefined, request, own, dims);

describe('evaluateCandidate: projected pressure and the capacity filter', () => {
  it.each<{ name: string; node: InfoSpec; projected: [number, number]; pressure: number; fits: boolean }>([
    {
      name: 'empty 16-CPU node',
      node: { name: 'n', allocatable: [16000, 64 * Gi] },
      projected: [2000 / 16000, (4 * Gi) / (64 * Gi)], // cpu 2/16 = 0.125; memory 4/64 = 0.0625
      pressure: 0.125,
      fits: true,
    },
    {
      name: 'allocated, paused and reserved all count',
      // cpu: (8000 + 2000 + 2000 + 2000) / 16000 = 0.875; memory: (8 + 4 + 4 + 4) / 64 = 0.3125
      node: {
        name: 'n',
        allocatable: [16000, 64 * Gi],
        allocated: [8000, 8 * Gi],
        paused: [2000, 4 * Gi],
        reserved: [2000, 4 * Gi],
        reservedCount: 1,
      },
      projected: [0.875, 0.3125],
      pressure: 0.875,
      fits: true,
    },
    {
      name: 'memory-bound node: the max dimension wins',
      // cpu: 2000/64000 = 0.03125; memory: (28 + 4) / 32 = 1.0 → fits exactly (not above allocatable)
      node: { name: 'n', allocatable: [64000, 32 * Gi], allocated: [0, 28 * Gi] },
      projected: [0.03125, 1],
      pressure: 1,
      fits: true,
    },
    {
      name: 'one millicore over allocatable does not fit',
      // cpu: (14001 + 2000) / 16000 = 1.0000625 > 1
      node: { name: 'n', allocatable: [16000, 64 * Gi], allocated: [14001, 0] },
      projected: [16001 / 16000, 4 / 64],
      pressure: 16001 / 16000,
      fits: false,
    },
  ])('$name', ({ node, projected, pressure, fits }) => {
    const e = evaluate(node);
    expect(e.projected).toEqual(projected);
    expect(e.pressure).toBe(pressure);
    expect(e.failures.length === 0).toBe(fits);
  });

  it('an insufficient dimension is reported with every number that decided it', () => {
    // in use 12000 + 1000 + 1500 = 14500m; + 2000m = 16500m > 16000m
    const e = evaluate({
      name: 'n',
      allocatable: [16000, 64 * Gi],
      allocated: [12000, 0],
      paused: [1000, 0],
      reserved: [1500, 0],
      reservedCount: 1,
    });
    expect(e.failures).toEqual([
      {
        code: 'InsufficientResource',
        resource: 'cpu',
        requested: 2000,
        allocated: 12000,
        paused: 1000,
        reserved: 1500,
        allocatable: 16000,
      },
    ]);
    expect(e.inUse).toEqual([14500, 0]);
    expect(formatFailure(e.failures[0]!)).toBe(
      'Insufficient cpu: requested 2000m + in use 14500m (allocated 12000m, paused 1000m, reserved 1500m) > allocatable 16000m',
    );
    expect(isUnresolvable(e.failures[0]!)).toBe(false);
  });

  it('a request above the total allocatable is unresolvable', () => {
    const e = evaluate({ name: 'n', allocatable: [16000, 64 * Gi] }, [32000, 4 * Gi]);
    expect(e.failures).toEqual([
      { code: 'RequestExceedsAllocatable', resource: 'cpu', requested: 32000, allocatable: 16000 },
    ]);
    expect(isUnresolvable(e.failures[0]!)).toBe(true);
    expect(formatFailure(e.failures[0]!)).toBe("cpu request 32000m exceeds the node's allocatable 16000m");
  });

  it('dimensions the pod does not request are not checked, even on an over-committed node', () => {
    // memory already 70Gi of 64Gi (over-committed by other pods); a cpu-only pod still fits.
    const e = evaluate({ name: 'n', allocatable: [16000, 64 * Gi], allocated: [0, 70 * Gi] }, [1000, 0]);
    expect(e.failures).toEqual([]);
    expect(e.pressure).toBe(70 / 64);
  });

  it('a dimension the node has none of is skipped in pressure and unresolvable if requested', () => {
    const dims = { names: ['cpu', 'nvidia.com/gpu'] };
    const node: InfoSpec = { name: 'cpu-only', allocatable: [16000, 0], allocated: [4000, 0], running: 2 };
    const noGpu = evaluate(node, [2000, 0], undefined, dims);
    expect(noGpu.projected[1]).toBeNaN();
    expect(noGpu.pressure).toBe(6000 / 16000); // (4000 + 2000) / 16000 = 0.375
    expect(evaluate(node, [2000, 1], undefined, dims).failures[0]).toMatchObject({
      code: 'RequestExceedsAllocatable',
      resource: 'nvidia.com/gpu',
      allocatable: 0,
    });
  });

  it('unknown capacity passes the filter, has no pressure, and counts reservations as starting', () => {
    const e = evaluate({ name: 'u', allocatable: null, starting: 1, reservedCount: 2, running: 3 });
    expect(e).toMatchObject({ capacityKnown: false, failures: [], starting: 3, running: 3 });
    expect(e.pressure).toBeNaN();
  });

  it('a name the cache knows only through pods (no Node object) is not guessed at', () => {
    const e = evaluate({ name: 'ghost', allocatable: null, hasNode: false, allocated: [1000, 0], running: 1 });
    expect(e.failures).toEqual([{ code: 'NodeNotInSnapshot', node: 'ghost' }]);
    expect(evaluateCandidate('nowhere', undefined, undefined, POD, undefined, DIMS).failures).toEqual([
      { code: 'NodeNotInSnapshot', node: 'nowhere' },
    ]);
  });

  it('a Node object in the request supplies the allocatable (null: capacity unknown)', () => {
    expect(evaluateCandidate('obj', undefined, [4000, 8 * Gi], POD, undefined, DIMS)).toMatchObject({
      capacityKnown: true,
      pressure: 0.5,
      failures: [],
    });
    expect(evaluateCandidate('obj', undefined, null, POD, undefined, DIMS)).toMatchObject({
      capacityKnown: false,
      failures: [],
    });
  });

  it('the pod’s own reservation is left out of its node only', () => {
    const own: OwnReservation = { nodeName: 'n', request: POD };
    // n holds 2 reservations of 2000m, one of them the pod's own: (2000 + 2000) / 16000 = 0.25, 1 other starting.
    const onOwnNode = evaluate(
      { name: 'n', allocatable: [16000, 64 * Gi], reserved: [4000, 8 * Gi], reservedCount: 2 },
      POD,
      own,
    );
    expect(onOwnNode).toMatchObject({ pressure: 0.25, starting: 1, inUse: [2000, 4 * Gi] });
    const elsewhere = evaluate(
      { name: 'm', allocatable: [16000, 64 * Gi], reserved: [4000, 8 * Gi], reservedCount: 2 },
      POD,
      own,
    );
    expect(elsewhere).toMatchObject({ pressure: 0.375, starting: 2 });
  });
});

/** A scan over `specs` (looked up by name), for a pod of `request`. */
function scanOf(specs: readonly InfoSpec[], request: readonly number[] = POD): CandidateScan {
  const infos = new Map(specs.map((s) => [s.name, info(s)]));
  return new CandidateScan((name) => infos.get(name), DIMS).run(
    request,
    specs.map((s) => s.name),
  );
}

const node = (name: string, allocatedCpu: number, more: Partial<InfoSpec> = {}): InfoSpec => ({
  name,
  allocatable: [16000, 64 * Gi],
  allocated: [allocatedCpu, 0],
  ...more,
});
const full = (name: string): InfoSpec => node(name, 15000);

describe('CandidateScan', () => {
  it('classifies each candidate and computes the same pressure as evaluateCandidate', () => {
    const specs = [
      node('a', 4000),
      full('b'),
      { name: 'c', allocatable: null },
      { name: 'd', allocatable: null, hasNode: false },
      node('e', 0, { reserved: [2000, 0], reservedCount: 1, starting: 2, running: 3, pausedCount: 4 }),
    ];
    const scan = scanOf(specs);
    expect(Array.from(scan.status.subarray(0, 5))).toEqual([
      FITS,
      DOES_NOT_FIT,
      FITS_CAPACITY_UNKNOWN,
      NOT_IN_CACHE,
      FITS,
    ]);
    expect(scan.feasible).toBe(3);
    for (let i = 0; i < 5; i++) {
      const e = scan.evaluation(i);
      if (e.capacityKnown) expect(scan.pressure[i]).toBe(e.pressure);
      else expect(scan.pressure[i]).toBeNaN();
      expect([scan.starting[i], scan.running[i], scan.paused[i]]).toEqual([e.starting, e.running, e.paused]);
      expect(scan.fits(i)).toBe(e.failures.length === 0);
    }
    expect([scan.starting[4], scan.running[4], scan.paused[4]]).toEqual([3, 3, 4]); // 2 starting + 1 reservation
  });

  it('is reused: a second run with fewer candidates reads only its own', () => {
    const infos = new Map([node('a', 0), full('b')].map((s) => [s.name, info(s)]));
    const scan = new CandidateScan((name) => infos.get(name), DIMS);
    scan.run(POD, ['a', 'b']);
    scan.run(POD, ['b']);
    expect({ count: scan.count, feasible: scan.feasible, fits: scan.fits(0) }).toEqual({
      count: 1,
      feasible: 0,
      fits: false,
    });
  });

  it('grows past its initial size', () => {
    const specs = Array.from({ length: 100 }, (_, i) => node(`n${i}`, i * 100));
    const scan = scanOf(specs);
    expect(scan.feasible).toBe(100);
    expect(scan.pressure[99]).toBe((9900 + 2000) / 16000);
  });
});

describe('candidate order (least_loaded)', () => {
  const choice = (specs: InfoSpec[]) => specs[new Placer('least_loaded', () => 0).choose(scanOf(specs)).chosen]!.name;
  it.each<[string, InfoSpec, InfoSpec]>([
    ['known capacity before unknown', node('a', 13000), { name: 'b', allocatable: null }],
    ['lower projected pressure first', node('a', 2000), node('b', 6000)],
    ['equal pressure: fewer starting first', node('a', 4000, { running: 9 }), node('b', 4000, { starting: 1 })],
    [
      'equal pressure and starting: fewer running first',
      node('a', 4000, { running: 1, pausedCount: 9 }),
      node('b', 4000, { running: 2 }),
    ],
    ['equal up to running: fewer paused first', node('a', 4000), node('b', 4000, { pausedCount: 1 })],
  ])('%s', (_name, first, second) => {
    expect(choice([first, second])).toBe('a');
    expect(choice([second, first])).toBe('a');
  });
});

describe('Placer strategies', () => {
  const never = () => {
    throw new Error('random must not be called');
  };

  it('least_loaded picks the lowest pressure among nodes that fit; the runner-up is the next best', () => {
    const scan = scanOf([node('a', 6000), full('b'), node('c', 2000), node('d', 4000)]);
    expect(new Placer('least_loaded', never).choose(scan)).toEqual({ chosen: 2, runnerUp: 3 });
  });

  it('least_loaded takes exact equals in turn; the runner-up is another of them', () => {
    const placer = new Placer('least_loaded', never);
    const scan = scanOf([node('a', 6000), node('b', 6000), node('c', 6000), node('d', 12000)]);
    const picks = [0, 1, 2, 3].map(() => placer.choose(scan));
    expect(picks).toEqual([
      { chosen: 0, runnerUp: 1 },
      { chosen: 1, runnerUp: 0 },
      { chosen: 2, runnerUp: 0 },
      { chosen: 0, runnerUp: 1 },
    ]);
  });

  it('the runner-up of a unique best is the best of the rest, the first in input order among equals', () => {
    const scan = scanOf([node('x', 8000), node('y', 6000), node('best', 0), node('z', 6000)]);
    expect(new Placer('least_loaded', never).choose(scan)).toEqual({ chosen: 2, runnerUp: 1 });
  });

  it('most_loaded packs onto the highest pressure that still fits', () => {
    const scan = scanOf([node('a', 6000), node('b', 12000), full('c')]);
    expect(new Placer('most_loaded', never).choose(scan)).toEqual({ chosen: 1, runnerUp: 0 });
  });

  it('round_robin cycles through feasible nodes by name whatever the input order, skipping those that do not fit', () => {
    const placer = new Placer('round_robin', never);
    const picks: string[] = [];
    for (let i = 0; i < 5; i++) {
      const specs =
        i % 2 === 0
          ? [node('c', 12000), node('a', 1000), full('b')]
          : [node('a', 1000), node('b', 6000), node('c', 12000)];
      picks.push(specs[placer.choose(scanOf(specs)).chosen]!.name);
    }
    // i=0 {a,c}: a; i=1 {a,b,c}: b; i=2 {a,c}: c; i=3 {a,b,c}: wraps to a; i=4 {a,c}: c
    expect(picks).toEqual(['a', 'b', 'c', 'a', 'c']);
  });

  it('round_robin names the following node as runner-up', () => {
    const specs = [node('c', 0), node('a', 0), node('b', 0)];
    const placer = new Placer('round_robin', never);
    const first = placer.choose(scanOf(specs));
    expect([specs[first.chosen]!.name, specs[first.runnerUp]!.name]).toEqual(['a', 'b']);
  });

  it('random draws uniformly from the feasible nodes with the injected source', () => {
    const draws = [0, 0.49, 0.5, 0.999];
    const placer = new Placer('random', () => draws.shift()!);
    const specs = [node('a', 1000), full('x'), node('b', 12000)];
    // feasible = [a, b]: floor(0×2)=0 → a, floor(0.49×2)=0 → a, floor(0.5×2)=1 → b, floor(0.999×2)=1 → b
    expect([1, 2, 3, 4].map(() => specs[placer.choose(scanOf(specs)).chosen]!.name)).toEqual(['a', 'a', 'b', 'b']);
  });

  it.each<Strategy>(STRATEGIES)('%s chooses nothing when no node fits', (strategy) => {
    expect(new Placer(strategy, () => 0).choose(scanOf([full('a')]))).toEqual({ chosen: -1, runnerUp: -1 });
  });

  it('the strategy table holds every strategy, least_loaded first', () => {
    expect(STRATEGIES).toEqual(['least_loaded', 'most_loaded', 'round_robin', 'random']);
    for (const s of STRATEGIES) expect(typeof STRATEGY_TABLE[s].choose).toBe('function');
  });
});

describe('prioritize scores', () => {
  it('least_loaded: the pick gets 10, others floor(9 × (1 − pressure)), misfits and unknown 0', () => {
    // pressures: a (2000 + 2000)/16000 = 0.25, b 0.5, c 0.125 (chosen), d unknown, e does not fit
    const scan = scanOf([node('a', 2000), node('b', 6000), node('c', 0), { name: 'd', allocatable: null }, full('e')]);
    const placer = new Placer('least_loaded', () => 0);
    const { chosen } = placer.choose(scan);
    expect(chosen).toBe(2);
    // a: floor(9 × 0.75) = 6; b: floor(9 × 0.5) = 4
    expect([0, 1, 2, 3, 4].map((i) => placer.score(scan, i, chosen))).toEqual([6, 4, 10, 0, 0]);
  });

  it('a node as empty as the pick still scores at most 9', () => {
    const scan = scanOf(
      [
        { name: 'a', allocatable: [16000, 64 * Gi] },
        { name: 'b', allocatable: [16000, 64 * Gi] },
      ],
      [0, 0],
    );
    const placer = new Placer('least_loaded', () => 0);
    expect([0, 1].map((i) => placer.score(scan, i, 1))).toEqual([9, 10]);
  });

  it('most_loaded: floor(9 × pressure); round_robin and random: 0 for all but the pick', () => {
    // a: (6000 + 2000)/16000 = 0.5; b: (13840 + 2000)/16000 = 0.99
    const scan = scanOf([node('a', 6000), node('b', 13840)]);
    const score = (strategy: Strategy, chosen: number) =>
      [0, 1].map((i) => new Placer(strategy, () => 0).score(scan, i, chosen));
    expect(score('most_loaded', 0)).toEqual([10, 8]);
    expect(score('round_robin', 0)).toEqual([10, 0]);
    expect(score('random', 1)).toEqual([0, 10]);
  });

  it.each<Strategy>(['least_loaded', 'most_loaded'])(
    '%s: the score follows the choice — no node scores above one the strategy prefers',
    (strategy) => {
      // Many candidates of varied load: whatever the strategy chooses among the rest, its score is ≥ every later one.
      const specs = Array.from({ length: 40 }, (_, i) => node(`n${i}`, ((i * 7919) % 29) * 500, { starting: i % 3 }));
      const placer = new Placer(strategy, () => 0);
      const scan = scanOf(specs);
      const chosen = placer.choose(scan).chosen;
      const scores = specs.map((_, i) => placer.score(scan, i, chosen));
      const picked: number[] = [];
      const remaining = new Set(specs.map((_, i) => i));
      while (remaining.size > 0) {
        const names = [...remaining].map((i) => specs[i]!.name);
        const sub = scanOf([...remaining].map((i) => specs[i]!));
        const c = new Placer(strategy, () => 0).choose(sub).chosen;
        const index = specs.findIndex((s) => s.name === names[c]);
        picked.push(scores[index]!);
        remaining.delete(index);
      }
      expect(picked[0]).toBe(10);
      for (let k = 1; k < picked.length; k++) expect(picked[k]).toBeLessThanOrEqual(picked[k - 1]!);
    },
  );
});
