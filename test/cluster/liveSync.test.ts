import { pino } from 'pino';
import { LiveSync, NOT_SYNCED, describeHealth, metricsObserver, staleness } from '../../src/cluster/liveSync.js';
import { applyObserved, applyUpdates, encodingObserver, encodingUpdates } from '../../src/cluster/workerProtocol.js';
import { cacheUpdates } from '../../src/core/cache/sync.js';
import { SchedulerCache } from '../../src/core/cache/schedulerCache.js';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { Metrics } from '../../src/observability/metrics.js';
import { makeNode, makePod } from '../fixtures/builders.js';
import { EXPIRED, scriptedDriver, status } from './watchDrivers.js';

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const OPTIONS = {
  dims: { names: ['cpu', 'memory'] },
  pausedLabel: 'sandbox-extender.io/paused',
  pageSize: 100,
  minBackoffMs: 1,
  maxBackoffMs: 5,
};
/** watch.maxBrokenSeconds of these tests. */
const MAX_BROKEN_SECONDS = 30;

/**
 * LiveSync as it runs on the API worker thread: its CacheUpdates and SyncObserver calls encoded as the
 * worker's messages (workerProtocol.ts), each one structured-cloned and applied on the main thread's side to
 * the cache and the metrics (unbatched here: TurnBatch and onlyLastPodsVersion have tests of their own);
 * readiness read from its health as the main thread reads the worker's reports (staleness, describeHealth).
 */
function setup() {
  const clock = { now: 5_000_000 };
  const released: string[] = [];
  const cache = new SchedulerCache(
    { names: ['cpu', 'memory'] },
    { ttlMs: 600_000 },
    { released: (r) => released.push(`${r.reservation.uid}:${r.reason}`) },
  );
  // The watch gauges read the watches' health when scraped, as buildExtender hands it in.
  const metrics = new Metrics(() => cache.size.reservations, {
    defaultMetrics: false,
    watchHealth: () => live.health(),
  });
  const nodes = scriptedDriver<Node>();
  nodes.queueLists({ items: [makeNode('n1', { cpu: '16', memory: '64Gi' })], resourceVersion: '1' });
  const pods = scriptedDriver<Pod>();
  const main = { updates: cacheUpdates(cache), observer: metricsObserver(metrics) };
  const updates = encodingUpdates((update) => applyUpdates(main.updates, structuredClone([update])));
  const observer = encodingObserver((message) => applyObserved(main.observer, structuredClone(message)));
  const live = new LiveSync(
    updates,
    { nodes: nodes.source, pods: pods.source },
    { ...OPTIONS, now: () => clock.now },
    observer,
    pino({ level: 'silent' }),
  );
  const notReady = () => staleness(live.health(), MAX_BROKEN_SECONDS);
  const describe = () => describeHealth(live.health());
  const gauge = async (name: string) => {
    const text = await metrics.registry.getSingleMetricAsString(name);
    return Object.fromEntries([...text.matchAll(/resource="(\w+)"} (\S+)/g)].map((m) => [m[1], Number(m[2])]));
  };
  return { clock, cache, released, metrics, nodes, pods, live, gauge, notReady, describe };
}

const watching =
  (driver: { watches: unknown[] }, n = 1) =>
  () =>
    driver.watches.length >= n;

