/** Resolving a list of candidate names with the help of the last list (src/core/cache/candidateLookup.ts). */
import fc from 'fast-check';
import { CandidateLookup } from '../../../src/core/cache/candidateLookup.js';
import type { NodeInfo } from '../../../src/core/cache/nodeInfo.js';
import { toNodeRecord, toPodRecord, type Dimensions } from '../../../src/core/objects/records.js';
import { CandidateScan } from '../../../src/core/fit/scan.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import { makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };

/** A cache of nodes n0 … n{count-1} and a lookup over it that counts how often it asks the cache's map. */
function lookupOver(count: number) {
  const cache = new SchedulerCache(DIMS, { ttlMs: 600_000 });
  for (let i = 0; i < count; i++) cache.upsertNode(toNodeRecord(makeNode(`n${i}`, { cpu: '4', memory: '8Gi' }), DIMS));
  const asked: string[] = [];
  const lookup = new CandidateLookup(
    (name) => {
      asked.push(name);
      return cache.nodeInfo(name);
    },
    () => cache.nodeSetVersion,
  );
  /** Resolves one list (each name a fresh string, as out of JSON.parse); returns the names the map was asked for. */
  const resolve = (names: readonly string[]) => {
    asked.length = 0;
    lookup.begin();
    const infos = JSON.parse(JSON.stringify(names)).map((name: string) => lookup.next(name));
    lookup.end();
    return { infos: infos as (NodeInfo | undefined)[], asked: [...asked] };
  };
  return { cache, resolve };
}

const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `n${from + i}`);

