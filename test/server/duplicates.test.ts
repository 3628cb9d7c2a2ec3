/**
 * A request that names a node more than once (kube-scheduler never does; a broken or hostile client might): each
 * node is answered once, in the order of its first appearance, the decision sees it once, and the repeats are
 * counted (sandbox_extender_duplicate_candidates_total) and logged (once per window), never an error for the pod.
 * Example cluster numbers as in app.test.ts: a 2 CPU / 4Gi pod scores node-16 5, node-64 6, node-192 10.
 */
import { pino } from 'pino';
import request from 'supertest';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { RequestLog } from '../../src/observability/requestLog.js';
import { makePod } from '../fixtures/builders.js';
import {
  NODE_16,
  NODE_192,
  NODE_64,
  exampleNodes,
  makeHarness,
  namesArgs,
  nodesArgs,
  sampleValue,
  type Harness,
} from './harness.js';

const sandbox = (name: string): Pod => makePod(name).uid(`uid-${name}`).req({ cpu: '2', memory: '4Gi' }).obj();
const foreign = (name: string): Pod =>
  makePod(name).uid(`uid-${name}`).req({ cpu: '2', memory: '4Gi' }).scheduler('default-scheduler').obj();

function post(h: Harness, verb: 'filter' | 'prioritize', body: unknown) {
  return request(h.app).post(`/${verb}`).set('Content-Type', 'application/json').send(JSON.stringify(body));
}

async function duplicatesCounted(h: Harness, verb: 'filter' | 'prioritize'): Promise<number | undefined> {
  return sampleValue(await h.metrics.registry.metrics(), 'sandbox_extender_duplicate_candidates_total', { verb });
}

