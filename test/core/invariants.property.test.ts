import fc from 'fast-check';
import { evaluateCandidate } from '../../src/core/fit/evaluation.js';
import type { NodeInfo, OwnReservation } from '../../src/core/cache/nodeInfo.js';
import { Placer } from '../../src/core/fit/placer.js';
import { PlacementService } from '../../src/core/decide/placementService.js';
import type { PodRecord, SandboxState } from '../../src/core/objects/records.js';
import { CandidateScan } from '../../src/core/fit/scan.js';
import { SchedulerCache } from '../../src/core/cache/schedulerCache.js';
import { STRATEGIES } from '../../src/core/fit/strategies/index.js';

const DIMS = { names: ['cpu', 'memory'] };
const amount = fc.integer({ min: 0, max: 1_000_000 });
const vector = fc.tuple(amount, amount);

const infoArb = fc.record({
  allocatable: fc.option(fc.tuple(fc.integer({ min: 0, max: 2_000_000 }), fc.integer({ min: 1, max: 2_000_000 })), {
    nil: null,
  }),
  hasNode: fc.boolean(),
  allocated: vector,
  paused: vector,
  reserved: vector,
  count: fc.nat(20),
  // Starting limit: none, Infinity (off), or a number around the node's starting count (2 × count).
  startingLimit: fc.option(fc.oneof(fc.constant(Infinity), fc.integer({ min: 1, max: 45 })), { nil: undefined }),
});

type InfoSpec = {
  allocatable: [number, number] | null;
  hasNode: boolean;
  allocated: [number, number];
  paused: [number, number];
  reserved: [number, number];
  count: number;
  startingLimit: number | undefined;
};

function infosOf(specs: readonly InfoSpec[]): NodeInfo[] {
  return specs.map((s, i) => ({
    name: `n${i}`,
    id: i,
    hasNode: s.hasNode,
    allocatable: s.hasNode ? s.allocatable : null,
    allocated: s.allocated,
    paused: s.paused,
    reserved: s.reserved,
    starting: s.count,
    running: s.count,
    pausedCount: 0,
    reservedCount: s.count,
    warmPoolSandboxes: 0,
    claimedSandboxes: 0,
    standaloneSandboxes: 0,
    ...(s.startingLimit === undefined ? {} : { startingLimit: s.startingLimit }),
  }));
}

function scanOver(infos: readonly NodeInfo[], request: readonly number[], own?: OwnReservation): CandidateScan {
  const byName = new Map(infos.map((i) => [i.name, i]));
  return new CandidateScan((name) => byName.get(name), DIMS).run(request, [...infos.map((i) => i.name), 'ghost'], {
    own,
  });
}

/** The pod's own reservation on one of the nodes (index `at`), or none. */
const ownArb = fc.option(fc.record({ at: fc.nat(7), request: vector }), { nil: undefined });
const ownOf = (
  infos: readonly NodeInfo[],
  spec: { at: number; request: [number, number] } | undefined,
): OwnReservation | undefined => {
  const info = spec === undefined ? undefined : infos[spec.at % infos.length]!;
  // Only a reservation the node really holds can be left out: at most its reserved amounts and count.
  return info && info.reservedCount > 0
    ? { nodeName: info.name, request: spec!.request.map((q, r) => Math.min(q, info.reserved[r]!)) }
    : undefined;
};

