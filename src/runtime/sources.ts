/**
 * Where the scheduler cache comes from:
 * - snapshot mode (`snapshot.path` / --snapshot): a `kubectl get nodes,pods -A -o json` file,
 *   re-read when it changes; for offline use and trials. No bind verb, no Events.
 * - cluster mode (otherwise): list+watch of Nodes and Pods through a kubeconfig; the bind verb
 *   creates Bindings, each decision is recorded as an Event on the pod, and pods rejected for
 *   capacity are requeued when capacity frees where kube-scheduler cannot see it (requeue.*).
 */
import type { Logger } from 'pino';
import { ApiThread } from '../cluster/apiThread.js';
import type { PodEvent } from '../cluster/events.js';
import { loadKubeConfig } from '../cluster/kubeClient.js';
import { Requeuer, type RequeueWrite } from '../cluster/requeuer.js';
import type { Config } from '../config/schema.js';
import type { BindOutcome, BindRequest } from '../core/objects/binding.js';
import type { CapacityFreed, SchedulerCacheView } from '../core/cache/cacheView.js';
import type { PlacementService } from '../core/decide/placementService.js';
import { applyListing, type CacheUpdates } from '../core/cache/sync.js';
import { watchFileChanges } from '../fileWatch.js';
import type { Metrics } from '../observability/metrics.js';
import type { DecisionNotice } from '../observability/notices.js';
import { readSnapshotRecords, SnapshotError } from '../snapshot/snapshotFile.js';
import { recordOptions } from './cacheDoors.js';
import { buildExtender, type Extender } from './extender.js';

export interface CacheSource {
  /** Null while the verbs may decide; else why not. */
  readonly notReady: () => string | null;
  /** Extra lines for /readyz. */
  readonly readyDetails?: () => string;
  readonly stop: () => Promise<void>;
  /** Re-reads the snapshot now (snapshot mode). */
  readonly reload: () => void;
  readonly bind?: (request: BindRequest) => Promise<BindOutcome>;
  readonly onDecision?: (notice: DecisionNotice) => void;
}

/**
 * Snapshot mode: loads the file now and again whenever it changes (one load at a time; a change seen
 * during a load is loaded after it). A file that cannot be loaded leaves the previous state.
 * @throws SnapshotError when the snapshot cannot be loaded at start-up.
 */
export async function snapshotSource(
  path: string,
  config: Config,
  cache: SchedulerCacheView,
  updates: CacheUpdates,
  metrics: Metrics,
  logger: Logger,
): Promise<CacheSource> {
  const options = recordOptions(config);
  const load = async (): Promise<void> => {
    const reader = await readSnapshotRecords(path, cache.dims, options);
    const held = cache.size.reservations;
    applyListing(updates, reader);
    for (const line of reader.errors) logger.warn({ snapshot: path }, `skipped ${line}`);
    metrics.snapshotLoads.inc({ result: 'ok' });
    // A listing only releases reservations (bound, moved, deleted, unschedulable), never makes one.
    const size = cache.size;
    logger.info(
      {
        snapshot: path,
        nodes: size.nodes,
        pods: size.pods,
        skipped: reader.errors.length,
        released: held - size.reservations,
      },
      'snapshot loaded',
    );
  };
  const failed = (err: unknown, what = 'snapshot not loaded; keeping the previous state') => {
    metrics.snapshotLoads.inc({ result: 'error' });
    logger.error({ snapshot: path, err: (err as Error).message }, what);
  };
  try {
    await load();
  } catch (err) {
    failed(err, 'snapshot not loaded; not starting');
    throw err instanceof SnapshotError
      ? new SnapshotError(`cannot start: the snapshot ${path} could not be loaded: ${err.message}`)
      : err;
  }
  let loading: Promise<void> | null = null;
  let again = false;
  const reload = () => {
    if (loading) {
      again = true;
      return;
    }
    loading = load()
      .catch(failed)
      .finally(() => {
        loading = null;
        if (again) {
          again = false;
          reload();
        }
      });
  };
  const stopWatching = watchFileChanges(path, config.snapshot.pollIntervalMs, reload);
  return { notReady: () => null, stop: async () => stopWatching(), reload };
}

/** The Event a decision notice is recorded as. */
function noticeEvent(n: DecisionNotice): PodEvent {
  return {
    pod: n.pod,
    type: n.result === 'placed' ? 'Normal' : 'Warning',
    reason: n.result === 'placed' ? 'ProjectedPlacement' : 'ProjectedPlacementFailed',
    message: n.message,
  };
}

/** The extender of a configuration (buildExtender) with the source that feeds its cache: what `serve` runs. */
export interface ExtenderWithSource extends Extender {
  readonly source: CacheSource;
}

