/**
 * The extender's socket: plain HTTP on loopback by default, or HTTPS (optionally mTLS) whose
 * certificate files are re-read when they change, so a renewed certificate (cert-manager, a mounted
 * Secret) is used for new connections without a restart.
 */
import { MAX_BYTES, readFileBounded } from '../fileRead.js';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ConfigError } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { watchFileChanges } from '../fileWatch.js';
import type { Metrics } from '../observability/metrics.js';
import type { RequestLog, RequestProblemReason } from '../observability/requestLog.js';

type TlsConfig = NonNullable<Config['server']['tls']>;

/**
 * Reads the TLS files, every one of them even when one fails.
 * @throws ConfigError naming every file that cannot be read, each with its key (`server.tls.certFile` …) and path.
 */
function secureContext(tls: TlsConfig) {
  const issues: string[] = [];
  const read = (key: keyof TlsConfig, path: string): Buffer => {
    try {
      return readFileBounded(path, MAX_BYTES.tls);
    } catch (err) {
      issues.push(`server.tls.${key}: cannot read ${path}: ${(err as Error).message}`);
      return Buffer.alloc(0);
    }
  };
  const context = {
    cert: read('certFile', tls.certFile),
    key: read('keyFile', tls.keyFile),
    ...(tls.clientCaFile ? { ca: read('clientCaFile', tls.clientCaFile) } : {}),
  };
  if (issues.length > 0) throw new ConfigError('server.tls', issues);
  return context;
}

/** How often the server checks requests against server.requestTimeoutSeconds (ms; Node's default is 30 s). */
const TIMEOUT_CHECK_MS = 1000;

/**
 * What a request Node's HTTP parser refused, or one that timed out, is answered (the socket is then
 * closed): the status and the message, in the extender's error shape instead of Node's bare reply.
 * Null: nothing to answer (the client reset or closed the connection).
 */
export function clientErrorReply(
  err: { code?: string; message?: string },
  requestTimeoutSeconds: number,
): { status: number; reason: string; message: string; problem: RequestProblemReason } | null {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
    case 'HPE_INVALID_EOF_STATE':
      return null;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        reason: 'Request Timeout',
        message: `the request was not received in full within ${requestTimeoutSeconds} s (server.requestTimeoutSeconds)`,
        problem: 'timeout',
      };
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        message: 'the request headers are too large',
        problem: 'headers_too_large',
      };
    case 'HPE_INVALID_CONTENT_LENGTH':
      return {
        status: 400,
        reason: 'Bad Request',
        message: 'the request has an invalid Content-Length (a non-negative integer, given once)',
        problem: 'invalid_http',
      };
    default:
      return {
        status: 400,
        reason: 'Bad Request',
        message: `the request is not valid HTTP/1.1 (${err.code ?? 'parse error'}: ${err.message ?? ''})`,
        problem: 'invalid_http',
      };
  }
}

/** The body of an answer of the listener itself: the extender's error shape, ending with a newline. */
const errorBody = (message: string) => `${JSON.stringify({ Error: `sandbox-extender: ${message}` })}\n`;

/** Connections whose refusal the listener answered or dropped, and logged (answerClientError). */
const refusedByListener = new WeakSet<Socket>();

/**
 * Whether the listener refused what came on `socket` (a request that timed out, bytes Node's parser refused) and logged
 * it: a request whose body was still arriving there then ends unread, and that is not a second problem to log.
 */
export function refusedOnConnection(socket: Socket): boolean {
  return refusedByListener.has(socket);
}

/** The requests of a connection whose responses are not closed yet (set by {@link trackOpenRequests}). */
const OPEN_REQUESTS = Symbol('open requests');
type TrackedSocket = Socket & { [OPEN_REQUESTS]?: Set<IncomingMessage> };

/** `app`, keeping on each connection the requests whose responses it has not closed yet (for answerClientError). */
function trackOpenRequests(app: RequestListener): RequestListener {
  return (req, res) => {
    const socket = req.socket as TrackedSocket;
    const open = (socket[OPEN_REQUESTS] ??= new Set());
    open.add(req);
    res.once('close', () => open.delete(req));
    app(req, res);
  };
}

/** Whether a request received in full is still being answered on `socket`: an error Node's parser reports now is about bytes after it. */
function answering(socket: TrackedSocket): boolean {
  const open = socket[OPEN_REQUESTS];
  if (open) for (const req of open) if (req.complete) return true;
  return false;
}

