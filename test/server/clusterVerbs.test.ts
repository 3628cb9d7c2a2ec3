/**
 * The cluster-mode parts of the HTTP edge, with the API calls replaced by fakes: the bind verb and
 * its reservation handling, decision notices (the Events), readiness gating and the debug view.
 */
import request from 'supertest';
import type { BindOutcome, BindRequest } from '../../src/core/objects/binding.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { makeNode, makePod } from '../fixtures/builders.js';
import { makeHarness, namesArgs, NODE_16, NODE_192, NODE_64, NOW_MS, SNAPSHOT_PATH } from './harness.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';
import { toPodRecord } from '../../src/core/objects/records.js';

const sandbox = (name: string, cpu = '2', memory = '4Gi') => makePod(name).req({ cpu, memory }).obj();

function withBinder(outcome: BindOutcome | ((r: BindRequest) => BindOutcome)) {
  const calls: BindRequest[] = [];
  const notices: DecisionNotice[] = [];
  const h = makeHarness({}, readSnapshot(SNAPSHOT_PATH), {
    bind: async (r) => {
      calls.push(r);
      return typeof outcome === 'function' ? outcome(r) : outcome;
    },
    onDecision: (n) => notices.push(n),
  });
  return { h, calls, notices };
}

const bindArgs = (pod: string, node: string, uid = `uid-${pod}`) => ({
  PodName: pod,
  PodNamespace: 'sandboxes',
  PodUID: uid,
  Node: node,
});

