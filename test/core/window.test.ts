/**
 * Partial windows (placementService.ts DecisionWindow): kube-scheduler offers fewer nodes than the model holds of
 * known capacity (percentageOfNodesToScore below 100, or its own filters). The decision then says which node is
 * best for the pod in the whole model and how much better it is than the chosen one; with every node offered it
 * says nothing and walks no node beyond the candidates.
 */
import { jest } from '@jest/globals';
import type { Evaluation } from '../../src/core/evaluation.js';
import { explainPlacement, explainWindow } from '../../src/core/explain.js';
import { Placer } from '../../src/core/placement.js';
import { PlacementService, type Decision, type DecisionWindow } from '../../src/core/placementService.js';
import { toNodeRecord, toPodRecord, type Dimensions } from '../../src/core/records.js';
import { CandidateScan, fittingPressure } from '../../src/core/scan.js';
import { SchedulerCache, type SchedulerCacheOptions } from '../../src/core/schedulerCache.js';
import type { Strategy } from '../../src/core/strategies/index.js';
import { makeNode, makePod } from '../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const TTL_MS = 600_000;
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };

/** Empty nodes of 16, 64 and 192 CPUs (4 GiB per CPU), and `unknown`, a Node object without allocatable. */
function cluster(strategy: Strategy = 'least_loaded', cacheOptions: Partial<SchedulerCacheOptions> = {}) {
  const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS, ...cacheOptions });
  for (const cpus of [16, 64, 192]) cache.upsertNode(toNodeRecord(makeNode(`n${cpus}`, { cpu: String(cpus), memory: `${cpus * 4}Gi` }), DIMS));
  cache.upsertNode(toNodeRecord(makeNode('unknown', null), DIMS));
  const service = new PlacementService(cache, new Placer(strategy, () => 0.5), { schedulerName: 'sandbox-scheduler', chooseInFilter: true, recordOffers: false, offerTtlMs: TTL_MS });
  return { cache, service };
}

const sandbox = (name: string, cpu = '2', memory = '4Gi') => toPodRecord(makePod(name).req({ cpu, memory }).obj(), DIMS, OPTIONS);
const chosenName = (d: Decision) => (d.chosen >= 0 ? d.scan.names[d.chosen]! : null);
/** A pod of another scheduler bound to `node`, running, with these requests. */
const boundPod = (name: string, node: string, cpu: string, memory = '1Gi') => ({
  ...toPodRecord(makePod(name).scheduler('default-scheduler').req({ cpu, memory }).obj(), DIMS, OPTIONS),
  nodeName: node,
  state: 'running' as const,
});

describe('SchedulerCache.knownCapacityNodes', () => {
  it('counts the Node objects whose allocatable is known, as they are added, changed and deleted', () => {
    const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS });
    const known = (name: string) => toNodeRecord(makeNode(name, { cpu: '4', memory: '8Gi' }), DIMS);
    const unknown = (name: string) => toNodeRecord(makeNode(name, null), DIMS);
    cache.upsertNode(known('a'));
    cache.upsertNode(unknown('b'));
    expect(cache.knownCapacityNodes).toBe(1);
    cache.upsertNode(known('a')); // the same again
    expect(cache.knownCapacityNodes).toBe(1);
    cache.upsertNode(known('b')); // its allocatable appeared
    expect(cache.knownCapacityNodes).toBe(2);
    cache.upsertNode(unknown('a')); // its allocatable went
    expect(cache.knownCapacityNodes).toBe(1);
    cache.deleteNode('a');
    expect(cache.knownCapacityNodes).toBe(1);
    cache.deleteNode('b');
    cache.deleteNode('b');
    expect(cache.knownCapacityNodes).toBe(0);
    // A name known only by a pod bound to it has no Node object: not counted.
    cache.upsertPod(boundPod('p', 'c', '1'));
    expect(cache.knownCapacityNodes).toBe(0);
    cache.upsertNode(known('c'));
    expect(cache.knownCapacityNodes).toBe(1);
  });
});

