/**
 * `npm run bench`: the cost of one scheduling cycle's extender calls (filter + prioritize) for
 * 1,000 and 5,000 candidate nodes, in process and over HTTP on loopback, next to the protocol
 * floor: merely JSON.parse + JSON.stringify of the same request bodies. Figures are medians of
 * repeated runs; ratios are against the floor measured in the same run. Also prints the time and
 * memory of the model at Kubernetes' limits (5,000 nodes, 150,000 pods), fed one event at a time.
 *
 * Options (environment): BENCH_ITERATIONS (default 30), BENCH_SIZES (default "1000,5000").
 */
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { parseConfig } from '../src/config/load.js';
import type { Node, Pod } from '../src/core/kube.js';
import { applyNode, applyPod, syncModel } from '../src/core/sync.js';
import { createApp } from '../src/server/app.js';
import { filterVerb, prioritizeVerb, type VerbDeps } from '../src/server/handlers.js';
import { buildService } from '../src/server/serve.js';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 30);
const SIZES = (process.env.BENCH_SIZES ?? '1000,5000').split(',').map(Number);
const PODS_PER_NODE = 30;

function node(i: number): Node {
  const cpus = [16, 64, 192][i % 3]!;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: `node-${i}`, labels: { 'kubernetes.io/hostname': `node-${i}`, 'node.kubernetes.io/instance-type': `sandbox-${cpus}cpu` } },
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

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function time(fn: () => unknown | Promise<unknown>): Promise<number> {
  for (let i = 0; i < 20; i++) await fn(); // warm-up (let the JIT settle)
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

function setup(size: number) {
  const config = parseConfig({});
  const { service, metrics } = buildService(config);
  const nodes = Array.from({ length: size }, (_, i) => node(i));
  const pods: Pod[] = [];
  for (let i = 0; i < size * PODS_PER_NODE; i++) pods.push(pod(`bound-${i}`, `node-${i % size}`));
  syncModel(service.model, nodes, pods, { pausedLabel: config.pausedLabel });
  const deps: VerbDeps = { service, metrics, pausedLabel: config.pausedLabel, logger: pino({ level: 'silent' }), now: () => 0 };
  return { deps, nodes };
}

async function benchSize(size: number, mode: 'NodeNames' | 'Nodes'): Promise<string[]> {
  const { deps, nodes } = setup(size);
  const args = mode === 'NodeNames' ? { Pod: pod('incoming'), Nodes: null, NodeNames: nodes.map((n) => n.metadata!.name) } : { Pod: pod('incoming'), Nodes: { metadata: {}, items: nodes }, NodeNames: null };
  const text = JSON.stringify(args);

  const floor = await time(() => {
    for (let i = 0; i < 2; i++) JSON.stringify(JSON.parse(text));
  });
  const inProcess = await time(() => {
    JSON.stringify(filterVerb(JSON.parse(text), deps).body);
    JSON.stringify(prioritizeVerb(JSON.parse(text), deps).body);
  });

  const app = createApp(deps, { maxRequestBodyBytes: 256 * 1024 * 1024, ready: () => true });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  const post = async (verb: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/${verb}`, { method: 'POST', body: text, headers: { 'content-type': 'application/json' } });
    if (res.status !== 200) throw new Error(`${verb} answered ${res.status}`);
    await res.arrayBuffer();
  };
  const overHttp = await time(async () => {
    await post('filter');
    await post('prioritize');
  });
  server.closeAllConnections();
  server.close();

  const mb = (text.length / 1024 / 1024).toFixed(2);
  return [
    `${size}`,
    mode,
    `${mb} MB`,
    floor.toFixed(2),
    inProcess.toFixed(2),
    overHttp.toFixed(2),
    (inProcess / floor).toFixed(2),
    (overHttp / floor).toFixed(2),
  ];
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padStart(widths[c]!)).join('  ')).join('\n');
}

async function main(): Promise<void> {
  console.log(`sandbox-extender bench: filter + prioritize per scheduling cycle, median of ${ITERATIONS} runs, ms (Node ${process.version})`);
  console.log('floor = JSON.parse + JSON.stringify of the two request bodies; ratios are against the floor of the same row\n');
  const rows = [['nodes', 'mode', 'body', 'floor ms', 'in-process ms', 'http ms', 'in-process/floor', 'http/floor']];
  for (const size of SIZES) {
    for (const mode of ['NodeNames', 'Nodes'] as const) rows.push(await benchSize(size, mode));
  }
  console.log(table(rows));

  modelAtLimits(5000, 150_000);
}

/**
 * Memory of the model alone at Kubernetes' limits: objects are converted one at a time, as the
 * watch delivers them, and dropped; the heap is measured after a full GC (run with --expose-gc).
 */
function modelAtLimits(nodeCount: number, podCount: number): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapStart = process.memoryUsage().heapUsed;
  const config = parseConfig({});
  const { service } = buildService(config);
  const options = { pausedLabel: config.pausedLabel };
  const start = performance.now();
  for (let i = 0; i < nodeCount; i++) applyNode(service.model, 'ADDED', node(i));
  for (let i = 0; i < podCount; i++) applyPod(service.model, 'ADDED', pod(`bound-${i}`, `node-${i % nodeCount}`), options);
  const ms = performance.now() - start;
  gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heapStart) / 1024 / 1024;
  const perEvent = (ms * 1000) / (nodeCount + podCount);
  console.log(
    `\nmodel at Kubernetes' limits: ${nodeCount} nodes + ${podCount} pods applied one event at a time in ${ms.toFixed(0)} ms (${perEvent.toFixed(1)} µs per event); ` +
      `model heap ${gc ? `${heapMb.toFixed(0)} MB` : 'not measured (run with --expose-gc)'}; ${service.model.pods.size} compact pod records`,
  );
}

await main();
