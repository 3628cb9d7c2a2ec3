/**
 * The extender's socket: plain HTTP on loopback by default, or HTTPS (optionally mTLS) whose
 * certificate files are re-read when they change, so a renewed certificate (cert-manager, a mounted
 * Secret) is used for new connections without a restart.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Logger } from 'pino';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { watchFileChanges } from '../fileWatch.js';
import type { Metrics } from '../observability/metrics.js';

type TlsConfig = NonNullable<Config['server']['tls']>;

/** Reads one TLS file. @throws ConfigError naming the key (`server.tls.certFile` …) and the path. */
function readTlsFile(key: keyof TlsConfig, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError('server.tls', [`server.tls.${key}: cannot read ${path}: ${(err as Error).message}`]);
  }
}

function secureContext(tls: TlsConfig) {
  return {
    cert: readTlsFile('certFile', tls.certFile),
    key: readTlsFile('keyFile', tls.keyFile),
    ...(tls.clientCaFile ? { ca: readTlsFile('clientCaFile', tls.clientCaFile) } : {}),
  };
}

/**
 * The HTTP(S) server for `app`, and a function that stops its certificate watch.
 * @throws ConfigError when a TLS file cannot be read (the CLI exits 2).
 */
export function createListener(config: Config, app: RequestListener, metrics: Metrics, logger: Logger): { server: Server; stop: () => void } {
  const tls = config.server.tls;
  if (!tls) return { server: createHttpServer(app), stop: () => undefined };
  const server = createHttpsServer({ ...secureContext(tls), ...(tls.clientCaFile ? { requestCert: true, rejectUnauthorized: true } : {}) }, app);
  const files = [tls.certFile, tls.keyFile, ...(tls.clientCaFile ? [tls.clientCaFile] : [])];
  const reload = () => {
    try {
      server.setSecureContext(secureContext(tls));
      metrics.tlsReloads.inc({ result: 'ok' });
      logger.info({ files }, 'serving certificate reloaded');
    } catch (err) {
      metrics.tlsReloads.inc({ result: 'error' });
      logger.error({ err: (err as Error).message }, 'serving certificate not reloaded; keeping the previous one');
    }
  };
  const stops = files.map((file) => watchFileChanges(file, tls.reloadIntervalMs, reload));
  return { server, stop: () => stops.forEach((stop) => stop()) };
}
