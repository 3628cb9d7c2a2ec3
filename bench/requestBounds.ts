/**
 * `npm run bench -- bounds`: what the request bounds (src/jsonBounds.ts) cost against JSON.parse on realistic
 * requests at 5,000 candidate nodes — node names, full Node objects, Nodes with 50 images — and how soon they
 * refuse hostile bodies. The requests and the method: docs/benchmarks.md#request-bounds.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseConfig } from '../src/config/load.js';
import type { Node } from '../src/core/objects/kubeObjects.js';
import { JsonBounds } from '../src/jsonBounds.js';
import { Command } from 'commander';
import { exitOnUsage, positiveInt } from './cliOptions.js';
import { nodeName } from './fixtures.js';
import { median } from './clusterStats.js';
import { startReport, writeReport } from './report.js';
import type { Table } from './results.js';

const IS_MAIN = import.meta.url === `file://${process.argv[1]}`;
/** The options (none: the defaults). */
const OPTIONS = new Command('bench:bounds')
  .exitOverride(exitOnUsage)
  .description("what real requests hold and what the request bounds' one pass over a body costs; hostile bodies")
  .option('--iterations <n>', 'runs of each figure', positiveInt, 30)
  .option('--nodes <n>', 'candidate nodes of each request', positiveInt, 5000)
  .parse(IS_MAIN ? process.argv.slice(2) : [], { from: 'user' })
  .opts<{ iterations: number; nodes: number }>();
const ITERATIONS = OPTIONS.iterations;
const NODES = OPTIONS.nodes;
const PIECE = 64 * 1024;
const ROOT = new URL('../../', import.meta.url);
const defaults = parseConfig({}).server;

/** The bounds pass over `bytes` in socket-sized pieces, with the default bounds; its result. */
function scan(
  bytes: Buffer,
  maxDepth = defaults.maxRequestDepth,
  maxElements = defaults.maxRequestElements,
): { bounds: JsonBounds; result: string | null; read: number } {
  const bounds = new JsonBounds(maxDepth, maxElements, defaults.maxObjectMembers);
  let result: string | null = null;
  let read = 0;
  for (let at = 0; at < bytes.length && result === null; at += PIECE) {
    const piece = bytes.subarray(at, at + PIECE);
    result = bounds.push(piece);
    read += piece.length;
  }
  return { bounds, result, read };
}

function realNodes(): Node[] {
  const dir = new URL('test/fixtures/nodes/', ROOT);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as Node);
}

/** Node i: real node i mod 12, renamed (metadata.name and its hostname label). */
function nodeAt(real: readonly Node[], i: number, images?: number): Node {
  const node = structuredClone(real[i % real.length]!) as {
    metadata: { name: string; labels?: Record<string, string> };
    status?: { images?: { names: string[]; sizeBytes: number }[] };
  };
  const name = nodeName(i);
  node.metadata.name = name;
  if (node.metadata.labels?.['kubernetes.io/hostname']) node.metadata.labels['kubernetes.io/hostname'] = name;
  if (images !== undefined && node.status) {
    const have = node.status.images ?? [];
    node.status.images = Array.from(
      { length: images },
      (_, k) =>
        have[k] ?? {
          names: [
            `registry.example.com/team-${k % 7}/service-${k}@sha256:${((k * 2654435761) >>> 0).toString(16).padStart(64, '0')}`,
            `registry.example.com/team-${k % 7}/service-${k}:v1.${k}.0`,
          ],
          sizeBytes: 50_000_000 + k * 1_000_003,
        },
    );
  }
  return node as Node;
}

function request(kind: 'names' | 'nodes' | 'nodes50'): Buffer {
  const pod = JSON.parse(readFileSync(new URL('examples/pod.json', ROOT), 'utf8')) as unknown;
  if (kind === 'names')
    return Buffer.from(
      JSON.stringify({ Pod: pod, Nodes: null, NodeNames: Array.from({ length: NODES }, (_, i) => nodeName(i)) }),
    );
  const real = realNodes();
  const items = Array.from({ length: NODES }, (_, i) => nodeAt(real, i, kind === 'nodes50' ? 50 : undefined));
  return Buffer.from(JSON.stringify({ Pod: pod, Nodes: { metadata: {}, items }, NodeNames: null }));
}

/** One real request: its size, depth and elements, the medians of JSON.parse and of the bounds pass, their ratio. */
export interface RequestFigure {
  label: string;
  bytes: number;
  depth: number;
  elements: number;
  parseMs: number;
  passMs: number;
  ratio: number;
  refused: string | null;
}

/** One hostile body: the bound that refused it (null: none), the bytes read until then, the median µs. */
export interface HostileFigure {
  label: string;
  bytes: number;
  refused: string | null;
  read: number;
  us: number;
}

