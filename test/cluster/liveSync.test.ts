import { pino } from 'pino';
import { LiveSync } from '../../src/cluster/liveSync.js';
import type { ListPage, ResourceSource } from '../../src/cluster/reflector.js';
import { SchedulerCache } from '../../src/core/schedulerCache.js';
import type { Node, Pod } from '../../src/core/kube.js';
import { Metrics } from '../../src/observability/metrics.js';
import { makeNode, makePod } from '../fixtures/builders.js';

/** A source whose list answers are given by the test and whose watch the test drives. */
class Source<T> implements ResourceSource<T> {
  send: (type: string, object: unknown) => void = () => undefined;
  end: (err: unknown) => void = () => undefined;
  watching = false;
  private pending: ((page: ListPage<T>) => void)[] = [];
  constructor(private lists: ListPage<T>[]) {}
  list(): Promise<ListPage<T>> {
    const next = this.lists.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve) => this.pending.push(resolve)); // held until answer()
  }
  answer(page: ListPage<T>): void {
    this.pending.shift()?.(page);
  }
  async watch(_rv: string, onEvent: (t: string, o: unknown) => void, onDone: (e: unknown) => void): Promise<() => void> {
    this.send = onEvent;
    this.end = onDone;
    this.watching = true;
    return () => undefined;
  }
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused', pageSize: 100, minBackoffMs: 1, maxBackoffMs: 5 };

function setup(podLists: ListPage<Pod>[] = []) {
  const cache = new SchedulerCache({ names: ['cpu', 'memory'] }, { ttlMs: 600_000 });
  const metrics = new Metrics(() => cache.size.reservations, { defaultMetrics: false });
  const nodes = new Source<Node>([{ items: [makeNode('n1', { cpu: '16', memory: '64Gi' })], resourceVersion: '1' }]);
  const pods = new Source<Pod>(podLists);
  const live = new LiveSync(cache, { nodes, pods }, OPTIONS, metrics, pino({ level: 'silent' }));
  return { cache, metrics, nodes, pods, live };
}

describe('LiveSync', () => {
  it('is ready only once both initial lists are applied', async () => {
    const t = setup();
    t.live.start();
    await until(() => t.nodes.watching, 'the node watch');
    expect(t.live.ready).toBe(false); // pods not listed yet
    t.pods.answer({ items: [makePod('a').req({ cpu: '2' }).node('n1').obj()], resourceVersion: '7' });
    await until(() => t.live.ready, 'readiness');
    expect(t.cache.nodeInfo('n1')!.allocated[0]).toBe(2000);
    expect(await t.metrics.registry.getSingleMetricAsString('sandbox_extender_cache_synced')).toMatch(/resource="pods"} 1/);
    await t.live.stop();
  });

  it('watch events update the model; a pod seen bound releases its reservation as bound', async () => {
    const t = setup([{ items: [makePod('p').req({ cpu: '2' }).obj()], resourceVersion: '3' }]);
    t.live.start();
    await until(() => t.live.ready && t.pods.watching, 'sync');
    const released: string[] = [];
    t.cache.onRelease = (r) => released.push(r.reason);
    t.cache.assume({ uid: 'uid-p', key: 'sandboxes/p', request: [2000, 0] }, 'n1', 0);
    t.pods.send('MODIFIED', { ...makePod('p').req({ cpu: '2' }).node('n1').obj(), metadata: { name: 'p', namespace: 'sandboxes', uid: 'uid-p', resourceVersion: '4' } });
    expect(t.cache.size.reservations).toBe(0);
    expect(t.cache.nodeInfo('n1')!.allocated[0]).toBe(2000);
    expect(released).toEqual(['bound']);
    await t.live.stop();
  });

  it('a relist after 410 deletes pods that vanished during the outage and releases their reservations', async () => {
    const t = setup([
      { items: [makePod('gone').req({ cpu: '2' }).obj(), makePod('stays').req({ cpu: '1' }).node('n1').obj()], resourceVersion: '3' },
      { items: [makePod('stays').req({ cpu: '1' }).node('n1').obj()], resourceVersion: '90' },
    ]);
    const released: string[] = [];
    t.cache.onRelease = (r) => released.push(`${r.reservation.uid}:${r.reason}`);
    t.live.start();
    await until(() => t.live.ready && t.pods.watching, 'sync');
    t.cache.assume({ uid: 'uid-gone', key: 'sandboxes/gone', request: [2000, 0] }, 'n1', 0);
    t.pods.watching = false;
    t.pods.send('ERROR', { kind: 'Status', code: 410, message: 'too old resource version' });
    await until(() => t.pods.watching, 'the watch after the relist');
    expect(released).toEqual(['uid-gone:deleted']);
    expect([...t.cache.podUids()]).toEqual(['uid-stays']);
    expect(await t.metrics.registry.getSingleMetricAsString('sandbox_extender_watch_lists_total')).toMatch(/resource="pods",kind="relist"} 1/);
    await t.live.stop();
  });

  it('a bad object from the watch is skipped and the model keeps what it had', async () => {
    const t = setup([{ items: [makePod('p').req({ cpu: '2' }).node('n1').obj()], resourceVersion: '3' }]);
    t.live.start();
    await until(() => t.live.ready && t.pods.watching, 'sync');
    t.pods.send('MODIFIED', makePod('p').req({ cpu: 'lots' }).node('n1').obj());
    expect(t.cache.nodeInfo('n1')!.allocated[0]).toBe(2000);
    await t.live.stop();
  });
});
