import {
  discreteOptimum,
  nodeTreeOrder,
  podsAbove,
  pressureWith,
  replay,
  type ReplaySpec,
} from '../../src/cli/replay.js';
import { STRATEGIES } from '../../src/core/fit/strategies/index.js';

const Gi = 1024 ** 3;

/** Nodes of the given CPU counts with 4 GiB per CPU; N pods of 2 CPU / 4 GiB. */
function spec(cpus: number[], podCount: number, honourCapacity = false): ReplaySpec {
  return {
    dims: { names: ['cpu', 'memory'] },
    nodes: cpus.map((c, i) => ({ name: `n${i}-${c}`, allocatable: [c * 1000, c * 4 * Gi] })),
    podRequest: [2000, 4 * Gi],
    podCount,
    honourCapacity,
  };
}

const never = () => 0;

describe('the heterogeneous overcommit replay (16/64/192 CPUs, 300 pods of 2 CPU / 4 GiB)', () => {
  const s = spec([16, 64, 192], 300);

  it('round_robin peaks at 12.5: 100 pods × 2 CPU on the 16-CPU node = 200 / 16', () => {
    const r = replay(s, 'round_robin', never);
    expect(r.podsPerNode).toEqual([100, 100, 100]);
    expect(r.peakPressure).toBe(12.5);
  });

  it('least_loaded peaks at 2.21875 = 71 × 2 / 64, the discrete optimum', () => {
    const r = replay(s, 'least_loaded', never);
    // 17 × 2/16 = 2.125, 71 × 2/64 = 2.21875, 212 × 2/192 = 2.2083: max 2.21875
    expect(r.podsPerNode.reduce((a, b) => a + b)).toBe(300);
    expect(r.peakPressure).toBe(2.21875);
    expect(r.peakPressure.toFixed(4)).toBe('2.2188');
    expect(discreteOptimum(s)).toBe(2.21875);
  });

  it('most_loaded piles everything onto the node it started with: 300 × 2 / 16 = 37.5', () => {
    expect(replay(s, 'most_loaded', never).peakPressure).toBe(37.5);
  });

  it('random with a fixed source is repeatable and places every pod', () => {
    let x = 0;
    const source = () => (x = (x * 9301 + 49297) % 233280) / 233280;
    const a = replay(s, 'random', source);
    x = 0;
    const b = replay(s, 'random', source);
    expect(a).toEqual(b);
    expect(a.placed).toBe(300);
  });

  it.each([...STRATEGIES])('%s never beats the discrete optimum', (strategy) => {
    expect(replay(s, strategy, Math.random).peakPressure).toBeGreaterThanOrEqual(discreteOptimum(s)!);
  });
});

describe('replay honouring capacity', () => {
  it('places only what fits and reports the rest unplaced: 8 + 32 + 96 = 136 pods of 2 CPU', () => {
    const r = replay(spec([16, 64, 192], 300, true), 'least_loaded', never);
    expect(r).toMatchObject({ placed: 136, unplaced: 164, peakPressure: 1 });
    expect(discreteOptimum(spec([16, 64, 192], 300, true))).toBeNull();
  });

  it('within capacity least_loaded reaches the optimum: 68 pods → 136 CPU of 272', () => {
    const s = spec([16, 64, 192], 68, true);
    // Optimum: P with floor(8P) + floor(32P) + floor(96P) ≥ 68 → P = 0.5 gives 4 + 16 + 48 = 68.
    expect(discreteOptimum(s)).toBe(0.5);
    expect(replay(s, 'least_loaded', never).peakPressure).toBe(0.5);
  });
});