// Regression (hostile-input trial): NodeNames with a name twice came back with it twice (in NodeNames, or in Hosts).
describe('a node named twice is answered once', () => {
  const repeated = [NODE_192, NODE_64, NODE_192, NODE_16, NODE_64];

  it('Filter (NodeNames): each feasible node once, in the order of its first appearance; 2 repeats counted', async () => {
    const h = makeHarness();
    const res = await post(h, 'filter', namesArgs(sandbox('f'), repeated));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      Nodes: null,
      NodeNames: [NODE_192, NODE_64, NODE_16],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
    expect(await duplicatesCounted(h, 'filter')).toBe(2);
    expect(await duplicatesCounted(h, 'prioritize')).toBe(0);
  });

  it('Prioritize (NodeNames): each Host once with its score; the one reservation on node-192', async () => {
    const h = makeHarness();
    const res = await post(h, 'prioritize', namesArgs(sandbox('p'), repeated));
    expect(res.body).toEqual([
      { Host: NODE_192, Score: 10 },
      { Host: NODE_64, Score: 6 },
      { Host: NODE_16, Score: 5 },
    ]);
    expect(h.service.cache.reservation('uid-p')?.nodeName).toBe(NODE_192);
    expect(h.service.cache.size.reservations).toBe(1);
    expect(await duplicatesCounted(h, 'prioritize')).toBe(2);
  });

  it('with one candidate named twice, Filter sees a single feasible node and reserves it (kube-scheduler then skips Prioritize)', async () => {
    const h = makeHarness();
    const res = await post(h, 'filter', namesArgs(sandbox('single'), [NODE_64, NODE_64]));
    expect(res.body.NodeNames).toEqual([NODE_64]);
    expect(h.service.cache.reservation('uid-single')?.nodeName).toBe(NODE_64);
  });

  it('a name the extender does not know, twice: one FailedNodes entry, one Host scored 0', async () => {
    const h = makeHarness();
    const filter = await post(h, 'filter', namesArgs(sandbox('ghost-f'), ['ghost', NODE_16, 'ghost']));
    expect(filter.body).toEqual({
      Nodes: null,
      NodeNames: [NODE_16],
      FailedNodes: { ghost: "node ghost is not in the extender's cluster snapshot" },
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
    const prioritize = await post(h, 'prioritize', namesArgs(sandbox('ghost-p'), ['ghost', NODE_16, 'ghost']));
    expect(prioritize.body).toEqual([
      { Host: 'ghost', Score: 0 },
      { Host: NODE_16, Score: 10 },
    ]);
  });

  it('Filter and Prioritize (Nodes): the first object of each name, once', async () => {
    const h = makeHarness();
    const [n16, n64, n192] = exampleNodes() as [Node, Node, Node];
    const second192 = { ...structuredClone(n192), metadata: { ...n192.metadata, labels: { copy: 'second' } } };
    const filter = await post(h, 'filter', nodesArgs(sandbox('nf'), [n192, n16, second192, n64]));
    expect(filter.body.Nodes).toEqual({ metadata: {}, items: [n192, n16, n64] });
    expect(await duplicatesCounted(h, 'filter')).toBe(1);
    const prioritize = await post(h, 'prioritize', nodesArgs(sandbox('np'), [n192, n16, second192, n64]));
    expect((prioritize.body as { Host: string }[]).map((e) => e.Host)).toEqual([NODE_192, NODE_16, NODE_64]);
    expect(await duplicatesCounted(h, 'prioritize')).toBe(1);
  });

  it("another scheduler's pod (passed through): each node once in NodeNames, Nodes and Hosts", async () => {
    const h = makeHarness();
    const filter = await post(h, 'filter', namesArgs(foreign('pass-f'), repeated));
    expect(filter.body.NodeNames).toEqual([NODE_192, NODE_64, NODE_16]);
    const [n16, , n192] = exampleNodes() as [Node, Node, Node];
    const objects = await post(h, 'filter', nodesArgs(foreign('pass-n'), [n16, n192, n16]));
    expect(objects.body.Nodes.items).toEqual([n16, n192]);
    const prioritize = await post(h, 'prioritize', namesArgs(foreign('pass-p'), repeated));
    expect(prioritize.body).toEqual([NODE_192, NODE_64, NODE_16].map((Host) => ({ Host, Score: 0 })));
    expect(await duplicatesCounted(h, 'filter')).toBe(3);
    expect(await duplicatesCounted(h, 'prioritize')).toBe(2);
    expect(h.service.cache.size.reservations).toBe(0);
  });

  it('is logged once per window with the client address and the pod; the next line counts those left out', async () => {
    const lines: Record<string, unknown>[] = [];
    const clock = { now: 0 };
    const logger = pino(
      { level: 'warn' },
      { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    );
    const h = makeHarness({}, undefined, { requestLog: new RequestLog(logger, 60_000, () => clock.now) });
    await post(h, 'filter', namesArgs(sandbox('log-1'), repeated));
    await post(h, 'filter', namesArgs(sandbox('log-2'), repeated));
    expect(lines).toEqual([
      expect.objectContaining({
        level: 40,
        reason: 'duplicate_candidates',
        client: expect.stringMatching(/127\.0\.0\.1$/),
        method: 'POST',
        path: '/filter',
        status: 200,
        msg: 'filter for pod sandboxes/log-1: NodeNames gave 2 nodes more than once; each node is answered once',
      }),
    ]);
    clock.now = 60_000;
    await post(h, 'prioritize', namesArgs(sandbox('log-3'), [NODE_16, NODE_16]));
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      reason: 'duplicate_candidates',
      suppressed: 1,
      msg: 'prioritize for pod sandboxes/log-3: NodeNames gave 1 node more than once; each node is answered once',
    });
    expect(lines[1]).not.toHaveProperty('err');
  });

  it('no repeat: nothing counted, nothing logged', async () => {
    const lines: unknown[] = [];
    const h = makeHarness({}, undefined, {
      requestLog: new RequestLog(pino({ level: 'warn' }, { write: (line: string) => lines.push(line) }), 0),
    });
    await post(h, 'filter', namesArgs(sandbox('clean'), [NODE_16, NODE_64, NODE_192]));
    expect(await duplicatesCounted(h, 'filter')).toBe(0);
    expect(lines).toEqual([]);
  });
});