/**
 * Answers what clientErrorReply says on the raw socket, then closes it. When a request received in full before the
 * refused bytes is still being answered on that connection, nothing is written (the client would read it as that
 * request's answer) and the connection is dropped: that reply is not delivered, and what its decision reserved is
 * released (verbEdge.ts, VerbReply.undelivered). A request refused while its own body arrives (a timeout) is answered.
 * A request whose Expect header is not 100-continue is answered 417 in the same shape.
 */
function answerClientError(
  server: Server,
  requestTimeoutSeconds: number,
  metrics: Metrics,
  logger: Logger,
  requestLog: RequestLog | undefined,
): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: TrackedSocket) => {
    const reply = clientErrorReply(err, requestTimeoutSeconds);
    if (!reply || !socket.writable || answering(socket)) {
      if (reply && socket.writable) {
        const message = `${reply.message}; a request before it on the connection was still being answered, so nothing was answered in its place and the connection was dropped`;
        requestLog?.note({ reason: reply.problem, message }, socket.remoteAddress, { code: err.code });
        refusedByListener.add(socket);
      }
      socket.destroy();
      return;
    }
    logger.debug({ code: err.code }, `client error: ${reply.message}`);
    requestLog?.note({ reason: reply.problem, message: reply.message }, socket.remoteAddress, {
      status: reply.status,
      code: err.code,
    });
    refusedByListener.add(socket);
    const body = errorBody(reply.message);
    socket.end(
      `HTTP/1.1 ${reply.status} ${reply.reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    // Answered here, not by a route: counted under verb "other" (the request line may not even have been read).
    metrics.requests.inc({ verb: 'other', code: String(reply.status) });
  });
  // An Expect header other than 100-continue: Node answers 417 itself, with an empty body, unless told how.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const message = `the request's Expect header (${req.headers.expect}) is not supported; only 100-continue is`;
    requestLog?.note({ reason: 'invalid_http', message }, req.socket.remoteAddress, {
      method: req.method,
      path: req.url,
      status: 417,
    });
    const body = errorBody(message);
    res.writeHead(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    res.end(body);
    metrics.requests.inc({ verb: 'other', code: '417' });
  });
}

/**
 * The HTTP(S) server for `app`, and a function that stops its certificate watch. A request not
 * received within server.requestTimeoutSeconds, and one Node's parser refuses, is answered in the
 * extender's error shape (clientErrorReply), logged through `requestLog` (once per reason a window) and
 * counted in sandbox_extender_http_requests_total under verb "other".
 * @throws ConfigError when a TLS file cannot be read or is not a usable PEM certificate and key (the CLI exits 2).
 */
export function createListener(
  config: Config,
  app: RequestListener,
  metrics: Metrics,
  logger: Logger,
  requestLog?: RequestLog,
): { server: Server; stop: () => void } {
  const tls = config.server.tls;
  const timeouts = {
    requestTimeout: config.server.requestTimeoutSeconds * 1000,
    connectionsCheckingInterval: TIMEOUT_CHECK_MS,
  };
  if (!tls) {
    const server = createHttpServer(timeouts, trackOpenRequests(app));
    answerClientError(server, config.server.requestTimeoutSeconds, metrics, logger, requestLog);
    return { server, stop: () => undefined };
  }
  let server: HttpsServer;
  try {
    server = createHttpsServer(
      {
        ...timeouts,
        ...secureContext(tls),
        ...(tls.clientCaFile ? { requestCert: true, rejectUnauthorized: true } : {}),
      },
      trackOpenRequests(app),
    );
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    // Read but not usable (not PEM, a key that does not match the certificate): OpenSSL's message alone names no file.
    const named = [
      `certFile ${tls.certFile}`,
      `keyFile ${tls.keyFile}`,
      ...(tls.clientCaFile ? [`clientCaFile ${tls.clientCaFile}`] : []),
    ].join(', ');
    throw new ConfigError('server.tls', [
      `server.tls: ${named}: not a usable PEM certificate and key: ${(err as Error).message}`,
    ]);
  }
  answerClientError(server, config.server.requestTimeoutSeconds, metrics, logger, requestLog);
  const files = [tls.certFile, tls.keyFile, ...(tls.clientCaFile ? [tls.clientCaFile] : [])];
  const reload = () => {
    try {
      server.setSecureContext(secureContext(tls));
      metrics.tlsReloads.inc({ result: 'ok' });
      logger.info({ files }, 'serving certificate reloaded');
    } catch (err) {
      metrics.tlsReloads.inc({ result: 'error' });
      logger.error(
        { err: (err as Error).message, files },
        'serving certificate not reloaded; keeping the previous one',
      );
    }
  };
  const stops = files.map((file) => watchFileChanges(file, tls.reloadIntervalMs, reload));
  return { server, stop: () => stops.forEach((stop) => stop()) };
}
