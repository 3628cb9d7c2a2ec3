/**
 * Labelled counters exist at 0 from the start. A counter series born at 1 has no earlier sample, so rate() and
 * increase() read 0 for it: without these zeros the first expired reservation, failed bind, watch restart or
 * relist after a start is invisible to the alerts (manifests/prometheus-rules.yaml) and to the dashboard.
 */
import { pino } from 'pino';
import { LiveSync, metricsObserver } from '../../src/cluster/liveSync.js';
import type { ListPage, ResourceSource } from '../../src/cluster/reflector.js';
import { SchedulerCache } from '../../src/core/cache/schedulerCache.js';
import { cacheUpdates } from '../../src/core/cache/sync.js';
import { Metrics } from '../../src/observability/metrics.js';

/** A list that never answers and a watch that never opens: only what start() does at once is observed. */
class SilentSource<T> implements ResourceSource<T> {
  list(): Promise<ListPage<T>> {
    return new Promise(() => undefined);
  }
  watch(): Promise<() => void> {
    return new Promise(() => undefined);
  }
}

const samples = async (metrics: Metrics, name: string) =>
  (await metrics.registry.getSingleMetricAsString(name)).split('\n').filter((l) => l.startsWith(name));

describe('counters at 0 before anything happened', () => {
  it('reservations released: every reason; binds: every result', async () => {
    const metrics = new Metrics(() => 0, { defaultMetrics: false });
    expect(await samples(metrics, 'sandbox_extender_reservations_released_total')).toEqual(
      ['bound', 'moved', 'deleted', 'unschedulable', 'expired', 'unreserved'].map(
        (r) => `sandbox_extender_reservations_released_total{reason="${r}"} 0`,
      ),
    );
    expect(await samples(metrics, 'sandbox_extender_binds_total')).toEqual(
      ['bound', 'already_bound', 'refused', 'does_not_fit', 'error'].map(
        (r) => `sandbox_extender_binds_total{result="${r}"} 0`,
      ),
    );
  });

  it('requeue: pods nudged and writes, every result; rejected pods remembered and dropped', async () => {
    let remembered = 0;
    const metrics = new Metrics(() => 0, { defaultMetrics: false, rejectedPods: () => remembered });
    expect(await samples(metrics, 'sandbox_extender_pods_nudged_total')).toEqual(
      ['requeued', 'failed'].map((r) => `sandbox_extender_pods_nudged_total{result="${r}"} 0`),
    );
    expect(await samples(metrics, 'sandbox_extender_requeue_writes_total')).toEqual(
      ['requeued', 'failed'].map((r) => `sandbox_extender_requeue_writes_total{result="${r}"} 0`),
    );
    expect(await samples(metrics, 'sandbox_extender_rejected_pods_dropped_total')).toEqual([
      'sandbox_extender_rejected_pods_dropped_total 0',
    ]);
    expect(await samples(metrics, 'sandbox_extender_rejected_pods')).toEqual(['sandbox_extender_rejected_pods 0']);
    remembered = 7; // read when scraped
    expect(await samples(metrics, 'sandbox_extender_rejected_pods')).toEqual(['sandbox_extender_rejected_pods 7']);
    expect(await samples(new Metrics(() => 0, { defaultMetrics: false }), 'sandbox_extender_rejected_pods')).toEqual([
      'sandbox_extender_rejected_pods 0',
    ]); // no reader: 0
  });

  it('cluster mode: watch restarts and relists of nodes and pods, as soon as the watches start', async () => {
    const cache = new SchedulerCache({ names: ['cpu', 'memory'] }, { ttlMs: 600_000 });
    const metrics = new Metrics(() => 0, { defaultMetrics: false });
    const options = {
      dims: cache.dims,
      pausedLabel: 'sandbox-extender.io/paused',
      pageSize: 100,
      minBackoffMs: 1,
      maxBackoffMs: 5,
    };
    const live = new LiveSync(
      cacheUpdates(cache),
      { nodes: new SilentSource(), pods: new SilentSource() },
      options,
      metricsObserver(metrics),
      pino({ level: 'silent' }),
    );
    expect(await samples(metrics, 'sandbox_extender_watch_restarts_total')).toEqual([]);
    live.start();
    expect(await samples(metrics, 'sandbox_extender_watch_restarts_total')).toEqual([
      'sandbox_extender_watch_restarts_total{resource="nodes"} 0',
      'sandbox_extender_watch_restarts_total{resource="pods"} 0',
    ]);
    expect(await samples(metrics, 'sandbox_extender_watch_lists_total')).toEqual([
      'sandbox_extender_watch_lists_total{resource="nodes",kind="relist"} 0',
      'sandbox_extender_watch_lists_total{resource="pods",kind="relist"} 0',
    ]);
  });
});
