/**
 * The socket edge of a running server (serve: createListener + verbEdge), with requests written by
 * hand so that what Node's HTTP parser refuses is seen too: every refusal is answered in the
 * extender's error shape (`{"Error": "sandbox-extender: ..."}` and a newline), never Node's bare
 * reply, and the server and its state carry on.
 */
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import { serve, type RunningServer } from '../../src/runtime/serve.js';
import { clientErrorReply } from '../../src/server/listen.js';
import { refusedEncoding, refusedType } from '../../src/server/verbEdge.js';
import { makePod } from '../fixtures/builders.js';
import { NODE_192, SNAPSHOT_PATH, sampleValue } from './harness.js';

const run = promisify(execFile);
const UPLOADING_CLIENT = fileURLToPath(new URL('./uploadingClient.mjs', import.meta.url));

let server: RunningServer;
let port: number;

beforeAll(async () => {
  const config = parseConfig({
    snapshot: { path: SNAPSHOT_PATH },
    server: { port: 0, requestTimeoutSeconds: 0.5 },
    logLevel: 'silent',
  });
  server = await serve(config, pino({ level: 'silent' }));
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await server.close();
});

/** Writes `raw` on a new connection, then `later` after `afterMs`; resolves with everything the server sent until it closed. */
function exchange(raw: string | Buffer, later?: { afterMs: number; raw: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(raw);
      if (later) setTimeout(() => socket.writable && socket.write(later.raw), later.afterMs);
    });
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    setTimeout(() => socket.destroy(), 5000);
  });
}

