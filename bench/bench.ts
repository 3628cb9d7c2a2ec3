/**
 * `npm run bench`: the cost of one scheduling cycle's extender calls for 1,000 and 5,000 candidate
 * nodes, against the protocol floor measured in the same loop: JSON.parse of each request body plus
 * JSON.stringify of each reply (what any extender must pay). Each iteration measures the floor and
 * the verbs back to back (in alternating order), so a busy machine slows both alike; the figure
 * reported is the median of the per-iteration ratios.
 *
 * Cycles: one call (chooseInFilter: Filter answers the chosen node; kube-scheduler skips
 * Prioritize), the same with the bind verb's check of the chosen node (PlacementService.authorizeBind;
 * the floor then also parses the bind request and encodes its reply), and two calls (Filter answers
 * every feasible node, then Prioritize), with node names
 * (nodeCacheCapable: true) or full Node objects. Node names are realistic (30–60 characters, as
 * cloud providers name nodes). Then the HTTP layer (express against bare node:http, same verbs,
 * keep-alive client), and the model at Kubernetes' limits (5,000 nodes, 150,000 pods) fed one
 * watch event at a time: time and heap (RSS, from fresh processes: npm run bench:memory).
 *
 * Options (environment): BENCH_ITERATIONS (default 40), BENCH_SIZES (default "1000,5000").
 */
import { createServer, request as httpRequest, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { parseConfig } from '../src/config/load.js';
import type { Node, Pod } from '../src/core/kubeObjects.js';
import { applyNode, applyPod, syncModel } from '../src/core/sync.js';
import { buildService } from '../src/runtime/service.js';
import { createApp } from '../src/server/app.js';
import { filterVerb, prioritizeVerb, type VerbDeps } from '../src/server/handlers.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 40);
const SIZES = (process.env.BENCH_SIZES ?? '1000,5000').split(',').map(Number);
const PODS_PER_NODE = 30;
const WARM_UP = 15;

/** Realistic node names, 30–60 characters: EKS, GKE and AKS styles in turn. */
export function nodeName(i: number): string {
  const a = (i * 7919) % 251;
  const b = (i * 104729) % 253;
  switch (i % 3) {
    case 0:
      return `ip-10-${(i >> 8) & 255}-${a}-${b}.eu-west-1.compute.internal`;
    case 1:
      return `gke-prod-sandbox-pool-${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}-${(i % 1000).toString(36)}x${b}`;
    default:
      return `aks-sandboxpool-${String(38472910 + i).padStart(8, '0')}-vmss${(i % 100000).toString(36).padStart(6, '0')}`;
  }
}

function node(i: number): Node {
  const cpus = [16, 64, 192][i % 3]!;
  const name = nodeName(i);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, 'node.kubernetes.io/instance-type': `sandbox-${cpus}cpu`, 'topology.kubernetes.io/zone': `eu-west-1${'abc'[i % 3]}` } },
    status: {
      allocatable: { cpu: `${cpus * 1000 - 80}m`, memory: `${cpus * 4 * 1024 * 1024 - 204800}Ki`, pods: '110', 'ephemeral-storage': '47060071478' },
      capacity: { cpu: String(cpus), memory: `${cpus * 4 * 1024 * 1024}Ki`, pods: '110', 'ephemeral-storage': '98831908Ki' },
    },
  };
}

function pod(name: string, nodeName?: string): Pod {
  return {
    metadata: { name, namespace: 'sandboxes', uid: `uid-${name}`, labels: { app: 'sandbox' } },
    spec: {
      schedulerName: 'sandbox-scheduler',
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: 'sandbox', resources: { requests: { cpu: '250m', memory: '512Mi' } } }],
    },
    status: nodeName ? { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } : { phase: 'Pending' },
  };
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

type Mode = 'NodeNames' | 'Nodes';
type Cycle = 'one call' | 'one call + bind check' | 'two calls';

