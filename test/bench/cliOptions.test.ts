import { describe, expect, it } from '@jest/globals';
import { InvalidArgumentError } from 'commander';
import {
  clusterNodes,
  existingFile,
  fraction,
  goDuration,
  intAtLeast,
  listOf,
  listenHost,
  within,
  nonNegative,
  oneOf,
  percentage,
  positive,
  positiveInt,
  quantity,
} from '../../bench/cliOptions.js';
import { parseShorthand } from '../e2e/cluster-nodes.mjs';

describe("the bench programs' option parsers", () => {
  it('take numbers in their range and refuse the rest with what they expect', () => {
    expect(positiveInt('3')).toBe(3);
    // Regression (new-user trial): 1e3, 0x10 and ' 5' passed as counts.
    for (const bad of ['0', '-1', '1.5', 'zero', '', '1e3', '0x10', ' 5'])
      expect(() => positiveInt(bad)).toThrow(new InvalidArgumentError('expected an integer ≥ 1'));
    expect(positive('0.25')).toBe(0.25);
    for (const bad of ['0', '-2', 'Infinity', 'x']) expect(() => positive(bad)).toThrow('expected a number > 0');
    expect(nonNegative('0')).toBe(0);
    for (const bad of ['-0.1', 'Infinity', 'x']) expect(() => nonNegative(bad)).toThrow('expected a number ≥ 0');
    // An empty value was read as 0 (Number('') is 0): `--slope-ms ''` ran with 0.
    for (const bad of ['', ' ']) expect(() => nonNegative(bad)).toThrow('expected a number ≥ 0');
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
    // Regression (new-user trial): `--nodes ,` was an empty list, which a program then ran with.
    for (const empty of [',', '', ' , '])
      expect(() => listOf(positiveInt)(empty)).toThrow('expected a comma-separated list of at least one item');
  });

  // Regression (new-user trial): sampling's and ceiling's values were checked only once they ran, or never.
  it('parse bounded integers and numbers, and an address to listen on', () => {
    expect(intAtLeast(3)('3')).toBe(3);
    for (const bad of ['2', '-3', '3.5', '1e3', ''])
      expect(() => intAtLeast(3)(bad)).toThrow('expected an integer ≥ 3');
    expect(within(0, 1)('1')).toBe(1);
    expect(within(1, 100)('1.5')).toBe(1.5);
    for (const bad of ['0', '-0.5', '1.01', 'x', '', ' '])
      expect(() => within(0, 1)(bad)).toThrow('expected a number in (0, 1]');
    expect(() => within(1, 100)('1')).toThrow('expected a number in (1, 100]');
    expect(listenHost('127.0.0.1')).toBe('127.0.0.1');
    expect(listenHost('localhost')).toBe('localhost');
    for (const bad of ['', '999.1.1.1', '[::1]']) expect(() => listenHost(bad)).toThrow(InvalidArgumentError);
  });

  it('take a file that exists, as an absolute path', () => {
    expect(existingFile('package.json')).toMatch(/^\/.*\/package\.json$/);
    expect(() => existingFile('/nonexistent.yaml')).toThrow('no such file: /nonexistent.yaml');
  });

  // Regression (new-user trial): these were plain strings, so `--per-core abc` or `--pod-cpu lots` passed the dry
  // run and the program brought a control plane up before it failed.
  it('take a Kubernetes quantity above zero, as written', () => {
    for (const good of ['250m', '1', '512Mi', '1.5Gi', '2e3']) expect(quantity(good)).toBe(good);
    for (const bad of ['lots', '', '12 Mi', '1.5.2'])
      expect(() => quantity(bad)).toThrow('expected a Kubernetes quantity, e.g. 250m or 512Mi');
    for (const bad of ['0', '-1', '0m']) expect(() => quantity(bad)).toThrow('expected a quantity above 0');
  });

  it("take cluster-up.sh's node shorthand, naming the entry at fault", () => {
    for (const good of ['1000x32/128Gi', '40x8/32Gi', '16', '900x16,100x192', '4 x 32 / 128Gi'])
      expect(clusterNodes(good)).toBe(good);
    expect(() => clusterNodes('banana')).toThrow(
      'entry 1 "banana": expected [COUNTx]CPUS[/MEMORY], e.g. 1000x32/128Gi',
    );
    expect(() => clusterNodes('10x16,10x8/lots')).toThrow('entry 2 "10x8/lots"');
    expect(() => clusterNodes('10x16/1.2.3Gi')).toThrow('entry 1');
  });

  // The parser repeats cluster-up.sh's rule (test/e2e/cluster-nodes.mjs, which the built bench cannot import): the two
  // take the same entries; the bench's also refuses a memory that is no quantity, which cluster-up would pass on.
  it("take the entries cluster-up.sh's own parser takes, and refuse the ones it refuses", () => {
    const takes = (parse: (v: string) => unknown, v: string) => {
      try {
        parse(v);
        return true;
      } catch {
        return false;
      }
    };
    for (const v of [
      '1000x32/128Gi',
      '16',
      '4 x 32 / 128Gi',
      '900x16,100x192',
      '10*8cpus/32Gi',
      '3×4',
      'x16',
      '16/',
      'a',
    ])
      expect([v, takes(clusterNodes, v)]).toEqual([v, takes(parseShorthand, v)]);
    expect(takes(parseShorthand, '10x16/1.2.3Gi')).toBe(true);
    expect(takes(clusterNodes, '10x16/1.2.3Gi')).toBe(false);
  });

  it('take a share 0–1', () => {
    for (const [good, value] of [
      ['0', 0],
      ['0.05', 0.05],
      ['1', 1],
    ] as const)
      expect(fraction(good)).toBe(value);
    for (const bad of ['-0.1', '1.5', '5', 'x', '', ' ']) expect(() => fraction(bad)).toThrow('expected a number 0–1');
  });

  it('take a Go duration', () => {
    for (const good of ['5s', '1m30s', '500ms', '1.5h', '3600s']) expect(goDuration(good)).toBe(good);
    for (const bad of ['soon', '5', '', '5 s', '-1s'])
      expect(() => goDuration(bad)).toThrow('expected a Go duration, e.g. 5s or 1m30s');
  });
});