describe('placement invariants', () => {
  it('the scan (hot path) agrees with evaluateCandidate on every candidate: fit (starting limit included), pressure and counts', () => {
    fc.assert(
      fc.property(fc.array(infoArb, { minLength: 1, maxLength: 8 }), vector, ownArb, (specs, request, ownSpec) => {
        const infos = infosOf(specs);
        const own = ownOf(infos, ownSpec);
        const scan = scanOver(infos, request, own);
        for (let i = 0; i < scan.count; i++) {
          const e = evaluateCandidate(scan.names[i]!, infos[i], undefined, request, own, DIMS);
          expect(scan.fits(i)).toBe(e.failures.length === 0);
          expect(e.failures.some((f) => f.code === 'StartingLimit')).toBe(
            infos[i] !== undefined && infos[i]!.hasNode && e.starting >= (infos[i]!.startingLimit ?? Infinity),
          );
          expect(scan.capacityKnown(i)).toBe(e.capacityKnown);
          if (e.capacityKnown) expect(scan.pressure[i]).toBe(e.pressure);
          expect([scan.starting[i], scan.running[i], scan.paused[i]]).toEqual([e.starting, e.running, e.paused]);
        }
      }),
    );
  });

  it('a starting limit that no node has reached changes nothing: same fit, pressure and choice as without a limit', () => {
    fc.assert(
      fc.property(
        fc.array(infoArb, { minLength: 1, maxLength: 8 }),
        vector,
        fc.constantFrom(...STRATEGIES),
        (specs, request, strategy) => {
          const unlimited = infosOf(specs.map((s) => ({ ...s, startingLimit: undefined })));
          const limited = unlimited.map((info) => ({ ...info, startingLimit: info.starting + info.reservedCount + 1 }));
          const a = scanOver(unlimited, request);
          const b = scanOver(limited, request);
          expect([...b.status.subarray(0, b.count)]).toEqual([...a.status.subarray(0, a.count)]);
          expect([...b.pressure.subarray(0, b.count)]).toEqual([...a.pressure.subarray(0, a.count)]);
          expect(new Placer(strategy, () => 0.3).choose(b)).toEqual(new Placer(strategy, () => 0.3).choose(a));
        },
      ),
    );
  });

  it('scores are integers in 0..10, exactly one 10 when something fits, none otherwise', () => {
    fc.assert(
      fc.property(
        fc.array(infoArb, { minLength: 1, maxLength: 8 }),
        vector,
        fc.constantFrom(...STRATEGIES),
        (specs, request, strategy) => {
          const scan = scanOver(infosOf(specs), request);
          const placer = new Placer(strategy, () => 0.3);
          const { chosen } = placer.choose(scan);
          const scores = Array.from({ length: scan.count }, (_, i) => placer.score(scan, i, chosen));
          expect(scores.every((s) => Number.isInteger(s) && s >= 0 && s <= 10)).toBe(true);
          expect(scores.filter((s) => s === 10).length).toBe(chosen >= 0 ? 1 : 0);
          expect(chosen >= 0).toBe(scan.feasible > 0);
          if (chosen >= 0) expect(scan.fits(chosen)).toBe(true);
        },
      ),
    );
  });

  it('a node with more free capacity (less in use, same allocatable) never scores lower under least_loaded', () => {
    fc.assert(
      fc.property(infoArb, fc.nat(500_000), vector, (spec, extra, request) => {
        fc.pre(spec.allocatable !== null && spec.hasNode);
        const [light] = infosOf([spec]);
        const heavy: NodeInfo = {
          ...light!,
          name: 'heavy',
          id: 1,
          allocated: [light!.allocated[0]! + extra, light!.allocated[1]!],
        };
        const byName = new Map([light!, heavy].map((i) => [i.name, i]));
        const scan = new CandidateScan((name) => byName.get(name), DIMS).run(request, ['n0', 'heavy']);
        const placer = new Placer('least_loaded', () => 0);
        expect(placer.score(scan, 0, -1)).toBeGreaterThanOrEqual(placer.score(scan, 1, -1));
      }),
    );
  });

  it('the window of a decision: only a sampled one (exactly the cap offered), and it agrees with evaluateCandidate over every node of the model', () => {
    const nodeArb = fc.record({
      allocatable: fc.option(fc.tuple(fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: 1, max: 2_000_000 })), {
        nil: null,
      }),
      used: vector,
      starting: fc.nat(3),
      offered: fc.boolean(),
    });
    const strategyArb = fc.constantFrom<'least_loaded' | 'most_loaded' | 'round_robin'>(
      'least_loaded',
      'most_loaded',
      'round_robin',
    );
    // At 50 % kube-scheduler looks for 100 feasible nodes in a cluster of 101 to 201: fillers of 1 CPU-unit make the
    // window 100 nodes (a sample) or 99 (its own filters narrowed it), beside up to 8 arbitrary nodes.
    const windowArb = fc.record({ sampled: fc.boolean(), extraOutside: fc.nat(2) });
    fc.assert(
      fc.property(
        fc.array(nodeArb, { minLength: 1, maxLength: 8 }),
        vector,
        strategyArb,
        fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
        windowArb,
        (specs, request, strategy, perNode, window) => {
          const cache = new SchedulerCache(DIMS, {
            ttlMs: 1000,
            ...(perNode === undefined ? {} : { startingLimit: { perNode } }),
          });
          specs.forEach((s, i) => {
            cache.upsertNode({ name: `n${i}`, allocatable: s.allocatable });
            cache.upsertPod({
              uid: `used-${i}`,
              key: `ns/used-${i}`,
              nodeName: `n${i}`,
              schedulerName: 'other',
              request: s.used,
              state: 'running',
              terminal: false,
              schedulingFailure: null,
            });
            for (let k = 0; k < s.starting; k++)
              cache.assume({ uid: `r-${i}-${k}`, key: `ns/r-${i}-${k}`, request: [1, 1] }, `n${i}`, 0);
          });
          const target = window.sampled ? 100 : 99;
          const offeredSpecs = specs.map((_, i) => `n${i}`).filter((_, i) => specs[i]!.offered);
          const outsideSpecs = specs.length - offeredSpecs.length;
          const fillersIn = target - offeredSpecs.length;
          const fillersOut = Math.max(0, 101 - target - outsideSpecs) + window.extraOutside;
          const fillers = Array.from({ length: fillersIn + fillersOut }, (_, k) => `f${k}`);
          for (const name of fillers) cache.upsertNode({ name, allocatable: [1, 1] });
          const names = [...specs.map((_, i) => `n${i}`), ...fillers];
          const offered = [...offeredSpecs, ...fillers.slice(0, fillersIn)];
          const inWindow = new Set(offered);
          expect(offered).toHaveLength(target);
          expect(names.length).toBeGreaterThanOrEqual(101);
          const sign = strategy === 'least_loaded' ? 1 : -1;
          // Brute force, before the decision reserves anything: the projected pressure of each node where the pod fits.
          const fitting = (name: string) => {
            const e = evaluateCandidate(name, cache.nodeInfo(name), undefined, request, undefined, DIMS);
            return e.capacityKnown && e.failures.length === 0 ? e.pressure : NaN;
          };
          const better = (a: number, b: number) => !Number.isNaN(a) && (Number.isNaN(b) || sign * (a - b) < 0);
          let bestOffered = NaN;
          for (const name of offered) if (better(fitting(name), bestOffered)) bestOffered = fitting(name);
          let bestOut = NaN;
          let bestOutName: string | null = null;
          for (const name of names.filter((n) => !inWindow.has(n))) {
            if (better(fitting(name), bestOut)) [bestOut, bestOutName] = [fitting(name), name];
          }

          const service = new PlacementService(cache, new Placer(strategy, () => 0.3), {
            schedulerName: 's',
            chooseInFilter: true,
            recordOffers: false,
            offerTtlMs: 1000,
            percentageOfNodesToScore: 50,
          });
          const pod: PodRecord = {
            uid: 'p',
            key: 'ns/p',
            nodeName: null,
            schedulerName: 's',
            request,
            state: 'pending',
            terminal: false,
            schedulingFailure: null,
          };
          const out = service.filter(pod, { names: offered }, 0);
          if (out.chosen < 0 || !window.sampled) {
            expect(out.window).toBeNull();
            return;
          }
          expect(out.window).toMatchObject({ offered: 100, nodes: names.length });
          if (strategy === 'round_robin') {
            expect(out.window).toMatchObject({ pressureSign: null, clusterBest: null, pressureGap: NaN });
            return;
          }
          const named = better(bestOut, bestOffered);
          expect(out.window!.clusterBest).toEqual(named ? { name: bestOutName, projectedPressure: bestOut } : null);
          expect(out.window!.pressureGap).toBe(
            Math.max(0, sign * (out.scan.pressure[out.chosen]! - (named ? bestOut : bestOffered))),
          );
          expect(out.window!.pressureGap < 0).toBe(false);
        },
      ),
    );
  });

  it('filter (two calls) keeps only nodes it was given; every input node is either feasible or failing', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom<string>('a', 'b', 'c', 'ghost'), { minLength: 1 }),
        vector,
        (names, request) => {
          const cache = new SchedulerCache(DIMS, { ttlMs: 1000 });
          for (const n of ['a', 'b', 'c']) cache.upsertNode({ name: n, allocatable: [500_000, 500_000] });
          const service = new PlacementService(cache, new Placer('least_loaded', () => 0), {
            schedulerName: 's',
            chooseInFilter: false,
            recordOffers: false,
            offerTtlMs: 1000,
          });
          const pod: PodRecord = {
            uid: 'u',
            key: 'ns/p',
            nodeName: null,
            schedulerName: 's',
            request,
            state: 'pending',
            terminal: false,
            schedulingFailure: null,
          };
          const out = service.filter(pod, { names }, 0);
          expect(out.scan.names).toEqual(names);
          // The reported failures are those of the decision, taken before its own reservation (if any) was made.
          expect(out.failed.map(([name]) => name)).toEqual(names.filter((_, i) => !out.scan.fits(i)));
          for (const [, failures] of out.failed) expect(failures.length).toBeGreaterThan(0);
          if (names.includes('ghost'))
            expect(out.failed.find(([name]) => name === 'ghost')?.[1]).toEqual([
              { code: 'NodeNotInSnapshot', node: 'ghost' },
            ]);
        },
      ),
    );
  });
});

