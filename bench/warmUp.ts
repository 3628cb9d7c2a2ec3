/**
 * `npm run bench:warm-up`: what the warm-up before serving (`warmUpDecisions`) does to the first Filter calls after
 * a start. Not in CI.
 *
 * The real server process (`node dist/src/cli/main.js serve --snapshot FILE --config FILE --port P`, production's
 * defaults otherwise) on a snapshot of `--nodes` bench nodes (fixtures.ts) with `--pods-per-node` bound sandbox pods
 * each, started `--starts` times with the warm-up at its default (`warm`) and as many with `warmUpDecisions: 0`
 * (`cold`), the two alternated (warm cold, cold warm, …; one start first that is not counted, so the disk cache
 * holds what every start reads). The moment GET /readyz answers 200 (polled every 5 ms), `--requests` Filter calls
 * are sent as kube-scheduler sends them: POST /filter, ExtenderArgs with a new pending sandbox pod each and the
 * NodeNames of every node, one at a time over one keep-alive connection (undici).
 *
 * Per start: spawn → ready, the latency of the 1st and 10th call and the total of calls 1–10, the median of calls 1–100, 101–300 and 301–600,
 * the total of calls 1–300, and the server's CPU (all its threads, /proc/PID/stat) from spawn to ready and over
 * the first 300 calls. Printed: each figure's median over the starts of each variant with its range, and
 * warm ÷ cold of the medians.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { Client, request } from 'undici';
import { parseConfig } from '../src/config/load.js';
import { positiveInt } from './cliOptions.js';
import { benchNode, benchPod, nodeName } from './fixtures.js';
import { parseProcStat } from './procStats.js';

/** The compiled CLI (this module runs from dist/bench). */
const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js');
/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ). */
const TICKS_PER_SECOND = 100;
const READY_POLL_MS = 5;
const READY_TIMEOUT_MS = 120_000;

type Variant = 'warm' | 'cold';

interface Options {
  nodes: number;
  podsPerNode: number;
  requests: number;
  starts: number;
  decisions: number;
}

