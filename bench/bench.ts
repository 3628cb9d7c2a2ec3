/**
 * `npm run bench -- verbs`: the in-process figures, each beside the goal it answers, with its baseline measured
 * in the same run: each verb against its JSON floor, the ranking, the HTTP layer and the model at Kubernetes'
 * limits, every cache filled through the informer side. The parts, their baselines and the options:
 * docs/benchmarks.md#in-process.
 */
import { createServer, request as httpRequest, Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { parseConfig } from '../src/config/load.js';
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import { Placer } from '../src/core/fit/placer.js';
import { toPodRecord } from '../src/core/objects/records.js';
import { CandidateScan } from '../src/core/fit/scan.js';
import { benchNode, benchPod, nodeName } from './fixtures.js';
import { recordOptions } from '../src/runtime/cacheDoors.js';
import { buildExtender } from '../src/runtime/extender.js';
import { createApp } from '../src/server/app.js';
import { filterVerb, prioritizeVerb, type VerbDeps } from '../src/server/handlers.js';
import { Command } from 'commander';
import { exitOnUsage, listOf, oneOf, positiveInt } from './cliOptions.js';
import { feedThroughInformer } from './informer.js';
import { startReport, tableOf, textTable, writeReport } from './report.js';
import { formatDate, type Table } from './results.js';

const PART_NAMES = ['verbs', 'ranking', 'http', 'model'] as const;

/** The options, parsed from `argv` (none: the defaults). @throws through exitOnUsage on a usage error. */
function parseOptions(argv: readonly string[]): {
  iterations: number;
  sizes: number[];
  parts: (typeof PART_NAMES)[number][];
  locality: boolean;
} {
  return new Command('bench:verbs')
    .exitOverride(exitOnUsage)
    .description(
      "one scheduling cycle's verbs in process and over HTTP against their floors; the model at Kubernetes' limits",
    )
    .option('--iterations <n>', 'interleaved runs of each figure', positiveInt, 40)
    .option('--sizes <counts>', 'candidate node counts', listOf(positiveInt), [1000, 5000])
    .option('--parts <list>', 'what to measure', listOf(oneOf(PART_NAMES)), [...PART_NAMES])
    .option('--locality', 'the verbs with template locality on (nodes report images, pods carry templates)', false)
    .parse(argv, { from: 'user' })
    .opts();
}

const IS_MAIN = import.meta.url === `file://${process.argv[1]}`;
const OPTIONS = parseOptions(IS_MAIN ? process.argv.slice(2) : []);
const ITERATIONS = OPTIONS.iterations;
/** The default bounds of a verb's body (server.maxRequestDepth, maxRequestElements), as serve applies them. */
const BODY_BOUNDS = (({ maxRequestDepth, maxRequestElements }) => ({ maxRequestDepth, maxRequestElements }))(
  parseConfig({}).server,
);
const SIZES = OPTIONS.sizes;
const PARTS = new Set(OPTIONS.parts);
const LOCALITY = OPTIONS.locality;
const TEMPLATE_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
/** With --locality: node i reports these images (lib-j for j in i..i+9 mod 40), 100–1,000 MB. */
const nodeImages = (i: number) =>
  Array.from({ length: 10 }, (_, k) => ({
    names: [`registry.example/lib-${(i + k) % 40}:v1`],
    sizeBytes: (100 + ((i + k) % 10) * 100) * 1_000_000,
  }));
const PODS_PER_NODE = 30;
const WARM_UP = 15;
/** The goal of the verbs: each at most this many times its floor (JSON.parse of the request + JSON.stringify of the reply). */
const VERB_GOAL = 2;
/** What the Go strategy least_loaded comes from published: µs per selection over 1,000 nodes. */
const PUBLISHED_GO_US = 54.3;

/** The bench node i (fixtures.ts); with --locality it also reports images. */
function node(i: number): Node {
  const n = benchNode(i);
  return LOCALITY ? { ...n, status: { ...n.status, images: nodeImages(i) } as Node['status'] } : n;
}

/** The bench pod (fixtures.ts); with --locality, 20 templates among the bound pods, the incoming pod's template and image tmpl-7 / lib-3. */
function pod(name: string, nodeName?: string): Pod {
  const p = benchPod(name, nodeName);
  if (!LOCALITY) return p;
  const template = nodeName ? `tmpl-${Number(name.replace(/\D/g, '')) % 20}` : 'tmpl-7';
  const containers = (p.spec!.containers ?? []).map((c) => ({ ...c, image: 'registry.example/lib-3:v1' }));
  return {
    ...p,
    metadata: { ...p.metadata, labels: { ...p.metadata!.labels, [TEMPLATE_LABEL]: template } },
    spec: { ...p.spec!, containers },
  };
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** An extender of `size` nodes with 30 bound pods each, its cache filled by the informer side's initial lists, as in cluster mode. */
async function setup(size: number, chooseInFilter: boolean) {
  const config = parseConfig({ chooseInFilter, ...(LOCALITY ? { locality: { enabled: true } } : {}) });
  // As in cluster mode with the bind verb: each request's candidates are recorded for the bind check.
  const { service, metrics, updates } = buildExtender(config, { clusterMode: true, bindVerb: true });
  await feedThroughInformer(
    updates,
    service.cache.dims,
    config.pausedLabel,
    { listed: { count: size, object: node } },
    {
      listed: { count: size * PODS_PER_NODE, object: (i) => pod(`bound-${i}`, nodeName(i % size)) },
    },
    recordOptions(config).locality,
  );
  // The clock stands still, so the incoming pod's reservation is replaced each call, never expired or piled up.
  const deps: VerbDeps = {
    service,
    metrics,
    pausedLabel: config.pausedLabel,
    logger: pino({ level: 'silent' }),
    now: () => 0,
  };
  return { deps, names: Array.from({ length: size }, (_, i) => nodeName(i)) };
}

/** ExtenderArgs of the incoming pod over `size` node names (nodeCacheCapable: true). */
function requestText(size: number): string {
  const names = Array.from({ length: size }, (_, i) => nodeName(i));
  return JSON.stringify({ Pod: pod('incoming'), Nodes: null, NodeNames: names });
}

/** ExtenderBindingArgs of the incoming pod to `node`. */
const bindText = (node: string) =>
  JSON.stringify({ PodName: 'incoming', PodNamespace: 'sandboxes', PodUID: 'uid-incoming', Node: node });

/**
 * The bind verb's decision for the incoming pod: parse its request, check the node (the API call that follows is
 * not the extender's time). @throws when the check refuses the node Filter chose.
 */
function bindCheck(deps: VerbDeps): string {
  const args = JSON.parse(bindText(deps.service.cache.reservation('uid-incoming')!.nodeName)) as {
    PodUID: string;
    Node: string;
  };
  if (deps.service.authorizeBind(args.PodUID, args.Node, 0) !== null)
    throw new Error('the bind check refused the node Filter chose');
  return '{"Error":""}';
}

/** Median of per-iteration work/floor ratios, with the two medians, measured interleaved. */
function interleaved(work: () => unknown, floor: () => unknown): { workMs: number; floorMs: number; ratio: number } {
  for (let i = 0; i < WARM_UP; i++) {
    work();
    floor();
  }
  const w: number[] = [];
  const f: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const order = i % 2 === 0 ? [work, floor] : [floor, work];
    const t: number[] = [];
    for (const fn of order) {
      const start = performance.now();
      fn();
      t.push(performance.now() - start);
    }
    const [tw, tf] = i % 2 === 0 ? [t[0]!, t[1]!] : [t[1]!, t[0]!];
    w.push(tw);
    f.push(tf);
    ratios.push(tw / tf);
  }
  return { workMs: median(w), floorMs: median(f), ratio: median(ratios) };
}

/** The floor of calls whose request is `text` and whose replies are `replies`: parse each request, stringify each reply. */
function floorOf(text: string, replies: readonly string[]): () => void {
  const parsed = replies.map((r) => JSON.parse(r) as unknown);
  return () => {
    for (const reply of parsed) {
      JSON.parse(text);
      JSON.stringify(reply);
    }
  };
}

export type VerbRow =
  | 'filter, choosing (one call)'
  | 'filter, every feasible (two calls)'
  | 'prioritize (two calls)'
  | 'bind check (the node Filter chose)';

/** One verb over `size` names against its floor: the medians, ms, and the median of the per-iteration ratios. */
export interface VerbFigure {
  size: number;
  verb: VerbRow;
  floorMs: number;
  workMs: number;
  ratio: number;
}

/** The model fed at Kubernetes' limits: feed time, heap growth (null without --expose-gc), pod records. */
export interface ModelFigure {
  nodes: number;
  pods: number;
  ms: number;
  heapBytes: number | null;
  podRecords: number;
}

/** One verb alone over node names, against its own floor. Prioritize follows a Filter of the same pod, as in a two-call cycle. */
async function verbRow(size: number, verb: VerbRow): Promise<VerbFigure> {
  const { deps } = await setup(
    size,
    verb === 'filter, choosing (one call)' || verb === 'bind check (the node Filter chose)',
  );
  const text = requestText(size);
  if (verb === 'prioritize (two calls)' || verb === 'bind check (the node Filter chose)')
    filterVerb(JSON.parse(text), deps);
  const run =
    verb === 'prioritize (two calls)'
      ? () => prioritizeVerb(JSON.parse(text), deps).body
      : verb === 'bind check (the node Filter chose)'
        ? () => bindCheck(deps)
        : () => filterVerb(JSON.parse(text), deps).body;
  const request =
    verb === 'bind check (the node Filter chose)'
      ? bindText(deps.service.cache.reservation('uid-incoming')!.nodeName)
      : text;
  return { size, verb, ...interleaved(run, floorOf(request, [run()])) };
}

// ------------------------------------------------------------------------------------------ ranking

const RANKING_CANDIDATES = 1000;

/**
 * The pods of the ranking's cluster on node `i`: 30 sandboxes of 250m / 512Mi, some starting (not
 * Ready), some paused, one more on every fifth node, so that pressure, every tie-break and the turn
 * among exact ties all take part.
 */
function rankingPods(i: number): Pod[] {
  const starting = (i * 7) % 4;
  const paused = (i * 11) % 3;
  const total = PODS_PER_NODE + (i % 5 === 0 ? 1 : 0);
  return Array.from({ length: total }, (_, k) => {
    const p = pod(`n${i}-s${k}`, nodeName(i));
    const state = k < starting ? 'starting' : k < starting + paused ? 'paused' : 'running';
    return {
      ...p,
      metadata: {
        ...p.metadata,
        labels: { app: 'sandbox', ...(state === 'paused' ? { 'sandbox-extender.io/paused': 'true' } : {}) },
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: state === 'starting' ? 'False' : 'True' }] },
    };
  });
}

