/**
 * One call per pod (chooseInFilter: true, the default): Filter answers the node it chooses, alone,
 * reserved at once, so kube-scheduler takes it without Prioritize. Against the bundled example cluster
 * (see app.test.ts for its numbers): a fresh 2 CPU / 4Gi pod projects cpu pressure 0.375 / 0.25 /
 * 0.1354 on node-16 / 64 / 192, so least_loaded chooses node-192 with node-64 the runner-up.
 */
import { createServer } from 'node:http';
import request from 'supertest';
import type { Pod } from '../../src/core/objects/kubeObjects.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { makePod } from '../fixtures/builders.js';
import {
  makeHarness,
  modelState,
  namesArgs,
  nodesArgs,
  exampleNodes,
  NODE_16,
  NODE_192,
  NODE_64,
  SNAPSHOT_PATH,
} from './harness.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';

const sandbox = (name: string, cpu = '2', memory = '4Gi'): Pod => makePod(name).req({ cpu, memory }).obj();

function oneCall(onDecision?: (n: DecisionNotice) => void) {
  return makeHarness({ chooseInFilter: true }, readSnapshot(SNAPSHOT_PATH), onDecision ? { onDecision } : {});
}

describe('Filter chooses the node (one call per pod)', () => {
  it('answers only the chosen node, with no failures listed, and reserves it', async () => {
    const h = oneCall();
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p')))
      .expect(200);
    expect(res.text).toBe(
      `${JSON.stringify({ Nodes: null, NodeNames: [NODE_192], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' })}\n`,
    );
    expect(h.service.cache.reservation('uid-p')?.nodeName).toBe(NODE_192);
  });

  it('in Nodes mode echoes the chosen Node object alone', async () => {
    const h = oneCall();
    const res = await request(h.app)
      .post('/filter')
      .send(nodesArgs(sandbox('p')))
      .expect(200);
    expect(res.body.NodeNames).toBeNull();
    expect(res.body.Nodes.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual([NODE_192]);
    expect(res.body.Nodes.items[0]).toEqual(exampleNodes()[2]);
  });

  it('a burst spreads exactly as the two-call protocol does (node-64 takes pods #11, #15, #19)', async () => {
    const one = oneCall();
    const two = makeHarness();
    const viaFilter: string[] = [];
    const viaPrioritize: string[] = [];
    for (let i = 0; i < 20; i++) {
      viaFilter.push(
        (
          await request(one.app)
            .post('/filter')
            .send(namesArgs(sandbox(`b${i}`)))
        ).body.NodeNames[0],
      );
      const scores = (
        await request(two.app)
          .post('/prioritize')
          .send(namesArgs(sandbox(`b${i}`)))
      ).body as { Host: string; Score: number }[];
      viaPrioritize.push(scores.find((s) => s.Score === 10)!.Host);
    }
    expect(viaFilter).toEqual(viaPrioritize);
    expect(
      viaFilter
        .map((n, i) => [i, n])
        .filter(([, n]) => n === NODE_64)
        .map(([i]) => i),
    ).toEqual([11, 15, 19]);
    expect(viaFilter).not.toContain(NODE_16);
  });

  it('when nothing fits, answers every node with its reason, as the two-call filter does', async () => {
    const h = oneCall();
    const two = makeHarness();
    const huge = sandbox('huge', '256', '4Gi');
    const res = await request(h.app).post('/filter').send(namesArgs(huge)).expect(200);
    const twoRes = await request(two.app).post('/filter').send(namesArgs(huge)).expect(200);
    expect(res.text).toBe(twoRes.text);
    expect(Object.keys(res.body.FailedAndUnresolvableNodes)).toEqual([NODE_16, NODE_64, NODE_192]);
    expect(h.service.cache.size.reservations).toBe(0);
  });

  it('the Event names the chosen node, pressure before → after, the candidates and the runner-up', async () => {
    const notices: DecisionNotice[] = [];
    const h = oneCall((n) => notices.push(n));
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    // node-192: (20000 + 4000 paused) / 192000 = 0.125 before, + 2000 → 0.135 after; memory (40 + 8) / 768 = 0.0625 → 0.068
    expect(notices).toEqual([
      {
        pod: { namespace: 'sandboxes', name: 'p1', uid: 'uid-p1' },
        result: 'placed',
        node: NODE_192,
        message:
          'placed on sandbox-node-192 by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 3 candidates, 3 fit; runner-up sandbox-node-64 at 0.250',
      },
    ]);
  });

  it('the Event of a pod with no containers, or none that requests anything, says it was ranked as zero requests', async () => {
    const notices: DecisionNotice[] = [];
    const h = oneCall((n) => notices.push(n));
    const empty = makePod('empty').obj(); // spec.containers: []
    const bestEffort = makePod('best-effort').obj();
    (bestEffort.spec!.containers as unknown[]).push({ name: 'c', image: 'busybox' });
    for (const pod of [empty, bestEffort])
      expect((await request(h.app).post('/filter').send(namesArgs(pod)).expect(200)).body.NodeNames).toEqual([
        NODE_192,
      ]);
    // Nothing requested: node-192 stays at (20000 + 4000 paused) / 192000 = 0.125; runner-up node-64 at 14000 / 64000 = 0.21875.
    const placed =
      'placed on sandbox-node-192 by least_loaded: projected pressure cpu 0.125→0.125, memory 0.063→0.063 (max 0.125); 3 candidates, 3 fit; runner-up sandbox-node-64 at 0.219';
    expect(notices.map((n) => n.message)).toEqual([
      `${placed}; the pod has no containers: ranked as zero requests`,
      `${placed}; the pod requests no cpu or memory: ranked as zero requests`,
    ]);
    // Both reservations hold nothing.
    expect(h.service.cache.reservation('uid-empty')?.request).toEqual([0, 0]);
    expect(h.service.cache.reservation('uid-best-effort')?.request).toEqual([0, 0]);
  });

  it('a filter retried for the same pod does not compete with itself and keeps one reservation', async () => {
    const h = oneCall();
    for (let i = 0; i < 3; i++)
      expect(
        (
          await request(h.app)
            .post('/filter')
            .send(namesArgs(sandbox('again')))
        ).body.NodeNames,
      ).toEqual([NODE_192]);
    expect(h.service.cache.size.reservations).toBe(1);
    expect(h.service.cache.nodeInfo(NODE_192)?.reservedCount).toBe(1);
  });
});

describe('hostile inputs: a readable error, nothing changed', () => {
  it('a node named __proto__ keeps its place in every reply (maps are never plain objects keyed by request data)', async () => {
    const h = makeHarness();
    const filter = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p'), [NODE_16, '__proto__', 'constructor']))
      .expect(200);
    const reason = (name: string) => `node ${name} is not in the extender's cluster snapshot`;
    expect(filter.text).toBe(
      `{"Nodes":null,"NodeNames":["${NODE_16}"],"FailedNodes":{"__proto__":"${reason('__proto__')}","constructor":"${reason('constructor')}"},"FailedAndUnresolvableNodes":{},"Error":""}\n`,
    );
    expect(Object.keys(JSON.parse(filter.text).FailedNodes)).toEqual(['__proto__', 'constructor']);
    const prioritize = await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p'), ['__proto__', NODE_16]))
      .expect(200);
    expect(JSON.parse(prioritize.text)).toEqual([
      { Host: '__proto__', Score: 0 },
      { Host: NODE_16, Score: 10 },
    ]);
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the point is to write wrong types into the pod
  type Loose = Record<string, any>;
  const confused: [string, (pod: Loose) => void, string][] = [
    [
      'status.conditions is an object',
      (p) => (p.status.conditions = {}),
      'Pod.status.conditions: Invalid input: expected array, received object',
    ],
    [
      'a null container',
      (p) => (p.spec.containers = [null]),
      'Pod.spec.containers.0: Invalid input: expected object, received null',
    ],
    [
      'resources is a string',
      (p) => (p.spec.containers[0].resources = 'x'),
      'Pod.spec.containers.0.resources: Invalid input: expected object, received string',
    ],
    [
      'requests is an array',
      (p) => (p.spec.containers[0].resources.requests = []),
      'Pod.spec.containers.0.resources.requests: Invalid input: expected record, received array',
    ],
    [
      'a null container status',
      (p) => (p.status.containerStatuses = [null]),
      'Pod.status.containerStatuses.0: Invalid input: expected object, received null',
    ],
    [
      'initContainers is an object',
      (p) => (p.spec.initContainers = {}),
      'Pod.spec.initContainers: Invalid input: expected array, received object',
    ],
    [
      'a numeric label',
      (p) => (p.metadata.labels = { a: 1 }),
      'Pod.metadata.labels.a: Invalid input: expected string, received number',
    ],
    [
      'a numeric condition reason',
      (p) => (p.status.conditions = [{ type: 'PodScheduled', status: 'False', reason: 5 }]),
      'Pod.status.conditions.0.reason: Invalid input: expected string, received number',
    ],
    [
      'a numeric nodeName',
      (p) => (p.spec.nodeName = 5),
      'Pod.spec.nodeName: Invalid input: expected string, received number',
    ],
  ];

  it.each(confused)(
    'a type-confused pod (%s) gets the path and what was expected, never a JavaScript error',
    async (_what, mutate, message) => {
      const h = makeHarness();
      const before = modelState(h.service);
      const pod = structuredClone(sandbox('p')) as Loose;
      mutate(pod);
      const filter = await request(h.app)
        .post('/filter')
        .send(namesArgs(pod as Pod))
        .expect(200);
      expect(filter.body.Error).toBe(`sandbox-extender: ${message}`);
      const prioritize = await request(h.app)
        .post('/prioritize')
        .send(namesArgs(pod as Pod))
        .expect(400);
      expect(prioritize.body.Error).toBe(`sandbox-extender: ${message}`);
      expect(modelState(h.service)).toEqual(before);
    },
  );

  it('a Content-Length above the limit is answered 413 at once from the header, without waiting for the body', async () => {
    const h = makeHarness({ server: { maxRequestBodyBytes: 1000 } });
    const server = createServer(h.app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const { connect } = await import('node:net');
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          'POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{}',
        ),
      );
      socket.on('data', (d) => (text += d.toString()));
      socket.on('close', () => resolve(text)); // the server closes: the rest of the declared body is never awaited
      socket.on('error', reject);
    });
    server.close();
    expect(reply).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    expect(reply.split('\r\n\r\n')[1]).toBe(
      `${JSON.stringify({ Error: 'sandbox-extender: request body larger than 1000 bytes (server.maxRequestBodyBytes)' })}\n`,
    );
  });

  it("a decision whose reply cannot be encoded is unreserved (the protocol's Error, HTTP 200; no reservation left)", async () => {
    // The nesting bound raised past what JSON.stringify can write back (by default, 100, such a body is refused at the door).
    const h = makeHarness({ chooseInFilter: true, server: { maxRequestDepth: 100_000 } });
    // node-192 (the only node sent) carries a label object nested 20,000 deep: JSON.parse reads it, JSON.stringify cannot write it back.
    const node192 = JSON.stringify(exampleNodes()[2]);
    const deep = `${'{"x":'.repeat(20_000)}{}${'}'.repeat(20_000)}`;
    const body = `{"Pod":${JSON.stringify(sandbox('p'))},"NodeNames":null,"Nodes":{"items":[${node192.slice(0, -1)},"deep":${deep}}]}}`;
    const res = await request(h.app).post('/filter').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(200);
    expect(res.body.Error).toMatch(/^sandbox-extender: the reply cannot be encoded/);
    expect(h.service.cache.size.reservations).toBe(0);
    expect(await h.metrics.registry.getSingleMetricAsString('sandbox_extender_reservations_released_total')).toMatch(
      /reason="unreserved"} 1/,
    );
  });
});

