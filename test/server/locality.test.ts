/**
 * Locality through the HTTP edge, on the bundled example cluster with locality on: the signal reaches
 * the placement Event and the metric, /debug/nodes shows it (bounded), and hostile inputs (a huge
 * status.images list, images without sizes, a 10 KB label value) are answered normally.
 */
import request from 'supertest';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { MAX_IMAGE_ENTRIES_READ } from '../../src/core/objects/templateLocality.js';
import type { DecisionNotice } from '../../src/observability/notices.js';
import { readSnapshot } from '../../src/snapshot/snapshotFile.js';
import { makePod } from '../fixtures/builders.js';
import { makeHarness, namesArgs, NODE_16, NODE_192, NODE_64, SNAPSHOT_PATH } from './harness.js';

const LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';

/**
 * A small sandbox (0.5 CPU). On the example nodes it projects cpu 24.5/192 = 0.128 on node-192, 14.5/64 = 0.227 on
 * node-64 and 4.5/16 = 0.281 on node-16: with a band of 0.15, node-192 and node-64 are in it, node-16 is not.
 */
function sandbox(name: string, image: string, labels: Record<string, string> = {}): Pod {
  const pod = makePod(name).req({ cpu: '500m', memory: '1Gi' }).obj();
  return {
    ...pod,
    metadata: { ...pod.metadata, labels },
    spec: { ...pod.spec, containers: pod.spec!.containers!.map((c) => ({ ...c, image })) },
  } as Pod;
}

/** The example snapshot with `images` set on the named nodes' status. */
function snapshotWith(images: Record<string, unknown>) {
  const snapshot = readSnapshot(SNAPSHOT_PATH);
  const nodes = snapshot.nodes.map((n) =>
    n.metadata!.name! in images ? ({ ...n, status: { ...n.status, images: images[n.metadata!.name!] } } as Node) : n,
  );
  return { ...snapshot, nodes };
}

function harness(images: Record<string, unknown>) {
  const notices: DecisionNotice[] = [];
  const h = makeHarness(
    { chooseInFilter: true, locality: { enabled: true, pressureBand: 0.15 } },
    snapshotWith(images),
    { onDecision: (n) => notices.push(n) },
  );
  return { h, notices };
}

describe('locality at the edge', () => {
  it('the warm node in the band is chosen; the Event says so; the metric counts it; /debug/nodes shows the node’s images', async () => {
    const { h, notices } = harness({
      [NODE_64]: [
        { names: ['registry.example/agent@sha256:aa', 'registry.example/agent:v3'], sizeBytes: 1_500_000_000 },
      ],
    });
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p', 'registry.example/agent:v3')))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_64]);
    expect(notices[0]!.message).toMatch(/^placed on sandbox-node-64 by least_loaded: .*; template warm on this node$/);
    const metrics = (await request(h.app).get('/metrics')).text;
    expect(metrics).toMatch(/sandbox_extender_placements_by_locality_total\{locality="warm"\} 1\n/);
    expect(metrics).toMatch(/sandbox_extender_placements_by_locality_total\{locality="cold"\} 0\n/);
    const view = (await request(h.app).get(`/debug/nodes/${NODE_64}`).expect(200)).body;
    expect(view.locality.images).toEqual([
      { names: ['registry.example/agent@sha256:aa', 'registry.example/agent:v3'], sizeBytes: 1_500_000_000 },
    ]);
    // the reservation recorded the pod's key (its images: it has no template label) on the node, beside the snapshot's own pods'
    expect(view.locality.recentTemplates.map((t: { key: string }) => t.key).sort()).toEqual([
      'images:registry.example/agent:v3',
      'images:registry.example/sandbox:1.0',
    ]);
  });

  it('cold everywhere: least_loaded’s node, and the Event says no node within the band has it', async () => {
    const { h, notices } = harness({});
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p', 'registry.example/other:1')))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_192]);
    expect(notices[0]!.message).toMatch(/; cold: no node within the band has it \(2 in the band\)$/);
  });

  it('a huge status.images list (200,000 entries) is read within its bound and the pod is answered normally', async () => {
    const huge = Array.from({ length: 200_000 }, (_, i) => ({
      names: [`registry.example/junk-${i}:1`],
      sizeBytes: 1000 + i,
    }));
    const { h } = harness({ [NODE_16]: huge });
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p', 'registry.example/junk-5:1')))
      .expect(200);
    expect(res.body.Error).toBe('');
    expect(res.body.NodeNames).toHaveLength(1);
    const view = (await request(h.app).get(`/debug/nodes/${NODE_16}`).expect(200)).body;
    expect(view.locality.images).toHaveLength(50);
    expect(view.locality.images[0].sizeBytes).toBe(1000 + MAX_IMAGE_ENTRIES_READ - 1);
  });

  it('images without sizes count: a node reporting the image without sizeBytes is warm', async () => {
    const { h, notices } = harness({ [NODE_64]: [{ names: ['registry.example/agent:v3'] }] });
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p', 'registry.example/agent:v3')))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_64]);
    expect(notices[0]!.message).toMatch(/template warm on this node$/);
  });

  it('a 10 KB template label value is not a key (not a label value); the pod is placed by its images', async () => {
    const { h, notices } = harness({ [NODE_64]: [{ names: ['registry.example/agent:v3'], sizeBytes: 1 }] });
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p', 'registry.example/agent:v3', { [LABEL]: 'x'.repeat(10 * 1024) })))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_64]);
    expect(notices[0]!.message).toMatch(/template warm on this node$/);
    const view = (await request(h.app).get(`/debug/nodes/${NODE_64}`).expect(200)).body;
    expect(view.locality.recentTemplates.map((t: { key: string }) => t.key)).toContain(
      'images:registry.example/agent:v3',
    );
    expect(view.locality.recentTemplates.every((t: { key: string }) => t.key.length < 100)).toBe(true);
  });

  it('locality off: no locality in /debug/nodes, nothing counted', async () => {
    const h = makeHarness(
      { chooseInFilter: true },
      snapshotWith({ [NODE_64]: [{ names: ['registry.example/agent:v3'], sizeBytes: 1 }] }),
    );
    const res = await request(h.app)
      .post('/filter')
      .send(namesArgs(sandbox('p', 'registry.example/agent:v3')))
      .expect(200);
    expect(res.body.NodeNames).toEqual([NODE_192]);
    expect((await request(h.app).get(`/debug/nodes/${NODE_64}`)).body.locality).toBeUndefined();
    expect((await request(h.app).get('/metrics')).text).toMatch(
      /sandbox_extender_placements_by_locality_total\{locality="warm"\} 0\n/,
    );
  });
});
