import { SchedulerCache } from '../../src/core/schedulerCache.js';
import type { Node, Pod } from '../../src/core/kubeObjects.js';
import { syncModel } from '../../src/core/sync.js';
import { loadFixture, makeNode, makePod } from '../fixtures/builders.js';

const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };

function fresh(): SchedulerCache {
  return new SchedulerCache({ names: ['cpu', 'memory'] }, { ttlMs: 600_000 });
}

describe('syncModel: applying a full listing as a diff', () => {
  it('loads the realistic node and pod lists, skipping nothing', () => {
    const m = fresh();
    const nodes = loadFixture<{ items: Node[] }>('lists/kubectl-get-nodes.json').items;
    const pods = loadFixture<{ items: Pod[] }>('lists/kubectl-get-pods-all-namespaces.json').items;
    const result = syncModel(m, nodes, pods, OPTIONS);
    expect(result).toMatchObject({ nodes: nodes.length, pods: pods.length, errors: [], releases: [] });
    // registered-no-status node has unknown capacity
    expect([...m.nodeInfos()].filter((n) => n.hasNode && n.allocatable === null).length).toBe(1);
  });

  it('a pod now bound releases its reservation; a pod gone releases as deleted; a pod never seen keeps it', () => {
    const m = fresh();
    const nodes = [makeNode('n1', { cpu: '8', memory: '32Gi' })];
    const a = makePod('a').req({ cpu: '1' });
    const b = makePod('b').req({ cpu: '1' });
    syncModel(m, nodes, [a.obj(), b.obj()], OPTIONS);
    m.assume({ uid: 'uid-a', key: 'sandboxes/a', request: [1000, 0] }, 'n1', 0);
    m.assume({ uid: 'uid-b', key: 'sandboxes/b', request: [1000, 0] }, 'n1', 0);
    m.assume({ uid: 'uid-c', key: 'sandboxes/c', request: [1000, 0] }, 'n1', 0); // c is not in any listing yet
    const result = syncModel(m, nodes, [a.node('n1').obj()], OPTIONS);
    expect(result.releases.map((r) => [r.reservation.uid, r.reason])).toEqual([
      ['uid-a', 'bound'],
      ['uid-b', 'deleted'],
    ]);
    expect(m.reservation('uid-c')).toBeDefined();
    // n1 now: allocated 1000m (a, bound) + reserved 1000m (c): 2000m in use, no double count.
    expect(m.nodeInfo('n1')!.allocated[0]! + m.nodeInfo('n1')!.reserved[0]!).toBe(2000);
  });

  it('a bad object is reported and skipped, and what the cache held for it is kept', () => {
    const m = fresh();
    const good = makePod('p').req({ cpu: '2' }).node('n1');
    syncModel(m, [makeNode('n1', { cpu: '8', memory: '32Gi' })], [good.obj()], OPTIONS);
    const broken = makePod('p').req({ cpu: 'two' }).node('n1').obj();
    const badNode = makeNode('n1', { cpu: '8', memory: '32 Gi' });
    const result = syncModel(m, [badNode], [broken], OPTIONS);
    expect(result.errors).toEqual([
      expect.stringMatching(/^node n1: .*invalid quantity "32 Gi"/),
      expect.stringMatching(/^pod sandboxes\/p: .*invalid quantity "two"/),
    ]);
    expect(m.nodeInfo('n1')!.allocated[0]).toBe(2000);
    expect(m.nodeInfo('n1')?.allocatable).toEqual([8000, 32 * 1024 ** 3]);
  });

  it('nodes absent from the listing are forgotten', () => {
    const m = fresh();
    syncModel(m, [makeNode('n1', { cpu: '1', memory: '1Gi' }), makeNode('n2', { cpu: '1', memory: '1Gi' })], [], OPTIONS);
    syncModel(m, [makeNode('n2', { cpu: '1', memory: '1Gi' })], [], OPTIONS);
    expect([...m.nodeNames()]).toEqual(['n2']);
  });
});