describe('event-loop delay histogram', () => {
  it('records how late each 20 ms tick fired, from the clock it is given', async () => {
    const { Metrics, startEventLoopSampler, EVENT_LOOP_SAMPLE_MS } = await import('../../src/observability/metrics.js');
    const metrics = new Metrics(() => 0, { defaultMetrics: false });
    let t = 0;
    const clock = () => t;
    const stop = startEventLoopSampler(metrics, clock);
    // Each real tick reads the fake clock: make the loop look 130 ms late on the first tick, on time after.
    t = EVENT_LOOP_SAMPLE_MS + 130;
    const read = async () => {
      const text = await metrics.registry.getSingleMetricAsString('sandbox_extender_event_loop_delay_seconds');
      return (series: string) =>
        Number(new RegExp(`^sandbox_extender_event_loop_delay_seconds_${series} (\\S+)$`, 'm').exec(text)![1]);
    };
    // At least two ticks, however busy the machine (a fixed wait let a late loop run the wait's timer before the second tick).
    for (let waited = 0; (await read())('count') < 2 && waited < 5000; waited += EVENT_LOOP_SAMPLE_MS) {
      await new Promise((resolve) => setTimeout(resolve, EVENT_LOOP_SAMPLE_MS));
    }
    stop();
    const value = await read();
    const count = value('count');
    expect(count).toBeGreaterThanOrEqual(2);
    // One tick 130 ms late (between the 0.1 and 0.25 buckets), every later one on time.
    expect([value('bucket{le="0.1"}'), value('bucket{le="0.25"}')]).toEqual([count - 1, count]);
    expect(value('sum')).toBeCloseTo(0.13, 9);
  });
});
