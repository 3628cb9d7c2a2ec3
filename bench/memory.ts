/**
 * `npm run bench -- memory`: the extender's memory at Kubernetes' limits (5,000 nodes, 150,000 pods), each figure
 * from a fresh process: the model fed through the informer side, a snapshot dump read as a stream, and with
 * `--cluster PODS` the extender's RSS and cold starts on KWOK nodes. The parts and the figures:
 * docs/benchmarks.md#memory. Options: --nodes N (5000), --pods N (150000), --cluster PODS, --cold-starts N (3),
 * --keep (keep the dump), --locality (the model with template locality on; the fixtures' node reports 8 images,
 * its pod has no template label).
 */
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { loadConfig, parseConfig } from '../src/config/load.js';
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import { recordOptions } from '../src/runtime/cacheDoors.js';
import { buildExtender } from '../src/runtime/extender.js';
import type { V1Pod } from '@kubernetes/client-node';
import { createPods, ensureNamespace, Kube } from '../test/e2e/kit/adminClient.js';
import { readClusterEnv, script, STATE_DIR, waitUntil } from '../test/e2e/kit/controlPlane.js';
import { existingFile, exitOnUsage, positiveInt } from './cliOptions.js';
import { feedThroughInformer } from './informer.js';
import { startReport, textTable, writeReport } from './report.js';
import type { Table } from './results.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..', '..');
const CLI = join(REPO, 'bin', 'sandbox-extender.js');
const FIXTURES = join(REPO, 'test', 'fixtures');
const MB = 1024 * 1024;
/** The cluster part's namespace and the pods' app label. */
const NAMESPACE = 'memory-bench';
/** Pod creates in flight (keep-alive connections of the kit's admin client). */
const CREATES_IN_FLIGHT = 32;
/** This file run as a program (a test imports it for its tables). */
const MAIN = import.meta.url === `file://${process.argv[1]}`;

const opts = new Command('bench:memory')
  .exitOverride(exitOnUsage)
  .description("the extender's memory at Kubernetes' limits, each figure from a fresh process (see bench/memory.ts)")
  .option('--nodes <n>', 'nodes of the model and the dump', positiveInt, 5000)
  .option('--pods <n>', 'pods of the model and the dump', positiveInt, 150_000)
  .option(
    '--cluster <pods>',
    'part 3 only: a local control plane of --nodes KWOK nodes holding this many bound pods (not in CI)',
    positiveInt,
  )
  .option('--cold-starts <n>', 'with --cluster: extender restarts timed from start to /readyz', positiveInt, 3)
  .option(
    '--reuse',
    'with --cluster: the cluster that is up (its memory-bench pods counted, the missing ones created), left running',
    false,
  )
  .option(
    '--extender-config <file>',
    'with --cluster: the config file of the restarted extender (e.g. another watch.pageSize)',
    existingFile,
  )
  .option('--keep', 'keep the snapshot dump', false)
  .option('--locality', 'part 1 with template locality on', false)
  .addOption(new Option('--part <part>').choices(['model', 'whole-file']).hideHelp()) // internal: the child-process parts
  .addOption(new Option('--file <file>').hideHelp())
  .parse(MAIN ? process.argv : [])
  .opts<{
    nodes: number;
    pods: number;
    cluster?: number;
    coldStarts: number;
    reuse: boolean;
    extenderConfig?: string;
    keep: boolean;
    locality: boolean;
    part?: 'model' | 'whole-file';
    file?: string;
  }>();
const NODES = opts.nodes;
const PODS = opts.pods;

