/**
 * The verbs' path through the socket: POST /filter, /prioritize and /bind are read with raw-body (express's own
 * reader, same size limit), decoded with one JSON.parse, handed to the verbs (handlers.ts) and answered in one
 * piece, ahead of express, which serves every other route (server/app.ts). Why a path of their own:
 * docs/adr/0008-verbs-own-path-and-undici-writes.md. What this layer refuses (405, 415, 413, 400, and 500 for a
 * fault, always `{"Error": "..."}`), the linger after a refusal made before the body ended and the log line per
 * reason: docs/errors.md. A reply not delivered releases what its decision reserved (VerbReply.undelivered).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import getRawBody from 'raw-body';
import { JsonBounds, type JsonBound } from '../jsonBounds.js';
import type { RequestLog, RequestProblemReason } from '../observability/requestLog.js';
import { bindVerb, filterVerb, prioritizeVerb, type VerbDeps, type VerbReply } from './handlers.js';
import { refusedOnConnection } from './listen.js';

export type VerbName = 'filter' | 'prioritize' | 'bind';

export interface VerbEdgeOptions {
  /** server.maxRequestBodyBytes. */
  readonly maxRequestBodyBytes: number;
  /** server.maxRequestDepth: arrays and objects open at once in a body. */
  readonly maxRequestDepth: number;
  /** server.maxRequestElements: array elements and object members in a body (src/jsonBounds.ts). */
  readonly maxRequestElements: number;
  /** server.maxObjectMembers: members of any one object in a body (unset: no bound). */
  readonly maxObjectMembers?: number | undefined;
  /** Where what is wrong with a request is logged (rate-limited), with the client's address; unset: not logged. */
  readonly requestLog?: RequestLog | undefined;
}

/**
 * The verb a request target names (case-insensitive, trailing slashes and a query ignored, as express routes), or
 * null. An absolute-form target (`http://host/filter`, RFC 9112 §3.2.2: a server must accept it) names its path.
 */