/** Random operations on a SchedulerCache over pods u1–u3 and nodes n1–n3 (`withNodes`: Node updates and deletions too). */
function cacheOps({ withNodes }: { withNodes: boolean }) {
  const uid = fc.constantFrom('u1', 'u2', 'u3');
  const node = fc.constantFrom('n1', 'n2', 'n3');
  const state = fc.constantFrom<SandboxState>('pending', 'starting', 'running', 'paused', 'inactive');
  const ops = [
    fc.record({ kind: fc.constant('assume' as const), uid, node, request: vector }),
    fc.record({
      kind: fc.constant('upsertPod' as const),
      uid,
      node: fc.option(node, { nil: null }),
      request: vector,
      state,
      terminal: fc.boolean(),
      failure: fc.constantFrom(null, 'Unschedulable: a', 'Unschedulable: b'),
    }),
    fc.record({ kind: fc.constant('deletePod' as const), uid: fc.constantFrom('u1', 'u2', 'u3', 'u9') }),
    fc.record({ kind: fc.constant('forget' as const), uid: fc.constantFrom('u1', 'u2', 'u3', 'u9') }),
    fc.record({ kind: fc.constant('finishBinding' as const), uid, node }),
    fc.record({ kind: fc.constant('expire' as const), at: fc.nat(2_000) }),
  ];
  const nodeOps = [
    fc.record({ kind: fc.constant('upsertNode' as const), node }),
    fc.record({ kind: fc.constant('deleteNode' as const), node }),
  ];
  return withNodes ? fc.oneof(...ops, ...nodeOps) : fc.oneof(...ops);
}
type CacheOp = ReturnType<typeof cacheOps> extends fc.Arbitrary<infer T> ? T : never;