function fixture<T>(path: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, path), 'utf8')) as T;
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
function rssOf(pid: number | 'self'): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Part 1, in its own process: the cache fed one watch event at a time through production's informer side (bench/informer.ts). */
async function modelPart(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  const node = fixture<Node & { metadata: { name: string } }>('nodes/gke-e2-standard-4.json');
  const pod = fixture<Pod & { metadata: { name: string; uid: string }; spec: { nodeName: string } }>(
    'pods/running-ready-coredns.json',
  );
  gc();
  const before = process.memoryUsage();
  const config = parseConfig(opts.locality ? { locality: { enabled: true } } : {});
  const { service, updates } = buildExtender(config, { clusterMode: true });
  const nodeNamed = (i: number) => `gke-prod-sandbox-pool-${i.toString(16).padStart(8, '0')}-node`;
  const ms = await feedThroughInformer(
    updates,
    service.cache.dims,
    config.pausedLabel,
    {
      watched: {
        count: NODES,
        object: (i) => {
          const copy = structuredClone(node);
          copy.metadata.name = nodeNamed(i);
          return copy;
        },
      },
    },
    {
      watched: {
        count: PODS,
        object: (i) => {
          const copy = structuredClone(pod);
          copy.metadata.name = `sandbox-${i}`;
          copy.metadata.uid = `5c6a0b1e-${i.toString(16).padStart(8, '0')}-4f7e-9c2d-0a1b2c3d4e5f`;
          copy.spec.nodeName = nodeNamed(i % NODES);
          return copy;
        },
      },
    },
    recordOptions(config).locality,
  );
  gc();
  const after = process.memoryUsage();
  const { rss, peak } = rssOf('self');
  console.log(
    JSON.stringify({
      ms,
      perEventUs: (ms * 1000) / (NODES + PODS),
      heapMb: (after.heapUsed - before.heapUsed) / MB,
      rssMb: rss,
      peakMb: peak,
      records: service.cache.size,
    }),
  );
}

/** Part 2a, in its own process: the whole file as one string, then JSON.parse. */
function wholeFilePart(file: string): void {
  const start = performance.now();
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { items: unknown[] };
    console.log(
      JSON.stringify({
        ok: true,
        items: doc.items.length,
        seconds: (performance.now() - start) / 1000,
        peakMb: rssOf('self').peak,
      }),
    );
  } catch (err) {
    console.log(
      JSON.stringify({ ok: false, error: (err as Error).message, seconds: (performance.now() - start) / 1000 }),
    );
  }
}

async function writeDump(file: string): Promise<number> {
  const node = fixture<Node & { metadata: { name: string } }>('nodes/gke-e2-standard-4.json');
  const pods = [
    'running-ready-coredns.json',
    'bound-pending-containercreating.json',
    'sidecar-restartable-init.json',
  ].map((f) => fixture<Pod & { metadata: { name: string; uid: string }; spec: { nodeName: string } }>(`pods/${f}`));
  const out = createWriteStream(file);
  const write = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r()));
  await write('{\n    "apiVersion": "v1",\n    "items": [\n');
  let first = true;
  const item = async (o: unknown) => {
    await write(`${first ? '' : ',\n'}${JSON.stringify(o, null, 4)}`);
    first = false;
  };
  for (let i = 0; i < NODES; i++) {
    node.metadata.name = `gke-prod-sandbox-pool-${i.toString(16).padStart(8, '0')}-node`;
    await item(node);
  }
  for (let i = 0; i < PODS; i++) {
    const pod = pods[i % pods.length]!;
    pod.metadata.name = `sandbox-${i}`;
    pod.metadata.uid = `5c6a0b1e-${i.toString(16).padStart(8, '0')}-4f7e-9c2d-0a1b2c3d4e5f`;
    pod.spec.nodeName = `gke-prod-sandbox-pool-${(i % NODES).toString(16).padStart(8, '0')}-node`;
    await item(pod);
  }
  await write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n');
  await new Promise<void>((r) => out.end(() => r()));
  return statSync(file).size;
}