describe('discreteOptimum', () => {
  it.each([
    // identical nodes: ceil(N / nodes) pods each
    { cpus: [32, 32, 32], pods: 10, optimum: (4 * 2) / 32 }, // 4,3,3 → 8/32 = 0.25
    { cpus: [16], pods: 3, optimum: 6 / 16 },
    // 8 + 8 CPUs and 3 pods: one node takes 2 → 4/8 = 0.5
    { cpus: [8, 8], pods: 3, optimum: 0.5 },
  ])('$cpus CPUs, $pods pods → $optimum', ({ cpus, pods, optimum }) => {
    expect(discreteOptimum(spec(cpus, pods))).toBe(optimum);
  });

  it('pressureWith is the max over dimensions of k × request / allocatable', () => {
    // cpu 3 × 2000 / 8000 = 0.75; memory 3 × 4 / 8 = 1.5
    expect(pressureWith([8000, 8 * Gi], [2000, 4 * Gi], 3)).toBe(1.5);
  });
});

describe("kube-scheduler's node tree order", () => {
  it('interleaves zones in order of first appearance, each zone in its given order', () => {
    expect(nodeTreeOrder(['a', 'a', 'b', 'b', 'b', 'c'])).toEqual([0, 2, 5, 1, 3, 4]);
    expect(nodeTreeOrder(['x', 'x', 'x'])).toEqual([0, 1, 2]);
  });
});

describe('replay under sampling', () => {
  /** 100 nodes of 16 CPUs listed before 100 of 192 CPUs (pools in blocks, as names sort), pods of 2 CPU / 4 GiB. */
  const blocks = (podCount: number, sampling?: ReplaySpec['sampling']): ReplaySpec => ({
    ...spec([...Array(100).fill(16), ...Array(100).fill(192)], podCount, true),
    ...(sampling ? { sampling } : {}),
  });
  const interleaved = (podCount: number, sampling?: ReplaySpec['sampling']): ReplaySpec => ({
    ...spec(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? 192 : 16)),
      podCount,
      true,
    ),
    ...(sampling ? { sampling } : {}),
  });

  it('offers each pod the window kube-scheduler finds: 100 of 200 nodes at the adaptive default', () => {
    const r = replay(blocks(500, { percentageOfNodesToScore: 0 }), 'least_loaded', never);
    expect(r.offered).toEqual({ min: 100, max: 100 });
    expect(r.placed).toBe(500);
  });

  it('without sampling, reaches the optimum; with pools in blocks, a window of one pool forces its nodes', () => {
    const full = replay(blocks(2000), 'least_loaded', never);
    const s = blocks(2000);
    const optimum = discreteOptimum(s)!;
    expect(full.peakPressure).toBeLessThanOrEqual(optimum + 2 / 16);
    expect(podsAbove(s, full.podsPerNode, optimum)).toBe(0);
    // Every other window holds 16-CPU nodes only: about half the pods land there until they are full.
    const sampled = replay(blocks(2000, { percentageOfNodesToScore: 0 }), 'least_loaded', never);
    expect(sampled.peakPressure).toBe(1);
    expect(podsAbove(s, sampled.podsPerNode, optimum)).toBeGreaterThan(500);
  });

  it('with the pools interleaved, the same window stays within one pod of the optimum', () => {
    const s = interleaved(2000);
    const optimum = discreteOptimum(s)!;
    const sampled = replay(interleaved(2000, { percentageOfNodesToScore: 0 }), 'least_loaded', never);
    expect(sampled.peakPressure).toBeLessThanOrEqual(optimum + 2 / 16 + 1e-12);
  });

  it('zones interleave the blocks: one pool per zone makes every window hold both pools', () => {
    const zones = [...Array(100).fill('a'), ...Array(100).fill('b')];
    const s = blocks(2000, { percentageOfNodesToScore: 0, zones });
    const r = replay(s, 'least_loaded', never);
    expect(r.peakPressure).toBeLessThanOrEqual(discreteOptimum(s)! + 2 / 16 + 1e-12);
  });

  it('skips full nodes: once a 16-CPU node is full, its window reaches into the 192-CPU block', () => {
    // The small pool fills evenly to 7 pods each; the first node at 8 is full, so that window walks on into
    // the large block, whose nodes are then the least loaded: the rest stay at 7 (0.875 where the optimum puts 3 pods).
    const s = blocks(4000, { percentageOfNodesToScore: 0 });
    const r = replay(s, 'least_loaded', never);
    expect(r.placed).toBe(4000);
    const small = r.podsPerNode.slice(0, 100);
    expect(small.filter((k) => k === 8)).toHaveLength(1);
    expect(small.filter((k) => k === 7)).toHaveLength(99);
    expect(r.offered).toEqual({ min: 100, max: 100 });
    // Optimum: 3 pods on each 16-CPU node (0.375), 37 on each 192-CPU node (37 × 2 / 192).
    expect(discreteOptimum(s)).toBe((37 * 2) / 192);
    expect(podsAbove(s, r.podsPerNode, (37 * 2) / 192)).toBe(1 * 5 + 99 * 4);
  });

  // Regression (new-user trial): round_robin took the name after its last pick; with windows of 500 of 1,000 nodes
  // alternating, that found the same two nodes again and again: 1,000 pods each, peak 62.5 (10 % gave 12.5).
  it.each([50, 10])(
    'round_robin at %i %% (windows that tile the nodes) spreads the pods evenly: two 2-CPU pods per 32-CPU node',
    (percentage) => {
      const r = replay(
        { ...spec(Array(1000).fill(32), 2000), sampling: { percentageOfNodesToScore: percentage } },
        'round_robin',
        never,
      );
      expect(r.placed).toBe(2000);
      expect(new Set(r.podsPerNode)).toEqual(new Set([2]));
      expect(r.peakPressure).toBe(4 / 32);
    },
  );

  it('round_robin at the adaptive window (420 of 1,000, overlapping from pod to pod) stays within one pod of the even spread', () => {
    const r = replay(
      { ...spec(Array(1000).fill(32), 2000), sampling: { percentageOfNodesToScore: 0 } },
      'round_robin',
      never,
    );
    expect(r.placed).toBe(2000);
    expect(r.offered).toEqual({ min: 420, max: 420 });
    expect(Math.max(...r.podsPerNode)).toBe(3);
    expect(r.peakPressure).toBe(6 / 32);
  });

  it('round_robin without sampling is the rotation in name order, wrapping around', () => {
    const r = replay(spec([16, 64, 192], 7), 'round_robin', never);
    expect(r.podsPerNode).toEqual([3, 2, 2]);
  });

  it('refuses zones that do not match the nodes', () => {
    expect(() => replay(blocks(10, { percentageOfNodesToScore: 0, zones: ['a'] }), 'least_loaded', never)).toThrow(
      /1 entries for 200 nodes/,
    );
  });
});