/**
 * Snapshot mode: the service, its cache loaded from `path` (snapshotSource).
 * @throws SnapshotError when the snapshot cannot be loaded; RangeError on an invalid starting limit.
 */
export async function startSnapshotMode(path: string, config: Config, logger: Logger): Promise<ExtenderWithSource> {
  const built = buildExtender(config, { clusterMode: false, bindVerb: false });
  const source = await snapshotSource(path, config, built.service.cache, built.updates, built.metrics, logger);
  return { ...built, source };
}

/**
 * Cluster mode: the service, and list+watch through the kubeconfig, Bindings and Events, all on the API
 * worker thread (ApiThread) so that none of it delays a verb; resolves once the worker has its client.
 * @param onFatal called if the API worker dies (the cache would stop following the cluster).
 * @throws NoKubeConfigError / Error when no kubeconfig is usable; Error when the worker cannot start.
 */
export async function startClusterMode(
  config: Config,
  logger: Logger,
  onFatal: (err: Error) => void,
): Promise<ExtenderWithSource> {
  const kc = loadKubeConfig(config.kubeconfig);
  // Cluster mode's one cycle, each part handed the next when it is made: the cache tells the requeue of capacity
  // freed, the requeue writes through the API thread, the API thread feeds the cache and reports the watches'
  // health to the metrics. The arrows back are closures over the consts below, none called before all three
  // exist: the cache changes only on the worker's messages, which come on a later turn of the event loop, and
  // the metrics are read when scraped.
  const built = buildExtender(config, {
    clusterMode: true,
    bindVerb: true,
    capacityFreed: config.requeue.enabled ? (freed) => requeue?.capacityFreed(freed) : undefined,
    watchHealth: () => thread.watchHealth(),
  });
  const { service, updates, metrics } = built;
  const requeue = requeueOnFreedCapacity(service, (value) => thread.requeue(value), config, metrics, logger);
  const thread = new ApiThread(
    updates,
    {
      kubeconfig: kc.exportConfig(),
      dims: service.cache.dims.names,
      pausedLabel: config.pausedLabel,
      locality: recordOptions(config).locality,
      watch: {
        pageSize: config.watch.pageSize,
        minBackoffMs: config.watch.minBackoffMs,
        maxBackoffMs: config.watch.maxBackoffMs,
      },
      events: config.events.enabled ? config.events : null,
      requeue: config.requeue.enabled ? { namespace: config.requeue.namespace, name: config.requeue.name } : null,
      logLevel: config.logLevel,
    },
    metrics,
    logger,
    config.watch.maxBrokenSeconds,
    onFatal,
  );
  const server = await thread.started();
  logger.info({ server, thread: 'api' }, 'watching nodes and pods');
  const source: CacheSource = {
    notReady: () => thread.notReady(),
    readyDetails: () => thread.describe(),
    stop: async () => {
      await requeue?.requeuer.stop();
      await thread.stop();
    },
    reload: () => undefined,
    bind: (request) => thread.bind(request),
    ...(config.events.enabled ? { onDecision: (n: DecisionNotice) => thread.recordEvent(noticeEvent(n)) } : {}),
  };
  return { ...built, source };
}

/**
 * Cluster mode: capacity freed in the cache (`capacityFreed`, the cache's listener) is noted for the
 * pods Filter rejected (RejectedPods), and the Requeuer asks kube-scheduler to retry those that fit
 * now, off the verbs' path, through `write` (on the API worker thread). Null when
 * requeue is disabled (the service then remembers no rejections).
 */
function requeueOnFreedCapacity(
  service: PlacementService,
  write: RequeueWrite,
  config: Config,
  metrics: Metrics,
  logger: Logger,
): { readonly requeuer: Requeuer; readonly capacityFreed: (freed: CapacityFreed) => void } | null {
  const rejected = service.rejectedPods;
  if (!config.requeue.enabled || !rejected) return null;
  const requeuer = new Requeuer(
    write,
    {
      namespace: config.requeue.namespace,
      name: config.requeue.name,
      perSecond: config.requeue.perSecond,
      take: () => rejected.takeNudges(),
      failed: (targets) => rejected.nudgeFailed(targets),
      now: () => Date.now(),
      onNudged: (result, pods) => {
        metrics.podsNudged.inc({ result }, pods);
        metrics.requeueWrites.inc({ result });
      },
    },
    logger,
  );
  const capacityFreed = (freed: CapacityFreed) => {
    if (rejected.size === 0) return; // nobody waits
    rejected.capacityFreed(freed, Date.now());
    requeuer.wake();
  };
  return { requeuer, capacityFreed };
}
