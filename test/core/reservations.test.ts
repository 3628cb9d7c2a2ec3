import { ReservationLedger } from '../../src/core/reservations.js';

// Two dimensions: [cpu millicores, memory bytes]. TTL 600 s, as placementReservationTtl's default.
const TTL_MS = 600_000;
const POD = [2000, 4 * 1024 ** 3];

function ledger(): ReservationLedger {
  return new ReservationLedger(2, TTL_MS);
}

describe('ReservationLedger transitions', () => {
  it('reserve: absent → Reserved adds the request and one count to the node', () => {
    const l = ledger();
    expect(l.reserve('u1', 'ns/p1', 'n1', POD, 1_000)).toBeUndefined();
    expect(l.reservedOn('n1')).toEqual({ request: POD, count: 1 });
    expect(l.get('u1')).toMatchObject({ nodeName: 'n1', podKey: 'ns/p1', reservedAtMs: 1_000 });
    expect(l.size).toBe(1);
  });

  it('reserve the same UID again replaces it (new node, new age) and never doubles it', () => {
    const l = ledger();
    l.reserve('u1', 'ns/p1', 'n1', POD, 1_000);
    const replaced = l.reserve('u1', 'ns/p1', 'n2', POD, 2_000);
    expect(replaced?.nodeName).toBe('n1');
    expect(l.reservedOn('n1')).toEqual({ request: [0, 0], count: 0 });
    expect(l.reservedOn('n2')).toEqual({ request: POD, count: 1 });
    expect(l.size).toBe(1);
    // Same node again: still one reservation's worth, 2000m not 4000m.
    l.reserve('u1', 'ns/p1', 'n2', POD, 3_000);
    expect(l.reservedOn('n2')).toEqual({ request: POD, count: 1 });
  });

  it('confirm on the reserved node releases as bound', () => {
    const l = ledger();
    l.reserve('u1', 'ns/p1', 'n1', POD, 0);
    expect(l.confirm('u1', 'n1')).toMatchObject({ reason: 'bound', reservation: { uid: 'u1', nodeName: 'n1' } });
    expect(l.reservedOn('n1').count).toBe(0);
    expect(l.size).toBe(0);
  });

  it('confirm on another node releases as moved and leaves no ghost load on the reserved node', () => {
    const l = ledger();
    l.reserve('u1', 'ns/p1', 'n1', POD, 0);
    expect(l.confirm('u1', 'n2')?.reason).toBe('moved');
    expect(l.reservedOn('n1')).toEqual({ request: [0, 0], count: 0 });
    expect(l.reservedOn('n2')).toEqual({ request: [0, 0], count: 0 });
  });

  it('forget releases as deleted by default, or with the reason given', () => {
    const l = ledger();
    l.reserve('u1', 'ns/p1', 'n1', POD, 0);
    l.reserve('u2', 'ns/p2', 'n1', POD, 0);
    expect(l.forget('u1')?.reason).toBe('deleted');
    expect(l.forget('u2', 'unschedulable')?.reason).toBe('unschedulable');
    expect(l.reservedOn('n1').count).toBe(0);
  });

  it('release is idempotent: forget/confirm twice, or without a prior reserve, is a no-op returning null', () => {
    const l = ledger();
    expect(l.forget('never')).toBeNull();
    expect(l.confirm('never', 'n1')).toBeNull();
    l.reserve('u1', 'ns/p1', 'n1', POD, 0);
    l.reserve('u2', 'ns/p2', 'n1', POD, 0);
    expect(l.forget('u1')).not.toBeNull();
    expect(l.forget('u1')).toBeNull();
    expect(l.confirm('u1', 'n1')).toBeNull();
    // u2 is untouched by the repeated releases of u1.
    expect(l.reservedOn('n1')).toEqual({ request: POD, count: 1 });
  });

  it('expire releases exactly the reservations whose age is ≥ TTL, oldest first', () => {
    const l = ledger();
    l.reserve('old', 'ns/old', 'n1', POD, 0);
    l.reserve('mid', 'ns/mid', 'n1', POD, 100_000);
    l.reserve('new', 'ns/new', 'n2', POD, 500_000);
    // At 600 000: old is 600 000 ms old (= TTL → expired), mid 500 000 (kept), new 100 000 (kept).
    expect(l.expire(600_000).map((r) => [r.reservation.uid, r.reason])).toEqual([['old', 'expired']]);
    // At 700 000: mid is 600 000 old → expired; new 200 000 → kept.
    expect(l.expire(700_000).map((r) => r.reservation.uid)).toEqual(['mid']);
    expect(l.reservedOn('n1').count).toBe(0);
    expect(l.reservedOn('n2').count).toBe(1);
    expect(l.expire(1_099_999)).toEqual([]);
    expect(l.expire(1_100_000).map((r) => r.reservation.uid)).toEqual(['new']);
  });

  it('a replaced reservation is aged from its replacement, not from the first decision', () => {
    const l = ledger();
    l.reserve('u1', 'ns/p1', 'n1', POD, 0);
    l.reserve('u2', 'ns/p2', 'n1', POD, 10_000);
    l.reserve('u1', 'ns/p1', 'n1', POD, 20_000); // moves to the end of the age order
    // At 610 000: u2 (age 600 000) expires; u1 (age 590 000) stays even though it came first.
    expect(l.expire(610_000).map((r) => r.reservation.uid)).toEqual(['u2']);
    expect(l.get('u1')?.reservedAtMs).toBe(20_000);
  });

  it('reservedOn is the sum of the requests on the node', () => {
    const l = ledger();
    l.reserve('a', 'ns/a', 'n1', [500, 100], 0);
    l.reserve('b', 'ns/b', 'n1', [1500, 300], 0);
    l.reserve('c', 'ns/c', 'n2', [7, 7], 0);
    // n1: 500 + 1500 = 2000m; 100 + 300 = 400 bytes.
    expect(l.reservedOn('n1')).toEqual({ request: [2000, 400], count: 2 });
    expect([...l.all()].map((r) => r.uid)).toEqual(['a', 'b', 'c']);
  });

  it('rejects a request of the wrong dimension count and a non-positive TTL', () => {
    expect(() => ledger().reserve('u', 'ns/u', 'n', [1], 0)).toThrow(/1 dimensions, expected 2/);
    expect(() => new ReservationLedger(2, 0)).toThrow(/ttlMs must be > 0/);
  });

  it('the caller’s request array is copied, so later mutation cannot change the ledger', () => {
    const l = ledger();
    const request = [1000, 1];
    l.reserve('u', 'ns/u', 'n1', request, 0);
    request[0] = 999_999;
    expect(l.reservedOn('n1').request).toEqual([1000, 1]);
  });
});