describe('LiveSync', () => {
  it('is ready only once both initial lists are applied', async () => {
    const t = setup();
    t.live.start();
    await until(watching(t.nodes), 'the node watch');
    expect(t.live.ready).toBe(false); // pods not listed yet
    expect(t.notReady()).toBe(NOT_SYNCED);
    t.pods.queueLists({ items: [makePod('a').req({ cpu: '2' }).node('n1').obj()], resourceVersion: '7' });
    await until(() => t.live.ready, 'readiness');
    expect(t.notReady()).toBeNull();
    expect(t.cache.nodeInfo('n1')!.allocated[0]).toBe(2000);
    expect(await t.metrics.registry.getSingleMetricAsString('sandbox_extender_cache_synced')).toMatch(
      /resource="pods"} 1/,
    );
    await t.live.stop();
  });

  it('watch events update the model; a pod seen bound releases its reservation as bound', async () => {
    const t = setup();
    t.pods.queueLists({ items: [makePod('p').req({ cpu: '2' }).obj()], resourceVersion: '3' });
    t.live.start();
    await until(() => t.live.ready && t.pods.watches.length === 1, 'sync');
    t.cache.assume({ uid: 'uid-p', key: 'sandboxes/p', request: [2000, 0] }, 'n1', 0);
    t.pods.watches[0]!.send('MODIFIED', {
      ...makePod('p').req({ cpu: '2' }).node('n1').obj(),
      metadata: { name: 'p', namespace: 'sandboxes', uid: 'uid-p', resourceVersion: '4' },
    });
    expect(t.cache.size.reservations).toBe(0);
    expect(t.cache.nodeInfo('n1')!.allocated[0]).toBe(2000);
    expect(t.released).toEqual(['uid-p:bound']);
    await t.live.stop();
  });

  it("the cache knows the pods' resourceVersion it reflects: the list's, then each event's (also one it could not read)", async () => {
    const t = setup();
    expect(t.cache.podsResourceVersion).toBe('');
    t.pods.queueLists({ items: [makePod('p').req({ cpu: '2' }).obj()], resourceVersion: '3' });
    t.live.start();
    await until(() => t.live.ready && t.pods.watches.length === 1, 'sync');
    expect(t.cache.podsResourceVersion).toBe('3');
    t.pods.watches[0]!.send('MODIFIED', {
      ...makePod('p').req({ cpu: '2' }).node('n1').obj(),
      metadata: { name: 'p', namespace: 'sandboxes', uid: 'uid-p', resourceVersion: '8' },
    });
    expect(t.cache.podsResourceVersion).toBe('8');
    t.pods.watches[0]!.send('ADDED', {
      ...makePod('bad').req({ cpu: 'lots' }).obj(),
      metadata: { name: 'bad', namespace: 'sandboxes', uid: 'uid-bad', resourceVersion: '9' },
    });
    expect(t.cache.podsResourceVersion).toBe('9');
    t.pods.watches[0]!.send('DELETED', {
      ...makePod('p').obj(),
      metadata: { name: 'p', namespace: 'sandboxes', uid: 'uid-p', resourceVersion: '12' },
    });
    expect(t.cache.podsResourceVersion).toBe('12');
    expect(t.cache.pod('uid-p')).toBeUndefined();
    await t.live.stop();
  });

  it('a 410 in the stream relists: pods that vanished meanwhile are deleted and their reservations released', async () => {
    const t = setup();
    t.pods.queueLists(
      {
        items: [makePod('gone').req({ cpu: '2' }).obj(), makePod('stays').req({ cpu: '1' }).node('n1').obj()],
        resourceVersion: '3',
      },
      { items: [makePod('stays').req({ cpu: '1' }).node('n1').obj()], resourceVersion: '90' },
    );
    t.live.start();
    await until(() => t.live.ready && t.pods.watches.length === 1, 'sync');
    t.cache.assume({ uid: 'uid-gone', key: 'sandboxes/gone', request: [2000, 0] }, 'n1', 0);
    t.pods.watches[0]!.send('ERROR', EXPIRED);
    await until(watching(t.pods, 2), 'the watch after the relist');
    expect(t.pods.watches[1]!.fromVersion).toBe('90');
    expect(t.released).toEqual(['uid-gone:deleted']);
    expect([...t.cache.podUids()]).toEqual(['uid-stays']);
    expect(await t.metrics.registry.getSingleMetricAsString('sandbox_extender_watch_lists_total')).toMatch(
      /resource="pods",kind="relist"} 1/,
    );
    // A relist is not a restart: the counter (exported at 0 from the start) stays at 0.
    expect(await t.metrics.registry.getSingleMetricAsString('sandbox_extender_watch_restarts_total')).toMatch(
      /resource="pods"} 0$/m,
    );
    await t.live.stop();
  });

  it('a bad object from the watch is skipped and the model keeps what it had', async () => {
    const t = setup();
    t.pods.queueLists({ items: [makePod('p').req({ cpu: '2' }).node('n1').obj()], resourceVersion: '3' });
    t.live.start();
    await until(() => t.live.ready && t.pods.watches.length === 1, 'sync');
    t.pods.watches[0]!.send('MODIFIED', makePod('p').req({ cpu: 'lots' }).node('n1').obj());
    expect(t.cache.nodeInfo('n1')!.allocated[0]).toBe(2000);
    await t.live.stop();
  });

  it('a quiet cluster is not stale: ten minutes without an event on open watches', async () => {
    const t = setup();
    t.pods.queueLists({ items: [], resourceVersion: '3' });
    t.live.start();
    await until(() => t.live.ready && t.pods.watches.length === 1, 'sync');
    t.clock.now += 600_000;
    expect(t.notReady()).toBeNull();
    expect(await t.gauge('sandbox_extender_watch_last_event_age_seconds')).toEqual({ nodes: 600, pods: 600 });
    expect(await t.gauge('sandbox_extender_watch_broken_seconds')).toEqual({ nodes: 0, pods: 0 });
    expect(t.describe()).toBe(
      [
        'nodes: synced; watch open; last event or bookmark 600.0 s ago; not failing',
        'pods: synced; watch open; last event or bookmark 600.0 s ago; not failing',
      ].join('\n'),
    );
    await t.live.stop();
  });

  it('a pods list/watch failing for longer than maxBrokenSeconds makes the model stale until it recovers', async () => {
    const t = setup();
    t.pods.queueLists({ items: [], resourceVersion: '3' });
    t.live.start();
    await until(() => t.live.ready && t.pods.watches.length === 1, 'sync');
    t.clock.now += 10_000;
    t.pods.watches[0]!.breakConnection(); // the API server went away
    t.pods.refuseNextWatch(503); // and refuses the resume while it starts
    await until(watching(t.pods, 3), 'the watch after the refusal');
    t.pods.watches[2]!.send('ERROR', status(500, 'InternalError', 'etcdserver: leader changed')); // open, but failing at once
    await until(watching(t.pods, 4), 'the next watch');
    t.pods.watches[3]!.send('ERROR', EXPIRED); // the restarted API server's watch cache begins after resourceVersion 3
    t.pods.queueLists({ status: 503 }); // the relist is refused once; the next list waits (no answer yet)
    await until(() => t.live.health()[1]!.lastError === 'HTTP 503: scripted refusal', 'the refused relist');
    t.clock.now += 30_000;
    expect(t.notReady()).toBeNull(); // 30 s is not longer than 30 s
    t.clock.now += 1_500;
    expect(t.notReady()).toBe(
      'the scheduler cache is stale: the pods list/watch has been failing for 31.5 s (last error: HTTP 503: scripted refusal; last event 41.5 s ago), longer than watch.maxBrokenSeconds (30 s)',
    );
    expect(await t.gauge('sandbox_extender_watch_broken_seconds')).toEqual({ nodes: 0, pods: 31.5 });
    expect(t.describe().split('\n')[1]).toBe(
      'pods: synced; no watch open; last event or bookmark 41.5 s ago; failing for 31.5 s (last error: HTTP 503: scripted refusal)',
    );
    expect(await t.metrics.registry.getSingleMetricAsString('sandbox_extender_watch_restarts_total')).toMatch(
      /resource="pods"} 4/,
    );
    t.pods.queueLists({ items: [], resourceVersion: '50' });
    await until(watching(t.pods, 5), 'the watch after the relist');
    expect(t.notReady()).toBeNull();
    expect(await t.gauge('sandbox_extender_watch_last_event_age_seconds')).toEqual({ nodes: 41.5, pods: 0 });
    expect(await t.gauge('sandbox_extender_watch_broken_seconds')).toEqual({ nodes: 0, pods: 0 });
    await t.live.stop();
  });
});
