/**
 * Composition root of `sandbox-extender serve`: the only place that reads the clock, draws random
 * numbers, opens the snapshot file or the API connection, owns timers and listens on a socket.
 *
 * Two sources of the cluster model:
 * - snapshot mode (`snapshot.path` / --snapshot): a `kubectl get nodes,pods -A -o json` file,
 *   re-read when it changes; for offline use and trials. No bind verb, no Events.
 * - cluster mode (otherwise): list+watch of Nodes and Pods through a kubeconfig; the bind verb
 *   creates Bindings and each decision is recorded as an Event on the pod.
 */
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Binder } from '../cluster/binder.js';
import { EventRecorder } from '../cluster/events.js';
import { loadKubeConfig, nodeSource, podSource } from '../cluster/kube.js';
import { LiveSync } from '../cluster/liveSync.js';
import { ClusterModel } from '../core/clusterModel.js';
import { currentPressure } from '../core/debugView.js';
import { Placer } from '../core/placement.js';
import { PlacementService } from '../core/placementService.js';
import { syncModel } from '../core/sync.js';
import type { Config } from '../config/schema.js';
import { readSnapshot, watchSnapshot } from '../snapshot/snapshotFile.js';
import { randomSource } from '../random.js';
import { createApp } from './app.js';
import type { VerbDeps } from './handlers.js';
import { Metrics } from './metrics.js';

export interface RunningServer {
  readonly url: string;
  readonly service: PlacementService;
  readonly metrics: Metrics;
  /** Re-reads the snapshot now (snapshot mode; also done automatically when the file changes). */
  reload(): void;
  close(): Promise<void>;
}

/** How often expired reservations are swept even when no verb is called. */
const EXPIRE_INTERVAL_MS = 5_000;

/** Builds the model, placer and metrics for `config` (no I/O). */
export function buildService(config: Config): { service: PlacementService; metrics: Metrics } {
  const model = new ClusterModel({ names: config.dimensions }, config.placementReservationTtlSeconds * 1000);
  const placer = new Placer(config.strategy, randomSource(config.randomSeed));
  const service = new PlacementService(model, placer, { schedulerName: config.schedulerName });
  const metrics = new Metrics(() => model.ledger.size, {
    nodePressures: () => nodePressures(model, config.metrics.maxNodeSeries),
    modelSize: () => ({ nodes: model.nodes.size, pods: model.pods.size }),
  });
  model.onRelease = (release) => metrics.released(release.reason);
  return { service, metrics };
}

/** [node, resource, pressure] for the `limit` nodes of highest current pressure. */
function* nodePressures(model: ClusterModel, limit: number): Generator<readonly [string, string, number]> {
  if (limit <= 0) return;
  const rows = [...model.nodes.keys()].map((name) => {
    const pressure = currentPressure(model, name);
    return { name, pressure, max: Math.max(0, ...pressure.filter((p) => !Number.isNaN(p))) };
  });
  rows.sort((a, b) => b.max - a.max || (a.name < b.name ? -1 : 1));
  for (const row of rows.slice(0, limit)) {
    for (let r = 0; r < row.pressure.length; r++) if (!Number.isNaN(row.pressure[r]!)) yield [row.name, model.dims.names[r]!, row.pressure[r]!];
  }
}

interface ModelSource {
  readonly ready: () => boolean;
  readonly stop: () => Promise<void>;
  readonly reload: () => void;
  readonly verbs: Pick<VerbDeps, 'bind' | 'onDecision'>;
}

