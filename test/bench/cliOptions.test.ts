import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import { existingFile, listOf, nonNegative, oneOf, percentage, positive, positiveInt } from '../../bench/cliOptions.js';

describe("the bench programs' option parsers", () => {
  it('take numbers in their range and refuse the rest with what they expect', () => {
    expect(positiveInt('3')).toBe(3);
    for (const bad of ['0', '-1', '1.5', 'zero', ''])
      expect(() => positiveInt(bad)).toThrow(new InvalidArgumentError('expected an integer ≥ 1'));
    expect(positive('0.25')).toBe(0.25);
    for (const bad of ['0', '-2', 'Infinity', 'x']) expect(() => positive(bad)).toThrow('expected a number > 0');
    expect(nonNegative('0')).toBe(0);
    for (const bad of ['-0.1', 'Infinity', 'x']) expect(() => nonNegative(bad)).toThrow('expected a number ≥ 0');
    expect(percentage('0')).toBe(0);
    expect(percentage('100')).toBe(100);
    for (const bad of ['101', '-1', '12.5', '', 'ten'])
      expect(() => percentage(bad)).toThrow('expected an integer 0–100');
  });

  it('parse a list item by item, and a choice', () => {
    expect(listOf(positiveInt)('1000, 5000,')).toEqual([1000, 5000]);
    expect(() => listOf(positiveInt)('1000,abc')).toThrow('expected an integer ≥ 1');
    const mode = oneOf(['drain', 'burst'] as const);
    expect(listOf(mode)('drain,burst')).toEqual(['drain', 'burst']);
    expect(() => mode('bogus')).toThrow('expected one of drain, burst');
  });

  it('take a file that exists, as an absolute path', () => {
    expect(existingFile('package.json')).toMatch(/^\/.*\/package\.json$/);
    expect(() => existingFile('/nonexistent.yaml')).toThrow('no such file: /nonexistent.yaml');
  });
});
