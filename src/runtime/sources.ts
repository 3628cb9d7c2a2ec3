/**
 * Where the scheduler cache comes from:
 * - snapshot mode (`snapshot.path` / --snapshot): a `kubectl get nodes,pods -A -o json` file,
 *   re-read when it changes; for offline use and trials. No bind verb, no Events.
 * - cluster mode (otherwise): list+watch of Nodes and Pods through a kubeconfig; the bind verb
 *   creates Bindings and each decision is recorded as an Event on the pod.
 */
import type { Logger } from 'pino';
import { Binder } from '../cluster/binder.js';
import { EventRecorder } from '../cluster/events.js';
import { apiClient, loadKubeConfig, nodeSource, podSource } from '../cluster/kube.js';
import { LiveSync } from '../cluster/liveSync.js';
import type { Config } from '../config/schema.js';
import type { BindOutcome, BindRequest } from '../core/binding.js';
import type { PlacementService } from '../core/placementService.js';
import { syncModel } from '../core/sync.js';
import { watchFileChanges } from '../fileWatch.js';
import type { Metrics } from '../observability/metrics.js';
import type { DecisionNotice } from '../observability/notices.js';
import { readSnapshot, SnapshotError } from '../snapshot/snapshotFile.js';

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

/** @throws Error when the snapshot cannot be loaded at start-up. */
export function snapshotSource(path: string, config: Config, service: PlacementService, metrics: Metrics, logger: Logger): CacheSource {
  const options = { pausedLabel: config.pausedLabel };
  const reload = (): boolean => {
    try {
      const snapshot = readSnapshot(path);
      const result = syncModel(service.cache, snapshot.nodes, snapshot.pods, options);
      for (const line of result.errors) logger.warn({ snapshot: path }, `skipped ${line}`);
      metrics.snapshotLoads.inc({ result: 'ok' });
      logger.info({ snapshot: path, nodes: result.nodes, pods: result.pods, skipped: result.errors.length, released: result.releases.length }, 'snapshot loaded');
      return true;
    } catch (err) {
      metrics.snapshotLoads.inc({ result: 'error' });
      logger.error({ snapshot: path, err: (err as Error).message }, 'snapshot not loaded; keeping the previous state');
      return false;
    }
  };
  if (!reload()) throw new SnapshotError(`cannot start: the snapshot ${path} could not be loaded (see the log above)`);
  const stopWatching = watchFileChanges(path, config.snapshot.pollIntervalMs, () => void reload());
  return { notReady: () => null, stop: async () => stopWatching(), reload: () => void reload() };
}

const NOT_SYNCED = 'the scheduler cache has not completed its initial sync';

/** @throws Error when no kubeconfig is usable. */
export function clusterSource(config: Config, service: PlacementService, metrics: Metrics, logger: Logger): CacheSource {
  const kc = loadKubeConfig(config.kubeconfig);
  const api = apiClient(kc);
  const live = new LiveSync(service.cache, { nodes: nodeSource(kc, api), pods: podSource(kc, api) }, { pausedLabel: config.pausedLabel, ...config.watch }, metrics, logger);
  live.start();
  logger.info({ server: kc.getCurrentCluster()?.server }, 'watching nodes and pods');
  const binder = new Binder(api);
  const source: CacheSource = {
    notReady: () => (live.ready ? null : NOT_SYNCED),
    stop: () => live.stop(),
    reload: () => undefined,
    bind: (request) => binder.bind(request),
  };
  if (!config.events.enabled) return source;
  const recorder = new EventRecorder(
    api,
    { eventsPerSecond: config.events.perSecond, maxQueued: config.events.maxQueued, dedupeWindowMs: config.events.dedupeWindowSeconds * 1000, now: () => Date.now(), onOutcome: (outcome) => metrics.events.inc({ outcome }) },
    logger,
  );
  return {
    ...source,
    onDecision: (n) =>
      recorder.record({ pod: n.pod, type: n.result === 'placed' ? 'Normal' : 'Warning', reason: n.result === 'placed' ? 'ProjectedPlacement' : 'ProjectedPlacementFailed', message: n.message }),
  };
}