function snapshotSource(path: string, config: Config, service: PlacementService, metrics: Metrics, logger: Logger): ModelSource {
  const options = { pausedLabel: config.pausedLabel };
  const reload = (): boolean => {
    try {
      const snapshot = readSnapshot(path);
      const result = syncModel(service.model, snapshot.nodes, snapshot.pods, options);
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
  if (!reload()) throw new Error(`cannot start: the snapshot ${path} could not be loaded (see the log above)`);
  const stopWatching = watchSnapshot(path, config.snapshot.pollIntervalMs, () => void reload());
  return { ready: () => true, stop: async () => stopWatching(), reload: () => void reload(), verbs: {} };
}

function clusterSource(config: Config, service: PlacementService, metrics: Metrics, logger: Logger): ModelSource {
  const kc = loadKubeConfig(config.kubeconfig);
  const api = kc.makeApiClient(CoreV1Api);
  const live = new LiveSync(service.model, { nodes: nodeSource(kc, api), pods: podSource(kc, api) }, { pausedLabel: config.pausedLabel, ...config.watch }, metrics, logger);
  live.start();
  logger.info({ server: kc.getCurrentCluster()?.server }, 'watching nodes and pods');
  const binder = new Binder(api);
  const verbs: ModelSource['verbs'] = { bind: (request) => binder.bind(request) };
  if (config.events.enabled) {
    const recorder = new EventRecorder(
      api,
      { eventsPerSecond: config.events.perSecond, maxQueued: config.events.maxQueued, dedupeWindowMs: config.events.dedupeWindowSeconds * 1000, now: () => Date.now(), onOutcome: (outcome) => metrics.events.inc({ outcome }) },
      logger,
    );
    return {
      ready: () => live.ready,
      stop: () => live.stop(),
      reload: () => undefined,
      verbs: {
        ...verbs,
        onDecision: (n) =>
          recorder.record({ pod: n.pod, type: n.result === 'placed' ? 'Normal' : 'Warning', reason: n.result === 'placed' ? 'ProjectedPlacement' : 'ProjectedPlacementFailed', message: n.message }),
      },
    };
  }
  return { ready: () => live.ready, stop: () => live.stop(), reload: () => undefined, verbs };
}

type TlsConfig = NonNullable<Config['server']['tls']>;

function secureContext(tls: TlsConfig) {
  return {
    cert: readFileSync(tls.certFile),
    key: readFileSync(tls.keyFile),
    ...(tls.clientCaFile ? { ca: readFileSync(tls.clientCaFile) } : {}),
  };
}

/** The HTTP(S) server, and a function that stops its certificate watch. */
function listen(config: Config, app: ReturnType<typeof createApp>, metrics: Metrics, logger: Logger): { server: Server; stop: () => void } {
  const tls = config.server.tls;
  if (!tls) return { server: createHttpServer(app), stop: () => undefined };
  const server = createHttpsServer({ ...secureContext(tls), ...(tls.clientCaFile ? { requestCert: true, rejectUnauthorized: true } : {}) }, app);
  // Certificates are renewed in place (cert-manager, a mounted Secret): new connections get the new ones.
  const files = [tls.certFile, tls.keyFile, ...(tls.clientCaFile ? [tls.clientCaFile] : [])];
  const reload = (current: Stats, previous: Stats) => {
    if (current.mtimeMs === previous.mtimeMs && current.size === previous.size && current.ino === previous.ino) return;
    try {
      server.setSecureContext(secureContext(tls));
      metrics.tlsReloads.inc({ result: 'ok' });
      logger.info({ files }, 'serving certificate reloaded');
    } catch (err) {
      metrics.tlsReloads.inc({ result: 'error' });
      logger.error({ err: (err as Error).message }, 'serving certificate not reloaded; keeping the previous one');
    }
  };
  for (const file of files) watchFile(file, { interval: tls.reloadIntervalMs, persistent: false }, reload);
  return { server, stop: () => files.forEach((file) => unwatchFile(file, reload)) };
}

/**
 * Starts the model source, the expiry sweep and the HTTP(S) server.
 * @throws when the snapshot cannot be loaded at start-up, no kubeconfig is usable, a TLS file
 *   cannot be read, or the address cannot be bound.
 */
export async function serve(config: Config, logger: Logger): Promise<RunningServer> {
  const { service, metrics } = buildService(config);
  const source = config.snapshot.path ? snapshotSource(config.snapshot.path, config, service, metrics, logger) : clusterSource(config, service, metrics, logger);
  const now = () => Date.now();
  const app = createApp(
    { service, pausedLabel: config.pausedLabel, metrics, logger, now, ready: source.ready, ...source.verbs },
    { maxRequestBodyBytes: config.server.maxRequestBodyBytes, ready: source.ready },
  );
  const { server, stop: stopTlsWatch } = listen(config, app, metrics, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, () => resolve());
  });
  server.keepAliveTimeout = config.server.keepAliveTimeoutSeconds * 1000;
  server.headersTimeout = server.keepAliveTimeout + 5000;
  const sweep = setInterval(() => service.model.expire(now()), EXPIRE_INTERVAL_MS);
  sweep.unref();
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${config.server.tls ? 'https' : 'http'}://${host}:${address.port}`;
  logger.info({ url, mode: config.snapshot.path ? 'snapshot' : 'cluster', strategy: config.strategy, dimensions: config.dimensions, schedulerName: config.schedulerName }, 'sandbox-extender serving');
  return {
    url,
    service,
    metrics,
    reload: source.reload,
    close: async () => {
      clearInterval(sweep);
      stopTlsWatch();
      await source.stop();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
