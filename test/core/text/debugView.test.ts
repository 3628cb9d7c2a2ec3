import { NO_ALLOCATABLE, NO_NODE_OBJECT, debugNode, debugNodes } from '../../../src/core/text/debugView.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';

const DIMS = { names: ['cpu', 'memory'] };

function cache(): SchedulerCache {
  const c = new SchedulerCache(DIMS, { ttlMs: 600_000 });
  for (const [name, cpu] of [
    ['node-192', 192_000],
    ['node-16', 16_000],
    ['node-64', 64_000],
  ] as const)
    c.upsertNode({ name, allocatable: [cpu, cpu * 4 * 1024 ** 2] });
  return c;
}

describe('debug view', () => {
  it('lists nodes in natural name order (node-16, node-64, node-192), or by current pressure, highest first', () => {
    const c = cache();
    c.assume({ uid: 'u1', key: 'ns/a', request: [8_000, 0] }, 'node-64', 0); // 8000/64000 = 0.125
    c.assume({ uid: 'u2', key: 'ns/b', request: [4_000, 0] }, 'node-16', 0); // 4000/16000 = 0.25
    expect(debugNodes(c, 0).map((n) => n.name)).toEqual(['node-16', 'node-64', 'node-192']);
    expect(debugNodes(c, 0, 'pressure').map((n) => [n.name, n.maxPressure])).toEqual([
      ['node-16', 0.25],
      ['node-64', 0.125],
      ['node-192', 0],
    ]);
  });

  it('lists a node’s reservations by pod in natural order, whatever the order they were made in, with age and deadline', () => {
    const c = cache();
    for (const [uid, pod] of [
      ['u3', 'ns/pod-10'],
      ['u1', 'ns/pod-9'],
      ['u2', 'ns/pod-b'],
      ['u4', 'ns/pod-a'],
    ])
      c.assume({ uid: uid!, key: pod!, request: [1_000, 0] }, 'node-64', 1_000);
    const view = debugNode(c, 'node-64', 4_000)!;
    expect(view.reservations.map((r) => r.pod)).toEqual(['ns/pod-9', 'ns/pod-10', 'ns/pod-a', 'ns/pod-b']);
    // Reserved at 1 s, seen at 4 s: 3 s old; the pods were never seen, so the default 600 s TTL applies (no unconfirmed TTL set).
    expect(view.reservations[0]).toMatchObject({
      uid: 'u1',
      ageSeconds: 3,
      expiresInSeconds: 597,
      bindingFinished: false,
      request: { cpu: 1000, memory: 0 },
    });
    expect(view).toMatchObject({
      reserved: { cpu: 4000, memory: 0 },
      sandboxes: { reserved: 4, starting: 0 },
      pressure: { cpu: 4000 / 64000, memory: 0 },
    });
  });

  it('a node without pressure (capacity unknown) shows null and no per-resource pressure, and comes last by pressure', () => {
    const c = cache();
    c.upsertNode({ name: 'node-1', allocatable: null });
    c.assume({ uid: 'u1', key: 'ns/a', request: [8_000, 0] }, 'node-1', 0);
    expect(debugNodes(c, 0, 'pressure').map((n) => [n.name, n.maxPressure])).toEqual([
      ['node-16', 0],
      ['node-64', 0],
      ['node-192', 0],
      ['node-1', null],
    ]);
    expect(debugNode(c, 'node-1', 0)).toMatchObject({
      allocatable: null,
      pressure: {},
      maxPressure: null,
      reserved: { cpu: 8_000, memory: 0 },
    });
  });

  it('says why allocatable is null: a Node object without it, or no Node object at all (a node known only by its reservations)', () => {
    const c = cache();
    c.upsertNode({ name: 'node-1', allocatable: null });
    c.assume({ uid: 'u1', key: 'ns/a', request: [2_000, 0] }, 'node-1', 0);
    // A decision on a node the request sent as a full Node object, never listed: only the reservation names it.
    c.assume({ uid: 'u2', key: 'ns/b', request: [2_000, 0] }, 'node-from-request', 0);
    expect(debugNode(c, 'node-1', 0)).toMatchObject({
      hasNode: true,
      allocatable: null,
      allocatableUnknown: NO_ALLOCATABLE,
    });
    expect(debugNode(c, 'node-from-request', 0)).toMatchObject({
      hasNode: false,
      allocatable: null,
      allocatableUnknown: NO_NODE_OBJECT,
      reserved: { cpu: 2_000, memory: 0 },
    });
    expect(NO_NODE_OBJECT).toMatch(/^no Node object of this name in the extender's model/);
    // A node of known allocatable has a Node object and nothing to explain.
    const known = debugNode(c, 'node-16', 0)!;
    expect(known.hasNode).toBe(true);
    expect('allocatableUnknown' in known).toBe(false);
    // The Node object deleted while the reservation holds: the name stays, without the object.
    c.deleteNode('node-1');
    expect(debugNode(c, 'node-1', 0)).toMatchObject({ hasNode: false, allocatableUnknown: NO_NODE_OBJECT });
    expect(
      debugNodes(c, 0)
        .filter((n) => !n.hasNode)
        .map((n) => n.name),
    ).toEqual(['node-1', 'node-from-request']);
  });

  it('shows nothing for a name it does not know', () => {
    expect(debugNode(cache(), 'node-7', 0)).toBeNull();
  });
});
