import type { NodeTotals } from '../../src/core/clusterModel.js';
import { compareCandidates, evaluate, Placer, scoreEvaluations, type Evaluation, type NodeView, type Strategy } from '../../src/core/placement.js';
import { formatFailure, isUnresolvable } from '../../src/core/reasons.js';
import type { Dimensions } from '../../src/core/records.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const Gi = 1024 ** 3;

interface ViewSpec {
  name: string;
  allocatable: [number, number] | null;
  allocated?: [number, number];
  paused?: [number, number];
  reserved?: [number, number];
  reservedCount?: number;
  starting?: number;
  running?: number;
  pausedCount?: number;
}

function view(s: ViewSpec): NodeView {
  const totals: NodeTotals = {
    allocated: s.allocated ?? [0, 0],
    paused: s.paused ?? [0, 0],
    starting: s.starting ?? 0,
    running: s.running ?? 0,
    pausedCount: s.pausedCount ?? 0,
  };
  return { name: s.name, allocatable: s.allocatable, totals, reserved: { request: s.reserved ?? [0, 0], count: s.reservedCount ?? 0 } };
}

const POD: [number, number] = [2000, 4 * Gi];

describe('evaluate: projected pressure and the capacity filter', () => {
  it.each<{ name: string; node: ViewSpec; request: [number, number]; projected: [number, number]; pressure: number; fits: boolean }>([
    {
      name: 'empty 16-CPU node',
      node: { name: 'n', allocatable: [16000, 64 * Gi] },
      request: POD,
      projected: [2000 / 16000, (4 * Gi) / (64 * Gi)], // cpu 2/16 = 0.125; memory 4/64 = 0.0625
      pressure: 0.125,
      fits: true,
    },
    {
      name: 'allocated, paused and reserved all count',
      // cpu: (8000 + 2000 + 2000 + 2000) / 16000 = 0.875; memory: (8 + 4 + 4 + 4) / 64 = 0.3125
      node: { name: 'n', allocatable: [16000, 64 * Gi], allocated: [8000, 8 * Gi], paused: [2000, 4 * Gi], reserved: [2000, 4 * Gi], reservedCount: 1 },
      request: POD,
      projected: [0.875, 0.3125],
      pressure: 0.875,
      fits: true,
    },
    {
      name: 'memory-bound node: the max dimension wins',
      // cpu: 2000/64000 = 0.03125; memory: (28 + 4) / 32 = 1.0 → fits exactly (not above allocatable)
      node: { name: 'n', allocatable: [64000, 32 * Gi], allocated: [0, 28 * Gi] },
      request: POD,
      projected: [0.03125, 1],
      pressure: 1,
      fits: true,
    },
    {
      name: 'one millicore over allocatable does not fit',
      // cpu: (14001 + 2000) / 16000 = 1.0000625 > 1
      node: { name: 'n', allocatable: [16000, 64 * Gi], allocated: [14001, 0] },
      request: POD,
      projected: [16001 / 16000, 4 / 64],
      pressure: 16001 / 16000,
      fits: false,
    },
  ])('$name', ({ node, request, projected, pressure, fits }) => {
    const e = evaluate(view(node), request, DIMS);
    expect(e.projected).toEqual(projected);
    expect(e.pressure).toBe(pressure);
    expect(e.failures.length === 0).toBe(fits);
  });

  it('an insufficient dimension is reported with every number that decided it', () => {
    // in use 12000 + 1000 + 1500 = 14500m; + 2000m = 16500m > 16000m
    const e = evaluate(view({ name: 'n', allocatable: [16000, 64 * Gi], allocated: [12000, 0], paused: [1000, 0], reserved: [1500, 0], reservedCount: 1 }), POD, DIMS);
    expect(e.failures).toEqual([{ code: 'InsufficientResource', resource: 'cpu', requested: 2000, allocated: 12000, paused: 1000, reserved: 1500, allocatable: 16000 }]);
    expect(formatFailure(e.failures[0]!)).toBe(
      'Insufficient cpu: requested 2000m + in use 14500m (allocated 12000m, paused 1000m, reserved 1500m) > allocatable 16000m',
    );
    expect(isUnresolvable(e.failures[0]!)).toBe(false);
  });

  it('a request above the total allocatable is unresolvable', () => {
    const e = evaluate(view({ name: 'n', allocatable: [16000, 64 * Gi] }), [32000, 4 * Gi], DIMS);
    expect(e.failures).toEqual([{ code: 'RequestExceedsAllocatable', resource: 'cpu', requested: 32000, allocatable: 16000 }]);
    expect(isUnresolvable(e.failures[0]!)).toBe(true);
    expect(formatFailure(e.failures[0]!)).toBe("cpu request 32000m exceeds the node's allocatable 16000m");
  });

  it('dimensions the pod does not request are not checked, even on an over-committed node', () => {
    // memory already 70Gi of 64Gi (over-committed by other pods); a cpu-only pod still fits.
    const e = evaluate(view({ name: 'n', allocatable: [16000, 64 * Gi], allocated: [0, 70 * Gi] }), [1000, 0], DIMS);
    expect(e.failures).toEqual([]);
    expect(e.pressure).toBe(70 / 64);
  });

  it('a dimension the node has none of is skipped in pressure and unresolvable if requested', () => {
    const dims = { names: ['cpu', 'nvidia.com/gpu'] };
    const node: NodeView = { name: 'cpu-only', allocatable: [16000, 0], totals: { allocated: [4000, 0], paused: [0, 0], starting: 0, running: 2, pausedCount: 0 }, reserved: { request: [0, 0], count: 0 } };
    const noGpu = evaluate(node, [2000, 0], dims);
    expect(noGpu.projected[1]).toBeNaN();
    expect(noGpu.pressure).toBe(6000 / 16000); // (4000 + 2000) / 16000 = 0.375
    expect(evaluate(node, [2000, 1], dims).failures[0]).toMatchObject({ code: 'RequestExceedsAllocatable', resource: 'nvidia.com/gpu', allocatable: 0 });
  });

  it('unknown capacity passes the filter, has no pressure, and counts reservations as starting', () => {
    const e = evaluate(view({ name: 'u', allocatable: null, starting: 1, reservedCount: 2, running: 3 }), POD, DIMS);
    expect(e).toMatchObject({ known: false, failures: [], starting: 3, running: 3 });
    expect(e.pressure).toBeNaN();
  });
});

