/**
 * Composition root of `sandbox-extender serve`: the only place that reads the clock, draws random
 * numbers, touches the snapshot file and listens on a socket.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { ClusterModel } from '../core/clusterModel.js';
import { Placer } from '../core/placement.js';
import { PlacementService } from '../core/placementService.js';
import { syncModel } from '../core/sync.js';
import type { Config } from '../config/schema.js';
import { readSnapshot, watchSnapshot } from '../snapshot/snapshotFile.js';
import { randomSource } from '../random.js';
import { createApp } from './app.js';
import { Metrics } from './metrics.js';

export interface RunningServer {
  readonly url: string;
  readonly service: PlacementService;
  readonly metrics: Metrics;
  /** Re-reads the snapshot now (also done automatically when the file changes). */
  reload(): void;
  close(): Promise<void>;
}

/** Builds the model, placer and metrics for `config` (no I/O). */
export function buildService(config: Config): { service: PlacementService; metrics: Metrics } {
  const model = new ClusterModel({ names: config.dimensions }, config.placementReservationTtlSeconds * 1000);
  const placer = new Placer(config.strategy, randomSource(config.randomSeed));
  const service = new PlacementService(model, placer, { schedulerName: config.schedulerName });
  const metrics = new Metrics(() => model.ledger.size);
  model.onRelease = (release) => metrics.released(release.reason);
  return { service, metrics };
}

/**
 * Loads the snapshot (failing start-up if the first load fails), watches it, and serves the verbs.
 * @throws SnapshotError when the snapshot cannot be loaded at start-up.
 */
export async function serve(config: Config, logger: Logger): Promise<RunningServer> {
  const path = config.snapshot.path;
  if (!path) throw new Error('serve needs a snapshot file: --snapshot FILE or snapshot.path in the config');
  const { service, metrics } = buildService(config);
  const options = { pausedLabel: config.pausedLabel };

  const reload = (): boolean => {
    try {
      const snapshot = readSnapshot(path);
      const result = syncModel(service.model, snapshot.nodes, snapshot.pods, options);
      for (const line of result.errors) logger.warn({ snapshot: path }, `skipped ${line}`);
      metrics.snapshotLoads.inc({ result: 'ok' });
      metrics.snapshotObjects.set({ kind: 'node' }, result.nodes);
      metrics.snapshotObjects.set({ kind: 'pod' }, result.pods);
      logger.info({ snapshot: path, nodes: result.nodes, pods: result.pods, skipped: result.errors.length, released: result.releases.length }, 'snapshot loaded');
      return true;
    } catch (err) {
      metrics.snapshotLoads.inc({ result: 'error' });
      logger.error({ snapshot: path, err: (err as Error).message }, 'snapshot not loaded; keeping the previous state');
      return false;
    }
  };
  if (!reload()) throw new Error(`cannot start: the snapshot ${path} could not be loaded (see the log above)`);
  const stopWatching = watchSnapshot(path, config.snapshot.pollIntervalMs, () => void reload());

  const app = createApp(
    { service, pausedLabel: config.pausedLabel, metrics, logger, now: () => Date.now() },
    { maxRequestBodyBytes: config.server.maxRequestBodyBytes, ready: () => true },
  );
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.server.port, config.server.host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  server.keepAliveTimeout = config.server.keepAliveTimeoutSeconds * 1000;
  server.headersTimeout = server.keepAliveTimeout + 5000;
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url, strategy: config.strategy, dimensions: config.dimensions, schedulerName: config.schedulerName }, 'sandbox-extender serving');
  return {
    url,
    service,
    metrics,
    reload: () => void reload(),
    close: () =>
      new Promise<void>((resolve) => {
        stopWatching();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
