import { jest } from '@jest/globals';
import { agedHealth, applyUpdates, onlyLastPodsVersion, type Update } from '../../src/cluster/apiThread.js';
import { TurnBatch } from '../../src/cluster/turnBatch.js';
import type { WatchHealth } from '../../src/cluster/reflector.js';
import { SchedulerCache } from '../../src/core/schedulerCache.js';
import { cacheUpdates } from '../../src/core/sync.js';

const DIMS = { names: ['cpu', 'memory'] };
const pod = (uid: string, nodeName: string | null) => ({ uid, key: `ns/${uid}`, nodeName, schedulerName: 's', request: [1000, 0], state: nodeName ? ('running' as const) : ('pending' as const), terminal: false, schedulingFailure: null });

describe('the main thread side of the API worker', () => {
  it('applies a batch of updates to the cache in the order they came (a listing, then events)', () => {
    const cache = new SchedulerCache(DIMS, { ttlMs: 600_000 });
    cache.upsertPod(pod('gone', 'n1')); // not in the listing below: the listing deletes it
    const batch: Update[] = [
      ['replaceNodes', { nodes: [{ name: 'n1', allocatable: [4000, 8] }], keptNodes: new Set() }],
      ['replacePods', { pods: [pod('a', 'n1'), pod('b', null)], keptPods: new Set() }],
      ['upsertPod', pod('b', 'n1')],
      ['deletePod', 'a'],
      ['upsertNode', { name: 'n2', allocatable: [1000, 8] }],
      ['deleteNode', 'n2'],
    ];
    applyUpdates(cacheUpdates(cache), structuredClone(batch)); // as the message arrives: a structured clone
    expect([...cache.podUids()]).toEqual(['b']);
    expect(cache.nodeInfo('n1')).toMatchObject({ allocated: [1000, 0], running: 1 });
    expect([...cache.nodeNames()]).toEqual(['n1']);
    expect(cache.wasDeleted('gone') && cache.wasDeleted('a')).toBe(true);
  });

  it('batches Events per turn of the event loop: none sent during the turn, one message after it, in order', async () => {
    const sent: string[][] = [];
    const batch = new TurnBatch<string>((items) => sent.push([...items]));
    batch.push('a');
    batch.push('b');
    expect(sent).toEqual([]); // the verb's reply goes out first
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['a', 'b']]);
    batch.push('c');
    batch.flush(); // at stop: at once
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['a', 'b'], ['c']]);
  });

  it('with a delay, collects what comes within it into one message (the Events of a burst), flushed at once on demand', async () => {
    jest.useFakeTimers();
    try {
      const sent: string[][] = [];
      const batch = new TurnBatch<string>((items) => sent.push([...items]), 50);
      batch.push('a');
      jest.advanceTimersByTime(30);
      batch.push('b'); // within the 50 ms of the first: same message
      expect(sent).toEqual([]);
      jest.advanceTimersByTime(20);
      expect(sent).toEqual([['a', 'b']]);
      batch.push('c');
      jest.advanceTimersByTime(49);
      expect(sent).toEqual([['a', 'b']]);
      batch.flush(); // at stop: at once, and the timer finds nothing
      jest.advanceTimersByTime(100);
      expect(sent).toEqual([['a', 'b'], ['c']]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('ages the worker’s last health report by the time since it was read: a silent worker looks stale', () => {
    const health: WatchHealth[] = [
      { resource: 'nodes', synced: true, watching: true, lastDeliveryAgeMs: 1_000, brokenMs: 0, lastError: null },
      { resource: 'pods', synced: true, watching: false, lastDeliveryAgeMs: 4_000, brokenMs: 2_000, lastError: 'HTTP 500' },
    ];
    expect(agedHealth(health, 10_000, 13_500).map((h) => [h.lastDeliveryAgeMs, h.brokenMs])).toEqual([
      [4_500, 0], // not failing stays not failing
      [7_500, 5_500],
    ]);
    expect(agedHealth(health, 10_000, 9_000)[0]!.lastDeliveryAgeMs).toBe(1_000); // a clock step back adds nothing
  });
});

describe('onlyLastPodsVersion (one pods resourceVersion per batch of watch updates)', () => {
  const deleteNode = ['deleteNode', 'node-a'] as const satisfies Update;
  const deletePod = ['deletePod', 'uid-1'] as const satisfies Update;

  it('keeps the last podsAppliedAt only, after every change of the batch', () => {
    const batch: Update[] = [deletePod, ['podsAppliedAt', '10'], deleteNode, ['podsAppliedAt', '11'], ['deletePod', 'uid-2']];
    expect(onlyLastPodsVersion(batch)).toEqual([deletePod, deleteNode, ['deletePod', 'uid-2'], ['podsAppliedAt', '11']]);
  });

  it('returns a batch with none, or with one already last, unchanged (the same array)', () => {
    const none: Update[] = [deletePod, deleteNode];
    const oneLast: Update[] = [deletePod, ['podsAppliedAt', '7']];
    expect(onlyLastPodsVersion(none)).toBe(none);
    expect(onlyLastPodsVersion(oneLast)).toBe(oneLast);
  });

  it('moves a single podsAppliedAt that is not last to the end', () => {
    expect(onlyLastPodsVersion([['podsAppliedAt', '3'], deletePod])).toEqual([deletePod, ['podsAppliedAt', '3']]);
  });
});
