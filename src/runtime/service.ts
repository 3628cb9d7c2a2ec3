/**
 * Assembling the extender from its configuration, without I/O: the scheduler cache, the placer,
 * the placement service and the metrics that read them. Shared by `serve` and the offline commands
 * (`rank` loads this, not the HTTP edge).
 */
import type { Config } from '../config/schema.js';
import { currentPressure } from '../core/nodeInfo.js';
import { Placer } from '../core/placement.js';
import { PlacementService } from '../core/placementService.js';
import { byPressureDescending, maxPressure } from '../core/pressure.js';
import { SchedulerCache, type CapacityFreed } from '../core/schedulerCache.js';
import { Metrics } from '../observability/metrics.js';
import { randomSource } from '../random.js';

export interface ServiceOptions {
  /** Cluster mode: unconfirmed reservations get the short lifetime, and bind requests are checked against recorded offers. */
  readonly clusterMode?: boolean;
  /** Record offered candidates for the bind verb's check (cluster mode with the bind verb). */
  readonly bindVerb?: boolean;
  /** Told of capacity freed in the cache (cluster mode: the requeue, runtime/sources.ts). */
  readonly capacityFreed?: (freed: CapacityFreed) => void;
}

/** The cache, the placement service and the metrics of `config`. */
export function buildService(config: Config, options: ServiceOptions = {}): { service: PlacementService; metrics: Metrics } {
  const ttlMs = config.placementReservationTtlSeconds * 1000;
  const unconfirmedTtlMs = options.clusterMode ? Math.min(ttlMs, config.unconfirmedReservationTtlSeconds * 1000) : ttlMs;
  // The gauges read the cache when scraped; the cache tells the metrics of each release as it happens.
  const metrics = new Metrics(() => cache.size.reservations, {
    nodePressures: () => nodePressures(cache, config.metrics.maxNodeSeries),
    modelSize: () => cache.size,
  });
  const cache = new SchedulerCache(
    { names: config.dimensions },
    { ttlMs, unconfirmedTtlMs, startingLimit: config.startingLimit },
    { released: (release) => metrics.released(release.reason), capacityFreed: options.capacityFreed },
  );
  const placer = new Placer(config.strategy, randomSource(config.randomSeed));
  const service = new PlacementService(cache, placer, {
    schedulerName: config.schedulerName,
    chooseInFilter: config.chooseInFilter,
    recordOffers: options.bindVerb ?? false,
    offerTtlMs: ttlMs,
    // Cluster mode: pods rejected for capacity are remembered for a requeue when capacity frees (clusterSource).
    rejectedPods:
      options.clusterMode && config.requeue.enabled
        ? { maxPods: config.requeue.maxPods, raceWindowMs: config.requeue.raceWindowSeconds * 1000, dropped: () => metrics.rejectedPodsDropped.inc() }
        : undefined,
  });
  metrics.rejectedPodsRemembered = () => service.rejectedPods?.size ?? 0;
  return { service, metrics };
}

/** [node, resource, pressure] for the `limit` nodes of highest current pressure. */
function* nodePressures(cache: SchedulerCache, limit: number): Generator<readonly [string, string, number]> {
  if (limit <= 0) return;
  const rows = [...cache.nodeInfos()].filter((info) => info.hasNode).map((info) => {
    const pressure = currentPressure(info);
    return { name: info.name, pressure, max: maxPressure(pressure) };
  });
  rows.sort((a, b) => byPressureDescending(a.max, b.max) || (a.name < b.name ? -1 : 1));
  for (const row of rows.slice(0, limit)) {
    for (let r = 0; r < row.pressure.length; r++) if (!Number.isNaN(row.pressure[r]!)) yield [row.name, cache.dims.names[r]!, row.pressure[r]!];
  }
}