function child(part: string, extra: string[] = []): Record<string, unknown> {
  const out = execFileSync(
    process.execPath,
    [
      '--expose-gc',
      fileURLToPath(import.meta.url),
      '--part',
      part,
      '--nodes',
      String(NODES),
      '--pods',
      String(PODS),
      ...extra,
    ],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>;
}

/** Part 2b: the built CLI serving the dump. */
async function serveDump(file: string): Promise<{ seconds: number; rss: number; peak: number; objects: string }> {
  const port = 18000 + Math.floor(Math.random() * 1000);
  const start = performance.now();
  const proc = spawn(process.execPath, [CLI, 'serve', '--snapshot', file, '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitUntil(
      'the extender to answer',
      600_000,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok === true,
      200,
    );
    const seconds = (performance.now() - start) / 1000;
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const objects = metrics
      .split('\n')
      .filter((l) => l.startsWith('sandbox_extender_snapshot_objects{'))
      .join(', ');
    return { seconds, ...rssOf(proc.pid!), objects };
  } finally {
    proc.kill('SIGTERM');
  }
}

/**
 * One cold start of the e2e cluster's extender (component.sh restart: SIGTERM, start, wait for /readyz): seconds
 * from its start line to /readyz answering 200 (polled every 50 ms: both lists applied, the model built on the main
 * thread), to each initial list applied on the API thread (its `list applied` log lines), and its RSS once ready.
 */
async function coldStart(extenderUrl: string, extenderConfig: string | undefined): Promise<ColdStart> {
  const logFile = join(STATE_DIR, 'logs', 'sandbox-extender.log');
  const from = statSync(logFile).size;
  const ready = async () => (await fetch(`${extenderUrl}/readyz`).catch(() => null))?.ok === true;
  // A cold start at 150,000 pods takes minutes on 2 shared cores: component.sh's 120 s default wait is raised.
  const args = ['restart', 'sandbox-extender', ...(extenderConfig ? ['--config', extenderConfig] : [])];
  const restart = script('component.sh', args, { E2E_START_TIMEOUT: '1800' });
  while (await ready()) await new Promise((r) => setTimeout(r, 20)); // the old process goes first
  while (!(await ready())) await new Promise((r) => setTimeout(r, 50));
  const readyMs = Date.now();
  await restart;
  const lines = readFileSync(logFile, 'utf8').slice(from).split('\n');
  const started = lines.map((l) => /^--- e2e (\S+): starting /.exec(l)?.[1]).find((t) => t !== undefined);
  if (!started) throw new Error('no start line in the extender log');
  const startMs = Date.parse(started);
  const listed = new Map<string, { time: number; items: number }>();
  for (const l of lines) {
    if (!l.startsWith('{')) continue;
    const e = JSON.parse(l) as { msg?: string; resource?: string; time?: number; items?: number; relist?: boolean };
    if (e.msg === 'list applied' && e.resource && !e.relist && e.time !== undefined && !listed.has(e.resource))
      listed.set(e.resource, { time: e.time, items: e.items ?? 0 });
  }
  const nodes = listed.get('nodes');
  const pods = listed.get('pods');
  if (!nodes || !pods) throw new Error('the restarted extender logged no initial list of nodes and pods');
  const pid = Number(readFileSync(join(STATE_DIR, 'pids', 'sandbox-extender'), 'utf8').split(' ')[0]);
  return {
    readySeconds: (readyMs - startMs) / 1000,
    nodesSeconds: (nodes.time - startMs) / 1000,
    podsSeconds: (pods.time - startMs) / 1000,
    pods: pods.items,
    ...rssOf(pid),
  };
}

/** Part 3: the extender in cluster mode on a 5,000-node cluster holding `podCount` bound pods. */
async function clusterPart(podCount: number): Promise<void> {
  if (!opts.reuse)
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: `${NODES}x32/128Gi`,
      EXTENDER_BUILD: '0',
      EXTENDER_BIND: '0',
      AGENT_SANDBOX: '0',
    }); // kube-scheduler binds, as the chart installs it
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL']);
    const pid = Number(readFileSync(join(STATE_DIR, 'pids', 'sandbox-extender'), 'utf8').split(' ')[0]);
    const kube = await Kube.connect(env.KUBECONFIG!, CREATES_IN_FLIGHT);
    await ensureNamespace(kube, NAMESPACE);
    const names = (await kube.nodes()).map((n) => n.metadata!.name!);
    // With --reuse the pods a run before created are counted, and only the missing ones made.
    const first = await kube.api.listNamespacedPod({ namespace: NAMESPACE, limit: 1 });
    const made = first.items.length === 0 ? 0 : Number(first.metadata?.remainingItemCount ?? 0) + 1;
    const pods: V1Pod[] = Array.from({ length: Math.max(0, podCount - made) }, (_, k) => ({
      metadata: { name: `fill-${made + k}`, labels: { app: NAMESPACE } },
      spec: {
        nodeName: names[(made + k) % names.length],
        containers: [
          { name: 'c', image: 'example.invalid/none', resources: { requests: { cpu: '10m', memory: '16Mi' } } },
        ],
      },
    }));
    const creation = await createPods(kube, NAMESPACE, pods, CREATES_IN_FLIGHT);
    kube.agent.destroy();
    console.log(
      `created ${pods.length} bound pods (${made} there before) in ${((creation.endMs - creation.startMs) / 1000).toFixed(0)} s`,
    );
    await waitUntil(
      'the extender to hold every pod',
      900_000,
      async () => {
        const metrics = await (await fetch(`${env.EXTENDER_URL}/metrics`)).text();
        const pods = Number(/^sandbox_extender_snapshot_objects\{kind="pod"\} (\d+)/m.exec(metrics)?.[1] ?? 0);
        return pods >= podCount;
      },
      200,
    );
    await new Promise((r) => setTimeout(r, 10_000)); // let the last events settle and a GC run
    const { rss, peak } = rssOf(pid);
    const run: ClusterRun = { nodes: NODES, pods: podCount, rss, peak, pageSize: pageSize(), coldStarts: [] };
    const report = startReport('memory', opts);
    report.runs.push(run);
    console.log(
      `cluster mode: ${NODES} nodes, ${podCount} pods in the extender's cache: RSS ${rss.toFixed(0)} MB, peak ${peak.toFixed(0)} MB`,
    );
    for (let i = 0; i < opts.coldStarts; i++) {
      const cold = await coldStart(env.EXTENDER_URL!, opts.extenderConfig);
      run.coldStarts.push(cold);
      console.log(
        `cold start ${i + 1}: ready ${cold.readySeconds.toFixed(1)} s after the process started (nodes listed and applied at ${cold.nodesSeconds.toFixed(1)} s, ` +
          `${cold.pods} pods at ${cold.podsSeconds.toFixed(1)} s); RSS ${cold.rss.toFixed(0)} MB, peak ${cold.peak.toFixed(0)} MB`,
      );
    }
    report.tables = memoryTables(run);
    for (const t of report.tables) console.log(textTable(t));
    writeReport(report);
  } finally {
    if (!opts.reuse) await script('cluster-down.sh', []);
  }
}