function setup(size: number, chooseInFilter: boolean) {
  const config = parseConfig({ chooseInFilter });
  // As in cluster mode with the bind verb: each request's candidates are recorded for the bind check.
  const { service, metrics } = buildService(config, { clusterMode: true, bindVerb: true });
  const nodes = Array.from({ length: size }, (_, i) => node(i));
  const pods: Pod[] = [];
  for (let i = 0; i < size * PODS_PER_NODE; i++) pods.push(pod(`bound-${i}`, nodes[i % size]!.metadata!.name));
  syncModel(service.cache, nodes, pods, { pausedLabel: config.pausedLabel });
  // The clock stands still, so the incoming pod's reservation is replaced each call, never expired or piled up.
  const deps: VerbDeps = { service, metrics, pausedLabel: config.pausedLabel, logger: pino({ level: 'silent' }), now: () => 0 };
  return { deps, nodes };
}

/** ExtenderBindingArgs of the incoming pod to `node`. */
const bindText = (node: string) => JSON.stringify({ PodName: 'incoming', PodNamespace: 'sandboxes', PodUID: 'uid-incoming', Node: node });

function requestText(nodes: readonly Node[], mode: Mode): string {
  const args = mode === 'NodeNames' ? { Pod: pod('incoming'), Nodes: null, NodeNames: nodes.map((n) => n.metadata!.name) } : { Pod: pod('incoming'), Nodes: { metadata: {}, items: nodes }, NodeNames: null };
  return JSON.stringify(args);
}

/**
 * The verbs of one cycle, each as parse → verb → reply text (what the HTTP edge does around them). The bind
 * check is the bind verb's decision (the API call that follows it is not the extender's time).
 */
function cycleOf(cycle: Cycle, deps: VerbDeps, text: string): () => string[] {
  switch (cycle) {
    case 'one call':
      return () => [filterVerb(JSON.parse(text), deps).body];
    case 'one call + bind check':
      return () => {
        const reply = filterVerb(JSON.parse(text), deps).body;
        const node = deps.service.cache.reservation('uid-incoming')!.nodeName;
        const args = JSON.parse(bindText(node)) as { PodUID: string; Node: string };
        if (deps.service.authorizeBind(args.PodUID, args.Node, 0) !== null) throw new Error('the bind check refused the chosen node');
        return [reply, '{"Error":""}'];
      };
    case 'two calls':
      return () => [filterVerb(JSON.parse(text), deps).body, prioritizeVerb(JSON.parse(text), deps).body];
  }
}

/** Median of per-iteration verbs/floor ratios, with the two medians, measured interleaved. */
function interleaved(verbs: () => unknown, floor: () => unknown): { verbsMs: number; floorMs: number; ratio: number } {
  for (let i = 0; i < WARM_UP; i++) {
    verbs();
    floor();
  }
  const v: number[] = [];
  const f: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const order = i % 2 === 0 ? [verbs, floor] : [floor, verbs];
    const t: number[] = [];
    for (const fn of order) {
      const start = performance.now();
      fn();
      t.push(performance.now() - start);
    }
    const [tv, tf] = i % 2 === 0 ? [t[0]!, t[1]!] : [t[1]!, t[0]!];
    v.push(tv);
    f.push(tf);
    ratios.push(tv / tf);
  }
  return { verbsMs: median(v), floorMs: median(f), ratio: median(ratios) };
}

function inProcessRow(size: number, mode: Mode, cycle: Cycle): string[] {
  const { deps, nodes } = setup(size, cycle !== 'two calls');
  const text = requestText(nodes, mode);
  const run = cycleOf(cycle, deps, text);
  const replies = run().map((r) => JSON.parse(r) as unknown);
  const requests = cycle === 'one call + bind check' ? [text, bindText(deps.service.cache.reservation('uid-incoming')!.nodeName)] : replies.map(() => text);
  const floor = () => {
    replies.forEach((reply, i) => {
      JSON.parse(requests[i]!);
      JSON.stringify(reply);
    });
  };
  const { verbsMs, floorMs, ratio } = interleaved(run, floor);
  return [String(size), mode, cycle, `${(text.length / 1024 / 1024).toFixed(2)} MB`, floorMs.toFixed(3), verbsMs.toFixed(3), ratio.toFixed(2)];
}

