/**
 * One unit rule for every amount in reasons and in `rank` (src/core/fit/reasons.ts formatAmount):
 * millicores for cpu, the largest binary unit reached for bytes with at most two decimals (`~` when
 * rounded), plain counts. Expected strings worked out by hand next to each case.
 */
import { formatAmount, formatFailure } from '../../../src/core/fit/reasons.js';

const Ki = 1024;
const Mi = Ki * 1024;
const Gi = Mi * 1024;

describe('formatAmount', () => {
  it.each<[string, number, string]>([
    ['cpu', 2500, '2500m'],
    ['cpu', Number.MAX_SAFE_INTEGER, '9007199254740991m or more'], // saturated (podRequests schedulerAmount): the real value may be larger
    ['memory', 0, '0'],
    ['memory', 512, '512'], // below 1Ki: plain bytes
    ['memory', 1023, '1023'],
    ['memory', 1024, '1Ki'],
    ['memory', 1536, '1.5Ki'],
    ['memory', 70 * Mi, '70Mi'], // CoreDNS
    ['memory', 4 * Gi, '4Gi'],
    ['memory', 1.5 * Gi, '1.5Gi'], // was 1536Mi: now in the largest unit reached
    ['memory', 1.25 * Gi, '1.25Gi'],
    // 65544140Ki (kind's allocatable) = 62 Gi + 532428 Ki = 62.5078 Gi → 62.51, rounded
    ['memory', 65544140 * Ki, '~62.51Gi'],
    // 1152Mi = 1.125 Gi → 112.5 hundredths, half up → 1.13
    ['memory', 1152 * Mi, '~1.13Gi'],
    // 1Gi − 1 byte = 1023.999999 Mi rounds to 1024 Mi → the next unit
    ['memory', Gi - 1, '~1Gi'],
    // 400G = 4e11 / 2^30 = 372.529 Gi
    ['memory', 400e9, '~372.53Gi'],
    ['memory', 1024 * Gi, '1Ti'],
    // 119703055367 = 111 Gi + 517712903 bytes = 111.482 Gi
    ['ephemeral-storage', 119703055367, '~111.48Gi'],
    ['hugepages-1Gi', 64 * Gi, '64Gi'],
    ['memory', Number.MAX_SAFE_INTEGER, '8Pi or more'], // the saturation bound of scheduler amounts
    ['cpu', 2500, '2500m'],
    ['cpu', 0, '0m'],
    ['pods', 110, '110'],
    ['nvidia.com/gpu', 4, '4'],
    ['rdma/rdma_shared_device_a', 1000, '1000'],
  ])('%s %d → %s', (resource, amount, text) => {
    expect(formatAmount(resource, amount)).toBe(text);
  });

  // Regression: a reason mixed `512Gi` with `65544140Ki` (the exact-divisor rule).
  it('a request and an allocatable in one reason print in the same unit style', () => {
    expect(
      formatFailure({
        code: 'RequestExceedsAllocatable',
        resource: 'memory',
        requested: 512 * Gi,
        allocatable: 65544140 * Ki,
      }),
    ).toBe("memory request 512Gi exceeds the node's allocatable ~62.51Gi");
  });
});
