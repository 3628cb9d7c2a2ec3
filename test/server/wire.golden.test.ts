/**
 * Golden wire tests, in the spirit of kube-scheduler's extender/v1 types_test.go TestCompatibility:
 * for the bundled example cluster (examples/snapshot.json) at a fixed clock, each request in
 * test/fixtures/wire/<case>.request.json must be answered with exactly the bytes of
 * <case>.reply.json (re-serialised compactly, so key order is pinned too).
 *
 * The example cluster, per node (cpu in millicores, memory in GiB; pods of 2 CPU / 4Gi unless said):
 *   sandbox-node-16   allocatable 16000m / 64Gi:  2 running (+1 Succeeded, counts nothing)
 *                     → allocated 4000m / 8Gi
 *   sandbox-node-64   allocatable 64000m / 256Gi: 6 running + 1 starting (bound, not Ready)
 *                     → allocated 14000m / 28Gi
 *   sandbox-node-192  allocatable 192000m / 768Gi: 10 running → allocated 20000m / 40Gi,
 *                     plus 1 paused pod of 4 CPU / 8Gi → paused 4000m / 8Gi
 *
 * How each golden reply was checked by hand (written once from the running code, then compared
 * line by line with these formulas; see src/core/fit/placer.ts for the rules):
 * - filter-nodenames / filter-nodes (2 CPU / 4Gi): every node fits
 *     16: 4000+2000 = 6000m ≤ 16000m, 8+4 = 12Gi ≤ 64Gi; 64: 14000+2000 = 16000m ≤ 64000m;
 *     192: 20000+4000+2000 = 26000m ≤ 192000m → all three feasible, no failures, 3 feasible so
 *     nothing reserved. Nodes mode echoes the three Node objects as a NodeList.
 * - filter-fits-nowhere (256 CPU / 64Gi, the example request): 256000m > every allocatable
 *     (16000m, 64000m, 192000m) → all three unresolvable; node-16 also fails memory:
 *     64Gi is not above allocatable 64Gi, but 8Gi in use + 64Gi = 72Gi > 64Gi → Insufficient memory.
 *     node-64 memory 28+64 = 92Gi ≤ 256Gi and node-192 48+64 = 112Gi ≤ 768Gi, so one reason each.
 * - filter-fits-nowhere-mixed (180 CPU / 4Gi): 180000m > 16000m and > 64000m → unresolvable;
 *     node-192: 180000m ≤ 192000m but 20000 allocated + 4000 paused + 180000 = 204000m > 192000m
 *     → FailedNodes (preemption may still help). Empty NodeNames, Error "".
 * - filter-single-feasible (60 CPU / 4Gi, plus an unknown node): node-16 60000m > 16000m
 *     → unresolvable; node-64 14000+60000 = 74000m > 64000m → FailedNodes; node-192
 *     24000+60000 = 84000m ≤ 192000m → the only feasible node, so it is reserved (kube-scheduler
 *     skips prioritize); sandbox-node-gone → FailedNodes "not in the extender's cluster snapshot".
 * - prioritize-* (2 CPU / 4Gi, least_loaded): projected cpu pressure (cpu dominates: every pod
 *     has 2Gi per CPU, nodes 4Gi per CPU)
 *     16: (4000+2000)/16000 = 0.375  → floor(9 × (1 − 0.375)) = floor(5.625) = 5
 *     64: (14000+2000)/64000 = 0.25  → floor(9 × 0.75) = floor(6.75) = 6
 *     192: (20000+4000+2000)/192000 = 0.1354 → lowest, chosen → 10
 *     unknown node → 0 (in input order).
 * - filter-chosen (one call per pod, chooseInFilter): the filter-nodenames request answered with the
 *     node least_loaded chooses alone — node-192, as in prioritize-* below — and reserved.
 * - bind-chosen / bind-not-offered: after filter-chosen, a bind to node-192 is carried out ({"Error":""});
 *     one to a node kube-scheduler never offered for that pod is refused with the reason.
 * - *-error (neither Nodes nor NodeNames): filter answers 200 with Error set and both lists null;
 *     prioritize answers 400 {"Error": ...} (policy in src/server/handlers.ts).
 */
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { makeHarness, NODE_192, WIRE_FIXTURES } from './harness.js';

interface GoldenCase {
  readonly name: string;
  readonly verb: 'filter' | 'prioritize';
  readonly status: number;
  /** Node reserved by the call, or null. */
  readonly reserves: string | null;
  /** One call per pod (chooseInFilter); the other cases run the two-call protocol. */
  readonly chooseInFilter?: boolean;
}