/** The same verbs behind bare node:http: read the body, JSON.parse, verb, write the text. */
function bareServer(deps: VerbDeps): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      const reply = req.url === '/filter' ? filterVerb(body, deps) : prioritizeVerb(body, deps);
      res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    });
  });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function post(agent: Agent, port: number, verb: string, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ agent, host: '127.0.0.1', port, path: `/${verb}`, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${verb} answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/** express vs bare node:http for the one-call cycle over node names, interleaved. */
async function httpRow(size: number): Promise<string[]> {
  const { deps, nodes } = setup(size, true);
  const text = requestText(nodes, 'NodeNames');
  const express = createApp(deps, { maxRequestBodyBytes: 256 * 1024 * 1024 }).listen(0, '127.0.0.1');
  await new Promise((resolve) => express.once('listening', resolve));
  const expressPort = (express.address() as AddressInfo).port;
  const bare = bareServer(deps);
  const barePort = await listen(bare);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call = (port: number) => post(agent, port, 'filter', text);
  for (let i = 0; i < WARM_UP; i++) {
    await call(expressPort);
    await call(barePort);
  }
  const e: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const te = i % 2 === 0 ? await timeAsync(() => call(expressPort)) : 0;
    const tb = await timeAsync(() => call(barePort));
    const te2 = i % 2 === 1 ? await timeAsync(() => call(expressPort)) : te;
    e.push(te2);
    b.push(tb);
    ratios.push(te2 / tb);
  }
  agent.destroy();
  express.closeAllConnections();
  express.close();
  bare.closeAllConnections();
  bare.close();
  return [String(size), median(b).toFixed(3), median(e).toFixed(3), (median(e) - median(b)).toFixed(3), median(ratios).toFixed(2)];
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')).join('\n');
}

/**
 * Memory of the model alone at Kubernetes' limits: objects are converted one at a time, as the
 * watch delivers them, and dropped; heap and RSS are read after a full GC (run with --expose-gc).
 */
function modelAtLimits(nodeCount: number, podCount: number): string {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const config = parseConfig({});
  const { service } = buildService(config);
  const options = { pausedLabel: config.pausedLabel };
  const start = performance.now();
  for (let i = 0; i < nodeCount; i++) applyNode(service.cache, 'ADDED', node(i));
  for (let i = 0; i < podCount; i++) applyPod(service.cache, 'ADDED', pod(`bound-${i}`, nodeName(i % nodeCount)), options);
  const ms = performance.now() - start;
  gc?.();
  const after = process.memoryUsage();
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  const perEvent = (ms * 1000) / (nodeCount + podCount);
  return (
    `model at Kubernetes' limits: ${nodeCount} nodes + ${podCount} pods applied one event at a time in ${ms.toFixed(0)} ms (${perEvent.toFixed(1)} µs per event); ` +
    (gc ? `model heap ${mb(after.heapUsed - before.heapUsed)} (RSS from a fresh process: npm run bench:memory)` : 'memory not measured (run with --expose-gc)') +
    `; ${service.cache.size.pods} compact pod records`
  );
}

async function main(): Promise<void> {
  console.log(`sandbox-extender bench: one scheduling cycle's verbs, median of ${ITERATIONS} interleaved runs, ms (Node ${process.version})`);
  console.log('floor = JSON.parse of each request + JSON.stringify of each reply, measured in the same loop; ratio = median of per-run verbs/floor\n');
  const rows = [['nodes', 'mode', 'cycle', 'body', 'floor ms', 'verbs ms', 'verbs/floor']];
  for (const size of SIZES) {
    for (const mode of ['NodeNames', 'Nodes'] as const) {
      for (const cycle of ['one call', 'one call + bind check', 'two calls'] as const) rows.push(inProcessRow(size, mode, cycle));
    }
  }
  console.log(table(rows));
  console.log('\nHTTP layer: one-call Filter over node names on loopback (keep-alive client), bare node:http vs express 5');
  const httpRows = [['nodes', 'node:http ms', 'express ms', 'express cost ms', 'express/bare']];
  for (const size of SIZES) httpRows.push(await httpRow(size));
  console.log(table(httpRows));
  console.log(`\n${modelAtLimits(5000, 150_000)}`);
}

await main();