describe('CandidateLookup', () => {
  it('answers what the cache answers, asking its map for every name of the first list', () => {
    const { cache, resolve } = lookupOver(5);
    const { infos, asked } = resolve(['n3', 'ghost', 'n0']);
    expect(infos).toEqual([cache.nodeInfo('n3'), undefined, cache.nodeInfo('n0')]);
    expect(infos[0]).toBe(cache.nodeInfo('n3'));
    expect(asked).toEqual(['n3', 'ghost', 'n0']);
  });

  it('asks the map for nothing when the list is the last one again, unknown names included', () => {
    const { cache, resolve } = lookupOver(100);
    resolve([...names(0, 100), 'ghost']);
    const { infos, asked } = resolve([...names(0, 100), 'ghost']);
    expect(asked).toEqual([]);
    expect(infos.map((i) => i?.name)).toEqual([...names(0, 100), undefined]);
    expect(infos[7]).toBe(cache.nodeInfo('n7'));
  });

  it('follows a list that lost one node (kube-scheduler filtered it out) without asking the map', () => {
    const { resolve } = lookupOver(100);
    resolve(names(0, 100));
    const shorter = names(0, 100).filter((n) => n !== 'n40');
    const { infos, asked } = resolve(shorter);
    expect(asked).toEqual([]);
    expect(infos.map((i) => i!.name)).toEqual(shorter);
  });

  it('asks the map once for a node that fits again, and once after several were dropped in a row', () => {
    const { resolve } = lookupOver(100);
    resolve(names(0, 100).filter((n) => n !== 'n40'));
    const back = resolve(names(0, 100));
    expect(back.asked).toEqual(['n40']);
    expect(back.infos.map((i) => i!.name)).toEqual(names(0, 100));
    const gap = [...names(0, 20), ...names(30, 100)];
    const dropped = resolve(gap);
    expect(dropped.asked).toEqual(['n30']);
    expect(dropped.infos.map((i) => i!.name)).toEqual(gap);
  });

  it('follows two runs interleaved (kube-scheduler filtering two chunks at once), asking the map only where a run starts', () => {
    const { resolve } = lookupOver(200);
    resolve(names(0, 200));
    // Two filter workers, chunks of 50: 0–49 with 50–99, then 100–149 with 150–199, one name of each in turn.
    const interleaved = [0, 100].flatMap((base) =>
      Array.from({ length: 100 }, (_, k) => `n${base + (k % 2 === 0 ? k / 2 : 50 + (k - 1) / 2)}`),
    );
    const first = resolve(interleaved);
    expect(first.infos.map((i) => i!.name)).toEqual(interleaved);
    expect(first.asked).toEqual(['n50', 'n150']);
    // The next list interleaves the same runs the other way round: the last list's order is itself interleaved.
    const swapped = [0, 100].flatMap((base) =>
      Array.from({ length: 100 }, (_, k) => `n${base + (k % 2 === 0 ? 50 + k / 2 : (k - 1) / 2)}`),
    );
    const second = resolve(swapped);
    expect(second.infos.map((i) => i!.name)).toEqual(swapped);
    expect(second.asked.length).toBeLessThanOrEqual(4);
  });

  it('asks the map for every name of a window that moved on (sampling), and still answers right', () => {
    const { resolve } = lookupOver(100);
    resolve(names(0, 50));
    const { infos, asked } = resolve(names(50, 100));
    expect(asked).toEqual(names(50, 100));
    expect(infos.map((i) => i!.name)).toEqual(names(50, 100));
  });

  it('never hands out a NodeInfo the cache dropped: the new one after a node is deleted and comes back', () => {
    const { cache, resolve } = lookupOver(3);
    const before = resolve(['n0', 'n1', 'n2']).infos[1]!;
    cache.deleteNode('n1');
    expect(resolve(['n0', 'n1', 'n2']).infos[1]).toBeUndefined();
    cache.upsertNode(toNodeRecord(makeNode('n1', { cpu: '16', memory: '8Gi' }), DIMS));
    const after = resolve(['n0', 'n1', 'n2']);
    expect(after.infos[1]).toBe(cache.nodeInfo('n1'));
    expect(after.infos[1]).not.toBe(before);
    expect(after.asked).toEqual(['n0', 'n1', 'n2']);
  });

  it('sees a name the cache learned from a pod bound to a node it has no Node object of', () => {
    const { cache, resolve } = lookupOver(2);
    expect(resolve(['n0', 'late', 'n1']).infos[1]).toBeUndefined();
    cache.upsertPod(
      toPodRecord(makePod('p').uid('uid-p').req({ cpu: '1', memory: '1Gi' }).node('late').obj(), DIMS, {
        pausedLabel: 'sandbox-extender.io/paused',
      }),
    );
    expect(resolve(['n0', 'late', 'n1']).infos[1]).toBe(cache.nodeInfo('late'));
  });

  it('answers exactly what the cache answers over any sequence of lists and node changes', () => {
    const step = fc.oneof(
      fc.record({ list: fc.array(fc.integer({ min: 0, max: 11 }), { maxLength: 14 }) }),
      fc.record({ remove: fc.integer({ min: 0, max: 11 }) }),
      fc.record({ add: fc.integer({ min: 0, max: 11 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const { cache, resolve } = lookupOver(8);
        for (const s of steps) {
          if ('remove' in s) cache.deleteNode(`n${s.remove}`);
          else if ('add' in s) cache.upsertNode(toNodeRecord(makeNode(`n${s.add}`, { cpu: '2', memory: '1Gi' }), DIMS));
          else {
            const list = s.list.map((i) => (i === 11 ? 'ghost' : `n${i}`));
            const { infos } = resolve(list);
            list.forEach((name, k) => expect(infos[k]).toBe(cache.nodeInfo(name)));
          }
        }
      }),
    );
  });
});

describe('CandidateScan with the cache version: the scan of a deleted and re-added node', () => {
  it('scores the node as it is now, not as it was when the last list was scanned', () => {
    const cache = new SchedulerCache(DIMS, { ttlMs: 600_000 });
    const upsert = (cpu: string) => cache.upsertNode(toNodeRecord(makeNode('n0', { cpu, memory: '8Gi' }), DIMS));
    upsert('1');
    const scan = new CandidateScan(
      (name) => cache.nodeInfo(name),
      DIMS,
      () => cache.nodeSetVersion,
    );
    const request = [500, 1024 ** 3];
    expect(scan.run(request, ['n0']).pressure[0]).toBe(0.5);
    cache.deleteNode('n0');
    upsert('4');
    expect(scan.run(request, ['n0']).pressure[0]).toBe(0.125);
  });
});
