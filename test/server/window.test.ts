/**
 * Sampled windows through the verbs. The example cluster's three nodes plus 99 small nodes (1 CPU, where a 2 CPU pod
 * never fits) make 102 Node objects; kube-scheduler at percentageOfNodesToScore 50 (the extender's
 * kubeScheduler.percentageOfNodesToScore) stops after numFeasibleNodesToFind(50, 102) = 100 feasible nodes. A fresh
 * 2 CPU / 4Gi pod projects cpu pressure 0.375 / 0.25 / 0.1354 on node-16 / 64 / 192 (see oneCall.test.ts), so
 * offered node-16, node-64 and 98 small nodes, least_loaded chooses node-64 while node-192, outside the window, is
 * the best in the extender's model. The Event says so; the metrics count the placement and observe the gap. A window
 * of 99 (kube-scheduler's own filters left the rest out) is not a sample: the Event is as before, nothing counted.
 */
import request from 'supertest';
import type { Pod } from '../../src/core/objects/kubeObjects.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';
import { makeNode, makePod } from '../fixtures/builders.js';
import { makeHarness, namesArgs, NODE_16, NODE_192, NODE_64, sampleValue, SNAPSHOT_PATH } from './harness.js';

const sandbox = (name: string, cpu = '2', memory = '4Gi'): Pod => makePod(name).req({ cpu, memory }).obj();
const SMALL = Array.from({ length: 99 }, (_, i) => `small-${i}`);

function harness(config: Record<string, unknown> = {}) {
  const notices: DecisionNotice[] = [];
  const example = readSnapshot(SNAPSHOT_PATH);
  const snapshot = {
    nodes: [...example.nodes, ...SMALL.map((name) => makeNode(name, { cpu: '1', memory: '4Gi' }))],
    pods: example.pods,
  };
  const h = makeHarness(
    { chooseInFilter: true, kubeScheduler: { percentageOfNodesToScore: 50 }, ...config },
    snapshot,
    { onDecision: (n) => notices.push(n) },
  );
  const metric = async (name: string, labels: Record<string, string> = {}) =>
    sampleValue((await request(h.app).get('/metrics')).text, name, labels);
  return { h, notices, metric };
}

/** `names` and then small nodes, `size` names in all (default 100: kube-scheduler's cap, a sampled window). */
function window(names: readonly string[], size = 100): string[] {
  return [...names, ...SMALL.slice(0, size - names.length)];
}

const GAP = 'sandbox_extender_sampled_window_pressure_gap_ratio';
const SAMPLED = 'sandbox_extender_sampled_window_placements_total';