describe('POST /bind', () => {
  it('binds through the API and moves the pod’s reservation to the bound node', async () => {
    const { h, calls } = withBinder({ ok: true, alreadyBound: false });
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    expect(h.service.cache.reservation('uid-p1')?.nodeName).toBe(NODE_192);
    // kube-scheduler chose another node (other plugins): the bind says where it really goes.
    const res = await request(h.app).post('/bind').send(bindArgs('p1', NODE_64)).expect(200);
    expect(res.body).toEqual({ Error: '' });
    expect(calls).toEqual([{ podName: 'p1', podNamespace: 'sandboxes', podUid: 'uid-p1', node: NODE_64 }]);
    expect(h.service.cache.reservation('uid-p1')?.nodeName).toBe(NODE_64);
    expect(h.service.cache.nodeInfo(NODE_192)?.reservedCount ?? 0).toBe(0);
  });

  it('accepts lowercase keys, and an already-bound retry is success', async () => {
    const { h } = withBinder({ ok: true, alreadyBound: true });
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p')))
      .expect(200);
    const res = await request(h.app)
      .post('/bind')
      .send({ podname: 'p', podnamespace: 'sandboxes', poduid: 'uid-p', node: NODE_16 })
      .expect(200);
    expect(res.body).toEqual({ Error: '' });
    const metrics = await request(h.app).get('/metrics');
    expect(metrics.text).toMatch(/sandbox_extender_binds_total\{result="already_bound"\} 1/);
  });

  it("a failed bind answers the reason in Error and leaves the pod's reservation held where the bind tried (until kube-scheduler's retry decides again)", async () => {
    const { h } = withBinder({ ok: false, error: 'pod sandboxes/p2 has UID other, not uid-p2 (stale request)' });
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p2')))
      .expect(200);
    const before = [...h.service.cache.reservations()].map((r) => [
      r.uid,
      r.nodeName,
      r.bindingStarted,
      r.bindingFinished,
    ]);
    expect(before).toEqual([
      ['uid-p1', NODE_192, false, false],
      ['uid-p2', NODE_192, false, false],
    ]);
    const res = await request(h.app).post('/bind').send(bindArgs('p2', NODE_16)).expect(200);
    expect(res.body).toEqual({ Error: 'sandbox-extender: pod sandboxes/p2 has UID other, not uid-p2 (stale request)' });
    // Held on the node the bind checked from before the API call: a failure the watch shows now releases nothing.
    expect(
      [...h.service.cache.reservations()].map((r) => [r.uid, r.nodeName, r.bindingStarted, r.bindingFinished]),
    ).toEqual([
      ['uid-p1', NODE_192, false, false],
      ['uid-p2', NODE_16, true, false],
    ]);
  });

  it.each([
    ['an empty body', {}],
    ['a missing Node', { PodName: 'p', PodNamespace: 'ns', PodUID: 'u' }],
    ['a number for PodName', { PodName: 1, PodNamespace: 'ns', PodUID: 'u', Node: 'n' }],
  ])('%s gets a readable Error and no API call', async (_name, body) => {
    const { h, calls } = withBinder({ ok: true, alreadyBound: false });
    const res = await request(h.app).post('/bind').send(body).expect(200);
    expect(res.body.Error).toMatch(/^sandbox-extender: .*(PodName|Node)/);
    expect(calls).toEqual([]);
  });

  it('refuses a field given under two casings (Node and node), naming both keys, with no API call', async () => {
    const { h, calls } = withBinder({ ok: true, alreadyBound: false });
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p')))
      .expect(200);
    const res = await request(h.app)
      .post('/bind')
      .send({ ...bindArgs('p', NODE_16), node: NODE_64 })
      .expect(200);
    expect(res.body).toEqual({
      Error:
        'sandbox-extender: ExtenderBindingArgs: "Node" and "node" name one field, Node (keys are matched case-insensitively, as Go\'s encoding/json reads the protocol\'s types; it would decode each into that field, the later over the earlier, so which value is meant is ambiguous): send each field once',
    });
    expect(calls).toEqual([]);
  });

  it('refuses, touching nothing, a bind kube-scheduler did not just decide: a pod never filtered, a node never offered', async () => {
    const { h, calls } = withBinder({ ok: true, alreadyBound: false });
    const never = await request(h.app).post('/bind').send(bindArgs('p9', NODE_16)).expect(200);
    expect(never.body.Error).toBe(
      'sandbox-extender: bind of sandboxes/p9 to sandbox-node-16 refused: no filter or prioritize for pod UID uid-p9 was answered by this extender within the reservation TTL: only a pod kube-scheduler has just scheduled is bound',
    );
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), [NODE_64, NODE_192]))
      .expect(200);
    const elsewhere = await request(h.app).post('/bind').send(bindArgs('p1', NODE_16)).expect(200);
    expect(elsewhere.body.Error).toBe(
      'sandbox-extender: bind of sandboxes/p1 to sandbox-node-16 refused: node sandbox-node-16 was not among the candidates kube-scheduler offered for pod UID uid-p1',
    );
    expect(calls).toEqual([]);
    const metrics = await request(h.app).get('/metrics');
    expect(metrics.text).toMatch(/sandbox_extender_binds_total\{result="refused"\} 2/);
  });

  it("refuses a bind to the chosen node once another scheduler's pod bound there since the decision fills it; the reservation goes", async () => {
    const { h, calls } = withBinder({ ok: true, alreadyBound: false });
    const cache = h.service.cache;
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1', '10'), [NODE_16]))
      .expect(200);
    expect(cache.reservation('uid-p1')?.nodeName).toBe(NODE_16);
    // default-scheduler's pod of 4 CPUs bound to the same node, shown by the watch between Filter and bind:
    // node-16 then holds 4000m (the snapshot's pods) + 4000m without p1's reservation: 8000m + 10000m > 16000m
    h.updates.upsertPod(
      toPodRecord(makePod('foreign').req({ cpu: '4' }).node(NODE_16).obj(), cache.dims, {
        pausedLabel: h.config.pausedLabel,
      }),
    );
    h.updates.podsAppliedAt('4711');
    const res = await request(h.app).post('/bind').send(bindArgs('p1', NODE_16)).expect(200);
    expect(res.body.Error).toBe(
      'sandbox-extender: bind of sandboxes/p1 to sandbox-node-16 refused: node sandbox-node-16 does not fit pod UID uid-p1 now: ' +
        'Insufficient cpu: requested 10000m + in use 8000m (allocated 8000m, paused 0m, reserved 0m) > allocatable 16000m',
    );
    expect(calls).toEqual([]);
    expect(cache.reservation('uid-p1')).toBeUndefined();
    const metrics = await request(h.app).get('/metrics');
    expect(metrics.text).toMatch(/sandbox_extender_binds_total\{result="does_not_fit"\} 1/);
    expect(metrics.text).toMatch(/sandbox_extender_binds_total\{result="refused"\} 0/);
    expect(metrics.text).toMatch(/sandbox_extender_reservations_released_total\{reason="unreserved"\} 1/);
  });

  it('pods rejected for capacity are remembered for a requeue up to requeue.maxPods; the ones dropped past it are counted', async () => {
    const h = makeHarness({ requeue: { maxPods: 2 } }, readSnapshot(SNAPSHOT_PATH), {
      bind: async () => ({ ok: true, alreadyBound: false }),
    });
    // 170 CPUs fit on no node of the example cluster (node-192 has 168 free): rejected for capacity, each remembered.
    for (const name of ['big-1', 'big-2', 'big-3', 'big-4'])
      await request(h.app)
        .post('/filter')
        .send(namesArgs(sandbox(name, '170')))
        .expect(200);
    expect(h.service.rejectedPods?.size).toBe(2);
    const metrics = (await request(h.app).get('/metrics')).text;
    expect(metrics).toMatch(/^sandbox_extender_rejected_pods 2$/m);
    expect(metrics).toMatch(/^sandbox_extender_rejected_pods_dropped_total 2$/m);
  });

  it('a decision for a pod the watch has shown deleted reserves nothing (a late request after a timeout)', async () => {
    const { h } = withBinder({ ok: true, alreadyBound: false });
    h.updates.deletePod('uid-late'); // the watch's DELETED
    const res = await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('late')))
      .expect(200);
    expect((res.body as { Score: number }[]).map((s) => s.Score)).toContain(10); // answered as usual
    expect(h.service.cache.size.reservations).toBe(0);
  });

  it('a reservation for a pod the watch has never shown lapses after unconfirmedReservationTtlSeconds, not the full TTL', async () => {
    const { h } = withBinder({ ok: true, alreadyBound: false });
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('ghost')))
      .expect(200);
    expect(h.service.cache.reservation('uid-ghost')).toMatchObject({ podSeen: false, expiresAtMs: NOW_MS + 30_000 });
    h.clock.now = NOW_MS + 30_000;
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('other')))
      .expect(200); // every verb sweeps first
    expect(h.service.cache.reservation('uid-ghost')).toBeUndefined();
  });

  it('in snapshot mode (no binder) the bind verb explains that it needs cluster mode', async () => {
    const h = makeHarness();
    const res = await request(h.app).post('/bind').send(bindArgs('p', NODE_16)).expect(200);
    expect(res.body.Error).toMatch(/needs cluster mode/);
  });
});

