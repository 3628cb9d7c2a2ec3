/**
 * The HTTP edge (src/server/app.ts + handlers.ts) driven with supertest against the bundled example
 * cluster (examples/snapshot.json), built in-process with a fixed clock.
 *
 * Example cluster numbers used throughout (2 CPU / 4Gi sandbox pods; see wire.golden.test.ts):
 *   sandbox-node-16   16000m / 64Gi,  allocated 4000m / 8Gi, 2 running
 *   sandbox-node-64   64000m / 256Gi, allocated 14000m / 28Gi, 6 running + 1 starting
 *   sandbox-node-192  192000m / 768Gi, allocated 20000m / 40Gi (10 running) + paused 4000m / 8Gi (1 paused)
 * A fresh 2 CPU / 4Gi pod therefore projects cpu pressure 0.375 / 0.25 / 0.1354 and least_loaded
 * scores [16: floor(9 × 0.625) = 5, 64: floor(9 × 0.75) = 6, 192: 10].
 */
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import request from 'supertest';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { schedulerAmount } from '../../src/core/objects/podRequests.js';
import { JsonBounds } from '../../src/jsonBounds.js';
import { createApp } from '../../src/server/app.js';
import { verbOfPath } from '../../src/server/verbEdge.js';
import { makeNode, makePod } from '../fixtures/builders.js';
import {
  EXAMPLE_NODES,
  NODE_16,
  NODE_192,
  NODE_64,
  exampleNodes,
  makeHarness,
  modelState,
  namesArgs,
  nodesArgs,
  sampleValue,
  type Harness,
} from './harness.js';

type FilterReply = {
  Nodes: { metadata: Record<string, never>; items: Node[] } | null;
  NodeNames: string[] | null;
  FailedNodes: Record<string, string>;
  FailedAndUnresolvableNodes: Record<string, string>;
  Error: string;
};
type HostPriority = { Host: string; Score: number };

/** A 2 CPU / 4Gi sandbox pod of the extender's scheduler. */
function sandbox(name: string, uid = `uid-${name}`): Pod {
  return makePod(name).uid(uid).req({ cpu: '2', memory: '4Gi' }).obj();
}

function post(h: Harness, verb: 'filter' | 'prioritize', body: unknown) {
  return request(h.app)
    .post(`/${verb}`)
    .set('Content-Type', 'application/json')
    .send(typeof body === 'string' ? body : JSON.stringify(body));
}

function scoresOf(body: HostPriority[]): Record<string, number> {
  return Object.fromEntries(body.map((e) => [e.Host, e.Score]));
}

/** The fresh-cluster answer for any new 2 CPU / 4Gi pod (see the header). */
const FRESH_SCORES = [
  { Host: NODE_16, Score: 5 },
  { Host: NODE_64, Score: 6 },
  { Host: NODE_192, Score: 10 },
];

describe('both modes of ExtenderArgs', () => {
  it('nodeCacheCapable true (NodeNames): answers NodeNames, Nodes null, in input order', async () => {
    const h = makeHarness();
    const res = await post(h, 'filter', namesArgs(sandbox('a'), [NODE_192, NODE_16, NODE_64]));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      Nodes: null,
      NodeNames: [NODE_192, NODE_16, NODE_64],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });

  it('nodeCacheCapable false (Nodes): answers the full Node objects as a NodeList, NodeNames null', async () => {
    const h = makeHarness();
    const nodes = exampleNodes();
    const res = await post(h, 'filter', nodesArgs(sandbox('a'), nodes));
    expect(res.status).toBe(200);
    const body = res.body as FilterReply;
    expect(body.NodeNames).toBeNull();
    expect(body.Error).toBe('');
    expect(body.Nodes).toEqual({ metadata: {}, items: nodes });
  });

  it('Nodes mode: the Node object allocatable wins over the snapshot (node-16 shrunk to 5 CPU)', async () => {
    const h = makeHarness();
    const nodes = exampleNodes();
    (nodes[0]!.status!.allocatable as Record<string, string>)['cpu'] = '5';
    const res = await post(h, 'filter', nodesArgs(sandbox('a'), nodes));
    const body = res.body as FilterReply;
    // 4000m allocated + 2000m requested = 6000m > 5000m: resolvable (FailedNodes), not unresolvable.
    expect(body.FailedNodes).toEqual({
      [NODE_16]:
        'Insufficient cpu: requested 2000m + in use 4000m (allocated 4000m, paused 0m, reserved 0m) > allocatable 5000m',
    });
    expect(body.FailedAndUnresolvableNodes).toEqual({});
    expect(body.Nodes!.items.map((n) => n.metadata!.name)).toEqual([NODE_64, NODE_192]);
  });

  it('Nodes mode: a node the snapshot does not have is judged on its own object (zero totals)', async () => {
    const h = makeHarness();
    const fresh = makeNode('brand-new-8cpu', { cpu: '8', memory: '32Gi' });
    const res = await post(h, 'prioritize', nodesArgs(sandbox('a'), [...exampleNodes(), fresh]));
    expect(res.status).toBe(200);
    // brand-new-8cpu is judged on its own allocatable with zero totals: cpu 2000/8000 = 0.25,
    // memory 4/32 = 0.125 → 0.25 → floor(9 × 0.75) = 6; node-192 (0.1354) is still the pick.
    expect(scoresOf(res.body as HostPriority[])).toEqual({
      [NODE_16]: 5,
      [NODE_64]: 6,
      [NODE_192]: 10,
      'brand-new-8cpu': 6,
    });
  });

  it('Nodes mode: a decision on a node the snapshot does not have shows in /debug/nodes as known only by its reservation (hasNode false, why allocatable is null)', async () => {
    const h = makeHarness({ chooseInFilter: true });
    const fresh = makeNode('brand-new-256cpu', { cpu: '256', memory: '1Ti' });
    const filter = await post(h, 'filter', nodesArgs(sandbox('a'), [...exampleNodes(), fresh]));
    // 2000 / 256000 = 0.0078 on the new node: the lowest projected pressure, reserved there.
    expect((filter.body as FilterReply).Nodes!.items.map((n) => n.metadata!.name)).toEqual(['brand-new-256cpu']);
    const view = (await request(h.app).get('/debug/nodes/brand-new-256cpu').expect(200)).body;
    expect(view).toMatchObject({
      name: 'brand-new-256cpu',
      hasNode: false,
      allocatable: null,
      allocatableUnknown:
        "no Node object of this name in the extender's model: only the pods bound to it and the reservations held on it are counted " +
        '(a Node object sent in a request, nodeCacheCapable: false, counts for that request only)',
      reserved: { cpu: 2000, memory: 4 * 1024 ** 3 },
      reservations: [{ uid: 'uid-a', pod: 'sandboxes/a' }],
    });
    const listed = (await request(h.app).get('/debug/nodes').expect(200)).body as {
      name: string;
      hasNode: boolean;
      allocatableUnknown?: string;
    }[];
    expect(listed.map((n) => [n.name, n.hasNode, n.allocatableUnknown !== undefined])).toEqual([
      ['brand-new-256cpu', false, true],
      [NODE_16, true, false],
      [NODE_64, true, false],
      [NODE_192, true, false],
    ]);
  });

  it('Nodes mode: a Node object with an unparseable allocatable goes to FailedNodes (filter) and scores 0 (prioritize)', async () => {
    const h = makeHarness();
    const broken = makeNode('broken-node', { cpu: '2x', memory: '8Gi' });
    const filter = await post(h, 'filter', nodesArgs(sandbox('a'), [...exampleNodes(), broken]));
    const body = filter.body as FilterReply;
    expect(filter.status).toBe(200);
    expect(body.Error).toBe('');
    expect(body.FailedNodes['broken-node']).toMatch(
      /^invalid Node object: status\.allocatable\.cpu: invalid quantity "2x"/,
    );
    expect(body.Nodes!.items.map((n) => n.metadata!.name)).toEqual([...EXAMPLE_NODES]);
    const prioritize = await post(h, 'prioritize', nodesArgs(sandbox('a'), [...exampleNodes(), broken]));
    expect(scoresOf(prioritize.body as HostPriority[])).toEqual({
      [NODE_16]: 5,
      [NODE_64]: 6,
      [NODE_192]: 10,
      'broken-node': 0,
    });
  });

  it('Nodes mode: a node without status (capacity unknown) passes the filter (fail-open) and scores 0', async () => {
    const h = makeHarness();
    const unknown = makeNode('no-status', null);
    const filter = await post(h, 'filter', nodesArgs(sandbox('a'), [...exampleNodes(), unknown]));
    expect((filter.body as FilterReply).Nodes!.items.map((n) => n.metadata!.name)).toEqual([
      ...EXAMPLE_NODES,
      'no-status',
    ]);
    const prioritize = await post(h, 'prioritize', nodesArgs(sandbox('a'), [...exampleNodes(), unknown]));
    expect(scoresOf(prioritize.body as HostPriority[])).toEqual({
      [NODE_16]: 5,
      [NODE_64]: 6,
      [NODE_192]: 10,
      'no-status': 0,
    });
  });
  it('a Node object sent without allocatable keeps the allocatable the extender knows', async () => {
    const h = makeHarness();
    const nodes = exampleNodes().map((n) => ({ ...n, status: {} }));
    const res = await request(h.app)
      .post('/prioritize')
      .send(nodesArgs(makePod('p').req({ cpu: '2', memory: '4Gi' }).obj(), nodes))
      .expect(200);
    // Same as with names: node-192 has the lowest projected pressure (26000/192000) and gets 10.
    expect(res.body).toEqual([
      { Host: NODE_16, Score: 5 },
      { Host: NODE_64, Score: 6 },
      { Host: NODE_192, Score: 10 },
    ]);
  });
});

