/**
 * Partial windows: kube-scheduler offers fewer nodes than the model holds of known capacity
 * (percentageOfNodesToScore below 100, or its own filters). The cache counts its nodes of known capacity, and the
 * scan finds the best node for the pod among those it was not given.
 */
import { Placer } from '../../src/core/placement.js';
import { PlacementService } from '../../src/core/placementService.js';
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
