/**
 * Windows kube-scheduler cut short by sampling (placementService.ts DecisionWindow, kubeSchedulerSampling.ts): with
 * percentageOfNodesToScore p below 100 it stops filtering at numFeasibleNodesToFind(p, n) feasible nodes, so a window
 * of exactly that many, fewer than the n Node objects, was sampled; one of fewer nodes was narrowed by its own
 * filters (taints, affinity). Only a sampled window makes the decision say which node is best for the pod in the
 * whole model and how much better it is than the chosen one; any other walks no node beyond the candidates.
 *
 * The test cluster holds 103 Node objects: n16, n64 and n192 (empty, 4 GiB per CPU), `unknown` (no allocatable)
 * and 99 fillers of 1 CPU where the pod (2 CPU) never fits. At p = 50 kube-scheduler looks for
 * numFeasibleNodesToFind(50, 103) = 100 nodes: a window of 100 is a sample, one of 99 is not.
 */
import { jest } from '@jest/globals';
import type { Evaluation } from '../../../src/core/fit/evaluation.js';
import { explainPlacement, explainWindow } from '../../../src/core/text/explain.js';
import { numFeasibleNodesToFind } from '../../../src/core/fit/kubeSchedulerSampling.js';
import { Placer } from '../../../src/core/fit/placer.js';
import { PlacementService, type Decision, type DecisionWindow } from '../../../src/core/decide/placementService.js';
import { toNodeRecord, toPodRecord, type Dimensions } from '../../../src/core/objects/records.js';
import { CandidateScan, fittingPressure } from '../../../src/core/fit/scan.js';
import { SchedulerCache, type SchedulerCacheOptions } from '../../../src/core/cache/schedulerCache.js';
import type { Strategy } from '../../../src/core/fit/strategies/index.js';
import { makeNode, makePod } from '../../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const TTL_MS = 600_000;
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };
const FILLERS = Array.from({ length: 99 }, (_, i) => `f${String(i).padStart(2, '0')}`);
/** kube-scheduler's percentageOfNodesToScore in these tests (unless one says otherwise). */
const P = 50;
const CAP = numFeasibleNodesToFind(P, 103);

interface ClusterOptions {
  readonly cache?: Partial<SchedulerCacheOptions>;
  /** percentageOfNodesToScore of the service; null: left unset. */
  readonly percentage?: number | null;
  readonly chooseInFilter?: boolean;
}

/** The 103 nodes above, and a service told kube-scheduler's percentageOfNodesToScore. */
function cluster(strategy: Strategy = 'least_loaded', options: ClusterOptions = {}) {
  const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS, ...options.cache });
  for (const cpus of [16, 64, 192])
    cache.upsertNode(toNodeRecord(makeNode(`n${cpus}`, { cpu: String(cpus), memory: `${cpus * 4}Gi` }), DIMS));
  cache.upsertNode(toNodeRecord(makeNode('unknown', null), DIMS));
  for (const name of FILLERS) cache.upsertNode(toNodeRecord(makeNode(name, { cpu: '1', memory: '4Gi' }), DIMS));
  const percentage = options.percentage === undefined ? P : options.percentage;
  const service = new PlacementService(cache, new Placer(strategy, () => 0.5), {
    schedulerName: 'sandbox-scheduler',
    chooseInFilter: options.chooseInFilter ?? true,
    recordOffers: false,
    offerTtlMs: TTL_MS,
    ...(percentage === null ? {} : { percentageOfNodesToScore: percentage }),
  });
  return { cache, service };
}

/** `names` and then fillers, `size` names in all (default: kube-scheduler's cap, a sampled window). */
function offer(names: readonly string[], size = CAP): { names: string[] } {
  const out = [...names, ...FILLERS.slice(0, size - names.length)];
  if (out.length !== size) throw new RangeError(`${size} names asked, ${out.length} made`);
  return { names: out };
}

const sandbox = (name: string, cpu = '2', memory = '4Gi') =>
  toPodRecord(makePod(name).req({ cpu, memory }).obj(), DIMS, OPTIONS);