describe('fittingPressure and CandidateScan.bestNotOffered', () => {
  it('fittingPressure is the scan’s projected pressure where the pod fits, NaN where it does not or capacity is unknown', () => {
    const { cache } = cluster('least_loaded', { startingLimit: { perNode: 1 } });
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
    expect(scan.knownCapacityOffered).toBe(1);
    expect(scan.bestNotOffered(cache.nodeInfos(), 1)).toEqual({ info: cache.nodeInfo('n64'), pressure: 2000 / 64000 });
    expect(scan.bestNotOffered(cache.nodeInfos(), -1)).toEqual({ info: cache.nodeInfo('n16'), pressure: 2000 / 16000 });
    cache.upsertPod(boundPod('full64', 'n64', '63'));
    cache.upsertPod(boundPod('full16', 'n16', '15'));
    expect(scan.run(request, ['n192']).bestNotOffered(cache.nodeInfos(), 1)).toBeNull();
    // Each run has its own offered set: the next one sees n192 as not offered.
    expect(scan.run(request, ['n16']).bestNotOffered(cache.nodeInfos(), 1)?.info.name).toBe('n192');
  });
});

describe('PlacementService: the window of a decision', () => {
  it('a partial window whose best is worse than a node not offered names that node and the gap', () => {
    const { service } = cluster();
    const out = service.filter(sandbox('p'), { names: ['n16', 'n64'] }, 0);
    expect(chosenName(out)).toBe('n64');
    expect(out.window).toEqual({ offered: 2, notOffered: 1, pressureSign: 1, clusterBest: { name: 'n192', projectedPressure: 2000 / 192000 }, pressureGap: 2000 / 64000 - 2000 / 192000 });
  });

  it('every node of known capacity offered: no window, and no node of the model walked', () => {
    const { cache, service } = cluster();
    const walk = jest.spyOn(cache, 'nodeInfos');
    // `unknown` (no allocatable) and `ghost` (not in the model) change nothing.
    const complete = service.filter(sandbox('p'), { names: ['n16', 'n64', 'n192', 'ghost'] }, 0);
    expect(chosenName(complete)).toBe('n192');
    expect(complete.window).toBeNull();
    expect(walk).not.toHaveBeenCalled();
    const partial = service.filter(sandbox('q'), { names: ['n16', 'n192'] }, 0);
    expect(partial.window).not.toBeNull();
    expect(walk).toHaveBeenCalledTimes(1);
  });

  it('a node not offered where the pod does not fit is not named, however low its pressure', () => {
    const { cache, service } = cluster('least_loaded', { startingLimit: { perNode: 1 } });
    cache.assume({ uid: 'r', key: 'sandboxes/r', request: [1000, 1024 ** 3], localityKey: null }, 'n192', 0); // at its starting limit
    const held = service.filter(sandbox('p'), { names: ['n16', 'n64'] }, 0);
    expect(fittingPressure(cache.nodeInfo('n192')!, sandbox('p').request, undefined)).toBeNaN();
    expect(held.window).toEqual({ offered: 2, notOffered: 1, pressureSign: 1, clusterBest: null, pressureGap: 0 });

    const other = cluster();
    other.cache.upsertPod(boundPod('big', 'n192', '191'));
    const full = other.service.filter(sandbox('p'), { names: ['n16', 'n64'] }, 0);
    expect(full.window).toMatchObject({ clusterBest: null, pressureGap: 0 });
  });

  it('an offered node as good as the best not offered keeps the clause from naming it', () => {
    const { cache, service } = cluster();
    cache.upsertNode(toNodeRecord(makeNode('m64', { cpu: '64', memory: '256Gi' }), DIMS));
    const out = service.filter(sandbox('p'), { names: ['n16', 'm64'] }, 0);
    // n64 (not offered) projects exactly m64's 2/64; n192 (not offered) 2/192 is better and is named.
    expect(out.window?.clusterBest?.name).toBe('n192');
    cache.upsertPod(boundPod('big', 'n192', '191'));
    // The same pod again: its own reservation on m64 is left out, so m64 projects 2/64 as n64 does.
    expect(service.filter(sandbox('p'), { names: ['n16', 'm64'] }, 1).window).toMatchObject({ notOffered: 2, clusterBest: null, pressureGap: 0 });
  });

  it('the pod’s own earlier reservation is left out of the node not offered that holds it', () => {
    const { cache, service } = cluster();
    const pod = sandbox('retried');
    service.filter(pod, { names: ['n192'] }, 0);
    expect(cache.nodeInfo('n192')!.reservedCount).toBe(1);
    const retry = service.filter(pod, { names: ['n16', 'n64'] }, 1);
    expect(retry.window?.clusterBest).toEqual({ name: 'n192', projectedPressure: 2000 / 192000 });
  });

  it('most_loaded: the best is the highest pressure where the pod fits', () => {
    const { service } = cluster('most_loaded');
    const out = service.filter(sandbox('p'), { names: ['n64', 'n192'] }, 0);
    expect(chosenName(out)).toBe('n64');
    expect(out.window).toEqual({ offered: 2, notOffered: 1, pressureSign: -1, clusterBest: { name: 'n16', projectedPressure: 2000 / 16000 }, pressureGap: 2000 / 16000 - 2000 / 64000 });
  });

  it('a strategy that ignores load searches nothing: the window says only how many nodes were not offered', () => {
    const { cache, service } = cluster('round_robin');
    const walk = jest.spyOn(cache, 'nodeInfos');
    const out = service.prioritize(sandbox('p'), { names: ['n16'] }, 0);
    expect(out.window).toEqual({ offered: 1, notOffered: 2, pressureSign: null, clusterBest: null, pressureGap: NaN });
    expect(walk).not.toHaveBeenCalled();
  });

  it('chosen from nodes of unknown capacity only: a node of known capacity not offered is the best, with no gap', () => {
    const { service } = cluster();
    const out = service.prioritize(sandbox('p'), { names: ['unknown'] }, 0);
    expect(chosenName(out)).toBe('unknown');
    expect(out.window).toEqual({ offered: 1, notOffered: 3, pressureSign: 1, clusterBest: { name: 'n192', projectedPressure: 2000 / 192000 }, pressureGap: NaN });
  });

  it('a filter that leaves the choice to prioritize (several fit, two calls) has no window', () => {
    const cache = new SchedulerCache(DIMS, { ttlMs: TTL_MS });
    for (const cpus of [16, 64, 192]) cache.upsertNode(toNodeRecord(makeNode(`n${cpus}`, { cpu: String(cpus), memory: `${cpus * 4}Gi` }), DIMS));
    const service = new PlacementService(cache, new Placer('least_loaded', () => 0.5), { schedulerName: 'sandbox-scheduler', chooseInFilter: false, recordOffers: false, offerTtlMs: TTL_MS });
    expect(service.filter(sandbox('p'), { names: ['n16', 'n64'] }, 0).window).toBeNull();
    expect(service.filter(sandbox('p'), { names: ['n16'] }, 0).window).toMatchObject({ clusterBest: { name: 'n192' } });
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
  const summary = { chosen: evaluation('n1', 0.25), runnerUp: evaluation('n2', 0.5), candidates: 2, feasible: 2 };
  const plain = 'placed on n1 by least_loaded: projected pressure cpu 0.000→0.250, memory 0.000→0.000 (max 0.250); 2 candidates, 2 fit; runner-up n2 at 0.500';
  const better: DecisionWindow = { offered: 2, notOffered: 5, pressureSign: 1, clusterBest: { name: 'n9', projectedPressure: 0.1 }, pressureGap: 0.15 };

  it('names the best node not offered, at its pressure, with the gap and how many were not offered', () => {
    expect(explainWindow(better)).toBe("best of 2 offered; cluster best n9 at 0.100 in the extender's model, 0.150 lower (5 nodes not offered)");
    expect(explainWindow({ ...better, notOffered: 1 })).toBe("best of 2 offered; cluster best n9 at 0.100 in the extender's model, 0.150 lower (1 node not offered)");
    expect(explainWindow({ ...better, pressureSign: -1, clusterBest: { name: 'n9', projectedPressure: 0.4 } })).toBe(
      "best of 2 offered; cluster best n9 at 0.400 in the extender's model, 0.150 higher (5 nodes not offered)",
    );
    expect(explainWindow({ ...better, pressureGap: NaN })).toBe("best of 2 offered; cluster best n9 at 0.100 in the extender's model (5 nodes not offered)");
  });

  it('says when no node not offered is better, and only the count for a strategy that ignores load', () => {
    expect(explainWindow({ ...better, clusterBest: null, pressureGap: 0 })).toBe("best of 2 offered; none better in the extender's model among the 5 nodes not offered");
    expect(explainWindow({ ...better, pressureSign: null, clusterBest: null, pressureGap: NaN })).toBe("chosen among 2 offered; 5 nodes of the extender's model not offered");
  });

  it('the clause follows the runner-up, before the locality clause; without a window the message is unchanged', () => {
    expect(explainPlacement(summary, DIMS, 'least_loaded')).toBe(plain);
    expect(explainPlacement({ ...summary, window: null }, DIMS, 'least_loaded')).toBe(plain);
    expect(explainPlacement({ ...summary, window: better, locality: { signal: 'warm', inBand: 2 } }, DIMS, 'least_loaded')).toBe(
      `${plain}; best of 2 offered; cluster best n9 at 0.100 in the extender's model, 0.150 lower (5 nodes not offered); template warm on this node`,
    );
  });
});