/** One cold start: seconds from the process's start to /readyz and to each initial list applied; RSS MB once ready. */
export interface ColdStart {
  readySeconds: number;
  nodesSeconds: number;
  podsSeconds: number;
  pods: number;
  rss: number;
  peak: number;
}

/** Parts 1 and 2, as the child processes measured them (MB, ms, s). */
export interface ModelRun {
  nodes: number;
  pods: number;
  model: { ms: number; perEventUs: number; heapMb: number; rssMb: number; peakMb: number };
  dumpMb: number;
  whole: { ok: boolean; items?: number; seconds: number; peakMb?: number; error?: string };
  served: { seconds: number; rss: number; peak: number; objects: string };
}

/** Part 3: the extender's RSS with every pod in its cache (MB), its watch.pageSize, its cold starts. */
export interface ClusterRun {
  nodes: number;
  pods: number;
  rss: number;
  peak: number;
  pageSize: number;
  coldStarts: ColdStart[];
}

/** The watch.pageSize of the restarted extender (--extender-config, else the default). */
function pageSize(): number {
  return (opts.extenderConfig ? loadConfig(opts.extenderConfig) : parseConfig({})).watch.pageSize;
}

/**
 * The report's tables of a run: `model` (parts 1 and 2) or `cluster` and `cold-starts` (part 3, one row per cold
 * start, in the columns of bench/results/memory.json's `cold-start`, whose rows are medians per page size).
 */