const CASES: readonly GoldenCase[] = [
  { name: 'filter-nodenames', verb: 'filter', status: 200, reserves: null },
  { name: 'filter-nodes', verb: 'filter', status: 200, reserves: null },
  { name: 'filter-fits-nowhere', verb: 'filter', status: 200, reserves: null },
  { name: 'filter-fits-nowhere-mixed', verb: 'filter', status: 200, reserves: null },
  { name: 'filter-single-feasible', verb: 'filter', status: 200, reserves: NODE_192 },
  { name: 'filter-error', verb: 'filter', status: 200, reserves: null },
  // One call per pod: the same request as filter-nodenames, answered with the chosen node alone (see prioritize-nodenames for why node-192).
  { name: 'filter-chosen', verb: 'filter', status: 200, reserves: NODE_192, chooseInFilter: true },
  { name: 'prioritize-nodenames', verb: 'prioritize', status: 200, reserves: NODE_192 },
  { name: 'prioritize-nodes', verb: 'prioritize', status: 200, reserves: NODE_192 },
  { name: 'prioritize-unknown-node', verb: 'prioritize', status: 200, reserves: NODE_192 },
  { name: 'prioritize-error', verb: 'prioritize', status: 400, reserves: null },
];

function readWire(file: string): string {
  return readFileSync(`${WIRE_FIXTURES}${file}`, 'utf8');
}

/** The golden reply as the exact bytes the server must send (compact JSON, key order as in the file). */
function goldenBytes(name: string): string {
  return `${JSON.stringify(JSON.parse(readWire(`${name}.reply.json`)))}\n`; // every reply ends with a newline
}

/** Lowercases the top-level keys only (nested Kubernetes objects stay camelCase), like old peers send. */
function lowercaseTopLevel(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k.toLowerCase(), v]));
}

async function send(verb: string, body: string, chooseInFilter = false) {
  const harness = makeHarness({ chooseInFilter });
  const res = await request(harness.app).post(`/${verb}`).set('Content-Type', 'application/json').send(body);
  return { res, harness };
}

describe('wire golden files (test/fixtures/wire)', () => {
  it.each(CASES)(
    '$name: the reply is byte-for-byte the golden file',
    async ({ name, verb, status, chooseInFilter }) => {
      const { res } = await send(verb, readWire(`${name}.request.json`), chooseInFilter);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.text).toBe(goldenBytes(name));
    },
  );

  it.each(CASES)(
    '$name: top-level keys lowercased (pod, nodes, nodenames) get the same PascalCase reply',
    async ({ name, verb, status, chooseInFilter }) => {
      const lowered = lowercaseTopLevel(JSON.parse(readWire(`${name}.request.json`)) as Record<string, unknown>);
      expect(Object.keys(lowered).some((k) => k !== k.toLowerCase())).toBe(false);
      const { res } = await send(verb, JSON.stringify(lowered), chooseInFilter);
      expect(res.status).toBe(status);
      expect(res.text).toBe(goldenBytes(name));
    },
  );

  it.each(CASES)('$name: reserves $reserves', async ({ name, verb, reserves, chooseInFilter }) => {
    const req = JSON.parse(readWire(`${name}.request.json`)) as { Pod: { metadata: { uid: string } } };
    const { harness } = await send(verb, JSON.stringify(req), chooseInFilter);
    const ledger = [...harness.service.cache.reservations()];
    expect(ledger.map((r) => [r.uid, r.nodeName])).toEqual(reserves ? [[req.Pod.metadata.uid, reserves]] : []);
  });

  describe('shape rules every reply of the server obeys', () => {
    const filterReplies = CASES.filter((c) => c.verb === 'filter');
    const prioritizeReplies = CASES.filter((c) => c.verb === 'prioritize' && c.status === 200);
    /** What the server answers to the case's request (not the golden file). */
    const served = async ({ name, verb, chooseInFilter }: GoldenCase) =>
      JSON.parse((await send(verb, readWire(`${name}.request.json`), chooseInFilter)).res.text) as unknown;

    it.each(filterReplies)(
      '$name: ExtenderFilterResult has exactly the PascalCase keys, in Go field order',
      async (c) => {
        const reply = (await served(c)) as Record<string, unknown>;
        expect(Object.keys(reply)).toEqual([
          'Nodes',
          'NodeNames',
          'FailedNodes',
          'FailedAndUnresolvableNodes',
          'Error',
        ]);
        expect(typeof reply['Error']).toBe('string');
        for (const map of [reply['FailedNodes'], reply['FailedAndUnresolvableNodes']]) {
          for (const reason of Object.values(map as Record<string, unknown>)) expect(typeof reason).toBe('string');
        }
      },
    );

    it.each(filterReplies.filter((c) => c.name !== 'filter-error'))(
      '$name: exactly one of Nodes / NodeNames is set, matching the request mode; Error is ""',
      async (c) => {
        const req = JSON.parse(readWire(`${c.name}.request.json`)) as { Nodes: unknown; NodeNames: unknown };
        const reply = (await served(c)) as { Nodes: unknown; NodeNames: unknown; Error: string };
        expect(reply.Error).toBe('');
        if (req.NodeNames !== null) {
          expect(Array.isArray(reply.NodeNames)).toBe(true);
          expect(reply.Nodes).toBeNull();
          for (const n of reply.NodeNames as string[]) expect(req.NodeNames as string[]).toContain(n);
        } else {
          expect(reply.NodeNames).toBeNull();
          expect(Object.keys(reply.Nodes as object)).toEqual(['metadata', 'items']);
        }
      },
    );

    it.each(prioritizeReplies)(
      '$name: a bare HostPriorityList of {Host, Score} with integer scores 0..10 and one 10',
      async (c) => {
        const reply = (await served(c)) as Record<string, unknown>[];
        expect(Array.isArray(reply)).toBe(true);
        for (const entry of reply) {
          expect(Object.keys(entry)).toEqual(['Host', 'Score']);
          expect(Number.isInteger(entry['Score'])).toBe(true);
          expect(entry['Score']).toBeGreaterThanOrEqual(0);
          expect(entry['Score']).toBeLessThanOrEqual(10);
        }
        expect(reply.filter((e) => e['Score'] === 10)).toHaveLength(1);
      },
    );

    it('filter-nodes: the NodeList items are the request Node objects, complete (status, conditions, nodeInfo)', async () => {
      const req = JSON.parse(readWire('filter-nodes.request.json')) as { Nodes: { items: unknown[] } };
      const reply = (await served(CASES.find((c) => c.name === 'filter-nodes')!)) as {
        Nodes: { metadata: unknown; items: unknown[] };
      };
      expect(reply.Nodes.metadata).toEqual({});
      // The objects are echoed as sent: equal field for field, in the same key order.
      expect(JSON.stringify(reply.Nodes.items)).toBe(JSON.stringify(req.Nodes.items));
    });

    it('the golden requests themselves are kube-scheduler shaped: PascalCase top level with explicit null for the unused list', () => {
      for (const { name } of CASES.filter((c) => !c.name.endsWith('-error'))) {
        const req = JSON.parse(readWire(`${name}.request.json`)) as Record<string, unknown>;
        expect(Object.keys(req).sort()).toEqual(['NodeNames', 'Nodes', 'Pod']);
        expect((req['Nodes'] === null) !== (req['NodeNames'] === null)).toBe(true);
      }
    });
  });
});