interface Start {
  variant: Variant;
  readyMs: number;
  /** The server's CPU (ms) from spawn to ready, and over the first 300 calls. */
  cpuToReadyMs: number;
  cpuFirst300Ms: number;
  /** Each call's latency (ms), in order. */
  latencies: number[];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** A snapshot file: `nodes` bench nodes, `podsPerNode` bound sandbox pods on each. */
function writeSnapshot(path: string, nodes: number, podsPerNode: number): void {
  const items: unknown[] = Array.from({ length: nodes }, (_, i) => benchNode(i));
  for (let i = 0; i < nodes * podsPerNode; i++) items.push({ apiVersion: 'v1', kind: 'Pod', ...benchPod(`bound-${i}`, nodeName(i % nodes)) });
  writeFileSync(path, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** utime + stime of the process (all its threads), in ms. */
function cpuMs(pid: number): number {
  return (parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).ticks * 1000) / TICKS_PER_SECOND;
}

async function waitReady(url: string, child: ChildProcess): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the server ended before it was ready (exit code ${child.exitCode}, signal ${child.signalCode})`);
    const ok = await request(`${url}/readyz`, { reset: true })
      .then(async (r) => {
        await r.body.dump();
        return r.statusCode === 200;
      })
      .catch(() => false);
    if (ok) return;
    if (performance.now() > deadline) throw new Error(`no ready /readyz within ${READY_TIMEOUT_MS} ms`);
    await new Promise((ok) => setTimeout(ok, READY_POLL_MS));
  }
}

/** One start of the server with `config`, then `o.requests` Filter calls one at a time. */
async function oneStart(variant: Variant, snapshot: string, config: string, o: Options, bodies: readonly string[]): Promise<Start> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'serve', '--snapshot', snapshot, '--config', config, '--port', String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  try {
    await waitReady(url, child);
    const readyMs = performance.now() - t0;
    const cpuToReadyMs = cpuMs(child.pid!);
    const client = new Client(url, { pipelining: 1 });
    const latencies: number[] = [];
    let cpuFirst300Ms = NaN;
    try {
      for (let i = 0; i < o.requests; i++) {
        const start = performance.now();
        const reply = await client.request({ path: '/filter', method: 'POST', headers: { 'content-type': 'application/json' }, body: bodies[i]! });
        const text = await reply.body.text();
        latencies.push(performance.now() - start);
        if (reply.statusCode !== 200 || !text.includes('"NodeNames":["')) throw new Error(`filter call ${i + 1} answered ${reply.statusCode}: ${text.slice(0, 200)}`);
        if (i === 299) cpuFirst300Ms = cpuMs(child.pid!) - cpuToReadyMs;
      }
    } finally {
      await client.close();
    }
    return { variant, readyMs, cpuToReadyMs, cpuFirst300Ms, latencies };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** The figures of one start, by row label. */
function figures(s: Start): Record<string, number> {
  const l = s.latencies;
  return {
    'spawn → ready (ms)': s.readyMs,
    'server CPU to ready (ms)': s.cpuToReadyMs,
    '1st call (ms)': l[0]!,
    '10th call (ms)': l[9]!,
    'total, calls 1–10 (ms)': sum(l.slice(0, 10)),
    'median, calls 1–100 (ms)': median(l.slice(0, 100)),
    'median, calls 101–300 (ms)': median(l.slice(100, 300)),
    'median, calls 301–600 (ms)': median(l.slice(300, 600)),
    'total, calls 1–300 (ms)': sum(l.slice(0, 300)),
    'server CPU, calls 1–300 (ms)': s.cpuFirst300Ms,
    'spawn → 300th answer (ms)': s.readyMs + sum(l.slice(0, 300)),
  };
}

function report(o: Options, starts: readonly Start[]): string {
  const rows: string[][] = [['figure', `warm (warmUpDecisions ${o.decisions}): median [min–max]`, 'cold (0): median [min–max]', 'warm ÷ cold']];
  const byVariant = (v: Variant) => starts.filter((s) => s.variant === v).map(figures);
  const warm = byVariant('warm');
  const cold = byVariant('cold');
  const cell = (values: number[]) => `${median(values).toFixed(2)} [${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}]`;
  for (const label of Object.keys(warm[0]!)) {
    const w = warm.map((f) => f[label]!);
    const c = cold.map((f) => f[label]!);
    rows.push([label, cell(w), cell(c), (median(w) / median(c)).toFixed(2)]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) => r.map((x, c) => (c === 0 ? x.padEnd(widths[c]!) : x.padStart(widths[c]!))).join('  '));
  return [
    `Warm-up: the server process started ${o.starts}× with warmUpDecisions ${o.decisions} (warm) and ${o.starts}× with 0 (cold), alternated; ` +
      `snapshot of ${o.nodes} nodes and ${o.nodes * o.podsPerNode} bound pods; from a ready /readyz, ${o.requests} Filter calls one at a time ` +
      `(NodeNames of all ${o.nodes} nodes, keep-alive); Node ${process.version}`,
    '',
    ...lines,
  ].join('\n');
}

async function main(): Promise<void> {
  const o = new Command('bench:warm-up')
    .description('the first Filter calls after a start of the server process, with the warm-up at its default and without it')
    .option('--nodes <n>', 'nodes in the snapshot, each named in every Filter call', positiveInt, 1000)
    .option('--pods-per-node <n>', 'bound sandbox pods per node in the snapshot', positiveInt, 10)
    .option('--requests <n>', 'Filter calls after each start (at least 600)', positiveInt, 600)
    .option('--starts <n>', 'starts of each variant', positiveInt, 5)
    .option('--decisions <n>', 'warmUpDecisions of the warm variant (default: the setting’s default)', positiveInt, parseConfig({}).warmUpDecisions)
    .parse()
    .opts<Options>();
  if (o.requests < 600) throw new Error('--requests: at least 600 (the figures read calls 1–600)');
  const dir = mkdtempSync(join(tmpdir(), 'bench-warm-up-'));
  try {
    const snapshot = join(dir, 'snapshot.json');
    writeSnapshot(snapshot, o.nodes, o.podsPerNode);
    const configs: Record<Variant, string> = { warm: join(dir, 'warm.yaml'), cold: join(dir, 'cold.yaml') };
    writeFileSync(configs.warm, `warmUpDecisions: ${o.decisions}\n`);
    writeFileSync(configs.cold, 'warmUpDecisions: 0\n');
    const names = Array.from({ length: o.nodes }, (_, i) => nodeName(i));
    const bodies = Array.from({ length: o.requests }, (_, i) => JSON.stringify({ Pod: benchPod(`incoming-${i}`), Nodes: null, NodeNames: names }));
    await oneStart('warm', snapshot, configs.warm, o, bodies); // not counted: the disk cache
    const starts: Start[] = [];
    for (let round = 0; round < o.starts; round++) {
      for (const variant of round % 2 === 0 ? (['warm', 'cold'] as const) : (['cold', 'warm'] as const)) {
        const s = await oneStart(variant, snapshot, configs[variant], o, bodies);
        const f = figures(s);
        process.stderr.write(`round ${round + 1} ${variant}: ready ${f['spawn → ready (ms)']!.toFixed(0)} ms, 1st ${f['1st call (ms)']!.toFixed(1)} ms, first 300 ${f['total, calls 1–300 (ms)']!.toFixed(0)} ms\n`);
        starts.push(s);
      }
    }
    console.log(report(o, starts));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
