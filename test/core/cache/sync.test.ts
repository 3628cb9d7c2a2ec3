import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import type { Node, Pod } from '../../../src/core/objects/kubeObjects.js';
import type { Release } from '../../../src/core/cache/reservations.js';
import { applyListing, cacheUpdates, listingOf } from '../../../src/core/cache/sync.js';
import { loadFixture, makeNode, makePod } from '../../fixtures/builders.js';

const DIMS = { names: ['cpu', 'memory'] };
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };

/** A cache, its informer side, and every release it makes. */
function fresh() {
  const releases: Release[] = [];
  const m = new SchedulerCache(DIMS, { ttlMs: 600_000 }, { released: (r) => releases.push(r) });
  const updates = cacheUpdates(m);
  /** Applies a full listing of `nodes` and `pods` through the informer side; returns the objects skipped. */
  const sync = (nodes: readonly Node[], pods: readonly Pod[]) => {
    const listing = listingOf(DIMS, nodes, pods, OPTIONS);
    applyListing(updates, listing);
    return listing.errors;
  };
  return { m, releases, sync };
}

describe('applyListing: a full listing applied as a diff through the informer side', () => {
  it('loads the realistic node and pod lists, skipping nothing', () => {
    const { m, releases, sync } = fresh();
    const nodes = loadFixture<{ items: Node[] }>('lists/kubectl-get-nodes.json').items;
    const pods = loadFixture<{ items: Pod[] }>('lists/kubectl-get-pods-all-namespaces.json').items;
    expect(sync(nodes, pods)).toEqual([]);
    expect(m.size).toMatchObject({ nodes: nodes.length, pods: pods.length });
    expect(releases).toEqual([]);
    // registered-no-status node has unknown capacity
    expect([...m.nodeInfos()].filter((n) => n.hasNode && n.allocatable === null).length).toBe(1);
  });

  it('a pod now bound releases its reservation; a pod gone releases as deleted; a pod never seen keeps it', () => {
    const { m, releases, sync } = fresh();
    const nodes = [makeNode('n1', { cpu: '8', memory: '32Gi' })];
    const a = makePod('a').req({ cpu: '1' });
    const b = makePod('b').req({ cpu: '1' });
    sync(nodes, [a.obj(), b.obj()]);
    m.assume({ uid: 'uid-a', key: 'sandboxes/a', request: [1000, 0] }, 'n1', 0);
    m.assume({ uid: 'uid-b', key: 'sandboxes/b', request: [1000, 0] }, 'n1', 0);
    m.assume({ uid: 'uid-c', key: 'sandboxes/c', request: [1000, 0] }, 'n1', 0); // c is not in any listing yet
    sync(nodes, [a.node('n1').obj()]);
    expect(releases.map((r) => [r.reservation.uid, r.reason])).toEqual([
      ['uid-a', 'bound'],
      ['uid-b', 'deleted'],
    ]);
    expect(m.reservation('uid-c')).toBeDefined();
    // n1 now: allocated 1000m (a, bound) + reserved 1000m (c): 2000m in use, no double count.
    expect(m.nodeInfo('n1')!.allocated[0]! + m.nodeInfo('n1')!.reserved[0]!).toBe(2000);
  });

  it('a bad object is reported and skipped, and what the cache held for it is kept', () => {
    const { m, sync } = fresh();
    const good = makePod('p').req({ cpu: '2' }).node('n1');
    sync([makeNode('n1', { cpu: '8', memory: '32Gi' })], [good.obj()]);
    const broken = makePod('p').req({ cpu: 'two' }).node('n1').obj();
    const badNode = makeNode('n1', { cpu: '8', memory: '32 Gi' });
    expect(sync([badNode], [broken])).toEqual([
      expect.stringMatching(/^node n1: .*invalid quantity "32 Gi"/),
      expect.stringMatching(/^pod sandboxes\/p: .*invalid quantity "two"/),
    ]);
    expect(m.nodeInfo('n1')!.allocated[0]).toBe(2000);
    expect(m.nodeInfo('n1')?.allocatable).toEqual([8000, 32 * 1024 ** 3]);
  });

  it('nodes absent from the listing are forgotten', () => {
    const { m, sync } = fresh();
    sync([makeNode('n1', { cpu: '1', memory: '1Gi' }), makeNode('n2', { cpu: '1', memory: '1Gi' })], []);
    sync([makeNode('n2', { cpu: '1', memory: '1Gi' })], []);
    expect([...m.nodeNames()]).toEqual(['n2']);
  });
});
