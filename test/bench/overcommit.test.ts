import { placementsFromLog, replayOvercommit, resourceVersionOf, type PodChange } from '../../bench/overcommit.js';
import type { Pod } from '../../src/core/objects/kubeObjects.js';
import { makeNode, makePod } from '../fixtures/builders.js';

const NODES = [
  makeNode('n4', { cpu: '4', memory: '16Gi', pods: '3' }),
  makeNode('n8', { cpu: '8', memory: '32Gi', pods: '110' }),
];

/** A change of pod `name` at resourceVersion `rv`: unbound, or bound to `node`. */
function change(
  rv: number,
  name: string,
  options: { cpu?: string; node?: string; scheduler?: string; type?: PodChange['type']; phase?: string } = {},
): PodChange {
  let b = makePod(name)
    .req({ cpu: options.cpu ?? '2', memory: '1Gi' })
    .scheduler(options.scheduler ?? 'sandbox-scheduler');
  if (options.node) b = b.node(options.node);
  const obj = b.obj();
  const pod: Pod = {
    ...obj,
    metadata: { ...obj.metadata, resourceVersion: String(rv) },
    status: { ...obj.status, ...(options.phase ? { phase: options.phase } : {}) },
  };
  return { type: options.type ?? 'MODIFIED', pod };
}

describe('replayOvercommit', () => {
  // default-scheduler binds d (3 CPU) to n4 at rv 3; the extender's s (2 CPU) is bound there at rv 5: 5 of 4 CPUs.
  const race = [
    change(1, 'd', { cpu: '3', scheduler: 'default-scheduler' }),
    change(2, 's'),
    change(3, 'd', { cpu: '3', node: 'n4', scheduler: 'default-scheduler' }),
    change(5, 's', { node: 'n4' }),
  ];

  it('counts the node over allocatable and names the binding that took it over, whatever the order changes are given in', () => {
    const report = replayOvercommit(NODES, [...race].reverse());
    expect(report.overflows).toEqual([
      { node: 'n4', resourceVersion: 5n, pod: 'sandboxes/s', schedulerName: 'sandbox-scheduler', over: ['cpu'] },
    ]);
    expect(report.overAtEnd).toEqual([
      {
        node: 'n4',
        used: { cpu: 5000, memory: 2 * 2 ** 30, pods: 2 },
        allocatable: { cpu: 4000, memory: 16 * 2 ** 30, pods: 3 },
      },
    ]);
    expect(report).toMatchObject({ nodesEverOver: 1, peakOverAtOnce: 1, violations: [], placementsNotBound: 0 });
    expect(report.bound).toEqual(
      new Map([
        ['default-scheduler', 1],
        ['sandbox-scheduler', 1],
      ]),
    );
  });

  it('a placement made at a resourceVersion at or after the conflicting binding is a violation; one before it is not', () => {
    const after = replayOvercommit(NODES, race, [{ pod: 'sandboxes/s', node: 'n4', resourceVersion: '3' }]);
    expect(after.violations).toEqual([
      {
        pod: 'sandboxes/s',
        node: 'n4',
        resourceVersion: 3n,
        dimension: 'cpu',
        inUse: 3000,
        requested: 2000,
        allocatable: 4000,
      },
    ]);
    const before = replayOvercommit(NODES, race, [{ pod: 'sandboxes/s', node: 'n4', resourceVersion: '2' }]);
    expect(before.violations).toEqual([]);
    expect(before.overAtEnd).toHaveLength(1); // still over: a race the extender could not see
  });

  it('the pod count is a dimension too, and a placement the pod never reached is counted as not bound', () => {
    const changes = [1, 2, 3, 4].map((i) => change(i, `p${i}`, { cpu: '100m', node: 'n4' }));
    const report = replayOvercommit(NODES, changes, [
      { pod: 'sandboxes/p4', node: 'n4', resourceVersion: '3' },
      { pod: 'sandboxes/p5', node: 'n8', resourceVersion: '3' },
    ]);
    expect(report.overflows.map((o) => [o.pod, o.over])).toEqual([['sandboxes/p4', ['pods']]]);
    expect(report.violations.map((v) => [v.pod, v.dimension, v.inUse, v.allocatable])).toEqual([
      ['sandboxes/p4', 'pods', 3, 3],
    ]);
    expect(report.placementsNotBound).toBe(1);
  });

  it('a pod deleted or finished stops counting: the node comes back under, and the peak remembers how many were over at once', () => {
    const changes = [
      change(1, 'a', { cpu: '3', node: 'n4' }),
      change(2, 'b', { cpu: '3', node: 'n4' }), // n4 over
      change(3, 'c', { cpu: '5', node: 'n8' }),
      change(4, 'e', { cpu: '5', node: 'n8' }), // n8 over too: two at once
      change(5, 'a', { cpu: '3', node: 'n4', type: 'DELETED' }),
      change(6, 'c', { cpu: '5', node: 'n8', phase: 'Succeeded' }),
    ];
    const report = replayOvercommit(NODES, changes);
    expect(report).toMatchObject({ overAtEnd: [], nodesEverOver: 2, peakOverAtOnce: 2 });
    expect(report.overflows.map((o) => o.node)).toEqual(['n4', 'n8']);
  });

  it('refuses a resourceVersion that is not an integer', () => {
    expect(() => resourceVersionOf('abc')).toThrow(/is not an integer/);
    expect(() => replayOvercommit(NODES, race, [{ pod: 'sandboxes/s', node: 'n4', resourceVersion: '' }])).toThrow(
      /is not an integer/,
    );
  });
});

describe('placementsFromLog', () => {
  it("takes each pod's last bind line, else its last filter that reserved a node; skips everything else", () => {
    const log = [
      '{"level":20,"msg":"filter","pod":"ns/a","reserved":"n1","podsResourceVersion":"10"}',
      '{"level":20,"msg":"bind","pod":"ns/a","node":"n1","alreadyBound":false,"podsResourceVersion":"12"}',
      '{"level":20,"msg":"filter","pod":"ns/b","reserved":"n2","podsResourceVersion":"11"}',
      '{"level":20,"msg":"filter","pod":"ns/b","reserved":"n3","podsResourceVersion":"15"}',
      '{"level":20,"msg":"filter","pod":"ns/c","reserved":null,"podsResourceVersion":"16"}',
      '{"level":30,"msg":"bind refused: the node no longer fits","pod":"ns/d","node":"n1","podsResourceVersion":"17"}',
      'not json',
      '--- e2e 2026-01-01T00:00:00.000Z: ready',
    ].join('\n');
    expect(placementsFromLog(log)).toEqual([
      { pod: 'ns/a', node: 'n1', resourceVersion: '12' },
      { pod: 'ns/b', node: 'n3', resourceVersion: '15' },
    ]);
  });
});
