/**
 * The scheduler cache of a configuration and its two doors, without I/O and without metrics: the
 * decision side (the PlacementService, with the placer) and the informer side (CacheUpdates). The only
 * module outside src/core that holds the live cache itself (the lint config enforces it; the offline
 * replay fills one of its own); everything else gets the read-only view through `service.cache`
 * (core/cache/cacheView.ts). `rank` loads this alone; `serve` adds the metrics (extender.ts).
 */
import type { Config } from '../config/schema.js';
import type { CacheUpdates } from '../core/cache/sync.js';
import { Placer } from '../core/fit/placer.js';
import { PlacementService } from '../core/decide/placementService.js';
import type { PodRecordOptions } from '../core/objects/records.js';
import { SchedulerCache, type CacheListeners } from '../core/cache/schedulerCache.js';
import { cacheUpdates } from '../core/cache/sync.js';
import { randomSource } from '../randomSource.js';

export interface CacheDoorsOptions {
  /** Cluster mode: unconfirmed reservations get the short lifetime, and pods rejected for capacity are remembered for a requeue. */
  readonly clusterMode?: boolean;
  /** Record offered candidates for the bind verb's check (cluster mode with the bind verb). */
  readonly bindVerb?: boolean;
  /** Who the cache tells of releases and freed capacity (fixed here, when the cache is made). */
  readonly listeners?: CacheListeners;
  /** Told of each rejected pod forgotten to stay within requeue.maxPods (cluster mode). */
  readonly rejectedPodDropped?: () => void;
}

/** The cache's two doors: the decision side with the read-only view (`service.cache`), and the informer side. */
export interface CacheDoors {
  readonly service: PlacementService;
  /** The informer side: every change a snapshot, a list or a watch brings goes through here. */
  readonly updates: CacheUpdates;
}

/** The scheduler cache, the placer and the placement service of `config`. @throws RangeError on an invalid starting limit (SchedulerCache). */
export function buildCacheDoors(config: Config, options: CacheDoorsOptions = {}): CacheDoors {
  const ttlMs = config.placementReservationTtlSeconds * 1000;
  const unconfirmedTtlMs = options.clusterMode
    ? Math.min(ttlMs, config.unconfirmedReservationTtlSeconds * 1000)
    : ttlMs;
  const { locality } = config;
  // The locality memory's informer-side clock is the wall clock, as the verbs' (serve.ts).
  const localityIndex = locality.enabled
    ? { ttlMs: locality.ttlSeconds * 1000, maxEntries: locality.maxEntries, now: Date.now }
    : undefined;
  const cache = new SchedulerCache(
    { names: config.dimensions },
    { ttlMs, unconfirmedTtlMs, startingLimit: config.startingLimit, locality: localityIndex },
    options.listeners,
  );
  const placer = new Placer(config.strategy, randomSource(config.randomSeed));
  const service = new PlacementService(cache, placer, {
    schedulerName: config.schedulerName,
    chooseInFilter: config.chooseInFilter,
    percentageOfNodesToScore: config.kubeScheduler.percentageOfNodesToScore,
    recordOffers: options.bindVerb ?? false,
    offerTtlMs: ttlMs,
    // Cluster mode: pods rejected for capacity are remembered for a requeue when capacity frees (runtime/sources.ts).
    rejectedPods:
      options.clusterMode && config.requeue.enabled
        ? {
            maxPods: config.requeue.maxPods,
            raceWindowMs: config.requeue.raceWindowSeconds * 1000,
            ...(options.rejectedPodDropped ? { dropped: options.rejectedPodDropped } : {}),
          }
        : undefined,
    locality: locality.enabled
      ? {
          pressureBand: locality.pressureBand,
          templateLabel: locality.templateLabel,
          maxImagesPerNode: locality.maxImagesPerNode,
        }
      : undefined,
  });
  return { service, updates: cacheUpdates(cache) };
}

/** How records are made for `config` (PodRecordOptions): the paused label, and locality's when it is on. */
export function recordOptions(config: Config): PodRecordOptions {
  const { enabled, templateLabel, maxImagesPerNode } = config.locality;
  return enabled
    ? { pausedLabel: config.pausedLabel, locality: { templateLabel, maxImagesPerNode } }
    : { pausedLabel: config.pausedLabel };
}