function ev(name: string, pressure: number, more: Partial<Evaluation> = {}): Evaluation {
  return { name, known: true, projected: [pressure, 0], pressure, starting: 0, running: 0, paused: 0, failures: [], ...more };
}

describe('candidate order', () => {
  it.each<[string, Evaluation, Evaluation]>([
    ['known capacity before unknown', ev('a', 0.99), ev('b', NaN, { known: false })],
    ['lower projected pressure first', ev('a', 0.25), ev('b', 0.5)],
    ['equal pressure: fewer starting first', ev('a', 0.5, { starting: 0, running: 9 }), ev('b', 0.5, { starting: 1 })],
    ['equal pressure and starting: fewer running first', ev('a', 0.5, { running: 1, paused: 9 }), ev('b', 0.5, { running: 2 })],
    ['equal up to running: fewer paused first', ev('a', 0.5, { paused: 0 }), ev('b', 0.5, { paused: 1 })],
  ])('%s', (_name, first, second) => {
    expect(compareCandidates(first, second)).toBeLessThan(0);
    expect(compareCandidates(second, first)).toBeGreaterThan(0);
  });

  it('exact equals compare 0; most_loaded reverses only the pressure', () => {
    expect(compareCandidates(ev('a', 0.5), ev('b', 0.5))).toBe(0);
    expect(compareCandidates(ev('a', 0.75), ev('b', 0.5), -1)).toBeLessThan(0);
    expect(compareCandidates(ev('a', 0.5, { starting: 0 }), ev('b', 0.5, { starting: 1 }), -1)).toBeLessThan(0);
  });
});