describe('key casing and null handling', () => {
  const pod = sandbox('a');
  it.each([
    ['lowercase pod + nodenames (old clients)', { pod, nodenames: [...EXAMPLE_NODES], nodes: null }],
    ['camelCase nodeNames, upper-case POD', { POD: pod, nodeNames: [...EXAMPLE_NODES] }],
    [
      'PascalCase with Nodes: null (what kube-scheduler sends, nodeCacheCapable true)',
      { Pod: pod, Nodes: null, NodeNames: [...EXAMPLE_NODES] },
    ],
    ['Nodes absent altogether', { Pod: pod, NodeNames: [...EXAMPLE_NODES] }],
    ['extra unknown top-level keys are ignored', { Pod: pod, NodeNames: [...EXAMPLE_NODES], FutureField: { x: 1 } }],
  ])('%s: accepted, answered in PascalCase', async (_name, body) => {
    const h = makeHarness();
    const filter = await post(h, 'filter', body);
    expect(filter.status).toBe(200);
    expect(Object.keys(filter.body as object)).toEqual([
      'Nodes',
      'NodeNames',
      'FailedNodes',
      'FailedAndUnresolvableNodes',
      'Error',
    ]);
    expect((filter.body as FilterReply).NodeNames).toEqual([...EXAMPLE_NODES]);
    const prioritize = await post(h, 'prioritize', body);
    expect(prioritize.status).toBe(200);
    expect(prioritize.body).toEqual(FRESH_SCORES);
  });

  it.each([
    [
      'lowercase nodes (NodeList) with nodenames: null',
      () => ({ pod, nodes: { metadata: {}, items: exampleNodes() }, nodenames: null }),
    ],
    [
      'NodeNames: null, what kube-scheduler sends with nodeCacheCapable false',
      () => ({ Pod: pod, Nodes: { metadata: {}, items: exampleNodes() }, NodeNames: null }),
    ],
  ])('%s: accepted, Nodes answered', async (_name, body) => {
    const h = makeHarness();
    const res = await post(h, 'filter', body());
    expect(res.status).toBe(200);
    expect((res.body as FilterReply).Nodes!.items.map((n) => n.metadata!.name)).toEqual([...EXAMPLE_NODES]);
    expect((res.body as FilterReply).NodeNames).toBeNull();
  });

  // Regression (hostile-input trial): the later of the two won silently. Go's encoding/json, which matches keys the
  // same way, would decode both into one Pod, the later's members over the earlier's (the uid of one, the name of the
  // other): the two readers would not see the same pod.
  const TWICE = `(keys are matched case-insensitively, as Go's encoding/json reads the protocol's types; it would decode each into that field, the later over the earlier, so which value is meant is ambiguous): send each field once`;
  it.each([
    [
      'Pod and pod',
      () => ({ Pod: sandbox('first'), pod: sandbox('second'), NodeNames: [...EXAMPLE_NODES] }),
      `ExtenderArgs: "Pod" and "pod" name one field, Pod ${TWICE}`,
    ],
    [
      'three casings of NodeNames, two of Pod',
      () => ({
        pod: sandbox('first'),
        NodeNames: [NODE_16],
        nodenames: [NODE_64],
        POD: sandbox('second'),
        nodeNames: [NODE_192],
      }),
      `ExtenderArgs: "pod" and "POD" name one field, Pod; ExtenderArgs: "NodeNames", "nodenames" and "nodeNames" name one field, NodeNames ${TWICE}`,
    ],
  ])(
    'a field given under two casings (%s): refused with both keys named (Filter: the protocol’s Error; Prioritize: 400); nothing changes',
    async (_name, body, message) => {
      const h = makeHarness();
      const before = modelState(h.service);
      const filter = await post(h, 'filter', body());
      expect(filter.status).toBe(200);
      expect(filter.body).toEqual({
        Nodes: null,
        NodeNames: null,
        FailedNodes: {},
        FailedAndUnresolvableNodes: {},
        Error: `sandbox-extender: ${message}`,
      });
      const prioritize = await post(h, 'prioritize', body());
      expect(prioritize.status).toBe(400);
      expect(prioritize.body).toEqual({ Error: `sandbox-extender: ${message}` });
      expect(modelState(h.service)).toEqual(before);
    },
  );

  it('NodeNames: [] (never sent by kube-scheduler) is answered without error and reserves nothing', async () => {
    const h = makeHarness();
    const filter = await post(h, 'filter', namesArgs(pod, []));
    expect(filter.body).toEqual({
      Nodes: null,
      NodeNames: [],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
    const prioritize = await post(h, 'prioritize', namesArgs(pod, []));
    expect(prioritize.status).toBe(200);
    expect(prioritize.body).toEqual([]);
    expect(h.service.cache.size.reservations).toBe(0);
  });

  it('a body declared as something other than JSON (curl -d without -H) is refused 415 with what to send; nothing changes', async () => {
    const h = makeHarness();
    const before = modelState(h.service);
    const res = await request(h.app)
      .post('/prioritize')
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify(namesArgs(pod)));
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      Error: 'sandbox-extender: Content-Type text/plain is not JSON: send the body as Content-Type: application/json',
    });
    expect(modelState(h.service)).toEqual(before);
  });
});