export function verbOfPath(url: string | undefined): VerbName | null {
  if (url === undefined) return null;
  const target = url.startsWith('/') ? url : absolutePath(url);
  if (target === null) return null;
  const q = target.indexOf('?');
  let path = (q < 0 ? target : target.slice(0, q)).toLowerCase();
  while (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path === '/filter' ? 'filter' : path === '/prioritize' ? 'prioritize' : path === '/bind' ? 'bind' : null;
}

/** The path of an absolute-form target (WHATWG URL's parser), or null when it is not one. */
function absolutePath(url: string): string | null {
  try {
    const { protocol, pathname } = new URL(url);
    return protocol === 'http:' || protocol === 'https:' ? pathname : null;
  } catch {
    return null;
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Writes a reply in one piece; the JSON text ends with a newline, as a terminal expects. */
/** Why a Content-Encoding is refused (anything but identity: kube-scheduler never compresses), or null. */
export function refusedEncoding(encoding: string | undefined): string | null {
  const value = (encoding ?? '').trim().toLowerCase();
  return value === '' || value === 'identity'
    ? null
    : `Content-Encoding ${encoding} is not accepted: send the body uncompressed`;
}

/**
 * Why a Content-Type is refused, or null: JSON (application/json or a +json type) in UTF-8 is
 * accepted, and a request without the header (read as JSON); anything else is refused.
 */
export function refusedType(type: string | undefined): string | null {
  if (type === undefined) return null;
  const [media = '', ...params] = type.split(';').map((p) => p.trim().toLowerCase());
  if (media !== 'application/json' && !/^application\/[a-z0-9.+-]+\+json$/.test(media))
    return `Content-Type ${type} is not JSON: send the body as Content-Type: application/json`;
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    return `Content-Type ${type}: JSON is read as UTF-8 only`;
  return null;
}

function write(res: ServerResponse, reply: VerbReply, headers: Record<string, string> = {}): void {
  const text = `${reply.body}\n`;
  if (reply.undelivered) whenUndelivered(res, reply.undelivered);
  res.writeHead(reply.status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * How a connection is closed after a refusal of a body not read in full (RFC 9112 §9.6): closed at once, with the
 * client's bytes unread, the server's TCP stack resets it, and a client still sending its body fails its write
 * (EPIPE, ECONNRESET) and may never read the answer (measured on loopback: one answer in three lost). So the answer
 * is followed by a FIN, what still comes is read and dropped up to `bytes` (then no longer read), and the connection
 * is closed `ms` after the answer, or sooner when the body ends or the client closes. The values are Go net/http's:
 * it reads up to 256 KiB of a body its handler left (maxPostHandlerReadBytes), and waits 500 ms after its FIN before
 * it closes (rstAvoidanceDelay). Closing as soon as `bytes` were dropped still lost one answer in eight: the client
 * needs the time to read.
 */
export const LINGER = { bytes: 256 * 1024, ms: 500 } as const;

/** Connections being closed after a refusal (lingerThenClose): a request that still comes on one is not answered. */
const lingering = new WeakSet<Socket>();

/**
 * Writes a refusal of a body not read in full, with `Connection: close`, then closes the connection as LINGER says:
 * FIN after the answer, what the client still sends read and dropped (nothing is kept: raw-body's reader is removed
 * too) up to LINGER.bytes, the close LINGER.ms later or when the body ends or the client closes. The response is never
 * ended: the answer is whole by its Content-Length, and the connection closes under it.
 */
function lingerThenClose(req: IncomingMessage, res: ServerResponse, reply: VerbReply): void {
  const socket = req.socket;
  const text = `${reply.body}\n`;
  res.writeHead(reply.status, {
    'Content-Type': JSON_TYPE,
    'Content-Length': Buffer.byteLength(text),
    Connection: 'close',
  });
  res.write(text);
  socket.end();
  lingering.add(socket);
  let dropped = 0;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, LINGER.ms);
  socket.once('close', () => clearTimeout(timer));
  req.removeAllListeners('data');
  req.on('data', (piece: Buffer) => {
    dropped += piece.length;
    if (dropped > LINGER.bytes) req.pause(); // read no more: the kernel holds what still comes until the close
  });
  req.once('end', close); // all of it came: nothing is left unread, the close is clean
  req.resume();
}

/**
 * Calls `undelivered` if `res` closes before all of it was handed to the socket ('close' without 'finish'), or is
 * closed already: the connection went (the client reset it, or sent what Node's parser refused behind this request:
 * listen.ts then drops the connection rather than answer in this reply's place).
 */
function whenUndelivered(res: ServerResponse, undelivered: () => void): void {
  if (res.destroyed) {
    undelivered();
    return;
  }
  let finished = false;
  res.once('finish', () => {
    finished = true;
  });
  res.once('close', () => {
    if (!finished) undelivered();
  });
}

/** A refusal: its status, the JSON `Error` body and the problem for the log (the reason, and the same message). */
function errorReply(status: number, message: string, reason: RequestProblemReason): VerbReply {
  return { status, body: JSON.stringify({ Error: `sandbox-extender: ${message}` }), problem: { reason, message } };
}

/** raw-body's error (http-errors) for the limit and length checks. */
interface BodyError {
  readonly type?: string;
  readonly status?: number;
  readonly message?: string;
}

function bodyErrorReply(err: BodyError, limit: number): VerbReply {
  if (err.type === 'entity.too.large')
    return errorReply(413, `request body larger than ${limit} bytes (server.maxRequestBodyBytes)`, 'too_large');
  if (err.type === 'request.size.invalid')
    return errorReply(400, `request body length does not match its Content-Length: ${err.message}`, 'length_mismatch');
  if (typeof err.status === 'number' && err.status >= 400 && err.status < 500)
    return errorReply(err.status, err.message ?? 'bad request', 'unreadable');
  return errorReply(400, `request body could not be read: ${err.message ?? String(err)}`, 'unreadable');
}

/** Thrown by readBody when a body passes a bound of its nesting or elements while it arrives. */
class BoundsError extends Error {
  constructor(readonly bound: JsonBound) {
    super(bound);
  }
}

/**
 * The body as text, read with raw-body (the size limit and Content-Length), each piece checked by JsonBounds
 * as it arrives: a body that passes a bound is refused at that piece (BoundsError), the rest not read; the
 * request is then paused (the connection is closed after the answer and a bounded linger: LINGER). So a hostile
 * body costs what arrived until then (and LINGER.bytes more, dropped), and JSON.parse only ever sees bounded nesting
 * and elements.
 * @throws BoundsError; raw-body's errors (BodyError).
 */
function readBody(req: IncomingMessage, options: VerbEdgeOptions, declared: number): Promise<string> {
  const bounds = new JsonBounds(options.maxRequestDepth, options.maxRequestElements, options.maxObjectMembers);
  return new Promise((resolve, reject) => {
    const onData = (piece: Buffer) => {
      const exceeded = bounds.push(piece);
      if (exceeded === null) return;
      req.removeListener('data', onData);
      req.pause();
      reject(new BoundsError(exceeded));
    };
    req.on('data', onData); // before raw-body's own listener: each piece is checked before it is kept
    getRawBody(req, {
      limit: options.maxRequestBodyBytes,
      encoding: 'utf8',
      ...(Number.isInteger(declared) && declared >= 0 ? { length: declared } : {}),
    })
      .then(resolve, reject)
      .finally(() => req.removeListener('data', onData));
  });
}

function boundsReply(err: BoundsError, options: VerbEdgeOptions): VerbReply {
  if (err.bound === 'depth')
    return errorReply(
      400,
      `request body nests arrays and objects deeper than ${options.maxRequestDepth} levels (server.maxRequestDepth)`,
      'too_deep',
    );
  if (err.bound === 'members')
    return errorReply(
      413,
      `request body has an object with more than ${options.maxObjectMembers} members (server.maxObjectMembers)`,
      'too_many_members',
    );
  return errorReply(
    413,
    `request body has more than ${options.maxRequestElements} array elements and object members (server.maxRequestElements)`,
    'too_many_elements',
  );
}

/**
 * A request listener that answers POST on the three verbs and passes every other request to `next`
 * (the express app). Times and counts each verb call as the express app does for its routes
 * (sandbox_extender_http_request_duration_seconds, sandbox_extender_http_requests_total).
 */
export function verbEdge(deps: VerbDeps, options: VerbEdgeOptions, next: RequestListener): RequestListener {
  const limit = options.maxRequestBodyBytes;
  const verbs = { filter: filterVerb, prioritize: prioritizeVerb } as const;

  /**
   * A verb's reply. `unread`: refused before its body was read (the connection is closed after a linger,
   * lingerThenClose, unless all of it had come); `close`: refused while its body arrived (the request is paused,
   * raw-body still reading it: the connection is closed after a linger).
   */
  const answer = async (
    verb: VerbName,
    req: IncomingMessage,
  ): Promise<VerbReply & { unread?: boolean; close?: boolean }> => {
    const declared = Number(req.headers['content-length']);
    if (declared > limit)
      return {
        ...errorReply(413, `request body larger than ${limit} bytes (server.maxRequestBodyBytes)`, 'too_large'),
        unread: true,
      };
    const encoding = refusedEncoding(req.headers['content-encoding']);
    if (encoding) return { ...errorReply(415, encoding, 'content_encoding'), unread: true };
    const type = refusedType(req.headers['content-type']);
    if (type) return { ...errorReply(415, type, 'content_type'), unread: true };
    let text: string;
    try {
      text = await readBody(req, options, declared);
    } catch (err) {
      if (err instanceof BoundsError) return { ...boundsReply(err, options), close: true };
      const reply = bodyErrorReply(err as BodyError, limit);
      // The listener refused the connection under it (a 408 when the body did not come in time) and logged that.
      if (refusedOnConnection(req.socket)) return { status: reply.status, body: reply.body };
      return reply.status === 413 ? { ...reply, unread: true } : reply;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return errorReply(400, `request body is not valid JSON: ${(err as Error).message}`, 'not_json');
    }
    return verb === 'bind' ? bindVerb(body, deps) : verbs[verb](body, deps);
  };

  return (req, res) => {
    // Sent after a body refused on this connection (Connection: close): not answered (RFC 9112 §9.6).
    if (lingering.has(req.socket)) return;
    const verb = verbOfPath(req.url);
    if (verb === null) {
      next(req, res);
      return;
    }
    const stop = deps.metrics.requestDuration.startTimer({ verb });
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      stop();
      deps.metrics.requests.inc({ verb, code: String(res.statusCode) });
    };
    res.on('finish', count);
    // Taken now: once the connection has gone (a body the client abandoned), the socket no longer knows its peer.
    const client = req.socket.remoteAddress;
    const logProblem = (reply: VerbReply) => {
      if (reply.problem)
        options.requestLog?.note(reply.problem, client, { method: req.method, path: req.url, status: reply.status });
    };
    if (req.method !== 'POST') {
      req.resume(); // whatever body came is not read
      const reply = errorReply(405, `${req.method} /${verb}: the verbs are called with POST`, 'method');
      write(res, reply, { Allow: 'POST' });
      logProblem(reply);
      return;
    }
    answer(verb, req).then(
      (reply) => {
        // Refused before its body was read (size, type, nesting, elements): the connection is closed after a linger
        // rather than drained.
        if (reply.close === true || (reply.unread === true && !req.complete)) {
          lingerThenClose(req, res, reply);
          count(); // the answer is written; the response never finishes (the connection closes under it)
        } else write(res, reply);
        logProblem(reply);
      },
      (err: unknown) => {
        deps.logger.error({ err }, 'request failed');
        write(res, { status: 500, body: JSON.stringify({ Error: 'sandbox-extender: internal error' }) });
      },
    );
  };
}
