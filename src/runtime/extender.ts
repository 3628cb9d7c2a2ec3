/**
 * The extender of a configuration as `serve` runs it, without I/O: the scheduler cache with its two
 * doors (cacheDoors.ts) and the metrics that read it and count its releases. Shared by `serve`, the
 * benchmarks and the HTTP tests; the offline commands take cacheDoors.ts alone.
 */
import type { WatchHealth } from '../cluster/reflector.js';
import type { CapacityFreed, SchedulerCacheView } from '../core/cache/cacheView.js';
import type { Config } from '../config/schema.js';
import { currentPressure } from '../core/cache/nodeInfo.js';
import { byPressureDescending, maxPressure } from '../core/objects/pressure.js';
import { Metrics } from '../observability/metrics.js';
import { buildCacheDoors, type CacheDoors } from './cacheDoors.js';

export interface ExtenderOptions {
  /** Cluster mode: unconfirmed reservations get the short lifetime, and bind requests are checked against recorded offers. */
  readonly clusterMode?: boolean;
  /** Record offered candidates for the bind verb's check (cluster mode with the bind verb). */
  readonly bindVerb?: boolean;
  /** Told of capacity freed in the cache (cluster mode: the requeue, runtime/sources.ts). */
  readonly capacityFreed?: (freed: CapacityFreed) => void;
  /** Each watch's freshness, for the watch gauges (cluster mode: the API thread's reports). */
  readonly watchHealth?: () => Iterable<WatchHealth>;
}

/** What buildExtender makes: the decision side with the read-only view (`service.cache`), the informer side, the metrics. */
export interface Extender extends CacheDoors {
  readonly metrics: Metrics;
}

/** The cache, the placement service and the metrics of `config`. */
export function buildExtender(config: Config, options: ExtenderOptions = {}): Extender {
  // The gauges read the cache when scraped (after it is made); the cache tells the metrics of each release as it happens.
  const metrics = new Metrics(() => placement.service.cache.size.reservations, {
    nodePressures: () => nodePressures(placement.service.cache, config.metrics.maxNodeSeries),
    modelSize: () => placement.service.cache.size,
    rejectedPods: () => placement.service.rejectedPods?.size ?? 0,
    watchHealth: options.watchHealth,
  });
  const placement = buildCacheDoors(config, {
    clusterMode: options.clusterMode,
    bindVerb: options.bindVerb,
    listeners: { released: (release) => metrics.released(release.reason), capacityFreed: options.capacityFreed },
    rejectedPodDropped: () => metrics.rejectedPodsDropped.inc(),
  });
  return { ...placement, metrics };
}

/** [node, resource, pressure] for the `limit` nodes of highest current pressure. */
function* nodePressures(cache: SchedulerCacheView, limit: number): Generator<readonly [string, string, number]> {
  if (limit <= 0) return;
  const rows = [...cache.nodeInfos()]
    .filter((info) => info.hasNode)
    .map((info) => {
      const pressure = currentPressure(info);
      return { name: info.name, pressure, max: maxPressure(pressure) };
    });
  rows.sort((a, b) => byPressureDescending(a.max, b.max) || (a.name < b.name ? -1 : 1));
  for (const row of rows.slice(0, limit)) {
    for (let r = 0; r < row.pressure.length; r++)
      if (!Number.isNaN(row.pressure[r]!)) yield [row.name, cache.dims.names[r]!, row.pressure[r]!];
  }
}