describe('decision notices (one per decision, not per filter call)', () => {
  it('prioritize tells the chosen node with pressure before and after, candidates and the runner-up', async () => {
    const { h, notices } = withBinder({ ok: true, alreadyBound: false });
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1')))
      .expect(200); // 3 fit: not a decision
    expect(notices).toEqual([]);
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    // node-192: (20000 + 4000 paused) / 192000 = 0.125 before, + 2000 → 0.135 after; memory (40 + 8) / 768 = 0.0625 → 0.068
    // runner-up node-64: (14000 + 2000) / 64000 = 0.250
    expect(notices).toEqual([
      {
        pod: { namespace: 'sandboxes', name: 'p1', uid: 'uid-p1' },
        result: 'placed',
        node: NODE_192,
        message: `placed on ${NODE_192} by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 3 candidates, 3 fit; runner-up ${NODE_64} at 0.250`,
      },
    ]);
  });

  it('a filter that reserves its only feasible node is a decision; fitting nowhere is a failed one', async () => {
    const { h, notices } = withBinder({ ok: true, alreadyBound: false });
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('big', '100', '4Gi')))
      .expect(200);
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('huge', '500', '4Gi')))
      .expect(200);
    expect(notices.map((n) => [n.result, n.node])).toEqual([
      ['placed', NODE_192],
      ['no_fit', null],
    ]);
    expect(notices[0]!.message).toMatch(
      /^placed on sandbox-node-192 by least_loaded: projected pressure cpu 0\.125→0\.646.*; 3 candidates, 1 fit; no runner-up$/,
    ); // (24000 + 100000) / 192000
    expect(notices[1]!.message).toMatch(
      /^0\/3 nodes fit projected capacity: 3 cpu request exceeds allocatable\. e\.g\. sandbox-node-16: cpu request 500000m exceeds/,
    );
  });
});