/** An extender over the ranking's 1,000 nodes, its cache filled through the informer side's initial lists. */
async function rankingService() {
  const config = parseConfig({ strategy: 'least_loaded', randomSeed: 1 });
  const built = buildExtender(config, { clusterMode: true });
  const pods = Array.from({ length: RANKING_CANDIDATES }, (_, i) => rankingPods(i)).flat();
  await feedThroughInformer(
    built.updates,
    built.service.cache.dims,
    config.pausedLabel,
    { listed: { count: RANKING_CANDIDATES, object: node } },
    { listed: { count: pods.length, object: (i) => pods[i]! } },
  );
  return { ...built, config };
}

/** The incoming pod's record (its request: 250m / 512Mi). */
function incoming(config: ReturnType<typeof parseConfig>, k: number) {
  return toPodRecord(pod(`incoming-${k}`), { names: config.dimensions }, { pausedLabel: config.pausedLabel });
}

/** µs per selection, timed the way Go's harness times (as many selections as fill about a second, then per op). */
function timeSelections(select: () => number): number {
  let sink = 0;
  for (let i = 0; i < 2000; i++) sink += select();
  let n = 1000;
  for (;;) {
    const start = performance.now();
    for (let i = 0; i < n; i++) sink += select();
    const ms = performance.now() - start;
    if (ms >= 1000 || n >= 1e8) return sink === -1 ? NaN : (ms * 1000) / n;
    n = Math.ceil((n * 1100) / Math.max(ms, 1));
  }
}