/** Applies one operation of cacheOps to `c` at `now` (ms). */
function applyCacheOp(c: SchedulerCache, o: CacheOp, now: number): void {
  if (o.kind === 'assume') c.assume({ uid: o.uid, key: o.uid, request: o.request }, o.node, now);
  else if (o.kind === 'upsertPod') {
    const nodeName = o.state === 'pending' ? null : o.node;
    c.upsertPod({
      uid: o.uid,
      key: o.uid,
      nodeName,
      schedulerName: 's',
      request: o.request,
      state: nodeName ? o.state : 'pending',
      terminal: o.terminal,
      schedulingFailure: nodeName ? null : o.failure,
    });
  } else if (o.kind === 'deletePod') c.deletePod(o.uid);
  else if (o.kind === 'forget') c.forget(o.uid);
  else if (o.kind === 'finishBinding') c.finishBinding(o.uid, o.node, now);
  else if (o.kind === 'upsertNode') c.upsertNode({ name: o.node, allocatable: [1000, 1000] });
  else if (o.kind === 'deleteNode') c.deleteNode(o.node);
  else c.expire(now + o.at);
}

describe('scheduler cache invariants', () => {
  const op = cacheOps({ withNodes: true });

  it('every NodeInfo always equals the sums of the pods bound to it and the reservations held on it, and exists only while it says something', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 50 }), (ops) => {
        const c = new SchedulerCache(DIMS, { ttlMs: 500, unconfirmedTtlMs: 100 });
        let now = 0;
        for (const o of ops) {
          now += 10;
          applyCacheOp(c, o, now);
          const pods = [...c.podUids()].map((u) => c.pod(u)!);
          const reservations = [...c.reservations()];
          for (const name of ['n1', 'n2', 'n3']) {
            const bound = pods.filter((p) => p.nodeName === name && (p.state === 'starting' || p.state === 'running'));
            const pausedPods = pods.filter((p) => p.nodeName === name && p.state === 'paused');
            const held = reservations.filter((r) => r.nodeName === name);
            const sum = (list: readonly { request: readonly number[] }[]) =>
              [0, 1].map((r) => list.reduce((s, x) => s + x.request[r]!, 0));
            const info = c.nodeInfo(name);
            const says = bound.length + pausedPods.length + held.length > 0 || (info?.hasNode ?? false);
            expect(info !== undefined).toBe(says);
            if (!info) continue;
            expect({
              allocated: [...info.allocated],
              paused: [...info.paused],
              reserved: [...info.reserved],
              reservedCount: info.reservedCount,
              counted: info.starting + info.running + info.pausedCount,
            }).toEqual({
              allocated: sum(bound),
              paused: sum(pausedPods),
              reserved: sum(held),
              reservedCount: held.length,
              counted: bound.length + pausedPods.length,
            });
          }
          // At most one reservation per UID, never one for a pod seen bound.
          expect(new Set(reservations.map((r) => r.uid)).size).toBe(reservations.length);
          for (const r of reservations) expect(c.pod(r.uid)?.nodeName ?? null).toBeNull();
        }
      }),
    );
  });

  it('assume followed by forget is the identity', () => {
    fc.assert(
      fc.property(vector, fc.constantFrom('n1', 'n2'), (request, node) => {
        const c = new SchedulerCache(DIMS, { ttlMs: 500 });
        c.upsertNode({ name: 'n1', allocatable: [10, 10] });
        c.assume({ uid: 'keep', key: 'k', request: [5, 5] }, 'n1', 0);
        const snapshot = () => structuredClone({ infos: [...c.nodeInfos()], size: c.size });
        const before = snapshot();
        c.assume({ uid: 'tmp', key: 't', request }, node, 1);
        c.forget('tmp');
        expect(snapshot()).toEqual(before);
      }),
    );
  });
});

