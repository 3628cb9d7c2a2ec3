import {
  agedHealth,
  applyObserved,
  applyUpdates,
  encodingObserver,
  encodingUpdates,
  onlyLastPodsVersion,
  type FromWorker,
  type Update,
} from '../../src/cluster/workerProtocol.js';
import type { WatchHealth } from '../../src/cluster/reflector.js';
import type { SyncObserver } from '../../src/cluster/liveSync.js';
import { SchedulerCache } from '../../src/core/cache/schedulerCache.js';
import { ListingReader, cacheUpdates } from '../../src/core/cache/sync.js';
import { makeNode, makePod } from '../fixtures/builders.js';

const DIMS = { names: ['cpu', 'memory'] };
const pod = (uid: string, nodeName: string | null) => ({
  uid,
  key: `ns/${uid}`,
  nodeName,
  schedulerName: 's',
  request: [1000, 0],
  state: nodeName ? ('running' as const) : ('pending' as const),
  terminal: false,
  schedulingFailure: null,
});

describe('the worker protocol: updates and health as the main thread reads them', () => {
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

  it('encodes each CacheUpdates call as an Update; a listing as its records and kept sets, not the reader', () => {
    const sent: Update[] = [];
    const updates = encodingUpdates((u) => sent.push(u));
    const reader = new ListingReader(DIMS, { pausedLabel: 'p' });
    reader.addNode(makeNode('n1', { cpu: '4', memory: '8Gi' }));
    reader.addNode(makeNode('bad', { cpu: 'lots', memory: '8Gi' }));
    reader.addPod(makePod('a').req({ cpu: '1' }).node('n1').obj());
    updates.replaceNodes(reader);
    updates.replacePods(reader);
    updates.deletePod('uid-a');
    updates.podsAppliedAt('12');
    expect(sent.map(([method]) => method)).toEqual(['replaceNodes', 'replacePods', 'deletePod', 'podsAppliedAt']);
    expect(Object.keys(sent[0]![1] as object)).toEqual(['nodes', 'keptNodes']); // no errors, no reader state
    expect(sent[0]![1]).toEqual({
      nodes: [expect.objectContaining({ name: 'n1', allocatable: [4000, 8 * 2 ** 30] })],
      keptNodes: new Set(['bad']),
    });
    const cache = new SchedulerCache(DIMS, { ttlMs: 600_000 });
    applyUpdates(cacheUpdates(cache), structuredClone(sent.slice(0, 2)));
    expect([...cache.nodeNames()]).toEqual(['n1']);
    expect(cache.nodeInfo('n1')!.allocated).toEqual([1000, 0]);
    applyUpdates(cacheUpdates(cache), structuredClone(sent.slice(2)));
    expect(cache.nodeInfo('n1')!.allocated).toEqual([0, 0]);
    expect(cache.podsResourceVersion).toBe('12');
  });

  it('carries the watches’ started / restarted / listed calls as observer messages, relist included', () => {
    const messages: FromWorker[] = [];
    const worker = encodingObserver((m) => messages.push(m));
    worker.started('nodes');
    worker.restarted('pods');
    worker.listed('pods', true);
    worker.listed('nodes', false);
    const calls: string[] = [];
    const main: SyncObserver = {
      started: (r) => calls.push(`started ${r}`),
      restarted: (r) => calls.push(`restarted ${r}`),
      listed: (r, relist) => calls.push(`listed ${r} ${relist}`),
    };
    for (const m of structuredClone(messages)) if (m.t === 'observer') applyObserved(main, m);
    expect(calls).toEqual(['started nodes', 'restarted pods', 'listed pods true', 'listed nodes false']);
  });

  it('ages the worker’s last health report by the time since it was read: a silent worker looks stale', () => {
    const health: WatchHealth[] = [
      { resource: 'nodes', synced: true, watching: true, lastDeliveryAgeMs: 1_000, brokenMs: 0, lastError: null },
      {
        resource: 'pods',
        synced: true,
        watching: false,
        lastDeliveryAgeMs: 4_000,
        brokenMs: 2_000,
        lastError: 'HTTP 500',
      },
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
    const batch: Update[] = [
      deletePod,
      ['podsAppliedAt', '10'],
      deleteNode,
      ['podsAppliedAt', '11'],
      ['deletePod', 'uid-2'],
    ];
    expect(onlyLastPodsVersion(batch)).toEqual([
      deletePod,
      deleteNode,
      ['deletePod', 'uid-2'],
      ['podsAppliedAt', '11'],
    ]);
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