describe('bad input: readable error, and nothing in the model changes', () => {
  const good = sandbox('probe');
  const withPod = (p: unknown) => JSON.stringify({ Pod: p, Nodes: null, NodeNames: [...EXAMPLE_NODES] });
  const noUid = { ...good, metadata: { name: 'probe', namespace: 'sandboxes' } };
  const EXACTLY_ONE =
    /ExtenderArgs: exactly one of Nodes \(nodeCacheCapable: false\) or NodeNames \(nodeCacheCapable: true\) must be set/;
  const NOT_ARGS = /request body must be a JSON object with Pod and Nodes or NodeNames \(ExtenderArgs\)/;

  // [scenario, raw body, filter status, message]; prioritize always answers 400 {Error}.
  const cases: readonly (readonly [string, string, number, RegExp])[] = [
    ['invalid JSON', '{"Pod": {', 400, /request body is not valid JSON: /],
    ['a JSON array', '[]', 200, NOT_ARGS],
    ['a JSON string', '"hello"', 200, NOT_ARGS],
    ['a JSON number', '42', 200, NOT_ARGS],
    ['JSON null', 'null', 200, NOT_ARGS],
    ['an empty object', '{}', 200, /Pod: Invalid input: expected object, received undefined/],
    [
      'NodeNames is a string',
      JSON.stringify({ Pod: good, NodeNames: 'x' }),
      200,
      /NodeNames: Invalid input: expected array, received string/,
    ],
    [
      'NodeNames holds a number and an empty name',
      JSON.stringify({ Pod: good, NodeNames: [1, ''] }),
      200,
      /NodeNames\.0: Invalid input: expected string, received number; NodeNames\.1: must not be empty/,
    ],
    [
      'Nodes.items is not an array',
      JSON.stringify({ Pod: good, Nodes: { items: 'x' } }),
      200,
      /Nodes\.items: Invalid input: expected array, received string/,
    ],
    [
      'a Node object without a name',
      JSON.stringify({ Pod: good, Nodes: { items: [{ metadata: {} }] } }),
      200,
      /Nodes\.items\.0\.metadata\.name: Invalid input: expected string/,
    ],
    [
      'missing Pod',
      JSON.stringify({ Nodes: null, NodeNames: [...EXAMPLE_NODES] }),
      200,
      /Pod: Invalid input: expected object, received undefined/,
    ],
    [
      'Pod without metadata.uid',
      withPod(noUid),
      200,
      /Pod\.metadata\.uid: Invalid input: expected string, received undefined/,
    ],
    [
      'Pod with an empty uid',
      withPod({ ...good, metadata: { ...good.metadata, uid: '' } }),
      200,
      /Pod\.metadata\.uid: must not be empty/,
    ],
    [
      'Pod without spec',
      withPod({ metadata: good.metadata }),
      200,
      /Pod\.spec: Invalid input: expected object, received undefined/,
    ],
    [
      'an unparseable quantity cpu: "2x"',
      withPod(makePod('probe').req({ cpu: '2x', memory: '4Gi' }).obj()),
      200,
      /spec\.containers\[0\]\.resources\.requests\.cpu: invalid quantity "2x"/,
    ],
    [
      'a negative quantity memory: "-4Gi"',
      withPod(makePod('probe').req({ cpu: '2', memory: '-4Gi' }).obj()),
      200,
      /spec\.containers\[0\]\.resources\.requests\.memory: negative quantity "-4Gi" is not allowed/,
    ],
    [
      'a uid longer than 128 characters',
      withPod({ ...good, metadata: { ...good.metadata, uid: 'u'.repeat(129) } }),
      200,
      /Pod\.metadata\.uid: longer than 128 characters \(no API server makes such a UID\)/,
    ],
    [
      'a pod name longer than 253 characters',
      withPod({ ...good, metadata: { ...good.metadata, name: 'p'.repeat(254) } }),
      200,
      /Pod\.metadata\.name: longer than 253 characters \(Kubernetes' limit for a name\)/,
    ],
    [
      'a namespace longer than 63 characters',
      withPod({ ...good, metadata: { ...good.metadata, namespace: 'n'.repeat(64) } }),
      200,
      /Pod\.metadata\.namespace: longer than 63 characters/,
    ],
    [
      'a node name longer than 253 characters',
      JSON.stringify({ Pod: good, NodeNames: [EXAMPLE_NODES[0], 'n'.repeat(254)] }),
      200,
      /NodeNames\.1: longer than 253 characters/,
    ],
    ['neither Nodes nor NodeNames', JSON.stringify({ Pod: good }), 200, EXACTLY_ONE],
    ['Nodes: null and NodeNames: null', JSON.stringify({ Pod: good, Nodes: null, NodeNames: null }), 200, EXACTLY_ONE],
    [
      'both Nodes and NodeNames set',
      JSON.stringify({ Pod: good, Nodes: { metadata: {}, items: exampleNodes() }, NodeNames: [...EXAMPLE_NODES] }),
      200,
      EXACTLY_ONE,
    ],
  ];

  const matrix = cases.flatMap(([scenario, body, filterStatus, message]) => [
    { scenario, verb: 'filter' as const, body, status: filterStatus, message },
    { scenario, verb: 'prioritize' as const, body, status: 400, message },
  ]);

  it.each(matrix)(
    '$verb, $scenario → $status with a readable Error; state unchanged; the next good request gets the same answer',
    async ({ verb, body, status, message }) => {
      const h = makeHarness();
      const first = await post(h, 'prioritize', namesArgs(good));
      expect(first.body).toEqual(FRESH_SCORES);
      const before = modelState(h.service);

      const res = await post(h, verb, body);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const reply = res.body as { Error: string };
      expect(reply.Error).toMatch(/^sandbox-extender: /);
      expect(reply.Error).toMatch(message);
      if (verb === 'filter' && status === 200) {
        // The whole-call error of the protocol: no feasible list, no per-node reasons, Error set.
        expect(res.body).toEqual({
          Nodes: null,
          NodeNames: null,
          FailedNodes: {},
          FailedAndUnresolvableNodes: {},
          Error: reply.Error,
        });
      } else {
        expect(Object.keys(res.body as object)).toEqual(['Error']);
      }

      expect(modelState(h.service)).toEqual(before);
      // Same pod (same UID) again: its own reservation is left out and replaced → the same answer.
      const again = await post(h, 'prioritize', namesArgs(good));
      expect(again.body).toEqual(FRESH_SCORES);
      expect(modelState(h.service)).toEqual(before);
    },
  );
  it("Node objects too deeply nested to echo back get the protocol's Error (HTTP 200, as every Filter error), and nothing changes", async () => {
    // The nesting bound raised past what JSON.stringify can write back (by default, 100, such a body is refused at the door).
    const h = makeHarness({ server: { maxRequestDepth: 100_000 } });
    const before = modelState(h.service);
    const nodes = exampleNodes();
    (nodes[0] as { spec?: unknown }).spec = { deep: '__DEEP__' };
    // 20,000 nested arrays: JSON.parse reads them, JSON.stringify cannot write them back.
    const body = JSON.stringify(nodesArgs(makePod('p').req({ cpu: '1' }).obj(), nodes)).replace(
      '"__DEEP__"',
      `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    );
    const res = await request(h.app).post('/filter').set('content-type', 'application/json').send(body);
    expect(res.status).toBe(200);
    expect(res.body.Error).toMatch(/^sandbox-extender: the reply cannot be encoded/);
    expect(modelState(h.service)).toEqual(before);
  });
});

describe('unknown node names', () => {
  it('filter: an unknown node goes to FailedNodes with the reason; the known ones are judged normally', async () => {
    const h = makeHarness();
    const res = await post(h, 'filter', namesArgs(sandbox('a'), [NODE_16, 'ghost-1', NODE_192]));
    expect(res.body).toEqual({
      Nodes: null,
      NodeNames: [NODE_16, NODE_192],
      FailedNodes: { 'ghost-1': "node ghost-1 is not in the extender's cluster snapshot" },
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
    expect(h.service.cache.size.reservations).toBe(0);
  });

  it('filter: only unknown nodes → fits nowhere (empty NodeNames, every node in FailedNodes), not an Error', async () => {
    const h = makeHarness();
    const res = await post(h, 'filter', namesArgs(sandbox('a'), ['ghost-1', 'ghost-2']));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      Nodes: null,
      NodeNames: [],
      FailedNodes: {
        'ghost-1': "node ghost-1 is not in the extender's cluster snapshot",
        'ghost-2': "node ghost-2 is not in the extender's cluster snapshot",
      },
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });

  it('prioritize: an unknown node scores 0 and the known ones keep their scores', async () => {
    const h = makeHarness();
    const res = await post(h, 'prioritize', namesArgs(sandbox('a'), ['ghost-1', ...EXAMPLE_NODES]));
    expect(res.body).toEqual([{ Host: 'ghost-1', Score: 0 }, ...FRESH_SCORES]);
  });

  it('prioritize: only unknown nodes → all 0, nothing reserved', async () => {
    const h = makeHarness();
    const res = await post(h, 'prioritize', namesArgs(sandbox('a'), ['ghost-1', 'ghost-2']));
    expect(res.body).toEqual([
      { Host: 'ghost-1', Score: 0 },
      { Host: 'ghost-2', Score: 0 },
    ]);
    expect(h.service.cache.size.reservations).toBe(0);
  });
});

describe('request body size', () => {
  const NODE_FIXTURES = fileURLToPath(new URL('../fixtures/nodes/', import.meta.url));
  const ROUNDS = 182;

  /** 182 copies of the 12 realistic node fixtures with distinct names: 2,184 Node objects, ~10 MB. */
  function manyNodes(): Node[] {
    const templates = readdirSync(NODE_FIXTURES)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => JSON.parse(readFileSync(`${NODE_FIXTURES}${f}`, 'utf8')) as Node);
    expect(templates).toHaveLength(12);
    const nodes: Node[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const t of templates) {
        const copy = structuredClone(t) as { metadata: { name: string } };
        copy.metadata.name = `${copy.metadata.name}-r${r}`;
        nodes.push(copy as Node);
      }
    }
    return nodes;
  }

  it('a ~10 MB body of 2,184 full Node objects is accepted and answered (filter and prioritize)', async () => {
    const h = makeHarness();
    const nodes = manyNodes();
    const body = JSON.stringify(nodesArgs(sandbox('big'), nodes));
    expect(body.length).toBeGreaterThan(10_000_000);

    const filter = await post(h, 'filter', body);
    expect(filter.status).toBe(200);
    const f = filter.body as FilterReply;
    expect(f.Error).toBe('');
    // Per round of 12: notready-unreachable-eks has 1930m < the 2000m request → unresolvable;
    // registered-no-status has no allocatable → passes (fail-open); the other 10 have room
    // (none is in the snapshot, so their totals are zero). 11 × 182 = 2002 feasible.
    expect(f.Nodes!.items).toHaveLength(11 * ROUNDS);
    expect(Object.keys(f.FailedAndUnresolvableNodes)).toHaveLength(ROUNDS);
    expect(f.FailedAndUnresolvableNodes['ip-10-0-44-201.us-west-2.compute.internal-r0']).toBe(
      "cpu request 2000m exceeds the node's allocatable 1930m",
    );
    expect(f.FailedNodes).toEqual({});
    expect(h.service.cache.size.reservations).toBe(0);

    const prioritize = await post(h, 'prioritize', body);
    expect(prioritize.status).toBe(200);
    const scores = prioritize.body as HostPriority[];
    expect(scores).toHaveLength(12 * ROUNDS);
    expect(scores.every((s) => Number.isInteger(s.Score) && s.Score >= 0 && s.Score <= 10)).toBe(true);
    // Lowest pressure: dgx-h100-07 (220 CPU): 2000/220000 = 0.0091 (memory 4Gi/1.9Ti = 0.0021);
    // next the r7i (191450m): 0.0104. All 182 copies tie exactly; the first in input order wins.
    expect(scores.filter((s) => s.Score === 10)).toEqual([{ Host: 'dgx-h100-07-r0', Score: 10 }]);
    expect(scoresOf(scores)['dgx-h100-07-r1']).toBe(8); // floor(9 × (1 − 0.0091)) = floor(8.918)
    expect(scoresOf(scores)['edge-node-17-r0']).toBe(0); // unknown capacity
    expect([...h.service.cache.reservations()].map((r) => r.nodeName)).toEqual(['dgx-h100-07-r0']);
  });

  it('a body above server.maxRequestBodyBytes → 413 with a JSON Error; nothing changes; small requests still work', async () => {
    const h = makeHarness({ server: { maxRequestBodyBytes: 1024 } });
    const big = JSON.stringify(nodesArgs(sandbox('a'))); // three full Node objects: ~4 KB
    expect(big.length).toBeGreaterThan(1024);
    const before = modelState(h.service);
    for (const verb of ['filter', 'prioritize'] as const) {
      const res = await post(h, verb, big);
      expect(res.status).toBe(413);
      expect(res.body).toEqual({
        Error: 'sandbox-extender: request body larger than 1024 bytes (server.maxRequestBodyBytes)',
      });
      expect(modelState(h.service)).toEqual(before);
    }
    const small = await post(h, 'prioritize', namesArgs(sandbox('a')));
    expect(small.status).toBe(200);
    expect(small.body).toEqual(FRESH_SCORES);
    const metrics = (await request(h.app).get('/metrics')).text;
    expect(sampleValue(metrics, 'sandbox_extender_http_requests_total', { verb: 'filter', code: '413' })).toBe(1);
    expect(sampleValue(metrics, 'sandbox_extender_http_requests_total', { verb: 'prioritize', code: '413' })).toBe(1);
  });
});

// Regression (hostile-input trial): a 60 MB body of nested arrays held the event loop 12 s and 3 GB, then was answered 200.
describe('the bounds of a body (server.maxRequestDepth, maxRequestElements), before JSON.parse', () => {
  /** ExtenderArgs whose pod carries an annotation-free field nested so that the whole body nests `depth` levels. */
  function nestedBody(depth: number): string {
    // The body (1), Pod (2), spec (3), containers (4), the container (5): the field's value adds the rest.
    const pod = sandbox('nested') as { spec: { containers: Record<string, unknown>[] } };
    pod.spec.containers[0]!.x = '__X__';
    return JSON.stringify(namesArgs(pod as Pod)).replace('"__X__"', `${'['.repeat(depth - 5)}${']'.repeat(depth - 5)}`);
  }

  it('a body nested exactly maxRequestDepth deep is decided; one level more is refused 400, naming the bound; nothing changes', async () => {
    const h = makeHarness({ server: { maxRequestDepth: 12 } });
    const before = modelState(h.service);
    for (const verb of ['filter', 'prioritize'] as const) {
      const res = await post(h, verb, nestedBody(13));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        Error: 'sandbox-extender: request body nests arrays and objects deeper than 12 levels (server.maxRequestDepth)',
      });
      expect(modelState(h.service)).toEqual(before);
    }
    const ok = await post(h, 'prioritize', nestedBody(12));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(FRESH_SCORES);
  });

  it('more array elements and object members than maxRequestElements: 413, naming the bound; exactly that many is decided', async () => {
    const body = (extra: number) =>
      JSON.stringify(
        namesArgs(sandbox('wide'), [...EXAMPLE_NODES, ...Array.from({ length: extra }, (_, i) => `ghost-${i}`)]),
      );
    const elements = (text: string) =>
      [...text.replace(/"(?:[^"\\]|\\.)*"/g, '""')].filter((c) => c === '[' || c === '{' || c === ',').length;
    const limit = elements(body(10));
    const h = makeHarness({ server: { maxRequestElements: limit } });
    const ok = await post(h, 'prioritize', body(10));
    expect(ok.status).toBe(200);
    const over = await post(h, 'prioritize', body(11));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      Error: `sandbox-extender: request body has more than ${limit} array elements and object members (server.maxRequestElements)`,
    });
    const metrics = (await request(h.app).get('/metrics')).text;
    expect(sampleValue(metrics, 'sandbox_extender_http_requests_total', { verb: 'prioritize', code: '413' })).toBe(1);
  });

  it('an object with more members than maxObjectMembers: 413, naming the bound, the body not parsed; an array as long is decided', async () => {
    // A pod whose requests map has `n` resources (the new-user trial's 3,000,000 held the server 16.8 s).
    const withRequests = (n: number) => {
      const pod = sandbox('members') as { spec: { containers: { resources: { requests: Record<string, string> } }[] } };
      for (let i = 0; i < n; i++) pod.spec.containers[0]!.resources.requests[`r${i}.example.com/x`] = '1';
      return JSON.stringify(namesArgs(pod as unknown as Pod));
    };
    const h = makeHarness({ server: { maxObjectMembers: 50 } });
    const before = modelState(h.service);
    const over = await post(h, 'filter', withRequests(60));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      Error: 'sandbox-extender: request body has an object with more than 50 members (server.maxObjectMembers)',
    });
    expect(modelState(h.service)).toEqual(before);
    // Arrays are not bounded by it: 60 candidate names (the example nodes and ghosts) are decided.
    const names = JSON.stringify(
      namesArgs(sandbox('long-list'), [...EXAMPLE_NODES, ...Array.from({ length: 60 }, (_, i) => `ghost-${i}`)]),
    );
    expect((await post(h, 'prioritize', names)).status).toBe(200);
  });

  it('the default maxObjectMembers refuses a map of 10,001 members and lets 10,000 through', async () => {
    const h = makeHarness({});
    const body = (n: number) =>
      `{"Pod":{"metadata":{"name":"m","uid":"m","labels":{${Array.from({ length: n }, (_, i) => `"l${i}":"v"`).join(',')}}},"spec":{"containers":[]}},"NodeNames":[]}`;
    expect((await post(h, 'prioritize', body(10_000))).status).toBe(200);
    const over = await post(h, 'prioritize', body(10_001));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      Error: 'sandbox-extender: request body has an object with more than 10000 members (server.maxObjectMembers)',
    });
  });

  it('brackets and commas inside strings count for nothing', async () => {
    const withNote = (note: string) => {
      const pod = sandbox('strings') as { metadata: { labels?: Record<string, string> } };
      pod.metadata.labels = { note };
      return JSON.stringify(namesArgs(pod as Pod));
    };
    // The bounds set to exactly what the body holds with a plain note (JsonBounds is tested on its own: test/io/jsonBounds.test.ts).
    const plain = new JsonBounds(Infinity);
    plain.pushText(withNote('plain'));
    const h = makeHarness({ server: { maxRequestDepth: plain.maxDepthSeen, maxRequestElements: plain.elements } });
    const res = await post(h, 'prioritize', withNote(`${'[{,'.repeat(1000)}\\"]`));
    expect(res.status).toBe(200);
    // One real bracket more (an array around the note) is one element more: refused.
    expect((await post(h, 'prioritize', withNote('plain').replace('"plain"', '["plain"]'))).status).toBe(413);
  });

  it('the defaults: 100 levels, 4,000,000 elements', () => {
    const { maxRequestDepth, maxRequestElements } = makeHarness().config.server;
    expect({ maxRequestDepth, maxRequestElements }).toEqual({ maxRequestDepth: 100, maxRequestElements: 4_000_000 });
  });
});

describe('burst of 20 prioritize calls (nodeCacheCapable true, least_loaded)', () => {
  /**
   * An independent re-computation of least_loaded from the snapshot numbers: for each pod, every
   * node's projected pressure = max(cpu, memory) of (in use + reserved + this pod) / allocatable;
   * the lowest wins; exact ties go to fewer starting sandboxes (a reservation counts as one).
   */
  interface Expected {
    readonly cpu: number;
    readonly memGi: number;
    readonly usedCpu: number;
    readonly usedMemGi: number;
    readonly starting: number;
  }
  const CLUSTER: Record<string, Expected> = {
    [NODE_16]: { cpu: 16000, memGi: 64, usedCpu: 4000, usedMemGi: 8, starting: 0 },
    [NODE_64]: { cpu: 64000, memGi: 256, usedCpu: 14000, usedMemGi: 28, starting: 1 },
    [NODE_192]: { cpu: 192000, memGi: 768, usedCpu: 20000 + 4000, usedMemGi: 40 + 8, starting: 0 },
  };

  function pressure(node: Expected, reservations: number): number {
    return Math.max(
      (node.usedCpu + 2000 * (reservations + 1)) / node.cpu,
      (node.usedMemGi + 4 * (reservations + 1)) / node.memGi,
    );
  }

  function expectedChoice(reserved: Record<string, number>): { chosen: string; scores: Record<string, number> } {
    const ranked = EXAMPLE_NODES.map((name) => ({
      name,
      p: pressure(CLUSTER[name]!, reserved[name]!),
      starting: CLUSTER[name]!.starting + reserved[name]!,
    })).sort((a, b) => a.p - b.p || a.starting - b.starting);
    const [first, second] = ranked;
    // The expectation must be unambiguous (no exact tie on every criterion the test models).
    expect(first!.p === second!.p && first!.starting === second!.starting).toBe(false);
    const scores = Object.fromEntries(
      ranked.map((e) => [e.name, e === first ? 10 : Math.floor(9 * (1 - Math.min(1, e.p)))]),
    );
    return { chosen: first!.name, scores };
  }

  it('each call scores 10 on the least projected-pressure node given every earlier reservation; placements spread 0/3/17', async () => {
    const h = makeHarness();
    const reserved: Record<string, number> = { [NODE_16]: 0, [NODE_64]: 0, [NODE_192]: 0 };
    const chosen: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await post(h, 'prioritize', namesArgs(sandbox(`burst-${i}`)));
      expect(res.status).toBe(200);
      const want = expectedChoice(reserved);
      expect({ i, scores: scoresOf(res.body as HostPriority[]) }).toEqual({ i, scores: want.scores });
      reserved[want.chosen]!++;
      chosen.push(want.chosen);
    }
    // node-192 takes pods until its pressure reaches node-64's 0.25: (24000 + 12×2000)/192000 = 0.25
    // = (14000 + 2000)/64000 → tie, node-64 has fewer starting (1 vs 11) → pod #11 goes to node-64;
    // again at 0.28125 (pod #15: 54000/192000 = 18000/64000) and 0.3125 (pod #19). node-16 never
    // gets one: its first pod would be at 0.375.
    expect(
      chosen
        .map((n, i) => [i, n])
        .filter(([, n]) => n === NODE_64)
        .map(([i]) => i),
    ).toEqual([11, 15, 19]);
    expect(reserved).toEqual({ [NODE_16]: 0, [NODE_64]: 3, [NODE_192]: 17 });
    expect(new Set(chosen).size).toBeGreaterThan(1);

    const cache = h.service.cache;
    expect(cache.size.reservations).toBe(20);
    expect(cache.nodeInfo(NODE_64)).toMatchObject({ reserved: [3 * 2000, 3 * 4 * 1024 ** 3], reservedCount: 3 });
    expect(cache.nodeInfo(NODE_192)).toMatchObject({ reserved: [17 * 2000, 17 * 4 * 1024 ** 3], reservedCount: 17 });
    expect(cache.nodeInfo(NODE_16)?.reservedCount).toBe(0);
    for (let i = 0; i < 20; i++) expect(cache.reservation(`uid-burst-${i}`)?.nodeName).toBe(chosen[i]);
  });

  it('the same UID sent again replaces its reservation (ledger size unchanged, never doubled)', async () => {
    const h = makeHarness();
    for (let i = 0; i < 20; i++) await post(h, 'prioritize', namesArgs(sandbox(`burst-${i}`)));
    expect(h.service.cache.size.reservations).toBe(20);

    // burst-0 again: its own reservation on node-192 is left out → node-192 at 16 others:
    // (24000 + 17×2000)/192000 = 0.3021 < node-64 (14000 + 4×2000)/64000 = 0.34375 → node-192 again.
    const again = await post(h, 'prioritize', namesArgs(sandbox('burst-0')));
    expect(scoresOf(again.body as HostPriority[])[NODE_192]).toBe(10);
    expect(h.service.cache.size.reservations).toBe(20);
    expect(h.service.cache.nodeInfo(NODE_192)?.reservedCount ?? 0).toBe(17);

    // burst-0 offered only node-64: the reservation moves there (replaced, not added).
    const moved = await post(h, 'prioritize', namesArgs(sandbox('burst-0'), [NODE_64]));
    expect(moved.body).toEqual([{ Host: NODE_64, Score: 10 }]);
    expect(h.service.cache.size.reservations).toBe(20);
    expect(h.service.cache.reservation('uid-burst-0')!.nodeName).toBe(NODE_64);
    expect(h.service.cache.nodeInfo(NODE_192)?.reservedCount ?? 0).toBe(16);
    expect(h.service.cache.nodeInfo(NODE_64)?.reservedCount ?? 0).toBe(4);
  });
});

describe('pods of another scheduler are passed through', () => {
  // 256 CPU would fit nowhere, and ghost is unknown: a pass-through must not judge either.
  const foreign = makePod('foreign').scheduler('default-scheduler').req({ cpu: '256', memory: '4Gi' }).obj();
  const noScheduler = (() => {
    const p = makePod('unset').req({ cpu: '2', memory: '4Gi' }).obj() as { spec: Record<string, unknown> };
    delete p.spec['schedulerName'];
    return p as Pod;
  })();

  it.each([
    ['schedulerName default-scheduler', foreign],
    ['schedulerName unset (defaults to default-scheduler)', noScheduler],
  ])('%s: filter keeps every node, prioritize scores all 0, nothing is reserved', async (_name, pod) => {
    const h = makeHarness();
    const names = [...EXAMPLE_NODES, 'ghost'];
    const before = modelState(h.service);
    const filter = await post(h, 'filter', namesArgs(pod, names));
    expect(filter.body).toEqual({
      Nodes: null,
      NodeNames: names,
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
    const prioritize = await post(h, 'prioritize', namesArgs(pod, names));
    expect(prioritize.body).toEqual(names.map((Host) => ({ Host, Score: 0 })));
    expect(modelState(h.service)).toEqual(before);
  });

  it('Nodes mode: filter echoes every Node object back', async () => {
    const h = makeHarness();
    const res = await post(h, 'filter', nodesArgs(foreign));
    expect((res.body as FilterReply).Nodes!.items).toEqual(exampleNodes());
    expect(h.service.cache.size.reservations).toBe(0);
  });

  // Regression (fixed), was in src/core/objects/records.ts toPodRecord → podRequests converts every resource, src/server/handlers.ts
  // parseRequest converts before the ownership check): a pod the extender does not own, with a valid
  // but huge request in a resource the extender does not even track (ephemeral-storage 9Pi = 2^53 +
  // 2^50 bytes > Number.MAX_SAFE_INTEGER), gets Error "pod request ephemeral-storage (units): ... is
  // outside the safe integer range" instead of being passed through. A filter Error is not
  // ignorable for kube-scheduler, so that pod can never be scheduled by any profile.
  it('a foreign pod with a huge request in an untracked resource is still passed through (no Error)', async () => {
    const h = makeHarness();
    const pod = makePod('huge-disk').scheduler('default-scheduler').req({ cpu: '1', 'ephemeral-storage': '9Pi' }).obj();
    const res = await post(h, 'filter', namesArgs(pod));
    expect(res.body).toEqual({
      Nodes: null,
      NodeNames: [...EXAMPLE_NODES],
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });
});

describe('filter with exactly one feasible node', () => {
  it('reserves that node (kube-scheduler skips prioritize then), and the next decision sees it', async () => {
    const h = makeHarness();
    // 60 CPU: node-16 60000 > 16000 (unresolvable), node-64 14000 + 60000 = 74000 > 64000, node-192 84000 ≤ 192000.
    const big = makePod('big').req({ cpu: '60', memory: '4Gi' }).obj();
    const filter = await post(h, 'filter', namesArgs(big));
    expect((filter.body as FilterReply).NodeNames).toEqual([NODE_192]);
    expect([...h.service.cache.reservations()].map((r) => [r.uid, r.nodeName, r.request])).toEqual([
      ['uid-big', NODE_192, [60000, 4 * 1024 ** 3]],
    ]);

    // A 2 CPU pod now sees node-192 at (24000 + 60000 + 2000)/192000 = 0.4479 → floor(9 × 0.5521) = 4;
    // node-64 (0.25) wins.
    const next = await post(h, 'prioritize', namesArgs(sandbox('next')));
    expect(scoresOf(next.body as HostPriority[])).toEqual({ [NODE_16]: 5, [NODE_64]: 10, [NODE_192]: 4 });
  });

  it('does not reserve when several nodes pass', async () => {
    const h = makeHarness();
    await post(h, 'filter', namesArgs(sandbox('a')));
    expect(h.service.cache.size.reservations).toBe(0);
  });

  it('a filter retried for the same pod does not compete with its own reservation', async () => {
    const h = makeHarness();
    // 168 CPU exactly fills node-192 (192000 − 24000 = 168000m free).
    const exact = makePod('exact').req({ cpu: '168', memory: '4Gi' }).obj();
    for (let i = 0; i < 3; i++) {
      const res = await post(h, 'filter', namesArgs(exact));
      expect((res.body as FilterReply).NodeNames).toEqual([NODE_192]);
    }
    expect(h.service.cache.size.reservations).toBe(1);
    // Another pod of 1m no longer fits node-192: 24000 + 168000 reserved + 1 > 192000.
    const other = await post(h, 'filter', namesArgs(makePod('tiny').req({ cpu: '1m' }).obj(), [NODE_192]));
    expect((other.body as FilterReply).FailedNodes[NODE_192]).toBe(
      'Insufficient cpu: requested 1m + in use 192000m (allocated 20000m, paused 4000m, reserved 168000m) > allocatable 192000m',
    );
  });
});

describe('reservation expiry', () => {
  it('a reservation older than placementReservationTtlSeconds no longer counts at the next request', async () => {
    const h = makeHarness({ placementReservationTtlSeconds: 60 });
    await post(h, 'filter', namesArgs(makePod('big').req({ cpu: '60', memory: '4Gi' }).obj()));
    expect(h.service.cache.size.reservations).toBe(1);
    h.clock.now += 59_999;
    await post(h, 'filter', namesArgs(sandbox('a')));
    expect(h.service.cache.size.reservations).toBe(1);
    h.clock.now += 1;
    const res = await post(h, 'prioritize', namesArgs(sandbox('a')));
    expect(res.body).toEqual(FRESH_SCORES); // node-192 back to 0.1354
    expect([...h.service.cache.reservations()].map((r) => r.uid)).toEqual(['uid-a']);
    const metrics = (await request(h.app).get('/metrics')).text;
    expect(sampleValue(metrics, 'sandbox_extender_reservations_released_total', { reason: 'expired' })).toBe(1);
  });
});

describe('health, readiness, metrics and unknown routes', () => {
  it('/healthz answers 200 ok', async () => {
    const res = await request(makeHarness().app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toBe('ok');
  });

  it('/readyz answers 200 when ready and 503 with the reason when not', async () => {
    const h = makeHarness();
    expect((await request(h.app).get('/readyz')).text).toBe('ok');
    const notReady = createApp(
      {
        service: h.service,
        pausedLabel: h.config.pausedLabel,
        metrics: h.metrics,
        logger: pino({ level: 'silent' }),
        now: () => h.clock.now,
        notReady: () => 'the scheduler cache has not completed its initial sync',
      },
      { maxRequestBodyBytes: 1024, maxRequestDepth: 100, maxRequestElements: 1000 },
    );
    const res = await request(notReady).get('/readyz');
    expect(res.status).toBe(503);
    expect(res.text).toBe('not ready: the scheduler cache has not completed its initial sync');
  });

  it('/readyz adds the readiness lines (cluster mode: each watch) under its first line, ready or not', async () => {
    const h = makeHarness();
    let reason: string | null = null;
    const app = createApp(
      {
        service: h.service,
        pausedLabel: h.config.pausedLabel,
        metrics: h.metrics,
        logger: pino({ level: 'silent' }),
        now: () => h.clock.now,
        notReady: () => reason,
      },
      {
        maxRequestBodyBytes: 1024,
        maxRequestDepth: 100,
        maxRequestElements: 1000,
        readyDetails: () => 'nodes: synced; watch open\npods: synced; no watch open',
      },
    );
    expect(
      await request(app)
        .get('/readyz')
        .expect(200)
        .then((r) => r.text),
    ).toBe('ok\nnodes: synced; watch open\npods: synced; no watch open');
    reason = 'the scheduler cache is stale';
    expect(
      await request(app)
        .get('/readyz')
        .expect(503)
        .then((r) => r.text),
    ).toBe('not ready: the scheduler cache is stale\nnodes: synced; watch open\npods: synced; no watch open');
  });

  it.each([
    ['GET', '/nope'],
    ['POST', '/preempt'],
  ])('%s %s → 404 with a JSON Error naming the verbs', async (method, path) => {
    const h = makeHarness();
    const res = method === 'GET' ? await request(h.app).get(path) : await request(h.app).post(path).send({});
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      Error: `sandbox-extender: no route for ${method} ${path}; the verbs are POST /filter, /prioritize and /bind`,
    });
  });

  it.each([
    ['GET', '/filter'],
    ['PUT', '/Prioritize/'],
    ['DELETE', '/bind'],
  ])('%s %s → 405 with Allow: POST and a JSON Error; counted under its verb', async (method, path) => {
    const h = makeHarness();
    const res = await request(h.app)[method.toLowerCase() as 'get' | 'put' | 'delete'](path);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const verb = path.replace(/\//g, '').toLowerCase();
    expect(res.body).toEqual({ Error: `sandbox-extender: ${method} /${verb}: the verbs are called with POST` });
    expect(res.text.endsWith('}\n')).toBe(true);
    expect(await h.metrics.registry.getSingleMetricAsString('sandbox_extender_http_requests_total')).toContain(
      `{verb="${verb}",code="405"} 1`,
    );
  });

  // Regression (new-user trial): POST /readyz answered 404 "no route", as if the path did not exist.
  it.each([
    ['POST', '/readyz'],
    ['POST', '/healthz'],
    ['PUT', '/metrics'],
    ['DELETE', '/debug/nodes'],
    ['PATCH', '/debug/nodes/sandbox-node-16'],
    ['POST', '/Readyz/'],
  ])('%s %s → 405 with Allow: GET, HEAD and a JSON Error; counted under "other"', async (method, path) => {
    const h = makeHarness();
    const res = await request(h.app)[method.toLowerCase() as 'post' | 'put' | 'delete' | 'patch'](path).send({});
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ Error: `sandbox-extender: ${method} ${path}: this path is read with GET or HEAD` });
    expect(res.text.endsWith('}\n')).toBe(true);
    expect(await h.metrics.registry.getSingleMetricAsString('sandbox_extender_http_requests_total')).toContain(
      '{verb="other",code="405"} 1',
    );
  });

  // Regression (new-user trial): express's own "Failed to decode param '%zz'" went out as the message.
  it('GET /debug/nodes/%zz → 400: the path is not valid percent-encoding', async () => {
    const res = await request(makeHarness().app).get('/debug/nodes/%zz');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ Error: 'sandbox-extender: the path is not valid percent-encoding' });
  });

  it.each([['/healthz'], ['/readyz'], ['/metrics'], ['/debug/nodes']])('HEAD %s → 200 (as GET)', async (path) => {
    expect((await request(makeHarness().app).head(path)).status).toBe(200);
  });

  it('/metrics: requests by verb and code, latency histogram, placements by strategy/result, pending reservations', async () => {
    const h = makeHarness();
    const fitsNowhere = makePod('too-big').req({ cpu: '256', memory: '4Gi' }).obj();
    const foreign = makePod('foreign').scheduler('default-scheduler').req({ cpu: '1' }).obj();
    expect((await post(h, 'filter', namesArgs(sandbox('a')))).status).toBe(200); // 3 feasible: no placement counted
    expect((await post(h, 'prioritize', namesArgs(sandbox('a')))).status).toBe(200); // placed
    expect((await post(h, 'filter', '[]')).status).toBe(200); // error
    expect((await post(h, 'prioritize', '[]')).status).toBe(400); // error
    expect((await post(h, 'filter', '{')).status).toBe(400); // invalid JSON: never reaches the verb
    expect((await post(h, 'filter', namesArgs(fitsNowhere))).status).toBe(200); // no_fit
    expect((await post(h, 'filter', namesArgs(foreign))).status).toBe(200); // passthrough (counted by filter, which always comes first)
    expect((await post(h, 'prioritize', namesArgs(foreign))).status).toBe(200); // not counted again
    expect((await request(h.app).get('/nope')).status).toBe(404);

    const res = await request(h.app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.text;
    const requests = (verb: string, code: string) =>
      sampleValue(text, 'sandbox_extender_http_requests_total', { verb, code });
    expect([
      requests('filter', '200'),
      requests('filter', '400'),
      requests('prioritize', '200'),
      requests('prioritize', '400'),
      requests('other', '404'),
    ]).toEqual([4, 1, 2, 1, 1]);

    const histogram = 'sandbox_extender_http_request_duration_seconds';
    expect(sampleValue(text, `${histogram}_count`, { verb: 'filter' })).toBe(5);
    expect(sampleValue(text, `${histogram}_count`, { verb: 'prioritize' })).toBe(3);
    expect(sampleValue(text, `${histogram}_bucket`, { verb: 'filter', le: '+Inf' })).toBe(5);
    const buckets = [
      '0.0005',
      '0.001',
      '0.0025',
      '0.005',
      '0.01',
      '0.025',
      '0.05',
      '0.1',
      '0.25',
      '0.5',
      '1',
      '2.5',
      '5',
      '+Inf',
    ].map((le) => sampleValue(text, `${histogram}_bucket`, { verb: 'filter', le }));
    expect(buckets.every((v) => v !== undefined)).toBe(true);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!).toBeGreaterThanOrEqual(buckets[i - 1]!);
    expect(sampleValue(text, `${histogram}_sum`, { verb: 'filter' })).toBeGreaterThan(0);

    const placements = (result: string) =>
      sampleValue(text, 'sandbox_extender_placements_total', { strategy: 'least_loaded', result });
    expect([placements('placed'), placements('no_fit'), placements('passthrough'), placements('error')]).toEqual([
      1, 1, 1, 2,
    ]);
    expect(sampleValue(text, 'sandbox_extender_reservations_pending')).toBe(1);
    // Default process metrics, with the extender's prefix, on its own registry.
    expect(text).toMatch(/^sandbox_extender_process_cpu_user_seconds_total /m);
  });

  // Regression (fixed), was in src/server/app.ts timing(): `req.path === '/filter' ? ...`): express routing is
  // case-insensitive and non-strict, so POST /filter/ is answered by the filter verb (200, a real
  // ExtenderFilterResult) but counted as verb="other" in the request counter and latency histogram.
  it('a request answered by the filter verb at /filter/ is counted as verb="filter"', async () => {
    const h = makeHarness();
    const res = await request(h.app)
      .post('/filter/')
      .send(namesArgs(sandbox('a')));
    expect((res.body as FilterReply).NodeNames).toEqual([...EXAMPLE_NODES]);
    const text = (await request(h.app).get('/metrics')).text;
    expect(sampleValue(text, 'sandbox_extender_http_requests_total', { verb: 'filter', code: '200' })).toBe(1);
  });
  // Regression (new-user trial): an absolute-form target (RFC 9112 §3.2.2) reached express, which answered 404
  // "no route for POST /filter; the verbs are POST /filter, ...".
  it('an absolute-form target (POST http://host/filter) is the filter verb', async () => {
    expect(verbOfPath('http://extender.example/filter')).toBe('filter');
    expect(verbOfPath('HTTP://extender.example:8888/Prioritize/?x=1')).toBe('prioritize');
    expect(verbOfPath('http://extender.example')).toBeNull();
    expect(verbOfPath('http://extender.example/readyz')).toBeNull();
    const h = makeHarness();
    const server = createServer(h.app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify(namesArgs(sandbox('abs')));
      const reply = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method: 'POST', path: 'http://extender.example/filter' },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.setHeader('Content-Type', 'application/json');
        req.end(body);
      });
      expect(reply.status).toBe(200);
      expect((JSON.parse(reply.text) as FilterReply).NodeNames).toEqual([...EXAMPLE_NODES]);
    } finally {
      server.close();
    }
  });

  it('/FILTER and /Prioritize/ are served and counted under their verbs', async () => {
    const h = makeHarness();
    await request(h.app)
      .post('/FILTER')
      .send(namesArgs(makePod('a').obj()))
      .expect(200);
    await request(h.app)
      .post('/Prioritize/')
      .send(namesArgs(makePod('b').obj()))
      .expect(200);
    const text = (await request(h.app).get('/metrics')).text;
    expect(sampleValue(text, 'sandbox_extender_http_requests_total', { verb: 'filter', code: '200' })).toBe(1);
    expect(sampleValue(text, 'sandbox_extender_http_requests_total', { verb: 'prioritize', code: '200' })).toBe(1);
  });
});

describe('quantities at the limits of exact arithmetic', () => {
  it('a valid but astronomically large request (9Pi of memory) fits nowhere instead of being an Error', async () => {
    const h = makeHarness();
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(makePod('huge').req({ cpu: '1', memory: '9Pi' }).obj()))
      .expect(200);
    // 9Pi = 10133099161583616 bytes > 2^53 − 1: saturates at 9007199254740991, above every node's allocatable.
    expect(res.body.Error).toBe('');
    expect(res.body.NodeNames).toEqual([]);
    expect(Object.keys(res.body.FailedAndUnresolvableNodes).sort()).toEqual([NODE_16, NODE_192, NODE_64]);
    expect(res.body.FailedAndUnresolvableNodes[NODE_16]).toBe(
      "memory request 8Pi or more exceeds the node's allocatable 64Gi",
    );
    expect(schedulerAmount('memory', 10133099161583616n * 1_000_000_000n)).toBe(Number.MAX_SAFE_INTEGER);
    expect(schedulerAmount('cpu', 1_500_000n)).toBe(2); // 1.5m → 2 millicores, rounded up
  });
});
