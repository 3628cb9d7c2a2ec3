import fc from 'fast-check';
import { byPressureDescending, maxPressure, pressureRatio } from '../../../src/core/objects/pressure.js';

describe('pressureRatio: the one place a pressure is computed and "no value" decided', () => {
  it.each([
    [3_000, 16_000, 0.1875],
    [0, 16_000, 0],
    [20_000, 16_000, 1.25], // overcommitted: above 1, never clamped here
    [4 * 1024 ** 3, 64 * 1024 ** 3, 0.0625],
  ])('%d used of %d allocatable is %d', (used, allocatable, ratio) => {
    expect(pressureRatio(used, allocatable)).toBe(ratio);
  });

  it.each([
    ['no allocatable of the resource', 0],
    ['a negative allocatable', -1],
  ])('has no value (NaN) for %s, whatever is used', (_what, allocatable) => {
    expect(pressureRatio(0, allocatable)).toBeNaN();
    expect(pressureRatio(5, allocatable)).toBeNaN();
  });
});

describe('maxPressure', () => {
  it('is the largest ratio with a value; NaN only when none has one', () => {
    expect(maxPressure([0.25, NaN, 0.5, 0.125])).toBe(0.5);
    expect(maxPressure([NaN, 0.25])).toBe(0.25);
    expect(maxPressure([0.25, NaN])).toBe(0.25);
    expect(maxPressure([0])).toBe(0);
    expect(maxPressure([NaN, NaN])).toBeNaN();
    expect(maxPressure([])).toBeNaN();
  });

  it('equals Math.max over the values that have one', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.double({ min: 0, max: 10, noNaN: true }), fc.constant(NaN))), (ratios) => {
        const values = ratios.filter((p) => !Number.isNaN(p));
        if (values.length === 0) expect(maxPressure(ratios)).toBeNaN();
        else expect(maxPressure(ratios)).toBe(Math.max(...values));
      }),
    );
  });
});

describe('byPressureDescending', () => {
  it('puts higher pressure first and no value after every value', () => {
    expect([0.5, NaN, 1.25, 0, NaN, 0.75].sort(byPressureDescending)).toEqual([1.25, 0.75, 0.5, 0, NaN, NaN]);
  });

  it('is 0 for equals, with or without a value, and antisymmetric', () => {
    expect(byPressureDescending(0.5, 0.5)).toBe(0);
    expect(byPressureDescending(NaN, NaN)).toBe(0);
    expect(byPressureDescending(NaN, 0)).toBeGreaterThan(0);
    expect(byPressureDescending(0, NaN)).toBeLessThan(0);
    expect(byPressureDescending(0.25, 0.5)).toBeGreaterThan(0);
    expect(byPressureDescending(0.5, 0.25)).toBeLessThan(0);
  });
});
