import { ClusterModel } from '../../src/core/clusterModel.js';
import type { Pod } from '../../src/core/kube.js';
import { Placer, type Strategy } from '../../src/core/placement.js';
import { PlacementService } from '../../src/core/placementService.js';
import { toNodeRecord, toPodRecord, type Dimensions } from '../../src/core/records.js';
import { GiB, makeNode, makePod } from '../fixtures/builders.js';

const DIMS: Dimensions = { names: ['cpu', 'memory'] };
const TTL_MS = 600_000;
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };

/** The 16/64/192-CPU cluster with 4 GiB per CPU, empty. */
function cluster(strategy: Strategy = 'least_loaded') {
  const model = new ClusterModel(DIMS, TTL_MS);
  for (const cpus of [16, 64, 192]) model.upsertNode(toNodeRecord(makeNode(`n${cpus}`, { cpu: String(cpus), memory: `${cpus * 4}Gi` }), DIMS));
  const service = new PlacementService(model, new Placer(strategy, () => 0.5), { schedulerName: 'sandbox-scheduler' });
  return { model, service };
}

const NAMES = [{ name: 'n16' }, { name: 'n64' }, { name: 'n192' }];
const sandbox = (name: string, cpu = '2', memory = '4Gi') => toPodRecord(makePod(name).req({ cpu, memory }).obj(), DIMS, OPTIONS);

describe('PlacementService.prioritize', () => {
  it('scores the least projected pressure node 10 and reserves it at once', () => {
    const { model, service } = cluster();
    const out = service.prioritize(sandbox('p1'), NAMES, 0);
    // projected cpu: n16 2/16 = 0.125 → floor(9 × 0.875) = 7; n64 2/64 → floor(9 × 0.96875) = 8; n192 2/192 → chosen
    expect(out.scores).toEqual([7, 8, 10]);
    expect(out.chosen?.name).toBe('n192');
    expect(out.runnerUp?.name).toBe('n64');
    expect(model.ledger.reservedOn('n192')).toEqual({ request: [2000, 4 * GiB], count: 1 });
  });

  it('back-to-back decisions see the reservations before them and spread by projected pressure', () => {
    const { service } = cluster();
    const picks = Array.from({ length: 12 }, (_, i) => service.prioritize(sandbox(`p${i}`), NAMES, i).chosen!.name);
    // Water-filling on projected cpu pressure (k pods on a c-CPU node: 2k/c):
    // n192 takes pods while 2(k+1)/192 < 2/64 → k+1 < 3 → 2 pods, then n64 (2/64 = 0.03125) ties n192 at 3/96 = 0.03125:
    // equal pressure → fewer starting (n64 has 0 reservations) → n64. The 16-CPU node waits until pressure reaches 2/16.
    expect(picks.slice(0, 4)).toEqual(['n192', 'n192', 'n64', 'n192']);
    const counts = Object.fromEntries(['n16', 'n64', 'n192'].map((n) => [n, picks.filter((p) => p === n).length]));
    // after 12 pods: n192 9 (18/192 = 0.09375), n64 3 (6/64 = 0.09375), n16 0 (next would be 2/16 = 0.125)
    expect(counts).toEqual({ n16: 0, n64: 3, n192: 9 });
  });

  it('the same UID again replaces its reservation, never doubles it, and does not compete with itself', () => {
    const { model, service } = cluster();
    const pod = sandbox('again');
    service.prioritize(pod, NAMES, 0);
    const second = service.prioritize(pod, NAMES, 1);
    // Without its own reservation n192 is empty again: it is still the pick, with pressure 2/192.
    expect(second.chosen).toMatchObject({ name: 'n192', pressure: 2000 / 192000 });
    expect(model.ledger.size).toBe(1);
    expect(model.ledger.reservedOn('n192').count).toBe(1);
  });

  it('scores every node 0 and reserves nothing when nothing fits', () => {
    const { model, service } = cluster();
    const out = service.prioritize(sandbox('huge', '500', '1Gi'), NAMES, 0);
    expect(out).toMatchObject({ result: 'no_fit', chosen: null, scores: [0, 0, 0] });
    expect(model.ledger.size).toBe(0);
  });

  it('expires reservations older than the TTL before deciding', () => {
    const { model, service } = cluster();
    service.prioritize(sandbox('old'), NAMES, 0);
    service.prioritize(sandbox('new'), NAMES, TTL_MS);
    expect([...model.ledger.all()].map((r) => r.uid)).toEqual(['uid-new']);
  });
});