/** Runs uploadingClient.mjs (its own process) against the server on `to`: what each of `count` uploads read. */
async function uploads(to: number, head: string, fill: number, chunked: boolean, count: number): Promise<string[]> {
  const { stdout } = await run(
    process.execPath,
    [UPLOADING_CLIENT, String(to), head, String(fill), chunked ? '1' : '0', String(count)],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as string[];
}

const statusLine = (reply: string) => reply.split('\r\n')[0];
const body = (reply: string) => reply.slice(reply.indexOf('\r\n\r\n') + 4);
const errorOf = (reply: string) => (JSON.parse(body(reply)) as { Error: string }).Error;

function filterRequest(uid: string): string {
  return JSON.stringify({ Pod: makePod(uid).uid(uid).req({ cpu: '1', memory: '1Gi' }).obj(), NodeNames: [NODE_192] });
}

function post(
  path: string,
  text: string | Buffer,
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
): string {
  const length = Buffer.byteLength(text);
  const head = Object.entries({ Host: 'x', ...headers, 'Content-Length': String(length) })
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  return `POST ${path} HTTP/1.1\r\n${head}\r\nConnection: close\r\n\r\n`;
}

const reservations = () => server.service.cache.size.reservations;

/** A request kept alive (no Connection: close), its body included. */
function keepAlive(path: string, text: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  return sampleValue(await server.metrics.registry.metrics(), name, labels) ?? 0;
}

/** Polls `condition` every 10 ms, for 5 s at most (far below the 600 s reservation TTL these tests tell apart from). */
async function waitFor(condition: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + 5000;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the socket edge', () => {
  it('a negative Content-Length: 400 in the extender shape (Node parser refused it), nothing reserved', async () => {
    const before = reservations();
    const reply = await exchange('POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}');
    expect(statusLine(reply)).toBe('HTTP/1.1 400 Bad Request');
    expect(reply).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(errorOf(reply)).toBe(
      'sandbox-extender: the request has an invalid Content-Length (a non-negative integer, given once)',
    );
    expect(body(reply).endsWith('}\n')).toBe(true);
    expect(reservations()).toBe(before);
  });

  // Regression (new-user trial): Node answered an unknown Expect header 417 itself, with an empty body.
  it('an Expect header other than 100-continue: 417 in the extender shape, counted; the server carries on', async () => {
    const text = filterRequest('expect');
    const counted = await metricValue('sandbox_extender_http_requests_total', { verb: 'other', code: '417' });
    const before = reservations();
    const reply = await exchange(post('/filter', text).replace('\r\n\r\n', '\r\nExpect: bogus\r\n\r\n') + text);
    expect(statusLine(reply)).toBe('HTTP/1.1 417 Expectation Failed');
    expect(reply).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    expect(errorOf(reply)).toBe(
      "sandbox-extender: the request's Expect header (bogus) is not supported; only 100-continue is",
    );
    expect(body(reply).endsWith('}\n')).toBe(true);
    expect(await metricValue('sandbox_extender_http_requests_total', { verb: 'other', code: '417' })).toBe(counted + 1);
    expect(reservations()).toBe(before);
    expect(statusLine(await exchange(post('/filter', text) + text))).toBe('HTTP/1.1 200 OK');
  });

  it('a body that stalls is answered 408 after server.requestTimeoutSeconds and the connection closed; the server carries on', async () => {
    const text = filterRequest('stalled');
    const counted = await metricValue('sandbox_extender_http_requests_total', { verb: 'other', code: '408' });
    const reply = await exchange(`${post('/filter', text)}${text.slice(0, 20)}`); // the rest never comes
    expect(statusLine(reply)).toBe('HTTP/1.1 408 Request Timeout');
    // Answered by the listener, not a route: counted under verb "other" (it was not counted at all).
    expect(await metricValue('sandbox_extender_http_requests_total', { verb: 'other', code: '408' })).toBe(counted + 1);
    expect(errorOf(reply)).toBe(
      'sandbox-extender: the request was not received in full within 0.5 s (server.requestTimeoutSeconds)',
    );
    expect(server.service.cache.reservation('stalled')).toBeUndefined();
    const ok = filterRequest('after-stall');
    expect(statusLine(await exchange(`${post('/filter', ok)}${ok}`))).toBe('HTTP/1.1 200 OK');
    expect(server.service.cache.reservation('after-stall')?.nodeName).toBe(NODE_192);
  });

  it('a body sent in two pieces within the timeout is read whole', async () => {
    const text = filterRequest('two-pieces');
    const reply = await exchange(`${post('/filter', text)}${text.slice(0, 30)}`, { afterMs: 100, raw: text.slice(30) });
    expect(statusLine(reply)).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(body(reply)).NodeNames).toEqual([NODE_192]);
  });

  it('a gzip body: 415 with what to do instead, nothing reserved', async () => {
    const gz = gzipSync(filterRequest('gzipped'));
    const reply = await exchange(
      Buffer.concat([
        Buffer.from(post('/filter', gz, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' })),
        gz,
      ]),
    );
    expect(statusLine(reply)).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(errorOf(reply)).toBe('sandbox-extender: Content-Encoding gzip is not accepted: send the body uncompressed');
    expect(server.service.cache.reservation('gzipped')).toBeUndefined();
  });

  it.each([
    ['text/plain', 415],
    ['application/x-www-form-urlencoded', 415],
    ['application/json; charset=latin1', 415],
    ['application/json', 200],
    ['Application/JSON; charset=UTF-8', 200],
    ['application/vnd.kube+json', 200],
  ])('Content-Type %s → %i', async (type, status) => {
    const text = filterRequest(`type-${status}-${type.length}`);
    const reply = await exchange(`${post('/filter', text, { 'Content-Type': type })}${text}`);
    expect(statusLine(reply)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    if (status === 415)
      expect(errorOf(reply)).toMatch(
        /^sandbox-extender: Content-Type .* (is not JSON: send the body as Content-Type: application\/json|JSON is read as UTF-8 only)$/,
      );
  });

  // Regression (hostile-input trial): the 400 for the garbage was written first (read by the client as the Filter's
  // answer), the Filter's own reply was lost, and the node it chose stayed reserved until the TTL (600 s here).
  it.each(['filter', 'prioritize'])(
    'a %s request and garbage in one write: nothing is answered in its place, the connection is closed, and its reservation is released at once (unreserved)',
    async (verb) => {
      const uid = `pipelined-garbage-${verb}`;
      const before = reservations();
      const unreservedBefore = await metricValue('sandbox_extender_reservations_released_total', {
        reason: 'unreserved',
      });
      const reply = await exchange(`${keepAlive(`/${verb}`, filterRequest(uid))}GARBAGE / HTTP/1.1\r\n\r\n`);
      expect(reply).toBe('');
      expect(
        await waitFor(
          async () =>
            (await metricValue('sandbox_extender_reservations_released_total', { reason: 'unreserved' })) ===
            unreservedBefore + 1,
        ),
      ).toBe(true);
      expect(server.service.cache.reservation(uid)).toBeUndefined();
      expect(reservations()).toBe(before);
      expect(await metricValue('sandbox_extender_reservations_pending')).toBe(before);
      expect(await metricValue('sandbox_extender_reservations_released_total', { reason: 'expired' })).toBe(0);
    },
  );

  it('garbage after a reply was delivered on a kept-alive connection: 400 for it, the connection closed, the delivered decision kept', async () => {
    const uid = 'delivered-then-garbage';
    const reply = await exchange(keepAlive('/filter', filterRequest(uid)), {
      afterMs: 200,
      raw: 'GARBAGE / HTTP/1.1\r\n\r\n',
    });
    const [first, second] = reply.split(/(?<=\n)(?=HTTP\/1\.1 \d{3} )/);
    expect(statusLine(first!)).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(body(first!)).NodeNames).toEqual([NODE_192]);
    expect(statusLine(second!)).toBe('HTTP/1.1 400 Bad Request');
    expect(errorOf(second!)).toMatch(/^sandbox-extender: the request is not valid HTTP\/1\.1 \(HPE_INVALID_METHOD/);
    expect(server.service.cache.reservation(uid)?.nodeName).toBe(NODE_192);
  });

  // Regression (hostile-input trial): a 60 MB body of nested arrays held the event loop 12 s and 3 GB, then was answered 200.
  it('a 60 MB body of nested arrays is refused 400 from its first 64 KiB, without waiting for the rest; the connection closed; the next call answered', async () => {
    const before = reservations();
    const head =
      'POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60000000\r\n\r\n';
    // Only 64 KiB of the declared 60 MB is ever sent: the answer must come from those bytes (else a 408 after 0.5 s).
    const reply = await exchange(`${head}${'['.repeat(64 * 1024)}`);
    expect(statusLine(reply)).toBe('HTTP/1.1 400 Bad Request');
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    expect(errorOf(reply)).toBe(
      'sandbox-extender: request body nests arrays and objects deeper than 100 levels (server.maxRequestDepth)',
    );
    expect(reservations()).toBe(before);
    const next = filterRequest('after-deep-body');
    expect(statusLine(await exchange(`${post('/filter', next)}${next}`))).toBe('HTTP/1.1 200 OK');
  });

  // Regression (hostile-input trial): the server answered and closed at once, with the rest of the body unread; the
  // kernel then reset the connection, and a client still sending failed its write (EPIPE) before it read the answer.
  // Each case is sent 12 times: the answer was lost in a race, one time in three to one in four (12 sends then all
  // succeed by chance with a probability of 1–3 %).
  it.each([
    [
      'a 70 MiB body declared over server.maxRequestBodyBytes',
      'Content-Length: 73400320',
      0x20,
      'HTTP/1.1 413 Payload Too Large',
      'sandbox-extender: request body larger than 67108864 bytes (server.maxRequestBodyBytes)',
    ],
    [
      'a 6 MiB body nested deeper than server.maxRequestDepth',
      'Content-Length: 6291456',
      0x5b,
      'HTTP/1.1 400 Bad Request',
      'sandbox-extender: request body nests arrays and objects deeper than 100 levels (server.maxRequestDepth)',
    ],
  ])(
    '%s: a client still sending it reads the answer (the rest is read and dropped for a while before the close)',
    async (_what, framing, fill, status, error) => {
      const replies = await uploads(
        port,
        `POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`,
        fill,
        false,
        12,
      );
      expect(replies.map(statusLine)).toEqual(replies.map(() => status));
      expect(replies.map(errorOf)).toEqual(replies.map(() => error));
    },
  );

  it('a chunked body counted over server.maxRequestBodyBytes as it arrives: a client still sending it reads the 413', async () => {
    const small = await serve(
      parseConfig({
        snapshot: { path: SNAPSHOT_PATH },
        server: { port: 0, maxRequestBodyBytes: 1024 * 1024 },
        logLevel: 'silent',
      }),
      pino({ level: 'silent' }),
    );
    try {
      const head =
        'POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
      const replies = await uploads(Number(new URL(small.url).port), head, 0x20, true, 12);
      expect(replies.map(statusLine)).toEqual(replies.map(() => 'HTTP/1.1 413 Payload Too Large'));
      expect(replies.map(errorOf)).toEqual(
        replies.map(() => 'sandbox-extender: request body larger than 1048576 bytes (server.maxRequestBodyBytes)'),
      );
    } finally {
      await small.close();
    }
  });

  it('the linger is bounded: a client that keeps its side open and keeps sending is closed on (after its answer)', async () => {
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
        socket.write(
          'POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 73400320\r\n\r\n',
        );
        const piece = Buffer.alloc(16 * 1024, 0x20);
        const more = () => {
          if (socket.destroyed) return;
          socket.write(piece, () => undefined);
          setTimeout(more, 10);
        };
        more();
      });
      socket.on('data', (d) => (text += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
    });
    expect(statusLine(reply)).toBe('HTTP/1.1 413 Payload Too Large');
    expect(errorOf(reply)).toBe(
      'sandbox-extender: request body larger than 67108864 bytes (server.maxRequestBodyBytes)',
    );
  });

  it('a request sent behind a body refused before it was read (Connection: close) is not answered, nor decided', async () => {
    const placed = await metricValue('sandbox_extender_placements_total', {
      strategy: 'least_loaded',
      result: 'placed',
    });
    const next = filterRequest('behind-a-refusal');
    // The refused body comes in two writes, the request behind it in the second (the client keeps sending after the
    // server's FIN): Node parses that request before the body's end is seen.
    const reply = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
        socket.write('POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n12345');
      });
      socket.once('data', () => socket.write(`67890${post('/filter', next)}${next}`));
      socket.on('end', () => socket.end());
      socket.on('data', (d) => (text += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
    });
    expect(reply.match(/^HTTP\/1\.1 /gm)).toEqual(['HTTP/1.1 ']);
    expect(statusLine(reply)).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(server.service.cache.reservation('behind-a-refusal')).toBeUndefined();
    expect(await metricValue('sandbox_extender_placements_total', { strategy: 'least_loaded', result: 'placed' })).toBe(
      placed,
    );
  });

  it('a chunked body of nested objects is refused the same way (no Content-Length to go by)', async () => {
    const piece = '{"a":'.repeat(1000);
    const reply = await exchange(
      `POST /prioritize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${piece.length.toString(16)}\r\n${piece}\r\n`,
    );
    expect(statusLine(reply)).toBe('HTTP/1.1 400 Bad Request');
    expect(errorOf(reply)).toBe(
      'sandbox-extender: request body nests arrays and objects deeper than 100 levels (server.maxRequestDepth)',
    );
  });

  it('no Content-Type at all is read as JSON', async () => {
    const text = filterRequest('no-type');
    const reply = await exchange(`${post('/filter', text, {})}${text}`);
    expect(statusLine(reply)).toBe('HTTP/1.1 200 OK');
  });
});