describe('readiness and the debug view', () => {
  it('before the initial sync the verbs refuse instead of deciding blind (pods of other schedulers still pass)', async () => {
    const h = makeHarness({}, readSnapshot(SNAPSHOT_PATH), {
      notReady: () => 'the scheduler cache has not completed its initial sync',
    });
    const filter = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p')))
      .expect(200);
    expect(filter.body.Error).toMatch(/not ready/);
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p')))
      .expect(503);
    await request(h.app).get('/readyz').expect(503);
    expect(h.service.cache.size.reservations).toBe(0);
    const foreign = await request(h.app)
      .post('/filter')
      .send(namesArgs(makePod('f').scheduler('default-scheduler').obj()))
      .expect(200);
    expect(foreign.body).toMatchObject({ Error: '', NodeNames: [NODE_16, NODE_64, NODE_192] });
  });

  it('a stale cache refuses filter (its Error), prioritize (503) and bind (its Error, no API call) until it is fresh again', async () => {
    const calls: BindRequest[] = [];
    let reason: string | null = 'the scheduler cache is stale: the pods list/watch has been failing for 31.5 s';
    const h = makeHarness({}, readSnapshot(SNAPSHOT_PATH), {
      notReady: () => reason,
      bind: async (r) => {
        calls.push(r);
        return { ok: true, alreadyBound: false };
      },
    });
    const refusal = `sandbox-extender: not ready: ${reason}`;
    const filter = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p')))
      .expect(200);
    expect(filter.body).toMatchObject({ NodeNames: null, Error: refusal });
    const prioritize = await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p')))
      .expect(503);
    expect(prioritize.body).toEqual({ Error: refusal });
    const bind = await request(h.app).post('/bind').send(bindArgs('p', NODE_192)).expect(200);
    expect(bind.body).toEqual({ Error: refusal });
    expect(calls).toEqual([]);
    expect(h.service.cache.size.reservations).toBe(0);
    expect((await request(h.app).get('/readyz').expect(503)).text).toBe(`not ready: ${reason}`);
    reason = null;
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p')))
      .expect(200);
    expect((await request(h.app).post('/bind').send(bindArgs('p', NODE_192)).expect(200)).body).toEqual({ Error: '' });
    expect(calls).toHaveLength(1);
    expect((await request(h.app).get('/readyz').expect(200)).text).toBe('ok');
  });

  it('GET /debug/nodes lists every node sorted, with totals, pressure and reservations', async () => {
    const h = makeHarness();
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(sandbox('p1')))
      .expect(200);
    h.clock.now = NOW_MS + 30_000;
    const res = await request(h.app).get('/debug/nodes').expect(200);
    expect(res.body.map((n: { name: string }) => n.name)).toEqual([NODE_16, NODE_64, NODE_192]); // natural order
    const n192 = res.body[2];
    expect(n192).toMatchObject({
      allocatable: { cpu: 192000, memory: 768 * 1024 ** 3 },
      allocated: { cpu: 20000, memory: 40 * 1024 ** 3 },
      paused: { cpu: 4000, memory: 8 * 1024 ** 3 },
      reserved: { cpu: 2000, memory: 4 * 1024 ** 3 },
      sandboxes: { starting: 0, running: 10, paused: 1, reserved: 1 },
      reservations: [{ uid: 'uid-p1', pod: 'sandboxes/p1', ageSeconds: 30 }],
    });
    // (20000 + 4000 + 2000) / 192000 = 0.13541…
    expect(n192.maxPressure).toBeCloseTo(26000 / 192000, 12);
    const one = await request(h.app).get(`/debug/nodes/${NODE_192}`).expect(200);
    expect(one.body).toEqual(n192);
    const missing = await request(h.app).get('/debug/nodes/nope').expect(404);
    expect(missing.body.Error).toBe("sandbox-extender: node nope is not in the extender's cache");
  });

  it('/metrics exports per-node pressure for the most pressured nodes only (bounded)', async () => {
    const h = makeHarness({ metrics: { maxNodeSeries: 1 } });
    const text = (await request(h.app).get('/metrics')).text;
    const series = text.split('\n').filter((l) => l.startsWith('sandbox_extender_node_pressure_ratio{'));
    // node-16: (2 × 2000) / 16000 = 0.25 cpu is the highest; only its two resources are exported.
    expect(series.sort()).toEqual([
      `sandbox_extender_node_pressure_ratio{node="${NODE_16}",resource="cpu"} 0.25`,
      `sandbox_extender_node_pressure_ratio{node="${NODE_16}",resource="memory"} 0.125`,
    ]);
  });

  it('/metrics: a node without pressure (capacity unknown) comes after every node with one, so it never takes the place of one', async () => {
    // Sorted by name among equal pressures, a-unknown would come first if no value counted as 0.
    const nodes = [
      makeNode('a-unknown', null),
      makeNode('b-empty', { cpu: '8', memory: '32Gi' }),
      makeNode('c-empty', { cpu: '8', memory: '32Gi' }),
    ];
    const h = makeHarness({ metrics: { maxNodeSeries: 2 } }, { nodes, pods: [] });
    const text = (await request(h.app).get('/metrics')).text;
    const exported = new Set(
      text
        .split('\n')
        .filter((l) => l.startsWith('sandbox_extender_node_pressure_ratio{'))
        .map((l) => /node="([^"]+)"/.exec(l)![1]),
    );
    expect([...exported].sort()).toEqual(['b-empty', 'c-empty']);
  });
});
