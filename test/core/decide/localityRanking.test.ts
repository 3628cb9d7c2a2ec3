/**
 * The locality rule in the ranking (PlacementService with locality on): within locality.pressureBand
 * of the best projected pressure, warm before partial before cold, before the starting/running/paused
 * tie-breaks; pressure first everywhere else. Nodes of 100 CPUs, so that one CPU is 0.01 of pressure.
 */
import { explainPlacement } from '../../../src/core/text/explain.js';
import type { Pod } from '../../../src/core/objects/kubeObjects.js';
import { Placer } from '../../../src/core/fit/placer.js';
import { PlacementService, type Candidates, type Decision } from '../../../src/core/decide/placementService.js';
import { toNodeRecord, toPodRecord, type Dimensions, type PodRecord } from '../../../src/core/objects/records.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import type { Strategy } from '../../../src/core/fit/strategies/index.js';
import { makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const TTL_MS = 600_000;
const LOCALITY_TTL_MS = 3_600_000;
const LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
const LOCALITY = { templateLabel: LABEL, maxImagesPerNode: 50 };
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused', locality: LOCALITY };
const GiB = 1024 ** 3;

interface NodeSpec {
  readonly name: string;
  /** CPUs already requested by a running pod on the node. */
  readonly usedCpu?: number;
  readonly images?: readonly string[];
}

function setup(
  nodes: readonly NodeSpec[],
  options: { strategy?: Strategy; band?: number; locality?: boolean; cpus?: number } = {},
) {
  const on = options.locality ?? true;
  const cache = new SchedulerCache(DIMS, {
    ttlMs: TTL_MS,
    ...(on ? { locality: { ttlMs: LOCALITY_TTL_MS, maxEntries: 1000, now: () => 0 } } : {}),
  });
  for (const spec of nodes) {
    const node = makeNode(spec.name, { cpu: String(options.cpus ?? 100), memory: '1000Gi' });
    const withImages = {
      ...node,
      status: {
        ...node.status,
        images: (spec.images ?? []).map((name, i) => ({ names: [name], sizeBytes: (i + 1) * GiB })),
      },
    };
    cache.upsertNode(toNodeRecord(withImages as never, DIMS, on ? LOCALITY : undefined));
    if (spec.usedCpu)
      cache.upsertPod(
        toPodRecord(
          makePod(`used-${spec.name}`)
            .req({ cpu: `${spec.usedCpu * 1000}m`, memory: '1Gi' })
            .node(spec.name)
            .obj(),
          DIMS,
          { pausedLabel: OPTIONS.pausedLabel },
        ),
      );
  }
  const service = new PlacementService(cache, new Placer(options.strategy ?? 'least_loaded', () => 0.5), {
    schedulerName: 'sandbox-scheduler',
    chooseInFilter: true,
    recordOffers: false,
    offerTtlMs: TTL_MS,
    ...(on ? { locality: { pressureBand: options.band ?? 0.05, ...LOCALITY } } : {}),
  });
  const candidates: Candidates = { names: nodes.map((n) => n.name) };
  return { cache, service, candidates };
}

/** A 1-CPU sandbox of image `image` (and template `template`, when given), as the edge reads it (with its images). */
function sandbox(name: string, image: string, template?: string): PodRecord {
  let pod = makePod(name).req({ cpu: '1', memory: '1Gi' }).obj();
  pod = { ...pod, spec: { ...pod.spec, containers: pod.spec!.containers!.map((c) => ({ ...c, image })) } } as Pod;
  if (template) pod = { ...pod, metadata: { ...pod.metadata, labels: { [LABEL]: template } } };
  return toPodRecord(pod, DIMS, { ...OPTIONS, withImages: true });
}

const chosen = (d: Decision) => d.scan.names[d.chosen];

describe('locality ranks within the pressure band', () => {
  it('a template warm on one node of several equal ones is placed there, and the Event says so', () => {
    const { service, candidates } = setup([
      { name: 'a' },
      { name: 'b' },
      { name: 'c', images: ['tmpl:1'] },
      { name: 'd' },
    ]);
    const decision = service.filter(sandbox('p', 'tmpl:1'), candidates, 0);
    expect(chosen(decision)).toBe('c');
    expect(decision.locality).toEqual({ signal: 'warm', inBand: 4 });
    const summary = {
      chosen: decision.chosenEvaluation!,
      runnerUp: decision.runnerUpEvaluation,
      candidates: 4,
      feasible: 4,
      locality: decision.locality,
    };
    expect(explainPlacement(summary, DIMS, 'least_loaded')).toMatch(/; template warm on this node$/);
  });

  it('band edges: a warm node exactly at best + band is in the band; one millicore above is not', () => {
    // pod 1 CPU: a projects 0.01; b with 5 CPUs used projects 0.06 = 0.01 + 0.05 (in the band)
    const inside = setup([{ name: 'a' }, { name: 'b', usedCpu: 5, images: ['tmpl:1'] }]);
    expect(chosen(inside.service.filter(sandbox('p', 'tmpl:1'), inside.candidates, 0))).toBe('b');
    // b with 5.001 CPUs used projects 0.06001: outside; a (cold) wins on pressure, and the Event says why
    const outside = setup([{ name: 'a' }, { name: 'b', usedCpu: 5.001, images: ['tmpl:1'] }]);
    const decision = outside.service.filter(sandbox('p', 'tmpl:1'), outside.candidates, 0);
    expect(chosen(decision)).toBe('a');
    expect(decision.locality).toEqual({ signal: 'cold', inBand: 1 });
    const summary = {
      chosen: decision.chosenEvaluation!,
      runnerUp: decision.runnerUpEvaluation,
      candidates: 2,
      feasible: 2,
      locality: decision.locality,
    };
    expect(explainPlacement(summary, DIMS, 'least_loaded')).toMatch(
      /; cold: no node within the band has it \(1 in the band\)$/,
    );
  });

  it('band 0: only exact pressure ties are decided by locality', () => {
    const { service, candidates } = setup(
      [{ name: 'a' }, { name: 'b', usedCpu: 1, images: ['tmpl:1'] }, { name: 'c', images: ['tmpl:1'] }],
      { band: 0 },
    );
    expect(chosen(service.filter(sandbox('p', 'tmpl:1'), candidates, 0))).toBe('c');
  });

  it('within the band: warm before partial before cold, whatever their pressure; then the lower pressure', () => {
    const nodes = [
      { name: 'cold', usedCpu: 0 },
      { name: 'partial', usedCpu: 1, images: ['a:1'] },
      { name: 'warm-busier', usedCpu: 3, images: ['a:1', 'b:1'] },
      { name: 'warm', usedCpu: 2, images: ['a:1', 'b:1'] },
    ];
    const { service, candidates } = setup(nodes);
    const pod = (n: string) => {
      const r = sandbox(n, 'a:1');
      return { ...r, images: ['a:1', 'b:1'], localityKey: 'images:a:1 b:1' };
    };
    const ranked = service.rank(pod('p'), candidates, 0).map((e) => [e.name, e.locality]);
    expect(ranked).toEqual([
      ['warm', 'warm'],
      ['warm-busier', 'warm'],
      ['partial', 'partial'],
      ['cold', 'cold'],
    ]);
    expect(chosen(service.filter(pod('p'), candidates, 0))).toBe('warm');
  });

  it('exact ties among warm nodes are taken in turn, as least_loaded takes any exact tie', () => {
    const { service, candidates } = setup([
      { name: 'a', images: ['t:1'] },
      { name: 'b' },
      { name: 'c', images: ['t:1'] },
    ]);
    // each decision reserves its node; the next pod sees a, c at 0.02 vs 0.01: a 0.01 difference is within the band
    const picks = Array.from({ length: 4 }, (_, i) => chosen(service.filter(sandbox(`p${i}`, 't:1'), candidates, i)));
    expect(picks.every((p) => p === 'a' || p === 'c')).toBe(true);
    expect(new Set(picks).size).toBe(2);
  });

  it('unknown images (each pod its own, so the memory never makes one warm): every node cold, the choices exactly least_loaded’s', () => {
    const nodes = [
      { name: 'a', usedCpu: 3 },
      { name: 'b' },
      { name: 'c', usedCpu: 1, images: ['other:1'] },
      { name: 'd', usedCpu: 2 },
    ];
    const on = setup(nodes);
    const off = setup(nodes, { locality: false });
    const picksOn = Array.from({ length: 30 }, (_, i) =>
      chosen(on.service.filter(sandbox(`p${i}`, `unknown-${i}:9`), on.candidates, i)),
    );
    const picksOff = Array.from({ length: 30 }, (_, i) =>
      chosen(off.service.filter(sandbox(`p${i}`, `unknown-${i}:9`), off.candidates, i)),
    );
    expect(picksOn).toEqual(picksOff);
  });

  it('a burst of one template gathers on the node already starting it while that node stays within the band', () => {
    const { service, candidates } = setup([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
    // pod 0 goes to a (a tie: first in turn) and the memory records the template there at once (the reservation);
    // 1-CPU pods: a reaches 0.06 with 6 pods, still within 0.05 of 0.01 (b, c empty); the 7th projects 0.07: outside
    const picks = Array.from({ length: 8 }, (_, i) =>
      chosen(service.filter(sandbox(`p${i}`, 'fresh:1', 'tmpl-x'), candidates, i)),
    );
    expect(picks.slice(0, 6)).toEqual(['a', 'a', 'a', 'a', 'a', 'a']);
    expect(picks[6]).not.toBe('a');
  });

  it('the template memory expires: after its TTL the node is no longer warm', () => {
    // a finished pod of the template on b (the watch shows it at time 0): b is warm until 0 + TTL
    const { service, cache, candidates } = setup([{ name: 'a' }, { name: 'b' }]);
    cache.upsertPod(
      toPodRecord(
        makePod('ran').label(LABEL, 'tmpl-y').req({ cpu: '1', memory: '1Gi' }).node('b').phase('Succeeded').obj(),
        DIMS,
        OPTIONS,
      ),
    );
    const warm = service.filter(sandbox('p1', 'x:1', 'tmpl-y'), candidates, LOCALITY_TTL_MS - 1);
    expect([chosen(warm), warm.locality?.signal]).toEqual(['b', 'warm']);
    const later = setup([{ name: 'a' }, { name: 'b' }]);
    later.cache.upsertPod(
      toPodRecord(
        makePod('ran').label(LABEL, 'tmpl-y').req({ cpu: '1', memory: '1Gi' }).node('b').phase('Succeeded').obj(),
        DIMS,
        OPTIONS,
      ),
    );
    const expired = later.service.filter(sandbox('p2', 'x:1', 'tmpl-y'), later.candidates, LOCALITY_TTL_MS);
    expect([chosen(expired), expired.locality?.signal]).toEqual(['a', 'cold']);
  });

  it('most_loaded: the band is measured down from the highest pressure', () => {
    const { service, candidates } = setup(
      [
        { name: 'full', usedCpu: 50 },
        { name: 'warm', usedCpu: 46, images: ['t:1'] },
        { name: 'far', usedCpu: 40, images: ['t:1'] },
      ],
      { strategy: 'most_loaded' },
    );
    expect(chosen(service.filter(sandbox('p', 't:1'), candidates, 0))).toBe('warm');
  });

  it('round_robin and random do not rank by locality', () => {
    const { service, candidates } = setup([{ name: 'a' }, { name: 'b', images: ['t:1'] }], { strategy: 'round_robin' });
    const decision = service.filter(sandbox('p', 't:1'), candidates, 0);
    expect([chosen(decision), decision.locality]).toEqual(['a', null]);
  });

  it('Prioritize: the band scores as its best pressure (no candidate scores below one ranked after it); the pick 10', () => {
    const { cache, candidates } = setup([
      { name: 'a' },
      { name: 'b', usedCpu: 4, images: ['t:1'] },
      { name: 'c', usedCpu: 40 },
    ]);
    const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
      schedulerName: 'sandbox-scheduler',
      chooseInFilter: false,
      recordOffers: false,
      offerTtlMs: TTL_MS,
      locality: { pressureBand: 0.05, ...LOCALITY },
    });
    const decision = service.prioritize(sandbox('p', 't:1'), candidates, 0);
    // b is the pick (warm, in the band); a is in the band: scores as 0.01 → floor(9 × 0.99) = 8; c at 0.41 → floor(9 × 0.59) = 5
    expect(decision.scan.names.map((_, i) => service.score(decision, i))).toEqual([8, 10, 5]);
  });
});

describe("docs/model.md's worked example", () => {
  // A 1-CPU pod with two images and template 7f3c on four nodes of 32 CPUs.
  const nodes = [
    { name: 'n4', usedCpu: 7, images: ['registry.example/proxy:1'] },
    { name: 'n1', usedCpu: 8 },
    { name: 'n2', usedCpu: 9, images: ['registry.example/agent:v3', 'registry.example/proxy:1'] },
    { name: 'n3', usedCpu: 10 },
  ];
  const pod = (): PodRecord => ({
    ...sandbox('p', 'registry.example/agent:v3', '7f3c'),
    images: ['registry.example/agent:v3', 'registry.example/proxy:1'],
  });
  const withMemory = (band: number) => {
    const s = setup(nodes, { cpus: 32, band });
    // a pod of 7f3c was bound to n3 (it finished since)
    s.cache.upsertPod(
      toPodRecord(
        makePod('earlier').label(LABEL, '7f3c').req({ cpu: '1' }).node('n3').phase('Succeeded').obj(),
        DIMS,
        OPTIONS,
      ),
    );
    return s;
  };

  it('band 0.05: n4 (partial) and n1 (cold) are in the band; n4 is chosen', () => {
    const { service, candidates } = withMemory(0.05);
    expect(service.rank(pod(), candidates, 0).map((e) => [e.name, e.locality, e.inBand])).toEqual([
      ['n4', 'partial', true],
      ['n1', 'cold', true],
      ['n2', 'warm', false],
      ['n3', 'warm', false],
    ]);
    const decision = service.filter(pod(), candidates, 0);
    const summary = {
      chosen: decision.chosenEvaluation!,
      runnerUp: decision.runnerUpEvaluation,
      candidates: 4,
      feasible: 4,
      locality: decision.locality,
    };
    expect(explainPlacement(summary, DIMS, 'least_loaded')).toMatch(
      /^placed on n4 .*; partial: some of its images are on this node, no node within the band has them all$/,
    );
  });

  it('band 0.1: all four in the band; n2 (warm, 0.3125) before n3 (warm, 0.344), n4, n1', () => {
    const { service, candidates } = withMemory(0.1);
    expect(service.rank(pod(), candidates, 0).map((e) => e.name)).toEqual(['n2', 'n3', 'n4', 'n1']);
    expect(chosen(service.filter(pod(), candidates, 0))).toBe('n2');
  });

  it('Prioritize with band 0.05: the pick 10, n1 in the band scores as the best pressure 0.250 → 6', () => {
    const { cache, candidates } = withMemory(0.05);
    const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), {
      schedulerName: 'sandbox-scheduler',
      chooseInFilter: false,
      recordOffers: false,
      offerTtlMs: TTL_MS,
      locality: { pressureBand: 0.05, ...LOCALITY },
    });
    const decision = service.prioritize(pod(), candidates, 0);
    expect(decision.scan.names.map((n, i) => [n, service.score(decision, i)])).toEqual([
      ['n4', 10],
      ['n1', 6],
      ['n2', 6],
      ['n3', 5],
    ]);
  });
});

