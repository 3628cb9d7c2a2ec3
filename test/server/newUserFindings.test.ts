/**
 * Regressions found by trying the product as a new user would (each was wrong before its fix).
 */
import request from 'supertest';
import { schedulerAmount } from '../../src/core/podRequests.js';
import { makePod } from '../fixtures/builders.js';
import { exampleNodes, makeHarness, modelState, namesArgs, nodesArgs, NODE_16, NODE_192, NODE_64, sampleValue } from './harness.js';

describe('findings of the new-user trial', () => {
  it('a valid but astronomically large request (9Pi of memory) fits nowhere instead of being an Error', async () => {
    const h = makeHarness();
    const res = await request(h.app).post('/filter').send(namesArgs(makePod('huge').req({ cpu: '1', memory: '9Pi' }).obj())).expect(200);
    // 9Pi = 10133099161583616 bytes > 2^53 − 1: saturates at 9007199254740991, above every node's allocatable.
    expect(res.body.Error).toBe('');
    expect(res.body.NodeNames).toEqual([]);
    expect(Object.keys(res.body.FailedAndUnresolvableNodes).sort()).toEqual([NODE_16, NODE_192, NODE_64]);
    expect(res.body.FailedAndUnresolvableNodes[NODE_16]).toBe("memory request 8Pi or more exceeds the node's allocatable 64Gi");
    expect(schedulerAmount('memory', 10133099161583616n * 1_000_000_000n)).toBe(Number.MAX_SAFE_INTEGER);
    expect(schedulerAmount('cpu', 1_500_000n)).toBe(2); // 1.5m → 2 millicores, rounded up
  });

  it('a Node object sent without allocatable keeps the allocatable the extender knows', async () => {
    const h = makeHarness();
    const nodes = exampleNodes().map((n) => ({ ...n, status: {} }));
    const res = await request(h.app).post('/prioritize').send(nodesArgs(makePod('p').req({ cpu: '2', memory: '4Gi' }).obj(), nodes)).expect(200);
    // Same as with names: node-192 has the lowest projected pressure (26000/192000) and gets 10.
    expect(res.body).toEqual([
      { Host: NODE_16, Score: 5 },
      { Host: NODE_64, Score: 6 },
      { Host: NODE_192, Score: 10 },
    ]);
  });

  it('Node objects too deeply nested to echo back get a readable 400, and nothing changes', async () => {
    const h = makeHarness();
    const before = modelState(h.service);
    const nodes = exampleNodes();
    (nodes[0] as { spec?: unknown }).spec = { deep: '__DEEP__' };
    // 20,000 nested arrays: JSON.parse reads them, JSON.stringify cannot write them back.
    const body = JSON.stringify(nodesArgs(makePod('p').req({ cpu: '1' }).obj(), nodes)).replace('"__DEEP__"', `${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    const res = await request(h.app).post('/filter').set('content-type', 'application/json').send(body);
    expect(res.status).toBe(400);
    expect(res.body.Error).toMatch(/^sandbox-extender: the reply cannot be encoded/);
    expect(modelState(h.service)).toEqual(before);
  });

  it('/FILTER and /Prioritize/ are served and counted under their verbs', async () => {
    const h = makeHarness();
    await request(h.app).post('/FILTER').send(namesArgs(makePod('a').obj())).expect(200);
    await request(h.app).post('/Prioritize/').send(namesArgs(makePod('b').obj())).expect(200);
    const text = (await request(h.app).get('/metrics')).text;
    expect(sampleValue(text, 'sandbox_extender_http_requests_total', { verb: 'filter', code: '200' })).toBe(1);
    expect(sampleValue(text, 'sandbox_extender_http_requests_total', { verb: 'prioritize', code: '200' })).toBe(1);
  });
});
