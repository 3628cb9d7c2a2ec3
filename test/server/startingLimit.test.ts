/**
 * The starting limit over HTTP, on the bundled example cluster (node-64 already has one sandbox starting,
 * sb-64-starting; node-16 and node-192 none): the limit's reason in FailedNodes (never in
 * FailedAndUnresolvableNodes), the held counter, the ProjectedPlacementFailed text and /debug/nodes.
 */
import request from 'supertest';
import type { Pod } from '../../src/core/objects/kubeObjects.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';
import { makePod } from '../fixtures/builders.js';
import { makeHarness, namesArgs, sampleValue, NODE_16, NODE_192, NODE_64, SNAPSHOT_PATH } from './harness.js';

const sandbox = (name: string): Pod => makePod(name).req({ cpu: '2', memory: '4Gi' }).obj();
const HELD = 'sandbox_extender_starting_limit_held_total';

function limited(chooseInFilter: boolean, notices: DecisionNotice[] = []) {
  return makeHarness({ chooseInFilter, startingLimit: { perNode: 1 } }, readSnapshot(SNAPSHOT_PATH), {
    onDecision: (n) => notices.push(n),
  });
}

describe('starting limit perNode 1 on the example cluster', () => {
  it('one call per pod: node-192, then node-16, then nowhere, each held node with its reason in FailedNodes', async () => {
    const notices: DecisionNotice[] = [];
    const h = limited(true, notices);
    const held = async () => sampleValue((await request(h.app).get('/metrics')).text, HELD);
    expect(await held()).toBe(0);
    const first = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    expect(first.body.NodeNames).toEqual([NODE_192]); // node-64 is at its limit: the lowest pressure of the other two
    const second = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p2')))
      .expect(200);
    expect(second.body.NodeNames).toEqual([NODE_16]);
    expect(await held()).toBe(0);
    const third = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p3')))
      .expect(200);
    expect(third.body).toEqual({
      Nodes: null,
      NodeNames: [],
      FailedNodes: {
        [NODE_16]: '1 sandboxes starting, limit 1',
        [NODE_64]: '1 sandboxes starting, limit 1',
        [NODE_192]: '1 sandboxes starting, limit 1',
      },
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
    expect(await held()).toBe(1);
    expect(notices.at(-1)).toEqual({
      pod: { namespace: 'sandboxes', name: 'p3', uid: 'uid-p3' },
      result: 'no_fit',
      node: null,
      message: `0/3 nodes fit projected capacity: 3 at the starting limit. e.g. ${NODE_16}: 1 sandboxes starting, limit 1`,
    });
    // Each retry of the waiting pod counts again.
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p3')))
      .expect(200);
    expect(await held()).toBe(2);
  });

  it('a pod with no containers held by the limit everywhere: the no-fit Event says it was ranked as zero requests', async () => {
    const notices: DecisionNotice[] = [];
    const h = limited(true, notices);
    for (const p of ['p1', 'p2'])
      await request(h.app)
        .post('/filter')
        .send(namesArgs(sandbox(p)))
        .expect(200); // node-192, node-16; node-64 was at its limit
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(makePod('empty').obj()))
      .expect(200);
    expect(res.body.NodeNames).toEqual([]);
    expect(notices.at(-1)).toEqual({
      pod: { namespace: 'sandboxes', name: 'empty', uid: 'uid-empty' },
      result: 'no_fit',
      node: null,
      message: `0/3 nodes fit projected capacity: 3 at the starting limit; the pod has no containers: ranked as zero requests. e.g. ${NODE_16}: 1 sandboxes starting, limit 1`,
    });
  });

  it('a pod that fits nowhere for capacity alone is not counted as held', async () => {
    const h = limited(true);
    const huge = makePod('huge').req({ cpu: '52', memory: '4Gi' }).obj();
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1')))
      .expect(200); // node-192 now at its limit
    const res = await request(h.app).post('/filter').send(namesArgs(huge)).expect(200);
    expect(res.body.NodeNames).toEqual([]);
    expect(Object.keys(res.body.FailedAndUnresolvableNodes)).toEqual([NODE_16]); // 52 CPUs > 16: never fits
    // node-64: at its limit and short of cpu too (14 + 52 > 64), so not held by the limit alone; node-192: by the limit alone.
    expect(res.body.FailedNodes[NODE_64]).toMatch(
      /^1 sandboxes starting, limit 1; Insufficient cpu: requested 52000m \+ in use 14000m/,
    );
    expect(res.body.FailedNodes[NODE_192]).toBe('1 sandboxes starting, limit 1');
    expect(sampleValue((await request(h.app).get('/metrics')).text, HELD)).toBe(1);
    // Without node-192 among the candidates, no node would fit but for the limit: not held.
    await request(h.app)
      .post('/filter')
      .send(namesArgs(huge, [NODE_16, NODE_64]))
      .expect(200);
    expect(sampleValue((await request(h.app).get('/metrics')).text, HELD)).toBe(1);

    const h2 = limited(true);
    const alone = makePod('alone').req({ cpu: '16', memory: '4Gi' }).obj();
    // No limit involved: node-16 has 2 × 2 CPUs in use (16 − 4 < 16), the others would take it but are not offered.
    const res2 = await request(h2.app)
      .post('/filter')
      .send(namesArgs(alone, [NODE_16]))
      .expect(200);
    expect(Object.keys(res2.body.FailedNodes)).toEqual([NODE_16]);
    expect(sampleValue((await request(h2.app).get('/metrics')).text, HELD)).toBe(0);
  });

  it('two calls per pod: the node at its limit is listed failed, the others stay feasible', async () => {
    const h = limited(false);
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_16, NODE_192]);
    expect(res.body.FailedNodes).toEqual({ [NODE_64]: '1 sandboxes starting, limit 1' });
    expect(res.body.FailedAndUnresolvableNodes).toEqual({});
    const scores = (
      await request(h.app)
        .post('/prioritize')
        .send(namesArgs(sandbox('p1')))
        .expect(200)
    ).body as { Host: string; Score: number }[];
    expect(scores.find((s) => s.Host === NODE_64)!.Score).toBe(0);
    expect(scores.find((s) => s.Score === 10)!.Host).toBe(NODE_192);
  });

  it('/debug/nodes shows each node’s limit beside its starting and reserved sandboxes (null when off)', async () => {
    const h = limited(true);
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    const view = (await request(h.app).get('/debug/nodes').expect(200)).body as {
      name: string;
      sandboxes: Record<string, number | null>;
    }[];
    expect(Object.fromEntries(view.map((n) => [n.name, n.sandboxes]))).toEqual({
      [NODE_16]: { starting: 0, running: 2, paused: 0, reserved: 0, startingLimit: 1 },
      [NODE_64]: { starting: 1, running: 6, paused: 0, reserved: 0, startingLimit: 1 },
      [NODE_192]: { starting: 0, running: 10, paused: 1, reserved: 1, startingLimit: 1 },
    });
    const off = makeHarness();
    const offView = (await request(off.app).get(`/debug/nodes/${NODE_64}`).expect(200)).body as {
      sandboxes: Record<string, number | null>;
    };
    expect(offView.sandboxes.startingLimit).toBeNull();
  });
});
