/**
 * agent-sandbox pods at the HTTP edge: the placement Event names the pod's kind and template, /debug/nodes counts
 * the warm-pool, claimed and standalone sandboxes per node, and a pod of any other origin is answered and explained
 * byte for byte as before. Bad input from this side (a Sandbox pod without requests, a pod whose Sandbox is gone,
 * the template label on another scheduler's pod, ownerReferences of the wrong shape, a 10 KB label value) is placed
 * or passed through with a readable reason, never an error reply.
 */
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { CLAIM_UID_LABEL, TEMPLATE_HASH_LABEL, WARM_POOL_LABEL } from '../../src/core/objects/agentSandboxPods.js';
import type { Pod } from '../../src/core/objects/kubeObjects.js';
import { toPodRecord } from '../../src/core/objects/records.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';
import { makePod } from '../fixtures/builders.js';
import { EXAMPLES, loadExample, makeHarness, namesArgs, NODE_192, sampleValue } from './harness.js';

const TEMPLATE = '7c7dd1d6';
const POOL = 'ed572cc4';
/** What the extender says of a plain pod of 2 CPU / 4 GiB on the example cluster (test/server/clusterVerbs.test.ts has the arithmetic). */
const PLAIN = `placed on ${NODE_192} by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 3 candidates, 3 fit; runner-up sandbox-node-64 at 0.250`;

/** A pod of 2 CPU / 4 GiB, optionally owned by a Sandbox of its name (`owners` replaces that) and labelled. */
function pod(
  name: string,
  labels: Record<string, string> = {},
  owners: unknown = 'sandbox',
  requests: Record<string, string> | null = { cpu: '2', memory: '4Gi' },
): Pod {
  const b = makePod(name);
  if (requests) b.req(requests);
  for (const [k, v] of Object.entries(labels)) b.label(k, v);
  const p = b.obj();
  // null: one container with no resources at all (a SandboxTemplate that sets none)
  if (!requests)
    (p.spec as { containers: unknown[] }).containers = [
      { name: 'sandbox', image: 'registry.example/python-runtime:3.12' },
    ];
  if (owners === null) return p;
  const ownerReferences =
    owners === 'sandbox'
      ? [
          {
            apiVersion: 'agents.x-k8s.io/v1beta1',
            kind: 'Sandbox',
            name,
            uid: `sandbox-uid-${name}`,
            controller: true,
            blockOwnerDeletion: true,
          },
        ]
      : owners;
  return { ...p, metadata: { ...p.metadata, ownerReferences: ownerReferences as never } };
}
const POOL_LABELS = { [WARM_POOL_LABEL]: POOL, [TEMPLATE_HASH_LABEL]: TEMPLATE };

function harness(chooseInFilter = false, snapshot = readSnapshot(`${EXAMPLES}snapshot.json`)) {
  const notices: DecisionNotice[] = [];
  const h = makeHarness({ chooseInFilter }, snapshot, { onDecision: (n) => notices.push(n) });
  return { h, notices };
}

/** The one placement message a decision for `p` records (prioritize, or filter with chooseInFilter). */
async function placementMessage(p: Pod, chooseInFilter = false): Promise<string> {
  const { h, notices } = harness(chooseInFilter);
  await request(h.app)
    .post(chooseInFilter ? '/filter' : '/prioritize')
    .send(namesArgs(p))
    .expect(200);
  expect(notices.map((n) => n.result)).toEqual(['placed']);
  return notices[0]!.message;
}