describe('bind golden files (test/fixtures/wire/bind-*)', () => {
  /** A cluster-mode extender with a binder that records its calls and succeeds. */
  function withBinder() {
    const calls: unknown[] = [];
    const h = makeHarness({ chooseInFilter: true }, undefined, {
      bind: async (r) => {
        calls.push(r);
        return { ok: true, alreadyBound: false };
      },
    });
    return { h, calls };
  }

  it('bind-chosen: after Filter chose node-192, binding the pod there is answered {"Error":""} and the Binding is made', async () => {
    const { h, calls } = withBinder();
    await request(h.app)
      .post('/filter')
      .set('Content-Type', 'application/json')
      .send(readWire('filter-chosen.request.json'))
      .expect(200);
    const res = await request(h.app)
      .post('/bind')
      .set('Content-Type', 'application/json')
      .send(readWire('bind-chosen.request.json'));
    expect(res.status).toBe(200);
    expect(res.text).toBe(goldenBytes('bind-chosen'));
    expect(calls).toEqual([
      {
        podName: 'sandbox-new-0',
        podNamespace: 'sandboxes',
        podUid: '7c0d3f5e-0000-4000-8000-000000000001',
        node: NODE_192,
      },
    ]);
    expect(h.service.cache.reservation('7c0d3f5e-0000-4000-8000-000000000001')).toMatchObject({
      nodeName: NODE_192,
      bindingFinished: true,
    });
  });

  it('bind-not-offered: a bind to a node kube-scheduler never offered for that pod is refused, and nothing is bound', async () => {
    const { h, calls } = withBinder();
    await request(h.app)
      .post('/filter')
      .set('Content-Type', 'application/json')
      .send(readWire('filter-chosen.request.json'))
      .expect(200);
    const res = await request(h.app)
      .post('/bind')
      .set('Content-Type', 'application/json')
      .send(readWire('bind-not-offered.request.json'));
    expect(res.status).toBe(200);
    expect(res.text).toBe(goldenBytes('bind-not-offered'));
    expect(calls).toEqual([]);
    expect(h.service.cache.reservation('7c0d3f5e-0000-4000-8000-000000000001')).toMatchObject({
      nodeName: NODE_192,
      bindingFinished: false,
    });
  });
});