function measure(label: string, bytes: Buffer): RequestFigure {
  const text = bytes.toString('utf8');
  const { bounds, result } = scan(bytes, Infinity, Infinity);
  const parse: number[] = [];
  const pass: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    let p = 0;
    let s = 0;
    const runParse = () => {
      const start = performance.now();
      JSON.parse(text);
      p = performance.now() - start;
    };
    const runScan = () => {
      const start = performance.now();
      scan(bytes, Infinity, Infinity);
      s = performance.now() - start;
    };
    if (i % 2) {
      runParse();
      runScan();
    } else {
      runScan();
      runParse();
    }
    parse.push(p);
    pass.push(s);
    ratios.push(s / p);
  }
  const f: RequestFigure = {
    label,
    bytes: bytes.length,
    depth: bounds.maxDepthSeen,
    elements: bounds.elements,
    parseMs: median(parse)!,
    passMs: median(pass)!,
    ratio: median(ratios)!,
    refused: result ?? null,
  };
  console.log(
    `${label.padEnd(28)} ${(f.bytes / 1e6).toFixed(2).padStart(7)} MB  depth ${String(f.depth).padStart(3)}  elements ${String(f.elements).padStart(9)}  ` +
      `JSON.parse ${f.parseMs.toFixed(2).padStart(7)} ms  bounds pass ${f.passMs.toFixed(2).padStart(6)} ms  ×parse ${f.ratio.toFixed(3)}${result ? `  (${result})` : ''}`,
  );
  return f;
}

function hostile(label: string, bytes: Buffer): HostileFigure {
  const times: number[] = [];
  let outcome = scan(bytes);
  for (let i = 0; i < ITERATIONS; i++) {
    const start = performance.now();
    outcome = scan(bytes);
    times.push(performance.now() - start);
  }
  const f = {
    label,
    bytes: bytes.length,
    refused: outcome.result ?? null,
    read: outcome.read,
    us: median(times)! * 1000,
  };
  console.log(
    `${label.padEnd(36)} ${(f.bytes / 1e6).toFixed(0).padStart(3)} MB  refused: ${f.refused ?? 'no'} after ${f.read} bytes read, ${f.us.toFixed(0)} µs`,
  );
  return f;
}

/** The tables `requests` and `hostile` of bench/results/bounds.json (the later runs' column left empty). */
export function boundsTables(requests: readonly RequestFigure[], hostiles: readonly HostileFigure[]): Table[] {
  return [
    {
      id: 'requests',
      title: 'Real requests: JSON.parse alone against the bounds pass over the same bytes in 64 KiB pieces',
      columns: [
        'request',
        'size',
        'depth',
        'elements',
        'JSON.parse ms',
        'bounds pass ms',
        '×parse',
        '×parse, two later runs with maxObjectMembers',
      ],
      rows: requests.map((r) => [
        r.label,
        `${(r.bytes / 1e6).toFixed(2)} MB`,
        r.depth,
        r.elements,
        r.parseMs.toFixed(2),
        r.passMs.toFixed(2),
        r.ratio.toFixed(3),
        null,
      ]),
    },
    {
      id: 'hostile',
      title: `Hostile ${(Math.max(...hostiles.map((h) => h.bytes)) / 1e6).toFixed(0)} MB bodies`,
      columns: ['body', 'refused', 'after reading', 'time'],
      rows: hostiles.map((h) => [h.label, h.refused ?? 'no', `${h.read} bytes`, `${h.us.toFixed(0)} µs`]),
    },
  ];
}

function main(): void {
  const report = startReport('bounds', OPTIONS);
  console.log(
    `bounds (defaults): depth ${defaults.maxRequestDepth}, elements ${defaults.maxRequestElements}, body ${defaults.maxRequestBodyBytes} bytes; ${NODES} nodes, ${ITERATIONS} iterations, medians`,
  );
  const requests = [
    measure('node names (NodeNames)', request('names')),
    measure('full Node objects', request('nodes')),
    measure('Node objects, 50 images each', request('nodes50')),
  ];
  console.log();
  const sixty = 30_000_000;
  const hostiles = [
    hostile('nested arrays ([[[...]]])', Buffer.from(`${'['.repeat(sixty)}${']'.repeat(sixty)}`)),
    hostile('empty arrays ([[],[],...])', Buffer.from(`[${'[],'.repeat(20_000_000 - 1)}[]]`)),
    hostile('nested objects ({"a":{"a":...}})', Buffer.from(`${'{"a":'.repeat(10_000_000)}1${'}'.repeat(10_000_000)}`)),
  ];
  report.runs.push({ requests, hostiles });
  report.tables = boundsTables(requests, hostiles);
  writeReport(report);
}

if (IS_MAIN) main();