/**
 * Ranking 1,000 candidates: one selection as the verbs make it (the candidate scan over the cache,
 * then least_loaded's choice), three rounds.
 */
async function rankingUs(): Promise<number> {
  const { service, config } = await rankingService();
  const view = service.cache;
  const names = Array.from({ length: RANKING_CANDIDATES }, (_, i) => nodeName(i));
  const request = incoming(config, 0).request;
  const scan = new CandidateScan((name) => view.nodeInfo(name), view.dims);
  const placer = new Placer('least_loaded', () => 0.5);
  const select = () => placer.choose(scan.run(request, names)).chosen;
  return median(Array.from({ length: 3 }, () => timeSelections(select)));
}

// ------------------------------------------------------------------------------------------ HTTP

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
    const req = httpRequest(
      {
        agent,
        host: '127.0.0.1',
        port,
        path: `/${verb}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${verb} answered ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

/**
 * The verbs behind express 5 with its JSON body parser, as the extender served them before the verbs got a
 * path of their own (kept here only as the comparison).
 */
/**
 * One-call Filter over node names on loopback, each server in turn (order rotating per iteration):
 * bare node:http (the floor) and the extender's own listener (createApp: the verbs' path ahead of express).
 */
async function httpRow(size: number): Promise<string[]> {
  const { deps } = await setup(size, true);
  const text = requestText(size);
  const servers = [
    bareServer(deps),
    createServer(createApp(deps, { ...BODY_BOUNDS, maxRequestBodyBytes: 256 * 1024 * 1024 })),
  ];
  const ports = await Promise.all(servers.map(listen));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const call = (port: number) => post(agent, port, 'filter', text);
  for (let i = 0; i < WARM_UP; i++) for (const port of ports) await call(port);
  const times: number[][] = ports.map(() => []);
  for (let i = 0; i < ITERATIONS; i++) {
    for (let k = 0; k < ports.length; k++) {
      const j = (i + k) % ports.length;
      times[j]!.push(await timeAsync(() => call(ports[j]!)));
    }
  }
  agent.destroy();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  const [bare, own] = times.map((t) => median(t));
  return [String(size), bare!.toFixed(3), own!.toFixed(3), (own! / bare!).toFixed(2)];
}

/**
 * The model alone at Kubernetes' limits: every Node and Pod delivered as a watch event, one at a time,
 * through production's informer side (each object converted to a record and dropped); heap read after
 * a full GC (run with --expose-gc).
 */
async function modelAtLimits(nodeCount: number, podCount: number): Promise<ModelFigure> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  const config = parseConfig({});
  const { service, updates } = buildExtender(config, { clusterMode: true });
  const ms = await feedThroughInformer(
    updates,
    service.cache.dims,
    config.pausedLabel,
    { watched: { count: nodeCount, object: node } },
    {
      watched: { count: podCount, object: (i) => pod(`bound-${i}`, nodeName(i % nodeCount)) },
    },
  );
  gc?.();
  const heapBytes = gc ? process.memoryUsage().heapUsed - before.heapUsed : null;
  return { nodes: nodeCount, pods: podCount, ms, heapBytes, podRecords: service.cache.size.pods };
}

// ------------------------------------------------------------------------------------------ the report

/** What one run measured, each part empty or null where --parts left it out; http as printed (header first). */
export interface VerbsFigures {
  /** The day of the run, YYYY-MM-DD. */
  day: string;
  verbs: VerbFigure[];
  rankingUs: number | null;
  http: string[][];
  model: ModelFigure | null;
}

const HTTP_TITLE =
  "HTTP layer: one-call Filter over node names on loopback (keep-alive client): bare node:http against the extender's listener (the verbs' own path)";

const VERBS_COLUMNS: Table['columns'] = [
  'nodes',
  'verb',
  { name: 'floor ms', decimals: 3 },
  { name: 'verb ms', decimals: 3 },
  { name: '×floor', decimals: 2 },
  'measured',
  'before',
];

/** The verbs against their floors, as bench/results/verbs.json's table `verbs`. */
export function verbsTable(verbs: readonly VerbFigure[], day: string): Table {
  const measured = formatDate(day).replace(/ \d+$/, '');
  return {
    id: 'verbs',
    title: `Each verb over node names (nodeCacheCapable: true) against its own floor, medians; goal ≤ ${VERB_GOAL}× the floor`,
    columns: VERBS_COLUMNS,
    rows: verbs.map((v) => [v.size.toLocaleString('en-US'), v.verb, v.floorMs, v.workMs, v.ratio, measured, null]),
  };
}

const perEventUs = (m: ModelFigure): number => (m.ms * 1000) / (m.nodes + m.pods);
const heapMb = (m: ModelFigure): string | null =>
  m.heapBytes === null ? null : (m.heapBytes / 1024 / 1024).toFixed(0);

/** The ranking against the Go strategy's published figure. */
export function rankingTable(us: number): Table {
  return tableOf(
    'ranking',
    `Ranking ${RANKING_CANDIDATES} candidates (candidate scan + least_loaded choice, no JSON)`,
    [
      ['implementation', 'µs per selection', `vs ${PUBLISHED_GO_US} µs published`],
      ['sandbox-extender (TypeScript): scan + least_loaded', us.toFixed(2), (us / PUBLISHED_GO_US).toFixed(3)],
      ['the Go strategy least_loaded, as published (its machine)', PUBLISHED_GO_US.toFixed(2), '1.000'],
    ],
  );
}

/** The model at Kubernetes' limits. */
export function modelTable(m: ModelFigure): Table {
  return {
    id: 'model',
    title: `The model at Kubernetes' limits: ${m.nodes} nodes + ${m.pods} pods delivered as watch events through the informer side`,
    columns: ['figure', 'value'],
    rows: [
      ['feed ms', m.ms.toFixed(0)],
      ['µs per event', perEventUs(m).toFixed(1)],
      [
        'model heap MB (RSS from a fresh process: npm run bench -- memory model)',
        heapMb(m) ?? 'not measured (run with --expose-gc)',
      ],
      ['compact pod records', String(m.podRecords)],
    ],
  };
}