describe('the optimum beside existing pods', () => {
  const withExisting = (paused: number): ReplaySpec => ({
    ...spec([16, 16], 8, true),
    existingPods: Array.from({ length: paused }, (_, i) => ({
      uid: `p${i}`,
      key: `ns/p${i}`,
      nodeName: 'n0-16',
      schedulerName: 'sandbox-scheduler',
      request: [2000, 4 * Gi],
      state: 'paused' as const,
      terminal: false,
      schedulingFailure: null,
    })),
  });

  it('counts paused sandboxes already on a node: 4 paused on n0 leave 8 pods best split 2 + 6', () => {
    const s = withExisting(4);
    // 12 pods' worth on 2 nodes of 8 slots: 6 each, pressure 0.75.
    expect(discreteOptimum(s)).toBe(0.75);
    const r = replay(s, 'least_loaded', never);
    expect(r.podsPerNode).toEqual([2, 6]);
    expect(r.peakPressure).toBe(0.75);
    expect(podsAbove(s, r.podsPerNode, 0.75)).toBe(0);
    expect(podsAbove(s, [6, 2], 0.75)).toBe(4);
  });

  it('is null when the existing pods leave too little room', () => {
    expect(discreteOptimum({ ...withExisting(8), podCount: 9 })).toBeNull();
  });
});
