/**
 * buildExtender (src/runtime/extender.ts): what the cache and the metrics are handed when they are made — the
 * capacityFreed listener, the watches' health, the rejected pods — reaches them, with nothing assigned later.
 */
import type { WatchHealth } from '../../src/cluster/reflector.js';
import { parseConfig } from '../../src/config/load.js';
import type { CapacityFreed } from '../../src/core/cache/cacheView.js';
import { buildExtender } from '../../src/runtime/extender.js';

const HEALTH: WatchHealth[] = [
  { resource: 'nodes', synced: true, watching: true, lastDeliveryAgeMs: 1_500, brokenMs: 0, lastError: null },
  { resource: 'pods', synced: true, watching: false, lastDeliveryAgeMs: 9_000, brokenMs: 4_000, lastError: 'HTTP 500' },
];

const samples = async (built: ReturnType<typeof buildExtender>, name: string) =>
  (await built.metrics.registry.getSingleMetricAsString(name)).split('\n').filter((l) => l.startsWith(name));

const insufficientCpu = {
  code: 'InsufficientResource',
  resource: 'cpu',
  requested: 8000,
  allocated: 0,
  paused: 0,
  reserved: 0,
  allocatable: 4000,
} as const;

describe('buildExtender: wired when made', () => {
  it('cluster mode: the cache tells capacityFreed, the watch gauges read watchHealth, the rejected-pods gauge reads the service', async () => {
    const freed: CapacityFreed[] = [];
    let health = HEALTH;
    const built = buildExtender(parseConfig({}), {
      clusterMode: true,
      bindVerb: true,
      capacityFreed: (f) => freed.push(f),
      watchHealth: () => health,
    });
    built.updates.replaceNodes({ nodes: [{ name: 'n1', allocatable: [4000, 8 * 2 ** 30] }], keptNodes: new Set() });
    expect(freed).toEqual([{ nodeName: 'n1', cause: 'node-added', podTerminal: false }]);

    expect(await samples(built, 'sandbox_extender_watch_last_event_age_seconds')).toEqual([
      'sandbox_extender_watch_last_event_age_seconds{resource="nodes"} 1.5',
      'sandbox_extender_watch_last_event_age_seconds{resource="pods"} 9',
    ]);
    health = [{ ...HEALTH[1]!, brokenMs: 31_000 }]; // read again at each scrape
    expect(await samples(built, 'sandbox_extender_watch_broken_seconds')).toEqual([
      'sandbox_extender_watch_broken_seconds{resource="pods"} 31',
    ]);

    expect(await samples(built, 'sandbox_extender_rejected_pods')).toEqual(['sandbox_extender_rejected_pods 0']);
    built.service.rejectedPods!.remember(
      { uid: 'u1', key: 'ns/p1', request: [8000, 0] },
      [['n1', [insufficientCpu]]],
      0,
    );
    expect(await samples(built, 'sandbox_extender_rejected_pods')).toEqual(['sandbox_extender_rejected_pods 1']);
  });

  it('snapshot mode (nothing handed in): no watch series, no rejected pods', async () => {
    const built = buildExtender(parseConfig({}), { clusterMode: false });
    expect(built.service.rejectedPods).toBeNull();
    expect(await samples(built, 'sandbox_extender_watch_last_event_age_seconds')).toEqual([]);
    expect(await samples(built, 'sandbox_extender_watch_broken_seconds')).toEqual([]);
    expect(await samples(built, 'sandbox_extender_rejected_pods')).toEqual(['sandbox_extender_rejected_pods 0']);
  });
});