describe('Placer strategies', () => {
  const never = () => {
    throw new Error('random must not be called');
  };

  it('least_loaded picks the lowest pressure among nodes that fit', () => {
    const evaluations = [ev('a', 0.5), ev('b', 0.1, { failures: [{ code: 'NodeNotInSnapshot', node: 'b' }] }), ev('c', 0.3), ev('d', 0.4)];
    const d = new Placer('least_loaded', never).choose(evaluations);
    expect(d).toEqual({ chosen: 2, runnerUp: 3, feasible: 3 });
  });

  it('least_loaded takes exact equals round-robin', () => {
    const placer = new Placer('least_loaded', never);
    const evaluations = [ev('a', 0.5), ev('b', 0.5), ev('c', 0.5), ev('d', 0.9)];
    expect([0, 1, 2, 3].map(() => evaluations[placer.choose(evaluations).chosen]!.name)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('most_loaded packs onto the highest pressure that still fits', () => {
    const d = new Placer('most_loaded', never).choose([ev('a', 0.5), ev('b', 0.9), ev('c', 1.1, { failures: [{ code: 'NodeNotInSnapshot', node: 'c' }] })]);
    expect(d.chosen).toBe(1);
  });

  it('round_robin cycles through feasible nodes by name whatever the input order, skipping those that do not fit', () => {
    const placer = new Placer('round_robin', never);
    const full = { failures: [{ code: 'NodeNotInSnapshot' as const, node: 'b' }] };
    const picks: string[] = [];
    for (let i = 0; i < 5; i++) {
      const evaluations = i % 2 === 0 ? [ev('c', 0.9), ev('a', 0.1), ev('b', 0.1, full)] : [ev('a', 0.1), ev('b', 0.5), ev('c', 0.9)];
      picks.push(evaluations[placer.choose(evaluations).chosen]!.name);
    }
    // i=0 {a,c}: a; i=1 {a,b,c}: b; i=2 {a,c}: c; i=3 {a,b,c}: wraps to a; i=4 {a,c}: c
    expect(picks).toEqual(['a', 'b', 'c', 'a', 'c']);
  });

  it('random draws uniformly from the feasible nodes with the injected source', () => {
    const draws = [0, 0.49, 0.5, 0.999];
    const placer = new Placer('random', () => draws.shift()!);
    const evaluations = [ev('a', 0.1), ev('x', 0.1, { failures: [{ code: 'NodeNotInSnapshot', node: 'x' }] }), ev('b', 0.9)];
    // feasible = [a, b]: floor(0×2)=0 → a, floor(0.49×2)=0 → a, floor(0.5×2)=1 → b, floor(0.999×2)=1 → b
    expect([1, 2, 3, 4].map(() => evaluations[placer.choose(evaluations).chosen]!.name)).toEqual(['a', 'a', 'b', 'b']);
  });

  it.each<Strategy>(['least_loaded', 'most_loaded', 'round_robin', 'random'])('%s chooses nothing when no node fits', (strategy) => {
    const bad = { failures: [{ code: 'NodeNotInSnapshot' as const, node: 'a' }] };
    expect(new Placer(strategy, () => 0).choose([ev('a', 0.1, bad)])).toEqual({ chosen: -1, runnerUp: -1, feasible: 0 });
  });
});

describe('prioritize scores', () => {
  it('least_loaded: the pick gets 10, others floor(9 × (1 − pressure)), misfits and unknown 0', () => {
    const evaluations = [ev('a', 0.25), ev('b', 0.5), ev('c', 0.05), ev('d', NaN, { known: false }), ev('e', 0.01, { failures: [{ code: 'NodeNotInSnapshot', node: 'e' }] })];
    // a: floor(9 × 0.75) = 6; b: floor(9 × 0.5) = 4; c is chosen: 10
    expect(scoreEvaluations(evaluations, 2, 'least_loaded')).toEqual([6, 4, 10, 0, 0]);
  });

  it('a node as empty as the pick still scores at most 9', () => {
    expect(scoreEvaluations([ev('a', 0), ev('b', 0)], 1, 'least_loaded')).toEqual([9, 10]);
  });

  it('most_loaded: floor(9 × pressure); round_robin and random: 0 for all but the pick', () => {
    const evaluations = [ev('a', 0.5), ev('b', 0.99)];
    expect(scoreEvaluations(evaluations, 0, 'most_loaded')).toEqual([10, 8]);
    expect(scoreEvaluations(evaluations, 0, 'round_robin')).toEqual([10, 0]);
    expect(scoreEvaluations(evaluations, 1, 'random')).toEqual([0, 10]);
  });
});