const chosenName = (d: Decision) => (d.chosen >= 0 ? d.scan.names[d.chosen]! : null);
/** A pod of another scheduler bound to `node`, running, with these requests. */
const boundPod = (name: string, node: string, cpu: string, memory = '1Gi') => ({
  ...toPodRecord(makePod(name).scheduler('default-scheduler').req({ cpu, memory }).obj(), DIMS, OPTIONS),
  nodeName: node,
  state: 'running' as const,
});

describe('fittingPressure and CandidateScan.bestNotOffered', () => {
  it('fittingPressure is the scan’s projected pressure where the pod fits, NaN where it does not or capacity is unknown', () => {
    const { cache } = cluster('least_loaded', { cache: { startingLimit: { perNode: 1 } } });
    cache.upsertPod(boundPod('big', 'n64', '63'));
    cache.assume({ uid: 'r', key: 'sandboxes/r', request: [1000, 1024 ** 3], localityKey: null }, 'n16', 0); // n16 at its starting limit
    const request = sandbox('p').request;
    const names = ['n16', 'n64', 'n192', 'unknown'];
    const scan = new CandidateScan((name) => cache.nodeInfo(name), DIMS).run(request, names);
    const fitting = names.map((name) => fittingPressure(cache.nodeInfo(name)!, request, undefined));
    expect(names.map((_, i) => scan.fits(i) && scan.capacityKnown(i))).toEqual([false, false, true, false]);
    expect(fitting[2]).toBe(scan.pressure[2]);
    expect(fitting[2]).toBe(2000 / 192000);
    expect(fitting.map(Number.isNaN)).toEqual([true, true, false, true]);
  });

  it('skips the nodes the run was given, the nodes of unknown capacity and the nodes where the pod does not fit', () => {
    const { cache } = cluster();
    const scan = new CandidateScan((name) => cache.nodeInfo(name), DIMS);
    const request = sandbox('p').request;
    scan.run(request, ['n192', 'ghost']);
    expect(scan.bestNotOffered(cache.nodeInfos(), 1)).toEqual({ info: cache.nodeInfo('n64'), pressure: 2000 / 64000 });
    expect(scan.bestNotOffered(cache.nodeInfos(), -1)).toEqual({ info: cache.nodeInfo('n16'), pressure: 2000 / 16000 });
    cache.upsertPod(boundPod('full64', 'n64', '63'));
    cache.upsertPod(boundPod('full16', 'n16', '15'));
    expect(scan.run(request, ['n192']).bestNotOffered(cache.nodeInfos(), 1)).toBeNull();
    // Each run has its own offered set: the next one sees n192 as not offered.
    expect(scan.run(request, ['n16']).bestNotOffered(cache.nodeInfos(), 1)?.info.name).toBe('n192');
  });
});