describe('the placement Event of an agent-sandbox pod', () => {
  it('a warm pool’s pod: the usual message, then its template and kind; the same with one call per pod', async () => {
    expect(await placementMessage(pod('python-pool-x7k2p', POOL_LABELS))).toBe(
      `${PLAIN}; agent-sandbox pod of template ${TEMPLATE}, warm pool`,
    );
    expect(await placementMessage(pod('python-pool-x7k2p', POOL_LABELS), true)).toBe(
      `${PLAIN}; agent-sandbox pod of template ${TEMPLATE}, warm pool`,
    );
  });

  it('a claim’s pod (v0.5.6: the template hash; v1.0.1: also the claim UID), and a Sandbox’s of its own', async () => {
    expect(await placementMessage(pod('claim-0042', { [TEMPLATE_HASH_LABEL]: TEMPLATE }))).toBe(
      `${PLAIN}; agent-sandbox pod of template ${TEMPLATE}, claimed`,
    );
    const v1 = { [TEMPLATE_HASH_LABEL]: TEMPLATE, [CLAIM_UID_LABEL]: '4f7a2c1e-0000-4000-8000-000000000042' };
    expect(await placementMessage(pod('claim-0042', v1))).toBe(
      `${PLAIN}; agent-sandbox pod of template ${TEMPLATE}, claimed`,
    );
    expect(await placementMessage(pod('notebook-ada'))).toBe(
      `${PLAIN}; agent-sandbox pod, a Sandbox of its own (no claim, no warm pool)`,
    );
  });

  it('a pod of any other origin gets the message of before, byte for byte: plain, or with agent-sandbox’s labels but no Sandbox owner', async () => {
    expect(await placementMessage(pod('plain', {}, null))).toBe(PLAIN);
    expect(await placementMessage(pod('labelled', POOL_LABELS, null))).toBe(PLAIN);
    expect(
      await placementMessage(
        pod('replicaset', POOL_LABELS, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', controller: true }]),
      ),
    ).toBe(PLAIN);
  });

  it('locality on: the locality clause first, then the agent-sandbox one', async () => {
    const notices: DecisionNotice[] = [];
    const h = makeHarness(
      { chooseInFilter: true, locality: { enabled: true } },
      readSnapshot(`${EXAMPLES}snapshot.json`),
      { onDecision: (n) => notices.push(n) },
    );
    await request(h.app)
      .post('/filter')
      .send(namesArgs(pod('python-pool-x7k2p', POOL_LABELS)))
      .expect(200);
    expect(notices[0]!.message).toMatch(
      new RegExp(
        `; (template warm on this node|cold: [^;]*|partial: [^;]*); agent-sandbox pod of template ${TEMPLATE}, warm pool$`,
      ),
    );
  });

  it('the kind changes nothing of the decision: the same node, score and reservation as the same pod without a Sandbox', async () => {
    const answers = [];
    for (const p of [pod('same', POOL_LABELS), pod('same', {}, null)]) {
      const { h } = harness();
      const filter = await request(h.app).post('/filter').send(namesArgs(p)).expect(200);
      const scores = await request(h.app).post('/prioritize').send(namesArgs(p)).expect(200);
      const r = h.service.cache.reservation('uid-same')!;
      answers.push([filter.text, scores.text, r.nodeName, r.request]);
    }
    expect(answers[0]).toEqual(answers[1]);
  });
});

describe('bad input from agent-sandbox’s side: placed or passed through, never an error reply', () => {
  it('a Sandbox pod without requests: placed as zero requests, and the Event says so', async () => {
    const { h, notices } = harness(true);
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(pod('python-pool-noreq', POOL_LABELS, 'sandbox', null)))
      .expect(200);
    expect(res.body).toMatchObject({ Error: '', NodeNames: [NODE_192] });
    expect(h.service.cache.reservation('uid-python-pool-noreq')).toMatchObject({ nodeName: NODE_192, request: [0, 0] });
    // Nothing projected: pressures unchanged; node-64's is (14000 + 0) / 64000 = 0.219.
    expect(notices[0]!.message).toBe(
      `placed on ${NODE_192} by least_loaded: projected pressure cpu 0.125→0.125, memory 0.063→0.063 (max 0.125); 3 candidates, 3 fit; runner-up sandbox-node-64 at 0.219; ` +
        `agent-sandbox pod of template ${TEMPLATE}, warm pool; the pod requests no cpu or memory: ranked as zero requests (set requests in its SandboxTemplate)`,
    );
    expect(
      sampleValue((await request(h.app).get('/metrics')).text, 'sandbox_extender_placements_total', {
        strategy: 'least_loaded',
        result: 'placed',
      }),
    ).toBe(1);
  });

  it('a pod whose Sandbox is gone (only the ownerReference left): recognised from the pod alone and placed normally', async () => {
    expect(
      await placementMessage(
        pod('orphan', {}, [
          { apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'Sandbox', name: 'deleted-sandbox', uid: 'gone' },
        ]),
      ),
    ).toBe(`${PLAIN}; agent-sandbox pod, a Sandbox of its own (no claim, no warm pool)`);
  });

  it('agent-sandbox’s labels and owner on a pod of another scheduler: passed through exactly as without them', async () => {
    const replies = [];
    for (const p of [pod('foreign', POOL_LABELS), pod('foreign', {}, null)]) {
      const { h, notices } = harness(true);
      const foreign = { ...p, spec: { ...p.spec, schedulerName: 'default-scheduler' } };
      const res = await request(h.app).post('/filter').send(namesArgs(foreign)).expect(200);
      expect(h.service.cache.size.reservations).toBe(0);
      expect(notices).toEqual([]);
      expect(
        sampleValue((await request(h.app).get('/metrics')).text, 'sandbox_extender_placements_total', {
          strategy: 'least_loaded',
          result: 'passthrough',
        }),
      ).toBe(1);
      replies.push(res.text);
    }
    expect(replies[0]).toBe(replies[1]);
    expect(JSON.parse(replies[0]!)).toMatchObject({
      Error: '',
      NodeNames: ['sandbox-node-16', 'sandbox-node-64', NODE_192],
    });
  });

  it.each([
    ['a string', 'Sandbox'],
    ['an object', { kind: 'Sandbox', apiVersion: 'agents.x-k8s.io/v1beta1' }],
    ['entries of the wrong shape', [null, 3, 'Sandbox', { kind: 'Sandbox', apiVersion: 7 }]],
  ])(
    'ownerReferences as %s (no API server sends it): placed as a pod of no Sandbox, its Event the plain one',
    async (_name, owners) => {
      expect(await placementMessage(pod('odd', POOL_LABELS, owners))).toBe(PLAIN);
    },
  );

  it('a 10 KB template label on a Sandbox pod: placed; the Event calls the template unreadable and does not carry the value', async () => {
    const message = await placementMessage(
      pod('huge', { [WARM_POOL_LABEL]: POOL, [TEMPLATE_HASH_LABEL]: 'a'.repeat(10_240) }),
    );
    expect(message).toBe(
      `${PLAIN}; agent-sandbox pod of an unreadable template (its ${TEMPLATE_HASH_LABEL} label is not a label value), warm pool`,
    );
  });
});

