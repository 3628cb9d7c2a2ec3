import fc from 'fast-check';
import { ClusterModel } from '../../src/core/clusterModel.js';
import { evaluate, Placer, scoreEvaluations, STRATEGIES, type NodeView } from '../../src/core/placement.js';
import { PlacementService } from '../../src/core/placementService.js';
import type { PodRecord } from '../../src/core/records.js';
import { ReservationLedger } from '../../src/core/reservations.js';

const DIMS = { names: ['cpu', 'memory'] };
const amount = fc.integer({ min: 0, max: 1_000_000 });
const vector = fc.tuple(amount, amount);

const viewArb = fc.record({
  name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
  allocatable: fc.option(fc.tuple(fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: 1, max: 2_000_000 })), { nil: null }),
  allocated: vector,
  paused: vector,
  reserved: vector,
  count: fc.nat(20),
});

function toView(v: { name: string; allocatable: [number, number] | null; allocated: [number, number]; paused: [number, number]; reserved: [number, number]; count: number }): NodeView {
  return {
    name: v.name,
    allocatable: v.allocatable,
    totals: { allocated: v.allocated, paused: v.paused, starting: v.count, running: v.count, pausedCount: 0 },
    reserved: { request: v.reserved, count: v.count },
  };
}

describe('placement invariants', () => {
  it('scores are integers in 0..10, exactly one 10 when something fits, none otherwise', () => {
    fc.assert(
      fc.property(fc.array(viewArb, { minLength: 1, maxLength: 8 }), vector, fc.constantFrom(...STRATEGIES), (views, request, strategy) => {
        const evaluations = views.map((v) => evaluate(toView(v), request, DIMS));
        const decision = new Placer(strategy, () => 0.3).choose(evaluations);
        const scores = scoreEvaluations(evaluations, decision.chosen, strategy);
        expect(scores.every((s) => Number.isInteger(s) && s >= 0 && s <= 10)).toBe(true);
        expect(scores.filter((s) => s === 10).length).toBe(decision.chosen >= 0 ? 1 : 0);
        if (decision.chosen >= 0) expect(evaluations[decision.chosen]!.failures).toEqual([]);
      }),
    );
  });

  it('a node with more free capacity (less in use, same allocatable) never scores lower under least_loaded', () => {
    fc.assert(
      fc.property(viewArb, fc.nat(500_000), vector, (v, extra, request) => {
        fc.pre(v.allocatable !== null);
        const lighter = evaluate(toView(v), request, DIMS);
        const heavier = evaluate(toView({ ...v, name: 'z', allocated: [v.allocated[0] + extra, v.allocated[1]] }), request, DIMS);
        const [sLight, sHeavy] = scoreEvaluations([lighter, heavier], -1, 'least_loaded');
        expect(sLight).toBeGreaterThanOrEqual(sHeavy!);
      }),
    );
  });

  it('filter never returns a node it was not given, and every input node is either feasible or failed', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom<string>('a', 'b', 'c', 'ghost'), { minLength: 1 }), vector, (names, request) => {
        const model = new ClusterModel(DIMS, 1000);
        for (const n of ['a', 'b', 'c']) model.upsertNode({ name: n, allocatable: [500_000, 500_000] });
        const service = new PlacementService(model, new Placer('least_loaded', () => 0), { schedulerName: 's' });
        const pod: PodRecord = { uid: 'u', key: 'ns/p', nodeName: null, schedulerName: 's', request, state: 'pending', schedulingFailure: null };
        const out = service.filter(pod, names.map((name) => ({ name })), 0);
        expect(out.feasible.every((n) => names.includes(n))).toBe(true);
        expect(new Set([...out.feasible, ...out.failed.keys()])).toEqual(new Set(names));
      }),
    );
  });
});

describe('ledger invariants', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('reserve' as const), uid: fc.constantFrom('u1', 'u2', 'u3'), node: fc.constantFrom('n1', 'n2'), request: vector }),
    fc.record({ kind: fc.constant('confirm' as const), uid: fc.constantFrom('u1', 'u2', 'u3'), node: fc.constantFrom('n1', 'n2') }),
    fc.record({ kind: fc.constant('forget' as const), uid: fc.constantFrom('u1', 'u2', 'u3', 'u9') }),
    fc.record({ kind: fc.constant('expire' as const), at: fc.nat(2_000) }),
  );

  it('per-node totals always equal the sum of the reservations held there', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const l = new ReservationLedger(2, 500);
        let now = 0;
        for (const o of ops) {
          now += 10;
          if (o.kind === 'reserve') l.reserve(o.uid, o.uid, o.node, o.request, now);
          else if (o.kind === 'confirm') l.confirm(o.uid, o.node);
          else if (o.kind === 'forget') l.forget(o.uid);
          else l.expire(now + o.at);
          for (const node of ['n1', 'n2']) {
            const held = [...l.all()].filter((r) => r.nodeName === node);
            expect(l.reservedOn(node)).toEqual({
              request: [0, 1].map((i) => held.reduce((s, r) => s + r.request[i]!, 0)),
              count: held.length,
            });
          }
        }
      }),
    );
  });

  it('reserve followed by forget is the identity', () => {
    fc.assert(
      fc.property(vector, fc.constantFrom('n1', 'n2'), (request, node) => {
        const l = new ReservationLedger(2, 500);
        l.reserve('keep', 'k', 'n1', [5, 5], 0);
        const before = { n1: l.reservedOn('n1'), n2: l.reservedOn('n2'), size: l.size };
        l.reserve('tmp', 't', node, request, 1);
        l.forget('tmp');
        expect({ n1: l.reservedOn('n1'), n2: l.reservedOn('n2'), size: l.size }).toEqual(before);
      }),
    );
  });
});