describe('the cache feeds the locality index', () => {
  it('a pod seen bound (any state) and a reservation touch the memory; a deleted Node loses its images', () => {
    const { cache, service, candidates } = setup([{ name: 'a', images: ['img:1'] }, { name: 'b' }]);
    const view = cache.locality!;
    cache.upsertPod(
      toPodRecord(makePod('r').label(LABEL, 'k1').req({ cpu: '1' }).node('b', { ready: false }).obj(), DIMS, OPTIONS),
    );
    expect(view.signal(view.query({ localityKey: 'k1' }, 0), cache.nodeInfo('b')!.id)).toBe(2);
    service.filter(sandbox('q', 'img:1', 'k2'), candidates, 0); // goes to a (warm by image); the reservation records k2 there
    expect(view.signal(view.query({ localityKey: 'k2' }, 0), cache.nodeInfo('a')!.id)).toBe(2);
    // the cache keeps the record with its key, without the images a decision's record carries
    cache.upsertPod(sandbox('q', 'img:1', 'k2'));
    expect(cache.pod('uid-q')).toMatchObject({ localityKey: 'k2' });
    expect(cache.pod('uid-q')!.images).toBeUndefined();
    const idA = cache.nodeInfo('a')!.id;
    cache.deleteNode('a');
    expect(view.signal(view.query({ images: ['img:1'] }, 0), idA)).toBe(0);
  });
});
