/**
 * Requests refused at the door are logged, so that a misconfigured kube-scheduler is found from the log: a running
 * server (serve, snapshot mode) with its log captured, each refusal sent as a raw request. One warn line per reason
 * per server.requestLogWindowSeconds, with the client's address, the reason and the message it was answered with;
 * the counting of the lines left out is RequestLog's (test/observability/requestLog.test.ts).
 */
import { connect } from 'node:net';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import { serve, type RunningServer } from '../../src/runtime/serve.js';
import { makePod } from '../fixtures/builders.js';
import { NODE_192, SNAPSHOT_PATH } from './harness.js';

let server: RunningServer;
let port: number;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  const config = parseConfig({
    snapshot: { path: SNAPSHOT_PATH },
    server: { port: 0, requestTimeoutSeconds: 0.5 },
    logLevel: 'warn',
  });
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  server = await serve(config, logger);
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await server.close();
});

/** Writes `raw` on a new connection (to `to`, by default this file's server); resolves with everything the server sent until it closed. */
function exchange(raw: string, to = port): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(to, '127.0.0.1', () => socket.write(raw));
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

function request(
  method: string,
  path: string,
  body = '',
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
): string {
  const head = Object.entries({
    Host: 'x',
    ...headers,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  return `${method} ${path} HTTP/1.1\r\n${head}\r\n\r\n${body}`;
}

const filterBody = (uid: string) =>
  JSON.stringify({ Pod: makePod(uid).uid(uid).req({ cpu: '1', memory: '1Gi' }).obj(), NodeNames: [NODE_192] });

/** The lines logged while `send` runs (each reason is new to this server, so each is logged). */
async function logged(send: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const from = lines.length;
  await send();
  await new Promise((resolve) => setImmediate(resolve));
  return lines.slice(from);
}

/** A server of its own (every reason new to its log; server.requestLogWindowSeconds 0: every line logged), and its log. */
async function ownServer(): Promise<{ port: number; lines: Record<string, unknown>[]; close: () => Promise<void> }> {
  const own: Record<string, unknown>[] = [];
  const config = parseConfig({
    snapshot: { path: SNAPSHOT_PATH },
    server: { port: 0, requestTimeoutSeconds: 0.5, requestLogWindowSeconds: 0 },
    logLevel: 'warn',
  });
  const running = await serve(
    config,
    pino({ level: 'warn' }, { write: (l: string) => own.push(JSON.parse(l) as Record<string, unknown>) }),
  );
  return { port: Number(new URL(running.url).port), lines: own, close: () => running.close() };
}

/** Writes `raw` on a new connection to `to`, then resets the connection after `afterMs` (the client gives up midway). */
function abandon(to: number, raw: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(to, '127.0.0.1', () => {
      socket.write(raw);
      setTimeout(() => socket.destroy(), afterMs);
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

/** Polls until `lines` holds a line matching `match` (5 s at most; a positive signal, never a timing check). */
async function lineLike(
  lines: Record<string, unknown>[],
  match: (line: Record<string, unknown>) => boolean,
): Promise<void> {
  for (let i = 0; i < 500 && !lines.some(match); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

const warning = (reason: string, msg: string | RegExp, fields: Record<string, unknown> = {}) => ({
  level: 40,
  reason,
  client: '127.0.0.1',
  msg: typeof msg === 'string' ? msg : expect.stringMatching(msg),
  ...fields,
});

// Regression (hostile-input trial): these were counted in sandbox_extender_http_requests_total but never logged.
describe('refusals at the door, in the log', () => {
  it.each([
    [
      'a wrong path',
      () => request('GET', '/filterz'),
      warning('no_route', 'no route for GET /filterz; the verbs are POST /filter, /prioritize and /bind', {
        method: 'GET',
        path: '/filterz',
        status: 404,
      }),
    ],
    [
      'a wrong method',
      () => request('GET', '/filter'),
      warning('method', 'GET /filter: the verbs are called with POST', { method: 'GET', path: '/filter', status: 405 }),
    ],
    [
      'a body that is not JSON by its type',
      () => request('POST', '/filter', 'a=b', { 'Content-Type': 'application/x-www-form-urlencoded' }),
      warning(
        'content_type',
        'Content-Type application/x-www-form-urlencoded is not JSON: send the body as Content-Type: application/json',
        { status: 415 },
      ),
    ],
    [
      'a compressed body',
      () => request('POST', '/filter', '{}', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }),
      warning('content_encoding', 'Content-Encoding gzip is not accepted: send the body uncompressed', { status: 415 }),
    ],
    [
      'a body too large',
      () => request('POST', '/filter', '{}').replace('Content-Length: 2', 'Content-Length: 999999999'),
      warning('too_large', 'request body larger than 67108864 bytes (server.maxRequestBodyBytes)', { status: 413 }),
    ],
    [
      'a body nested too deep',
      () => request('POST', '/prioritize', '['.repeat(1000)),
      warning('too_deep', 'request body nests arrays and objects deeper than 100 levels (server.maxRequestDepth)', {
        status: 400,
      }),
    ],
    [
      'invalid JSON',
      () => request('POST', '/filter', '{not json'),
      warning('not_json', /^request body is not valid JSON: /, { status: 400 }),
    ],
    [
      'the wrong shape (Filter: the protocol’s Error, HTTP 200)',
      () => request('POST', '/filter', '{"Pod":{"metadata":{"name":"p"}}}'),
      warning('shape', /^filter: Pod\.metadata\.uid: /, { status: 200 }),
    ],
    [
      'what Node’s parser refuses',
      () => 'POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n',
      warning('invalid_http', 'the request has an invalid Content-Length (a non-negative integer, given once)', {
        status: 400,
        code: 'HPE_INVALID_CONTENT_LENGTH',
      }),
    ],
    [
      'a body that never comes in full',
      () => request('POST', '/filter', filterBody('stalls')).slice(0, -10),
      warning('timeout', 'the request was not received in full within 0.5 s (server.requestTimeoutSeconds)', {
        status: 408,
      }),
    ],
  ])('%s: one warn line with the client, the reason and the message', async (_what, raw, line) => {
    expect(await logged(() => exchange(raw()))).toEqual([expect.objectContaining(line)]);
  });

  it('garbage behind a request still being answered: logged as dropped', async () => {
    const body = filterBody('pipelined');
    const raw = `POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}GARBAGE / HTTP/1.1\r\n\r\n`;
    // invalid_http was logged above (within the window): this server's window is 60 s, so a new server's log is needed.
    const own: Record<string, unknown>[] = [];
    const fresh = await serve(
      parseConfig({ snapshot: { path: SNAPSHOT_PATH }, server: { port: 0 }, logLevel: 'warn' }),
      pino({ level: 'warn' }, { write: (l: string) => own.push(JSON.parse(l) as Record<string, unknown>) }),
    );
    try {
      const text = await new Promise<string>((resolve, reject) => {
        let got = '';
        const socket = connect(Number(new URL(fresh.url).port), '127.0.0.1', () => socket.write(raw));
        socket.on('data', (d) => (got += d.toString()));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });
      expect(text).toBe('');
      expect(own).toEqual([
        expect.objectContaining(
          warning(
            'invalid_http',
            'the request is not valid HTTP/1.1 (HPE_INVALID_METHOD: Parse Error: Invalid method encountered); a request before it on the connection was still being answered, so nothing was answered in its place and the connection was dropped',
          ),
        ),
      ]);
    } finally {
      await fresh.close();
    }
  });

  it('the same refusal again within the window is not logged again; another reason is', async () => {
    expect(await logged(() => exchange(request('GET', '/filter')))).toEqual([]);
    expect(await logged(() => exchange(request('GET', '/nope-again')))).toEqual([]);
    expect(await logged(() => exchange(request('POST', '/prioritize', '{}')))).toEqual([]); // shape, as Filter's above
    const headers = request('GET', '/healthz').replace('Host: x', `Host: x\r\nX-Big: ${'a'.repeat(20_000)}`);
    expect(await logged(() => exchange(headers))).toEqual([
      expect.objectContaining(warning('headers_too_large', 'the request headers are too large', { status: 431 })),
    ]);
  });

  // Regression (hostile-input trial): logged with client "unknown", read after the connection had gone.
  it('a body the client abandons midway: one line with the client’s address', async () => {
    const own = await ownServer();
    try {
      const body = filterBody('abandoned');
      await abandon(own.port, request('POST', '/prioritize', body).slice(0, -10), 100);
      await lineLike(own.lines, (l) => l.reason === 'unreadable');
      expect(own.lines).toEqual([
        expect.objectContaining(
          warning('unreadable', 'request aborted', { method: 'POST', path: '/prioritize', status: 400 }),
        ),
      ]);
    } finally {
      await own.close();
    }
  });

  // Regression (hostile-input trial): logged twice, as the timeout and then as an unreadable body (400, never sent).
  it('a body that times out: one line, the 408 (not the body’s end as well)', async () => {
    const own = await ownServer();
    try {
      await exchange(request('POST', '/filter', filterBody('stalls-once')).slice(0, -10), own.port);
      // Then a body abandoned on /prioritize: its line is the signal that the server has handled both connections.
      await abandon(own.port, request('POST', '/prioritize', filterBody('abandoned-after')).slice(0, -10), 100);
      await lineLike(own.lines, (l) => l.path === '/prioritize');
      expect(own.lines).toEqual([
        expect.objectContaining(
          warning('timeout', 'the request was not received in full within 0.5 s (server.requestTimeoutSeconds)', {
            status: 408,
          }),
        ),
        expect.objectContaining(
          warning('unreadable', 'request aborted', { method: 'POST', path: '/prioritize', status: 400 }),
        ),
      ]);
    } finally {
      await own.close();
    }
  });

  // Regression (new-user trial): POST /readyz was answered 404 and logged as no_route.
  it('a wrong method on a read-only path: logged as method, with the 405', async () => {
    const own = await ownServer();
    try {
      await exchange(request('POST', '/readyz', '{}'), own.port);
      await lineLike(own.lines, (l) => l.reason !== undefined);
      expect(own.lines).toEqual([
        expect.objectContaining(
          warning('method', 'POST /readyz: this path is read with GET or HEAD', {
            method: 'POST',
            path: '/readyz',
            status: 405,
          }),
        ),
      ]);
    } finally {
      await own.close();
    }
  });

  it('a request answered normally logs nothing', async () => {
    expect(await logged(() => exchange(request('POST', '/filter', filterBody('fine'))))).toEqual([]);
  });
});
