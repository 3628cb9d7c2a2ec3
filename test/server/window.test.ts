/**
 * Partial windows through the verbs: kube-scheduler (percentageOfNodesToScore below 100, or its own filters) offers
 * some of the example cluster's nodes. A fresh 2 CPU / 4Gi pod projects cpu pressure 0.375 / 0.25 / 0.1354 on
 * node-16 / 64 / 192 (see oneCall.test.ts), so offered node-16 and node-64 only, least_loaded chooses node-64 while
 * node-192, not offered, is the best in the extender's model. The Event says so; the metrics count the placement and
 * observe the gap.
 */
import request from 'supertest';
import type { Pod } from '../../src/core/kubeObjects.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';
import { makePod } from '../fixtures/builders.js';
import { makeHarness, namesArgs, NODE_16, NODE_192, NODE_64, sampleValue, SNAPSHOT_PATH } from './harness.js';

const sandbox = (name: string, cpu = '2', memory = '4Gi'): Pod => makePod(name).req({ cpu, memory }).obj();

function harness(config: Record<string, unknown> = {}) {
  const notices: DecisionNotice[] = [];
  const h = makeHarness({ chooseInFilter: true, ...config }, readSnapshot(SNAPSHOT_PATH), { onDecision: (n) => notices.push(n) });
  const metric = async (name: string, labels: Record<string, string> = {}) => sampleValue((await request(h.app).get('/metrics')).text, name, labels);
  return { h, notices, metric };
}

const GAP = 'sandbox_extender_window_pressure_gap_ratio';
const PARTIAL = 'sandbox_extender_partial_window_placements_total';

describe('a placement from a partial window', () => {
  it('the Event names the best node not offered, its pressure and the gap; the metrics count it and observe the gap', async () => {
    const { h, notices, metric } = harness();
    const res = await request(h.app).post('/filter').send(namesArgs(sandbox('p1'), [NODE_16, NODE_64])).expect(200);
    expect(res.body.NodeNames).toEqual([NODE_64]);
    // node-64: 7 pods of 2 CPU, 14000 / 64000 = 0.219 → + 2000 → 0.250; node-192, not offered: (20000 + 4000 paused + 2000) / 192000
    // = 0.135; gap 0.250 − 0.1354 = 0.115.
    expect(notices.map((n) => n.message)).toEqual([
      'placed on sandbox-node-64 by least_loaded: projected pressure cpu 0.219→0.250, memory 0.109→0.125 (max 0.250); 2 candidates, 2 fit; ' +
        "runner-up sandbox-node-16 at 0.375; best of 2 offered; cluster best sandbox-node-192 at 0.135 in the extender's model, 0.115 lower (1 node not offered)",
    ]);
    expect(await metric(PARTIAL)).toBe(1);
    expect(await metric(`${GAP}_count`)).toBe(1);
    expect(await metric(`${GAP}_sum`)).toBeCloseTo(16000 / 64000 - 26000 / 192000, 12);
    expect(await metric(`${GAP}_bucket`, { le: '0.1' })).toBe(0);
    expect(await metric(`${GAP}_bucket`, { le: '0.25' })).toBe(1);
  });

  it('a best offered that is the best of the model: the Event says none better, the gap observed is 0', async () => {
    const { h, notices, metric } = harness();
    await request(h.app).post('/filter').send(namesArgs(sandbox('p1'), [NODE_16, NODE_192])).expect(200);
    expect(notices[0]!.message).toBe(
      'placed on sandbox-node-192 by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 2 candidates, 2 fit; ' +
        "runner-up sandbox-node-16 at 0.375; best of 2 offered; none better in the extender's model among the 1 node not offered",
    );
    expect(await metric(PARTIAL)).toBe(1);
    expect(await metric(`${GAP}_bucket`, { le: '0' })).toBe(1);
  });

  it('every node offered: the Event is as before, and nothing is counted or observed', async () => {
    const { h, notices, metric } = harness();
    await request(h.app).post('/filter').send(namesArgs(sandbox('p1'))).expect(200);
    expect(notices[0]!.message).toBe(
      'placed on sandbox-node-192 by least_loaded: projected pressure cpu 0.125→0.135, memory 0.063→0.068 (max 0.135); 3 candidates, 3 fit; runner-up sandbox-node-64 at 0.250',
    );
    expect(await metric(PARTIAL)).toBe(0);
    expect(await metric(`${GAP}_count`)).toBe(0);
  });

  it('prioritize (two calls per pod) says the same of its own candidates', async () => {
    const { h, notices, metric } = harness({ chooseInFilter: false });
    await request(h.app).post('/prioritize').send(namesArgs(sandbox('p1'), [NODE_16, NODE_64])).expect(200);
    expect(notices[0]!.message).toMatch(/; runner-up sandbox-node-16 at 0\.375; best of 2 offered; cluster best sandbox-node-192 at 0\.135 in the extender's model, 0\.115 lower \(1 node not offered\)$/);
    expect(await metric(PARTIAL)).toBe(1);
  });

  it('round_robin: the placement is counted, the Event says how many nodes were not offered, no gap is observed', async () => {
    const { h, notices, metric } = harness({ strategy: 'round_robin' });
    await request(h.app).post('/filter').send(namesArgs(sandbox('p1'), [NODE_16])).expect(200);
    expect(notices[0]!.message).toMatch(/; no runner-up; chosen among 1 offered; 2 nodes of the extender's model not offered$/);
    expect(await metric(PARTIAL)).toBe(1);
    expect(await metric(`${GAP}_count`)).toBe(0);
  });
});