describe('a placement from a window kube-scheduler sampled', () => {
  it('the Event says kube-scheduler sampled it and names the best node outside, its pressure and the gap; the metrics count it and observe the gap', async () => {
    const { h, notices, metric } = harness();
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), window([NODE_16, NODE_64])))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_64]);
    // node-64: 7 pods of 2 CPU, 14000 / 64000 = 0.219 → + 2000 → 0.250; node-192, outside: (20000 + 4000 paused + 2000) / 192000
    // = 0.135; gap 0.250 − 0.1354 = 0.115.
    expect(notices.map((n) => n.message)).toEqual([
      'placed on sandbox-node-64 by least_loaded: projected pressure cpu 0.219→0.250, memory 0.109→0.125 (max 0.250); 100 candidates, 2 fit; ' +
        "runner-up sandbox-node-16 at 0.375; kube-scheduler sampled 100 of 102 nodes; best in the extender's model outside them: sandbox-node-192 at 0.135, 0.115 lower",
    ]);
    expect(await metric(SAMPLED)).toBe(1);
    expect(await metric(`${GAP}_count`)).toBe(1);
    expect(await metric(`${GAP}_sum`)).toBeCloseTo(16000 / 64000 - 26000 / 192000, 12);
    expect(await metric(`${GAP}_bucket`, { le: '0.1' })).toBe(0);
    expect(await metric(`${GAP}_bucket`, { le: '0.25' })).toBe(1);
  });

  it('a best offered that is the best of the model: the Event says none better, the gap observed is 0', async () => {
    const { h, notices, metric } = harness();
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), window([NODE_16, NODE_192])))
      .expect(200);
    expect(notices[0]!.message).toBe(
      'placed on sandbox-node-192 by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 100 candidates, 2 fit; ' +
        "runner-up sandbox-node-16 at 0.375; kube-scheduler sampled 100 of 102 nodes; none better in the extender's model outside them",
    );
    expect(await metric(SAMPLED)).toBe(1);
    expect(await metric(`${GAP}_bucket`, { le: '0' })).toBe(1);
  });

  it("fewer than kube-scheduler's cap offered (its own filters, e.g. taints, left the rest out): the Event is as before, nothing counted", async () => {
    const { h, notices, metric } = harness();
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), window([NODE_16, NODE_64], 99)))
      .expect(200);
    expect(notices[0]!.message).toBe(
      'placed on sandbox-node-64 by least_loaded: projected pressure cpu 0.219→0.250, memory 0.109→0.125 (max 0.250); 99 candidates, 2 fit; runner-up sandbox-node-16 at 0.375',
    );
    expect(await metric(SAMPLED)).toBe(0);
    expect(await metric(`${GAP}_count`)).toBe(0);
  });

  it('kubeScheduler.percentageOfNodesToScore 100 (the default): the same window of 100 says nothing', async () => {
    const { h, notices, metric } = harness({ kubeScheduler: {} });
    expect(h.config.kubeScheduler.percentageOfNodesToScore).toBe(100);
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), window([NODE_16, NODE_64])))
      .expect(200);
    expect(notices[0]!.message).toMatch(/; runner-up sandbox-node-16 at 0\.375$/);
    expect(await metric(SAMPLED)).toBe(0);
  });

  it('every node offered: the Event is as before, and nothing is counted or observed', async () => {
    const { h, notices, metric } = harness();
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), window([NODE_16, NODE_64, NODE_192], 102)))
      .expect(200);
    expect(notices[0]!.message).toBe(
      'placed on sandbox-node-192 by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 102 candidates, 3 fit; runner-up sandbox-node-64 at 0.250',
    );
    expect(await metric(SAMPLED)).toBe(0);
    expect(await metric(`${GAP}_count`)).toBe(0);
  });

  it('two calls per pod: Prioritize, sent the two nodes that passed Filter, says what Filter was sent', async () => {
    const { h, notices, metric } = harness({ chooseInFilter: false });
    const pod = sandbox('p1');
    const filtered = await request(h.app)
      .post('/filter')
      .send(namesArgs(pod, window([NODE_16, NODE_64])))
      .expect(200);
    expect(filtered.body.NodeNames).toEqual([NODE_16, NODE_64]);
    await request(h.app)
      .post('/prioritize')
      .send(namesArgs(pod, filtered.body.NodeNames as string[]))
      .expect(200);
    expect(notices[0]!.message).toMatch(
      /; 2 candidates, 2 fit; runner-up sandbox-node-16 at 0\.375; kube-scheduler sampled 100 of 102 nodes; best in the extender's model outside them: sandbox-node-192 at 0\.135, 0\.115 lower$/,
    );
    expect(await metric(SAMPLED)).toBe(1);
  });

  it('round_robin: the placement is counted, the Event says only that kube-scheduler sampled the window, no gap is observed', async () => {
    const { h, notices, metric } = harness({ strategy: 'round_robin' });
    await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p1'), window([NODE_16])))
      .expect(200);
    expect(notices[0]!.message).toMatch(/; no runner-up; kube-scheduler sampled 100 of 102 nodes$/);
    expect(await metric(SAMPLED)).toBe(1);
    expect(await metric(`${GAP}_count`)).toBe(0);
  });
});
