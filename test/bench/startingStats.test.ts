import type { V1Pod } from '@kubernetes/client-node';
import { StartingTracker, distribution, formatCounts } from '../../bench/startingStats.js';

describe('StartingTracker: concurrent starting pods per node from a pod watch', () => {
  it('counts bound-not-Ready pods per node and keeps each node’s peak', () => {
    const t = new StartingTracker();
    t.observe('a', null, false); // created, unbound: not starting
    t.observe('a', 'n1', false); // bound
    t.observe('b', 'n1', false);
    t.observe('c', 'n2', false);
    expect([t.startingOn('n1'), t.startingOn('n2')]).toEqual([2, 1]);
    t.observe('a', 'n1', true); // Ready
    t.observe('d', 'n1', false);
    t.observe('d', 'n1', false); // a repeated MODIFIED changes nothing
    expect(t.startingOn('n1')).toBe(2);
    t.observe('b', 'n1', false, true); // deleted while starting
    t.observe('e', 'n1', false);
    t.observe('f', 'n1', false);
    expect(t.startingOn('n1')).toBe(3);
    expect([...t.peaks(['n1', 'n2', 'n3'])]).toEqual([
      ['n1', 3],
      ['n2', 1],
      ['n3', 0],
    ]);
  });

  it('a Ready pod that is deleted, and a pod deleted before it was bound, change nothing', () => {
    const t = new StartingTracker();
    t.observe('a', 'n1', true);
    t.observe('a', 'n1', true, true);
    t.observe('b', null, false, true);
    expect(t.startingOn('n1')).toBe(0);
    expect(t.peaks(['n1']).get('n1')).toBe(0);
  });
});

describe('StartingTracker.observePod: a watch event of a pod', () => {
  it('reads its name, node and Ready condition, and observes them', () => {
    const t = new StartingTracker();
    const pod = (node?: string, ready?: 'True' | 'False'): V1Pod => ({
      metadata: { name: 'a' },
      spec: { containers: [], ...(node ? { nodeName: node } : {}) },
      ...(ready ? { status: { conditions: [{ type: 'Ready', status: ready }] } } : {}),
    });
    expect(t.observePod(pod())).toEqual({ name: 'a', node: null, ready: false });
    expect(t.observePod(pod('n1', 'False'))).toEqual({ name: 'a', node: 'n1', ready: false });
    expect(t.startingOn('n1')).toBe(1);
    expect(t.observePod(pod('n1', 'True'))).toEqual({ name: 'a', node: 'n1', ready: true });
    expect(t.startingOn('n1')).toBe(0);
    t.observePod(pod('n2'));
    expect(t.observePod(pod('n2'), true)).toEqual({ name: 'a', node: 'n2', ready: false });
    expect(t.startingOn('n2')).toBe(0);
    expect(t.peaks(['n1', 'n2'])).toEqual(
      new Map([
        ['n1', 1],
        ['n2', 1],
      ]),
    );
  });
});

describe('distribution of per-node peaks', () => {
  it('nearest-rank percentiles and the counts per value', () => {
    const d = distribution([4, 3, 4, 4, 2, 4, 4, 4, 4, 4]);
    expect(d).toEqual({
      min: 2,
      p50: 4,
      p90: 4,
      max: 4,
      counts: [
        [2, 1],
        [3, 1],
        [4, 8],
      ],
    });
    expect(formatCounts(d)).toBe('2×1 3×1 4×8');
    expect(distribution([1, 2, 3, 4])).toMatchObject({ p50: 2, p90: 4 });
    expect(distribution([])).toEqual({ min: null, p50: null, p90: null, max: null, counts: [] });
  });
});
