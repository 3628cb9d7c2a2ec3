/** The candidate scan (src/core/fit/scan.ts): each name once, whatever the list repeats. */
import { toNodeRecord, type Dimensions } from '../../../src/core/objects/records.js';
import { CandidateScan, NOT_IN_CACHE } from '../../../src/core/fit/scan.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import { makeNode } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };

/** A cache of `count` nodes n0, n1 … (i + 1 CPUs, 4 GiB each) and a scan over it. */
function scanOver(count: number) {
  const cache = new SchedulerCache(DIMS, { ttlMs: 600_000 });
  for (let i = 0; i < count; i++)
    cache.upsertNode(toNodeRecord(makeNode(`n${i}`, { cpu: String(i + 1), memory: '4Gi' }), DIMS));
  return new CandidateScan((name) => cache.nodeInfo(name), DIMS);
}

const REQUEST = [500, 1024 ** 3];

describe('CandidateScan.run: a name given again', () => {
  it('without repeats, scans the list it was given (no copy) and counts none', () => {
    const scan = scanOver(3);
    const names = ['n2', 'n0', 'ghost', 'n1'];
    scan.run(REQUEST, names);
    expect(scan.names).toBe(names);
    expect({ count: scan.count, duplicates: scan.duplicates }).toEqual({ count: 4, duplicates: 0 });
  });

  it('drops each repeat, known or not: the first appearances in order, the repeats counted', () => {
    const scan = scanOver(3);
    scan.run(REQUEST, ['n2', 'n0', 'n2', 'ghost', 'n0', 'ghost', 'n1', 'n2']);
    expect(scan.names).toEqual(['n2', 'n0', 'ghost', 'n1']);
    expect({ count: scan.count, duplicates: scan.duplicates, feasible: scan.feasible }).toEqual({
      count: 4,
      duplicates: 4,
      feasible: 3,
    });
    expect(scan.status[2]).toBe(NOT_IN_CACHE);
    expect(Array.from({ length: scan.count }, (_, i) => scan.evaluation(i).name)).toEqual(['n2', 'n0', 'ghost', 'n1']);
  });

  it('keeps each first appearance with its own allocatable override (nodeCacheCapable: false)', () => {
    const scan = scanOver(3);
    const big = [64_000, 256 * 1024 ** 3];
    scan.run(REQUEST, ['n0', 'n1', 'n0'], { allocatableOverrides: [big, undefined, [1, 1]] });
    expect(scan.names).toEqual(['n0', 'n1']);
    expect(scan.evaluation(0).allocatable).toEqual(big);
    expect(scan.fits(0)).toBe(true);
  });

  it('forgets the names of the previous run, and knows repeats beyond its first 16 node ids', () => {
    const scan = scanOver(40);
    scan.run(REQUEST, ['n39', 'n20']);
    scan.run(REQUEST, ['n20', 'n39', 'n39']);
    expect(scan.names).toEqual(['n20', 'n39']);
    expect(scan.duplicates).toBe(1);
  });
});
