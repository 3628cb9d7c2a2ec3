/**
 * The floor of any extender written in Node (`npm run bench -- cluster` runs it in the extender's place): POST
 * /filter reads the body (at most MAX_BODY_BYTES), decodes it with one JSON.parse and answers the next of its
 * NodeNames in turn, in the one-call Filter's shape (ADR 0005); no cache, watch, reservation, Event or metric.
 * GET /readyz answers 200, GET /metrics an empty text; a request it cannot use gets the protocol's Error field.
 *
 * Usage: node dist/bench/floorExtender.js --host 127.0.0.1 --port 8888
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { exitOnUsage, listenHost, tcpPort } from './cliOptions.js';

/** The largest body read (bytes), as the extender's server.maxRequestBodyBytes default. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

function reply(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const errorReply = (message: string) =>
  JSON.stringify({
    NodeNames: null,
    FailedNodes: {},
    FailedAndUnresolvableNodes: {},
    Error: `floor extender: ${message}`,
  });

/**
 * The answer to one Filter request's text: the next of its NodeNames (round-robin over `call`), none for an
 * empty list, or the protocol's Error for a body that is not JSON or carries no list of node names.
 */
export function floorFilterReply(text: string, call: number): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return errorReply(`body is not JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return errorReply('body is not an ExtenderArgs object');
  const names = (body as { NodeNames?: unknown }).NodeNames;
  if (!Array.isArray(names))
    return errorReply('NodeNames is not a list of node names (the floor answers nodeCacheCapable: true requests only)');
  if (names.length === 0)
    return JSON.stringify({ NodeNames: [], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' });
  const name: unknown = names[call % names.length];
  if (typeof name !== 'string' || name === '') return errorReply('NodeNames holds something other than a node name');
  return JSON.stringify({ NodeNames: [name], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' });
}

/** Reads the whole body as UTF-8 text; resolves null when it is longer than `limit` bytes (the rest is not read). */
function readBody(req: IncomingMessage, limit: number): Promise<string | null> {
  return new Promise((ok, bad) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > limit) {
        req.removeAllListeners('data');
        req.pause();
        ok(null);
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    req.on('error', bad);
  });
}

function main(): void {
  const program = new Command('floorExtender')
    .description('the floor of a Node extender: read, JSON.parse, answer one of the names (bench:cluster --floor)')
    .option('--host <host>', 'address to listen on', listenHost, '127.0.0.1')
    .option('--port <port>', 'port to listen on (required)', tcpPort)
    .exitOverride(exitOnUsage);
  program.parse();
  const { host, port } = program.opts<{ host: string; port?: number }>();
  // Checked after parsing, so that an unknown option is named first (commander checks a required option before).
  if (port === undefined) program.error("error: required option '--port <port>' not specified");
  let calls = 0;
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/filter') {
      readBody(req, MAX_BODY_BYTES).then(
        (text) => {
          if (text !== null) return reply(res, 200, floorFilterReply(text, calls++));
          res.setHeader('Connection', 'close');
          reply(
            res,
            413,
            JSON.stringify({ Error: `floor extender: request body larger than ${MAX_BODY_BYTES} bytes` }),
          );
          req.socket.end();
        },
        (err: unknown) =>
          reply(res, 400, JSON.stringify({ Error: `floor extender: the body could not be read: ${String(err)}` })),
      );
      return;
    }
    req.resume();
    if (req.method === 'GET' && path === '/readyz') reply(res, 200, 'ok', 'text/plain');
    else if (req.method === 'GET' && path === '/metrics') reply(res, 200, '', 'text/plain');
    else reply(res, 404, JSON.stringify({ Error: `floor extender: no ${req.method} ${path}` }));
  });
  server.on('error', (err: Error) => {
    process.stderr.write(`floor extender: cannot listen on ${host}:${port}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen(port, host, () => process.stderr.write(`floor extender: listening on ${host}:${port}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
