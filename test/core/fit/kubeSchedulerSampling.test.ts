/**
 * kube-scheduler's sampling (kubeSchedulerSampling.ts): how many feasible nodes it looks for
 * (schedule_one.go numFeasibleNodesToFind) and when a window it sent was cut by that cap.
 */
import { numFeasibleNodesToFind, sampledWindow } from '../../../src/core/fit/kubeSchedulerSampling.js';

describe('numFeasibleNodesToFind', () => {
  it.each([
    [0, 1000, 420],
    [0, 5000, 500],
    [0, 6000, 300], // 50 − 48 = 2 % → the 5 % floor
    [5, 1000, 100], // 50 nodes → the floor of 100
    [10, 5000, 500],
    [25, 5000, 1250],
    [100, 5000, 5000],
    [30, 99, 99], // under 100 nodes: all of them
    [50, 101, 100], // 50 nodes → the floor of 100, one node fewer than the cluster
    [99, 1000, 990],
  ])('percentage %i of %i nodes looks for %i feasible nodes', (p, n, expected) => {
    expect(numFeasibleNodesToFind(p, n)).toBe(expected);
  });

  it('refuses a percentage kube-scheduler would not accept', () => {
    expect(() => numFeasibleNodesToFind(101, 1000)).toThrow(RangeError);
    expect(() => numFeasibleNodesToFind(12.5, 1000)).toThrow(/integer 0–100/);
    expect(() => numFeasibleNodesToFind(-1, 1000)).toThrow(/integer 0–100, not -1/);
  });
});

describe('sampledWindow: offered exactly the cap, and fewer than the cluster', () => {
  it('1,000 nodes at the adaptive default: 420 offered is a sample; 419 or fewer means its own filters removed the rest', () => {
    expect(sampledWindow(0, 420, 1000)).toBe(true);
    // 580 tainted nodes and no sampling left 419 or 1: kube-scheduler walked every node.
    expect(sampledWindow(0, 419, 1000)).toBe(false);
    expect(sampledWindow(0, 1, 1000)).toBe(false);
  });

  it('the floor of 100 nodes: 100 of 101 at any percentage below 100', () => {
    expect(sampledWindow(50, 100, 101)).toBe(true);
    expect(sampledWindow(1, 100, 101)).toBe(true);
    expect(sampledWindow(50, 99, 101)).toBe(false);
  });

  it('never at 100, nor in a cluster under 100 nodes (every node is searched)', () => {
    for (const n of [1, 99, 100, 101, 1000, 5000]) {
      for (let offered = 0; offered <= n; offered += Math.max(1, Math.floor(n / 50)))
        expect(sampledWindow(100, offered, n)).toBe(false);
      expect(sampledWindow(100, n, n)).toBe(false);
    }
    for (const p of [0, 1, 50, 99])
      for (const offered of [0, 1, 50, 98, 99]) expect(sampledWindow(p, offered, 99)).toBe(false);
  });

  it('offered as many as the cluster holds is not a sample, even where the cap is every node', () => {
    expect(numFeasibleNodesToFind(50, 100)).toBe(100);
    expect(sampledWindow(50, 100, 100)).toBe(false);
  });

  it('refuses a percentage kube-scheduler would not accept', () => {
    expect(() => sampledWindow(101, 100, 1000)).toThrow(RangeError);
  });
});