describe('PlacementService: which windows were sampled', () => {
  it('offered exactly numFeasibleNodesToFind(p, n), fewer than n: sampled, and the best node outside is named with the gap', () => {
    expect(CAP).toBe(100);
    const { service } = cluster();
    const out = service.filter(sandbox('p'), offer(['n16', 'n64']), 0);
    expect(chosenName(out)).toBe('n64');
    expect(out.window).toEqual({
      offered: 100,
      nodes: 103,
      pressureSign: 1,
      clusterBest: { name: 'n192', projectedPressure: 2000 / 192000 },
      pressureGap: 2000 / 64000 - 2000 / 192000,
    });
  });

  it('offered fewer than the cap (its own filters, e.g. tainted nodes, left the rest out): no window, no node of the model walked', () => {
    const { cache, service } = cluster();
    const walk = jest.spyOn(cache, 'nodeInfos');
    // 99 nodes: kube-scheduler walked all 103 and 4 failed its own filters; n192 is as much outside as before.
    const tainted = service.filter(sandbox('p'), offer(['n16', 'n64'], CAP - 1), 0);
    expect(chosenName(tainted)).toBe('n64');
    expect(tainted.scan.count).toBe(99);
    expect(tainted.window).toBeNull();
    // 2 of 103: a pod with a node selector, say.
    expect(service.filter(sandbox('q'), { names: ['n16', 'n64'] }, 0).window).toBeNull();
    // More than the cap, or every node: not a sample either.
    expect(service.filter(sandbox('r'), offer(['n16', 'n64', 'unknown'], CAP + 1), 0).window).toBeNull();
    expect(service.filter(sandbox('s'), offer(['n16', 'n64', 'n192', 'unknown'], 103), 0).window).toBeNull();
    expect(walk).not.toHaveBeenCalled();
    expect(service.filter(sandbox('t'), offer(['n16', 'n64']), 0).window).not.toBeNull();
    expect(walk).toHaveBeenCalledTimes(1);
  });

  it('n counts the Node objects of the model: a node of unknown capacity counts, a name known only by a bound pod does not', () => {
    const { cache, service } = cluster();
    cache.upsertPod(boundPod('elsewhere', 'no-node-object', '1'));
    expect(service.filter(sandbox('p'), offer(['n16', 'n64']), 0).window).toMatchObject({ offered: 100, nodes: 103 });
    cache.deleteNode('unknown');
    cache.deleteNode('f00');
    // 101 nodes: the cap is still 100, and 100 offered is still a sample, now of 101.
    expect(service.filter(sandbox('q'), offer(['n16', 'n64']), 0).window).toMatchObject({ offered: 100, nodes: 101 });
    cache.deleteNode('f01');
    // 100 nodes at 50 %: the cap is every node, so 100 offered of 100 is not a sample.
    expect(numFeasibleNodesToFind(P, 100)).toBe(100);
    expect(service.filter(sandbox('r'), { names: ['n16', 'n64', 'n192', ...FILLERS.slice(2)] }, 0).window).toBeNull();
  });

  it('percentageOfNodesToScore 100, or unset: never a window, never a walk, whatever was offered', () => {
    for (const percentage of [100, null]) {
      const { cache, service } = cluster('least_loaded', { percentage });
      const walk = jest.spyOn(cache, 'nodeInfos');
      for (const size of [2, 99, 100, 101])
        expect(service.filter(sandbox(`p${size}`), offer(['n16', 'n64'], size), 0).window).toBeNull();
      expect(walk).not.toHaveBeenCalled();
    }
  });

  it('the adaptive default (0) at 1,000 nodes: 420 offered is a sample, 419 is not', () => {
    const { cache, service } = cluster('least_loaded', { percentage: 0 });
    const more = Array.from({ length: 897 }, (_, i) => `g${i}`);
    for (const name of more) cache.upsertNode(toNodeRecord(makeNode(name, { cpu: '1', memory: '4Gi' }), DIMS));
    expect(numFeasibleNodesToFind(0, 1000)).toBe(420);
    const names = (size: number) => ['n16', 'n64', ...FILLERS, ...more].slice(0, size);
    expect(service.filter(sandbox('p'), { names: names(420) }, 0).window).toMatchObject({
      offered: 420,
      nodes: 1000,
      clusterBest: { name: 'n192' },
    });
    expect(service.filter(sandbox('q'), { names: names(419) }, 0).window).toBeNull();
  });

  it('a percentage kube-scheduler would refuse is refused', () => {
    expect(() => cluster('least_loaded', { percentage: 101 })).toThrow(
      /percentageOfNodesToScore must be an integer 0–100, not 101/,
    );
    expect(() => cluster('least_loaded', { percentage: 12.5 })).toThrow(RangeError);
  });
});