describe('capacity freed', () => {
  const op = cacheOps({ withNodes: false });
  const inUse = (c: SchedulerCache, name: string) => {
    const info = c.nodeInfo(name);
    // Each dimension in use, then the sandboxes starting (a start slot for the starting limit).
    return info
      ? [
          ...[0, 1].map((r) => info.allocated[r]! + info.paused[r]! + info.reserved[r]!),
          info.starting + info.reservedCount,
        ]
      : [0, 0, 0];
  };

  it('whenever a node holds less in some dimension, or starts fewer sandboxes, after a change, the capacityFreed listener named it during that change', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let freed: string[] = [];
        const c = new SchedulerCache(
          DIMS,
          { ttlMs: 500, unconfirmedTtlMs: 100 },
          { capacityFreed: (f) => freed.push(f.nodeName) },
        );
        for (const n of ['n1', 'n2', 'n3']) c.upsertNode({ name: n, allocatable: [1000, 1000] });
        let now = 0;
        for (const o of ops) {
          now += 10;
          const before = ['n1', 'n2', 'n3'].map((n) => inUse(c, n));
          freed = [];
          applyCacheOp(c, o, now);
          ['n1', 'n2', 'n3'].forEach((n, i) => {
            const after = inUse(c, n);
            if (after.some((v, r) => v < before[i]![r]!))
              expect({ op: o.kind, node: n, reported: freed.includes(n) }).toEqual({
                op: o.kind,
                node: n,
                reported: true,
              });
          });
        }
      }),
      { numRuns: 400 },
    );
  });
});