describe('the rules behind them', () => {
  it('clientErrorReply: a status and message per parser error; nothing for a reset connection', () => {
    expect(clientErrorReply({ code: 'ERR_HTTP_REQUEST_TIMEOUT' }, 30)).toEqual({
      status: 408,
      reason: 'Request Timeout',
      message: 'the request was not received in full within 30 s (server.requestTimeoutSeconds)',
      problem: 'timeout',
    });
    expect(clientErrorReply({ code: 'HPE_HEADER_OVERFLOW' }, 30)?.status).toBe(431);
    expect(clientErrorReply({ code: 'HPE_INVALID_METHOD', message: 'Invalid method encountered' }, 30)).toEqual({
      status: 400,
      reason: 'Bad Request',
      message: 'the request is not valid HTTP/1.1 (HPE_INVALID_METHOD: Invalid method encountered)',
      problem: 'invalid_http',
    });
    expect(clientErrorReply({ code: 'HPE_HEADER_OVERFLOW' }, 30)?.problem).toBe('headers_too_large');
    expect(clientErrorReply({ code: 'ECONNRESET' }, 30)).toBeNull();
  });

  it('refusedEncoding / refusedType', () => {
    expect(refusedEncoding(undefined)).toBeNull();
    expect(refusedEncoding('identity')).toBeNull();
    expect(refusedEncoding('br')).toBe('Content-Encoding br is not accepted: send the body uncompressed');
    expect(refusedType(undefined)).toBeNull();
    expect(refusedType('application/json;charset="utf-8"')).toBeNull();
    expect(refusedType('application/jsonx')).toMatch(/is not JSON/);
    expect(refusedType('text/json')).toMatch(/is not JSON/);
  });
});