describe('PlacementService: the window of a sampled decision', () => {
  it('a node outside the window where the pod does not fit is not named, however low its pressure', () => {
    const { cache, service } = cluster('least_loaded', { cache: { startingLimit: { perNode: 1 } } });
    cache.assume({ uid: 'r', key: 'sandboxes/r', request: [1000, 1024 ** 3], localityKey: null }, 'n192', 0); // at its starting limit
    const held = service.filter(sandbox('p'), offer(['n16', 'n64']), 0);
    expect(fittingPressure(cache.nodeInfo('n192')!, sandbox('p').request, undefined)).toBeNaN();
    expect(held.window).toEqual({ offered: 100, nodes: 103, pressureSign: 1, clusterBest: null, pressureGap: 0 });

    const other = cluster();
    other.cache.upsertPod(boundPod('big', 'n192', '191'));
    const full = other.service.filter(sandbox('p'), offer(['n16', 'n64']), 0);
    expect(full.window).toMatchObject({ clusterBest: null, pressureGap: 0 });
  });

  it('a candidate as good as the best outside keeps the clause from naming it', () => {
    const { cache, service } = cluster();
    cache.upsertNode(toNodeRecord(makeNode('m64', { cpu: '64', memory: '256Gi' }), DIMS));
    expect(numFeasibleNodesToFind(P, 104)).toBe(100);
    const out = service.filter(sandbox('p'), offer(['n16', 'm64']), 0);
    // n64 (outside) projects exactly m64's 2/64; n192 (outside) 2/192 is better and is named.
    expect(out.window?.clusterBest?.name).toBe('n192');
    cache.upsertPod(boundPod('big', 'n192', '191'));
    // The same pod again: its own reservation on m64 is left out, so m64 projects 2/64 as n64 does.
    expect(service.filter(sandbox('p'), offer(['n16', 'm64']), 1).window).toMatchObject({
      offered: 100,
      nodes: 104,
      clusterBest: null,
      pressureGap: 0,
    });
  });

  it('the pod’s own earlier reservation is left out of the node outside the window that holds it', () => {
    const { cache, service } = cluster();
    const pod = sandbox('retried');
    service.filter(pod, { names: ['n192'] }, 0);
    expect(cache.nodeInfo('n192')!.reservedCount).toBe(1);
    const retry = service.filter(pod, offer(['n16', 'n64']), 1);
    expect(retry.window?.clusterBest).toEqual({ name: 'n192', projectedPressure: 2000 / 192000 });
  });

  it('most_loaded: the best is the highest pressure where the pod fits', () => {
    const { service } = cluster('most_loaded');
    const out = service.filter(sandbox('p'), offer(['n64', 'n192']), 0);
    expect(chosenName(out)).toBe('n64');
    expect(out.window).toEqual({
      offered: 100,
      nodes: 103,
      pressureSign: -1,
      clusterBest: { name: 'n16', projectedPressure: 2000 / 16000 },
      pressureGap: 2000 / 16000 - 2000 / 64000,
    });
  });

  it('a strategy that ignores load searches nothing: the window says only that it was sampled', () => {
    const { cache, service } = cluster('round_robin');
    const walk = jest.spyOn(cache, 'nodeInfos');
    const out = service.prioritize(sandbox('p'), offer(['n16']), 0);
    expect(out.window).toEqual({ offered: 100, nodes: 103, pressureSign: null, clusterBest: null, pressureGap: NaN });
    expect(walk).not.toHaveBeenCalled();
  });

  it('chosen from nodes of unknown capacity only: a node of known capacity outside is the best, with no gap', () => {
    const { service } = cluster();
    const out = service.prioritize(sandbox('p'), offer(['unknown']), 0);
    expect(chosenName(out)).toBe('unknown');
    expect(out.window).toEqual({
      offered: 100,
      nodes: 103,
      pressureSign: 1,
      clusterBest: { name: 'n192', projectedPressure: 2000 / 192000 },
      pressureGap: NaN,
    });
  });

  it('two calls per pod: Prioritize, sent only what passed Filter, reads the window Filter was sent', () => {
    const { service } = cluster('least_loaded', { chooseInFilter: false });
    const pod = sandbox('p');
    // Filter leaves the choice to Prioritize (two fit): no window yet.
    const filtered = service.filter(pod, offer(['n16', 'n64']), 0);
    expect(filtered.window).toBeNull();
    expect(filtered.scan.feasible).toBe(2);
    const out = service.prioritize(pod, { names: ['n16', 'n64'] }, 0);
    expect(chosenName(out)).toBe('n64');
    expect(out.window).toMatchObject({ offered: 100, nodes: 103, clusterBest: { name: 'n192' } });
    // A Filter narrowed by kube-scheduler's own filters (99 sent): Prioritize of the same two nodes says nothing.
    const other = sandbox('q');
    service.filter(other, offer(['n16', 'n64'], CAP - 1), 0);
    expect(service.prioritize(other, { names: ['n16', 'n64'] }, 0).window).toBeNull();
    // Prioritize of a pod whose Filter was not the last one reads its own candidates: 2 of 103, no window.
    service.filter(sandbox('r'), offer(['n16', 'n64']), 0);
    expect(service.prioritize(pod, { names: ['n16', 'n64'] }, 0).window).toBeNull();
    // One node passes Filter: Filter decides, from the window it was sent.
    expect(service.filter(sandbox('s'), offer(['n16']), 0).window).toMatchObject({
      offered: 100,
      clusterBest: { name: 'n192' },
    });
  });
});

