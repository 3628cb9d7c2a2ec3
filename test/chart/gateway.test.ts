/**
 * The chart's metrics gateway (charts/sandbox-extender/files/metrics-gateway.mjs), run as the chart runs it
 * (node, GATEWAY_LISTEN, GATEWAY_UPSTREAM) in front of a stand-in extender: it forwards GET /healthz, /readyz
 * and /metrics with their status, and nothing else (the verbs stay on loopback).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHART } from './chartFiles.js';

let upstream: Server;
let upstreamHits: string[] = [];
let gateway: ChildProcess;
let base: string;
let gatewayLog = '';

function listen(server: Server): Promise<number> {
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok((server.address() as AddressInfo).port)));
}

async function freePort(): Promise<number> {
  const s = createServer();
  const port = await listen(s);
  await new Promise((ok) => s.close(ok));
  return port;
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    upstreamHits.push(`${req.method} ${req.url}`);
    if (req.url === '/readyz') res.writeHead(503, { 'content-type': 'text/plain' }).end('not ready');
    else if (req.url === '/metrics')
      res
        .writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
        .end('sandbox_extender_http_requests_total{verb="filter",code="200"} 3\n');
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  const upstreamPort = await listen(upstream);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  gateway = spawn(process.execPath, [`${CHART}files/metrics-gateway.mjs`], {
    env: {
      PATH: process.env.PATH,
      GATEWAY_LISTEN: `127.0.0.1:${port}`,
      GATEWAY_UPSTREAM: `http://127.0.0.1:${upstreamPort}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  gateway.stdout!.on('data', (d) => (gatewayLog += d));
  gateway.stderr!.on('data', (d) => (gatewayLog += d));
  const deadline = Date.now() + 10_000;
  while (!/listening/.test(gatewayLog)) {
    if (gateway.exitCode !== null || Date.now() > deadline)
      throw new Error(`the gateway did not start:\n${gatewayLog}`);
    await new Promise((r) => setTimeout(r, 50));
  }
});

afterAll(async () => {
  const exited = new Promise((ok) => gateway.once('exit', ok));
  gateway.kill('SIGTERM');
  await exited;
  await new Promise((ok) => upstream.close(ok));
});

beforeEach(() => {
  upstreamHits = [];
});

describe('metrics gateway', () => {
  it('forwards /healthz, /readyz and /metrics with their status and content type', async () => {
    const health = await fetch(`${base}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok']);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4');
    expect(await metrics.text()).toContain('sandbox_extender_http_requests_total');
    expect(upstreamHits).toEqual(['GET /healthz', 'GET /readyz', 'GET /metrics']);
  });

  it('never forwards the verbs or other paths', async () => {
    for (const [method, path, status] of [
      ['POST', '/filter', 405],
      ['POST', '/bind', 405],
      ['GET', '/debug/nodes', 404],
      ['GET', '/filter', 404],
      ['GET', '/metrics/../bind', 404],
    ] as const) {
      const res = await fetch(`${base}${path}`, { method, body: method === 'POST' ? '{}' : undefined });
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} ${status}`);
    }
    expect(upstreamHits).toEqual([]);
  });

  it('answers its own /livez, and 503 when the extender is unreachable', async () => {
    expect((await fetch(`${base}/livez`)).status).toBe(200);
    const port = await freePort();
    const lonely = spawn(process.execPath, [`${CHART}files/metrics-gateway.mjs`], {
      env: { PATH: process.env.PATH, GATEWAY_LISTEN: `127.0.0.1:${port}`, GATEWAY_UPSTREAM: 'http://127.0.0.1:1' },
      stdio: 'ignore',
    });
    try {
      let res: Response | undefined;
      for (let i = 0; i < 100 && !res; i++) {
        res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        if (!res) await new Promise((r) => setTimeout(r, 50));
      }
      expect(res?.status).toBe(503);
      expect(await res!.text()).toMatch(/extender unreachable/);
    } finally {
      const exited = new Promise((ok) => lonely.once('exit', ok));
      lonely.kill('SIGTERM');
      await exited;
    }
  });
});