describe('PlacementService.filter', () => {
  it('keeps nodes that fit, reports the others with reasons, reserves nothing when several fit', () => {
    const { model, service } = cluster();
    model.upsertPod(toPodRecord(makePod('busy').req({ cpu: '15', memory: '1Gi' }).node('n16').obj(), DIMS, OPTIONS));
    const out = service.filter(sandbox('p'), NAMES, 0);
    // n16: 15000m + 2000m = 17000m > 16000m → Insufficient cpu (resolvable)
    expect(out.feasible).toEqual(['n64', 'n192']);
    expect(out.failed.get('n16')).toEqual([{ code: 'InsufficientResource', resource: 'cpu', requested: 2000, allocated: 15000, paused: 0, reserved: 0, allocatable: 16000 }]);
    expect(out.reserved).toBeNull();
    expect(model.ledger.size).toBe(0);
  });

  it('reserves the only feasible node, because kube-scheduler skips prioritize then', () => {
    const { model, service } = cluster();
    const out = service.filter(sandbox('big', '100', '8Gi'), NAMES, 0);
    // 100 CPUs fit only on n192
    expect(out).toMatchObject({ feasible: ['n192'], reserved: 'n192', result: 'placed' });
    expect(model.reservationOf('uid-big')?.nodeName).toBe('n192');
    // The next such pod sees it: n192 has 100 + 100 = 200 > 192 CPUs → fits nowhere
    const next = service.filter(sandbox('big2', '100', '8Gi'), NAMES, 1);
    expect(next).toMatchObject({ feasible: [], result: 'no_fit', reserved: null });
    expect(next.failed.get('n192')?.[0]).toMatchObject({ code: 'InsufficientResource', reserved: 100_000 });
  });

  it('reports a node it does not know as not in the snapshot', () => {
    const { service } = cluster();
    const out = service.filter(sandbox('p'), [{ name: 'n16' }, { name: 'ghost' }], 0);
    expect(out.failed.get('ghost')).toEqual([{ code: 'NodeNotInSnapshot', node: 'ghost' }]);
    expect(out.feasible).toEqual(['n16']);
  });

  it('uses the allocatable of Node objects sent with the request (nodeCacheCapable: false)', () => {
    const { service } = cluster();
    // The request says n16 has only 1 CPU now: a 2-CPU pod does not fit it, whatever the snapshot says.
    const small = toNodeRecord(makeNode('n16', { cpu: '1', memory: '64Gi' }), DIMS);
    const out = service.filter(sandbox('p'), [{ name: 'n16', node: small }, { name: 'n64' }], 0);
    expect(out.failed.get('n16')?.[0]).toMatchObject({ code: 'RequestExceedsAllocatable', allocatable: 1000 });
  });

  it('passes pods of other schedulers through untouched, reserving nothing', () => {
    const { model, service } = cluster();
    const other = toPodRecord(makePod('other').scheduler('default-scheduler').req({ cpu: '500' }).obj() as Pod, DIMS, OPTIONS);
    expect(service.filter(other, NAMES, 0)).toMatchObject({ result: 'passthrough', feasible: ['n16', 'n64', 'n192'] });
    expect(service.prioritize(other, NAMES, 0)).toMatchObject({ result: 'passthrough', scores: [0, 0, 0] });
    expect(model.ledger.size).toBe(0);
  });
});

describe('PlacementService.rank', () => {
  it('orders nodes that fit by candidate order, then the others, without reserving', () => {
    const { model, service } = cluster();
    const ranked = service.rank(sandbox('p', '32', '4Gi'), NAMES);
    // n16 cannot take 32 CPUs; n192: 32/192 = 0.1667 < n64: 32/64 = 0.5
    expect(ranked.map((e) => e.name)).toEqual(['n192', 'n64', 'n16']);
    expect(model.ledger.size).toBe(0);
  });
});