describe('/debug/nodes: agent-sandbox pods per node', () => {
  const snapshotPath = `${EXAMPLES}agent-sandbox/snapshot.json`;

  it('examples/agent-sandbox: 3 warm-pool, 2 claimed (one adopted, one cold and starting) and 1 standalone on agent-node-64; 2 warm-pool beside a CI job on agent-node-32', async () => {
    const h = makeHarness({}, readSnapshot(snapshotPath));
    const nodes = (await request(h.app).get('/debug/nodes').expect(200)).body as {
      name: string;
      agentSandboxes: unknown;
      sandboxes: { running: number };
    }[];
    expect(nodes.map((n) => [n.name, n.agentSandboxes, n.sandboxes.running])).toEqual([
      ['agent-node-32', { warmPool: 2, claimed: 0, standalone: 0 }, 3],
      ['agent-node-64', { warmPool: 3, claimed: 2, standalone: 1 }, 5],
    ]);
  });

  it('a placement reserves without counting; the pod counts once the watch shows it bound; a claim adopting it moves it to claimed', async () => {
    const h = makeHarness({ chooseInFilter: true }, readSnapshot(snapshotPath));
    const p = loadExample<Pod>('agent-sandbox/pool-pod.json');
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(p, ['agent-node-32', 'agent-node-64']))
      .expect(200);
    expect(res.body.NodeNames).toEqual(['agent-node-64']); // (9 + 1) / 64 = 0.156 against (6 + 1) / 32 = 0.219
    const counts = async () =>
      (await request(h.app).get('/debug/nodes/agent-node-64').expect(200)).body as {
        agentSandboxes: unknown;
        sandboxes: { reserved: number };
      };
    expect(await counts()).toMatchObject({
      agentSandboxes: { warmPool: 3, claimed: 2, standalone: 1 },
      sandboxes: { reserved: 1 },
    });
    const bound: Pod = {
      ...p,
      spec: { ...p.spec, nodeName: 'agent-node-64' },
      status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
    };
    h.updates.upsertPod(toPodRecord(bound, h.service.cache.dims, { pausedLabel: h.config.pausedLabel }));
    expect(await counts()).toMatchObject({
      agentSandboxes: { warmPool: 4, claimed: 2, standalone: 1 },
      sandboxes: { reserved: 0 },
    });
    const labels = { ...bound.metadata!.labels };
    delete labels[WARM_POOL_LABEL];
    h.updates.upsertPod(
      toPodRecord({ ...bound, metadata: { ...bound.metadata, labels } }, h.service.cache.dims, {
        pausedLabel: h.config.pausedLabel,
      }),
    );
    expect(await counts()).toMatchObject({ agentSandboxes: { warmPool: 3, claimed: 3, standalone: 1 } });
  });
});

describe('docs/agent-sandbox.md', () => {
  it('quotes the Event the example pool pod gets on the example agent-sandbox cluster, as the extender writes it', async () => {
    const notices: DecisionNotice[] = [];
    const h = makeHarness({ chooseInFilter: true }, readSnapshot(`${EXAMPLES}agent-sandbox/snapshot.json`), {
      onDecision: (n) => notices.push(n),
    });
    await request(h.app)
      .post('/filter')
      .send(namesArgs(loadExample<Pod>('agent-sandbox/pool-pod.json'), ['agent-node-32', 'agent-node-64']))
      .expect(200);
    const message = notices[0]!.message;
    expect(message).toMatch(/; agent-sandbox pod of template 7c7dd1d6, warm pool$/);
    expect(readFileSync(new URL('../../docs/agent-sandbox.md', import.meta.url), 'utf8')).toContain(message);
  });
});
