/**
 * The cluster kit's CPU and memory quantities (test/e2e/kit/kubectl.ts milliCpu, bytes), which the e2e tests and
 * the failover and locality benchmarks read requests and allocatable with: the product's Quantity parser, so each
 * counts as kube-scheduler does.
 */
import { describe, expect, it } from '@jest/globals';
import { bytes, milliCpu } from '../../test/e2e/kit/kubectl.js';

describe("the kit's quantities", () => {
  // Regression: the benchmarks' own copies read 1k (how the API server writes 1,000 CPUs) as NaN and 1.5m as 1.5.
  it('reads CPU as millicores, rounded up as kube-scheduler does', () => {
    expect(['2', '500m', '1.5', '1k', '1.5m', '0.0004', '1.001'].map(milliCpu)).toEqual([
      2000, 500, 1500, 1_000_000, 2, 1, 1001,
    ]);
  });

  it('reads memory as bytes, binary and decimal suffixes', () => {
    expect(['4Gi', '512Mi', '1G', '1000', '131072Ki'].map(bytes)).toEqual([
      4 * 2 ** 30,
      512 * 2 ** 20,
      1e9,
      1000,
      128 * 2 ** 20,
    ]);
  });

  it('refuses what is not a quantity', () => {
    expect(() => milliCpu('two')).toThrow(/two/);
    expect(() => bytes('4 Gi')).toThrow(/4 Gi/);
  });
});