describe('explainWindow and the placement message', () => {
  const evaluation = (name: string, pressure: number): Evaluation => ({
    name,
    capacityKnown: true,
    allocatable: [16_000, 64 * 1024 ** 3],
    inUse: [0, 0],
    projected: [pressure, 0],
    pressure,
    failures: [],
    starting: 0,
    running: 0,
    paused: 0,
  });
  const summary = { chosen: evaluation('n1', 0.25), runnerUp: evaluation('n2', 0.5), candidates: 420, feasible: 2 };
  const plain =
    'placed on n1 by least_loaded: projected pressure cpu 0.000→0.250, memory 0.000→0.000 (max 0.250); 420 candidates, 2 fit; runner-up n2 at 0.500';
  const better: DecisionWindow = {
    offered: 420,
    nodes: 1000,
    pressureSign: 1,
    clusterBest: { name: 'n9', projectedPressure: 0.1 },
    pressureGap: 0.15,
  };

  it('says kube-scheduler sampled the window, and names the best node outside it, at its pressure, with the gap', () => {
    expect(explainWindow(better)).toBe(
      "kube-scheduler sampled 420 of 1000 nodes; best in the extender's model outside them: n9 at 0.100, 0.150 lower",
    );
    expect(explainWindow({ ...better, pressureSign: -1, clusterBest: { name: 'n9', projectedPressure: 0.4 } })).toBe(
      "kube-scheduler sampled 420 of 1000 nodes; best in the extender's model outside them: n9 at 0.400, 0.150 higher",
    );
    expect(explainWindow({ ...better, pressureGap: NaN })).toBe(
      "kube-scheduler sampled 420 of 1000 nodes; best in the extender's model outside them: n9 at 0.100",
    );
  });

  it('says when no node outside is better, and only that it was sampled for a strategy that ignores load', () => {
    expect(explainWindow({ ...better, clusterBest: null, pressureGap: 0 })).toBe(
      "kube-scheduler sampled 420 of 1000 nodes; none better in the extender's model outside them",
    );
    expect(explainWindow({ ...better, pressureSign: null, clusterBest: null, pressureGap: NaN })).toBe(
      'kube-scheduler sampled 420 of 1000 nodes',
    );
  });

  it('the clause follows the runner-up, before the locality clause; without a window the message is unchanged', () => {
    expect(explainPlacement(summary, DIMS, 'least_loaded')).toBe(plain);
    expect(explainPlacement({ ...summary, window: null }, DIMS, 'least_loaded')).toBe(plain);
    expect(
      explainPlacement({ ...summary, window: better, locality: { signal: 'warm', inBand: 2 } }, DIMS, 'least_loaded'),
    ).toBe(
      `${plain}; kube-scheduler sampled 420 of 1000 nodes; best in the extender's model outside them: n9 at 0.100, 0.150 lower; template warm on this node`,
    );
  });
});
