/**
 * Composition root of `sandbox-extender serve`, with sources.ts (each mode's service and the source that
 * feeds its cache: snapshot file or API watches): the only place that reads the clock, draws random
 * numbers, owns timers and listens on a socket.
 */
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { PlacementService } from '../core/decide/placementService.js';
import { startEventLoopSampler, type Metrics } from '../observability/metrics.js';
import { RequestLog } from '../observability/requestLog.js';
import { createApp } from '../server/app.js';
import { createListener } from '../server/listen.js';
import { startClusterMode, startSnapshotMode } from './sources.js';

export interface RunningServer {
  readonly url: string;
  readonly service: PlacementService;
  readonly metrics: Metrics;
  /** Re-reads the snapshot (snapshot mode; also done automatically when the file changes); the load runs in the background. */
  reload(): void;
  close(): Promise<void>;
}

/**
 * How often reservations past their deadline are swept when no verb comes (every verb sweeps first):
 * half the shortest reservation lifetime, between 50 ms and 5 s, so a reservation outlives its
 * deadline by at most half its lifetime.
 */
function sweepIntervalMs(config: Config, clusterMode: boolean): number {
  const ttlSeconds = clusterMode
    ? Math.min(config.placementReservationTtlSeconds, config.unconfirmedReservationTtlSeconds)
    : config.placementReservationTtlSeconds;
  return Math.min(5_000, Math.max(50, (ttlSeconds * 1000) / 2));
}

/**
 * Starts the cache's source, the expiry sweep and the HTTP(S) server. `onFatal` is called if the
 * cache's source dies for good (the API worker thread); by default the process exits 1, so that its
 * supervisor (Kubernetes) restarts it with a fresh cache.
 * @throws when the snapshot cannot be loaded at start-up, no kubeconfig is usable, a TLS file
 *   cannot be read, or the address cannot be bound.
 */
export async function serve(
  config: Config,
  logger: Logger,
  onFatal: (err: Error) => void = () => process.exit(1),
): Promise<RunningServer> {
  const clusterMode = !config.snapshot.path;
  const { service, metrics, source } = config.snapshot.path
    ? await startSnapshotMode(config.snapshot.path, config, logger)
    : await startClusterMode(config, logger, onFatal);
  const now = () => Date.now();
  const requestLog = new RequestLog(logger, config.server.requestLogWindowSeconds * 1000, now);
  const app = createApp(
    {
      service,
      pausedLabel: config.pausedLabel,
      metrics,
      logger,
      now,
      notReady: source.notReady,
      bind: source.bind,
      onDecision: source.onDecision,
    },
    {
      maxRequestBodyBytes: config.server.maxRequestBodyBytes,
      maxRequestDepth: config.server.maxRequestDepth,
      maxRequestElements: config.server.maxRequestElements,
      maxObjectMembers: config.server.maxObjectMembers,
      readyDetails: source.readyDetails,
      requestLog,
    },
  );
  let listener: ReturnType<typeof createListener> | undefined;
  try {
    listener = createListener(config, app, metrics, logger, requestLog);
    const starting = listener.server;
    await new Promise<void>((resolve, reject) => {
      // The address is valid (the config schema checks it) but may not be bound: not one of this machine's
      // (EADDRNOTAVAIL), taken (EADDRINUSE), a port below 1024 without the privilege (EACCES), a hostname that does
      // not resolve (ENOTFOUND). A runtime failure (exit 1), named with the settings that chose the address.
      starting.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new Error(
            `cannot listen on ${config.server.host} port ${config.server.port} (server.host, server.port): ${err.message}`,
            { cause: err },
          ),
        ),
      );
      starting.listen(config.server.port, config.server.host, () => resolve());
    });
  } catch (err) {
    // Nothing listens: stop what was started for it (the snapshot watch, or the watches and the API worker).
    listener?.stop();
    await source.stop();
    throw err;
  }
  const { server, stop: stopTlsWatch } = listener;
  server.keepAliveTimeout = config.server.keepAliveTimeoutSeconds * 1000;
  // Node (≥ 18) times the headers from the request's first byte, not from the idle keep-alive, and a
  // headersTimeout above requestTimeout switches requestTimeout off (createListener): keep them equal.
  server.headersTimeout = config.server.requestTimeoutSeconds * 1000;
  const sweep = setInterval(() => service.sweep(now()), sweepIntervalMs(config, clusterMode));
  sweep.unref();
  const stopSampler = startEventLoopSampler(metrics);
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${config.server.tls ? 'https' : 'http'}://${host}:${address.port}`;
  logger.info(
    {
      url,
      mode: clusterMode ? 'cluster' : 'snapshot',
      strategy: config.strategy,
      chooseInFilter: config.chooseInFilter,
      dimensions: config.dimensions,
      schedulerName: config.schedulerName,
    },
    'sandbox-extender serving',
  );
  return {
    url,
    service,
    metrics,
    reload: source.reload,
    close: async () => {
      clearInterval(sweep);
      stopSampler();
      stopTlsWatch();
      await source.stop();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
