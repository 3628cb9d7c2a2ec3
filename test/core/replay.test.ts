import { discreteOptimum, pressureWith, replay, type ReplaySpec } from '../../src/core/replay.js';
import { STRATEGIES } from '../../src/core/strategies/index.js';

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
