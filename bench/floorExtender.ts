/**
 * The floor of any extender written in Node, for `npm run bench:cluster -- --floor`: an HTTP server that
 * does only what the protocol forces on every extender and nothing of the placement. On POST /filter it
 * reads the body (node:http, the chunks joined), decodes it with one JSON.parse and answers the next of the
 * request's NodeNames in turn (round-robin over the call count), the answer shape of the one-call Filter
 * (ADR 0005): `{"NodeNames":[name],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""}`. No cache,
 * no watch, no reservation, no Event, no metric. GET /readyz answers 200, GET /metrics an empty text (the bench
 * scrapes it), anything else 404.
 *
 * The bench runs it in the extender's place, on its port, for one sandbox-scheduler run per mode: its CPU
 * per placed pod and the rate kube-scheduler reaches with it are what an extender costs on that machine
 * before it does any work of its own.
 *
 * Usage: node dist/bench/floorExtender.js --host 127.0.0.1 --port 8888
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command } from 'commander';
import { positiveInt } from './cliOptions.js';

function reply(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Reads the whole body as UTF-8 text. */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((ok, bad) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    req.on('error', bad);
  });
}

/** The answer to one Filter request's text: the next of its NodeNames (round-robin over `call`), or an Error. */
export function floorFilterReply(text: string, call: number): string {
  let names: unknown;
  try {
    names = (JSON.parse(text) as { NodeNames?: unknown }).NodeNames;
  } catch (err) {
    return JSON.stringify({ Error: `floor extender: body is not JSON: ${(err as Error).message}` });
  }
  if (!Array.isArray(names) || names.length === 0) return JSON.stringify({ NodeNames: [], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' });
  return JSON.stringify({ NodeNames: [names[call % names.length]], FailedNodes: {}, FailedAndUnresolvableNodes: {}, Error: '' });
}

function main(): void {
  const program = new Command('floorExtender')
    .description('the floor of a Node extender: read, JSON.parse, answer one of the names (bench:cluster --floor)')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .requiredOption('--port <port>', 'port to listen on', positiveInt);
  program.parse();
  const { host, port } = program.opts<{ host: string; port: number }>();
  let calls = 0;
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/filter') {
      readBody(req).then(
        (text) => reply(res, 200, floorFilterReply(text, calls++)),
        (err: unknown) => reply(res, 400, JSON.stringify({ Error: `floor extender: ${String(err)}` })),
      );
      return;
    }
    req.resume();
    if (req.method === 'GET' && path === '/readyz') reply(res, 200, 'ok', 'text/plain');
    else if (req.method === 'GET' && path === '/metrics') reply(res, 200, '', 'text/plain');
    else reply(res, 404, JSON.stringify({ Error: `floor extender: no ${req.method} ${path}` }));
  });
  server.listen(port, host);
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