/**
 * The report's tables of a run: `verbs` and `ranking-model` as bench/results/verbs.json has them (the latter when
 * both parts ran), and the parts' own (ranking, http, model).
 */
export function verbsTables(f: VerbsFigures): Table[] {
  const tables: Table[] = [];
  if (f.verbs.length > 0) tables.push(verbsTable(f.verbs, f.day));
  if (f.rankingUs !== null) tables.push(rankingTable(f.rankingUs));
  if (f.http.length > 1) tables.push(tableOf('http', HTTP_TITLE, f.http));
  if (f.model) tables.push(modelTable(f.model));
  if (f.rankingUs !== null && f.model) {
    tables.push({
      id: 'ranking-model',
      title: `Ranking ${RANKING_CANDIDATES} candidates and the model at Kubernetes' limits`,
      columns: ['figure', 'value', 'reference'],
      rows: [
        [
          'ranking, µs per selection',
          f.rankingUs.toFixed(1),
          `${PUBLISHED_GO_US} (the Go strategy it comes from, as published)`,
        ],
        ['model feed, µs per event', perEventUs(f.model).toFixed(1), null],
        ['model heap, MB', heapMb(f.model), null],
      ],
    });
  }
  return tables;
}

async function main(): Promise<void> {
  const report = startReport('verbs', OPTIONS);
  const f: VerbsFigures = {
    day: report.startedAt.slice(0, 10),
    verbs: [],
    rankingUs: null,
    http: [],
    model: null,
  };
  const show = (t: Table) => console.log(`${textTable(t)}\n`);
  console.log(
    `sandbox-extender bench (Node ${process.version}): median of ${ITERATIONS} interleaved runs, ms; every cache filled through the informer side; template locality ${LOCALITY ? 'on' : 'off'}`,
  );
  console.log(
    'floor = JSON.parse of each request + JSON.stringify of each reply, measured in the same loop; ratio = median of per-run work/floor\n',
  );
  if (PARTS.has('verbs')) {
    for (const size of SIZES) {
      for (const verb of [
        'filter, choosing (one call)',
        'filter, every feasible (two calls)',
        'prioritize (two calls)',
        'bind check (the node Filter chose)',
      ] as const)
        f.verbs.push(await verbRow(size, verb));
    }
    show(verbsTable(f.verbs, f.day));
  }
  if (PARTS.has('ranking')) {
    f.rankingUs = await rankingUs();
    show(rankingTable(f.rankingUs));
  }
  if (PARTS.has('http')) {
    f.http.push(['nodes', 'node:http ms', 'extender ms', 'extender/bare']);
    for (const size of SIZES) f.http.push(await httpRow(size));
    show(tableOf('http', HTTP_TITLE, f.http));
  }
  if (PARTS.has('model')) {
    f.model = await modelAtLimits(5000, 150_000);
    show(modelTable(f.model));
  }
  report.runs.push(f);
  report.tables = verbsTables(f);
  writeReport(report);
}

if (IS_MAIN) await main();
