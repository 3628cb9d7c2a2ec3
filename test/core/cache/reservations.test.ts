import { ReservationLedger, type Reservation } from '../../../src/core/cache/reservations.js';

function reservation(uid: string, expiresAtMs: number, nodeName = 'n1'): Reservation {
  return {
    uid,
    podKey: `ns/${uid}`,
    nodeName,
    request: [1000, 1],
    reservedAtMs: 0,
    expiresAtMs,
    bindingStarted: false,
    bindingFinished: false,
    podSeen: true,
    failureMark: null,
  };
}

describe('ReservationLedger', () => {
  it('put replaces the reservation of a UID and returns the one it replaced', () => {
    const l = new ReservationLedger();
    expect(l.put(reservation('u', 10))).toBeUndefined();
    expect(l.put(reservation('u', 20, 'n2'))).toMatchObject({ nodeName: 'n1', expiresAtMs: 10 });
    expect(l.size).toBe(1);
    expect(l.get('u')).toMatchObject({ nodeName: 'n2', expiresAtMs: 20 });
  });

  it('takeExpired returns the reservations due, earliest deadline first, whatever the order they were put in', () => {
    const l = new ReservationLedger();
    for (const [uid, t] of [
      ['c', 30],
      ['a', 10],
      ['e', 50],
      ['b', 20],
      ['d', 40],
    ] as const)
      l.put(reservation(uid, t));
    expect(l.takeExpired(9)).toEqual([]);
    expect(l.takeExpired(30).map((r) => r.uid)).toEqual(['a', 'b', 'c']);
    expect(l.takeExpired(1000).map((r) => r.uid)).toEqual(['d', 'e']);
    expect(l.size).toBe(0);
  });

  it('a replaced or removed reservation never expires by its old deadline', () => {
    const l = new ReservationLedger();
    l.put(reservation('moved', 10));
    l.put(reservation('moved', 100)); // replaced with a later deadline
    l.put(reservation('gone', 10));
    l.remove('gone');
    expect(l.takeExpired(50)).toEqual([]);
    expect(l.takeExpired(100).map((r) => [r.uid, r.expiresAtMs])).toEqual([['moved', 100]]);
  });

  it('stays correct through many replacements (the heap is rebuilt from the live entries)', () => {
    const l = new ReservationLedger();
    for (let i = 0; i < 1000; i++) l.put(reservation(`u${i % 10}`, 1000 - i)); // deadlines go down; last write wins
    // Live: u0..u9 with deadlines 1000 - (990..999) = 10..1.
    expect(l.size).toBe(10);
    expect(l.takeExpired(5).map((r) => r.uid)).toEqual(['u9', 'u8', 'u7', 'u6', 'u5']);
    expect(l.takeExpired(10).map((r) => r.expiresAtMs)).toEqual([6, 7, 8, 9, 10]);
  });

  it('all() lists reservations in the order they were last written', () => {
    const l = new ReservationLedger();
    l.put(reservation('a', 1));
    l.put(reservation('b', 1));
    l.put(reservation('a', 2));
    expect([...l.all()].map((r) => r.uid)).toEqual(['b', 'a']);
  });
});