export function memoryTables(run: ModelRun | ClusterRun): Table[] {
  const mb = (v: number) => `${v.toFixed(0)} MB`;
  if ('model' in run) {
    const { model, whole, served } = run;
    return [
      {
        id: 'model',
        title: `The model and a snapshot dump at ${run.nodes.toLocaleString('en-US')} nodes / ${run.pods.toLocaleString('en-US')} pods, each from a fresh process`,
        columns: ['figure', 'value'],
        rows: [
          ['model fed one watch event at a time, µs per event', model.perEventUs.toFixed(1)],
          ['model heap', mb(model.heapMb)],
          ['process RSS, model (peak)', `${mb(model.rssMb)} (${mb(model.peakMb)})`],
          ['snapshot dump', mb(run.dumpMb)],
          [
            'whole file (readFileSync + JSON.parse)',
            whole.ok ? `${whole.seconds.toFixed(1)} s, peak ${mb(whole.peakMb!)}` : `cannot load: ${whole.error}`,
          ],
          [
            'serve --snapshot until it answers',
            `${served.seconds.toFixed(1)} s, RSS ${mb(served.rss)}, peak ${mb(served.peak)}`,
          ],
        ],
      },
    ];
  }
  const rss: Table = {
    id: 'cluster',
    title: `The extender in cluster mode, ${run.nodes.toLocaleString('en-US')} nodes, ${run.pods.toLocaleString('en-US')} pods in its cache`,
    columns: ['figure', 'value'],
    rows: [['process RSS (peak)', `${mb(run.rss)} (${mb(run.peak)})`]],
  };
  if (run.coldStarts.length === 0) return [rss];
  return [
    rss,
    {
      id: 'cold-starts',
      title: "Cold starts: seconds from the process's start to /readyz",
      columns: [
        'watch.pageSize',
        'peak RSS MB',
        'RSS at ready MB',
        { name: 'ready s', decimals: 1 },
        { name: 'pods list applied s', decimals: 1 },
      ],
      rows: run.coldStarts.map((c) => [
        String(run.pageSize),
        Math.round(c.peak),
        Math.round(c.rss),
        c.readySeconds,
        c.podsSeconds,
      ]),
    },
  ];
}

async function main(): Promise<void> {
  if (opts.part === 'model') return modelPart();
  if (opts.part === 'whole-file') return wholeFilePart(opts.file!);
  if (opts.cluster !== undefined) return clusterPart(opts.cluster);

  const report = startReport('memory', opts);
  console.log(
    `sandbox-extender memory bench (Node ${process.version}): ${NODES} nodes, ${PODS} pods, each figure from a fresh process`,
  );
  const model = child('model', opts.locality ? ['--locality'] : []) as ModelRun['model'];
  console.log(
    `1. model fed one watch event at a time${opts.locality ? ' (template locality on)' : ''}: ${Number(model.ms).toFixed(0)} ms (${Number(model.perEventUs).toFixed(1)} µs per event); ` +
      `heap of the model ${Number(model.heapMb).toFixed(0)} MB; process RSS ${Number(model.rssMb).toFixed(0)} MB (peak ${Number(model.peakMb).toFixed(0)} MB)`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-memory-'));
  try {
    const file = join(dir, 'dump.json');
    const writeStart = performance.now();
    const bytes = await writeDump(file);
    console.log(
      `2. kubectl-style dump: ${(bytes / MB).toFixed(0)} MB (written in ${((performance.now() - writeStart) / 1000).toFixed(0)} s)`,
    );
    const whole = child('whole-file', ['--file', file]) as ModelRun['whole'];
    console.log(
      `   a. whole file (readFileSync + JSON.parse): ${whole.ok ? `loaded ${String(whole.items)} items in ${Number(whole.seconds).toFixed(1)} s, peak RSS ${Number(whole.peakMb).toFixed(0)} MB` : `cannot load: ${String(whole.error)}`}`,
    );
    const served = await serveDump(file);
    console.log(
      `   b. serve --snapshot (stream → records): answering after ${served.seconds.toFixed(1)} s; RSS ${served.rss.toFixed(0)} MB, peak ${served.peak.toFixed(0)} MB; ${served.objects}`,
    );
    const run: ModelRun = { nodes: NODES, pods: PODS, model, dumpMb: bytes / MB, whole, served };
    report.runs.push(run);
    report.tables = memoryTables(run);
    writeReport(report);
  } finally {
    if (opts.keep) console.log(`dump kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

if (MAIN) await main();
