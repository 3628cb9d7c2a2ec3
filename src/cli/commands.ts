/**
 * The offline commands behind the CLI: `rank` (the ranked table for one pod on a snapshot) and
 * `replay` (the heterogeneous replay). They return text; main.ts prints it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Pod } from '../core/kube.js';
import type { Evaluation } from '../core/evaluation.js';
import { STRATEGIES, type Strategy } from '../core/strategies/index.js';
import { formatFailure, formatAmount } from '../core/reasons.js';
import { toPodRecord, type Dimensions } from '../core/records.js';
import { discreteOptimum, replay, type ReplaySpec } from '../core/replay.js';
import { syncModel } from '../core/sync.js';
import { milliValue, parseQuantity, value } from '../core/quantity.js';
import type { Config } from '../config/schema.js';
import { randomSource } from '../random.js';
import { buildService } from '../runtime/service.js';
import { readSnapshot } from '../snapshot/snapshotFile.js';

/** A command-line argument that cannot be used (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Lays out rows as left-aligned columns separated by two spaces. */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}

function formatPressure(p: number): string {
  return Number.isNaN(p) ? '-' : p.toFixed(4);
}

/**
 * `rank`: every node of the snapshot for one pod, in least_loaded candidate order (nodes that fit
 * first): projected pressure per dimension, sandbox counts and, for excluded nodes, the reason.
 * @throws SnapshotError / QuantityError / ObjectError for unreadable input.
 */
export function rankCommand(config: Config, snapshotPath: string, podPath: string): string {
  const { service } = buildService(config);
  const snapshot = readSnapshot(snapshotPath);
  const sync = syncModel(service.cache, snapshot.nodes, snapshot.pods, { pausedLabel: config.pausedLabel });
  const pod = readPod(podPath);
  const record = toPodRecord({ ...pod, metadata: { uid: 'rank', ...pod.metadata } }, service.cache.dims, { pausedLabel: config.pausedLabel });
  const ranked = service.rank(record, { names: [...service.cache.nodeNames()] });
  const dims = config.dimensions;
  const header = ['#', 'NODE', 'FITS', 'PRESSURE', ...dims.map((d) => d.toUpperCase()), 'STARTING', 'RUNNING', 'PAUSED', 'REASON'];
  const rows = ranked.map((e: Evaluation, i) => [
    String(i + 1),
    e.name,
    e.failures.length === 0 ? 'yes' : 'no',
    e.capacityKnown ? formatPressure(e.pressure) : 'unknown',
    ...dims.map((_, r) => formatPressure(e.projected[r] ?? NaN)),
    String(e.starting),
    String(e.running),
    String(e.paused),
    e.failures.map(formatFailure).join('; ') || (e.capacityKnown ? '' : 'capacity unknown (no allocatable): ranked last'),
  ]);
  const request = dims.map((d, r) => `${d}=${formatAmount(d, record.request[r]!)}`).join(' ');
  const lines = [`pod ${record.key} requests ${request}; projected pressure = (allocated + paused + reserved + requested) / allocatable`, formatTable([header, ...rows])];
  if (sync.errors.length > 0) lines.push(`skipped ${sync.errors.length} snapshot object(s): ${sync.errors.join('; ')}`);
  return lines.join('\n');
}

function readPod(path: string): Pod {
  let doc: Pod | null;
  try {
    const text = readFileSync(path, 'utf8');
    doc = (/^\s*\{/.test(text) ? JSON.parse(text) : parseYaml(text)) as Pod | null;
  } catch (err) {
    throw new UsageError(`--pod ${path}: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || (doc.kind && doc.kind !== 'Pod')) throw new UsageError(`--pod ${path}: expected a Pod object`);
  return doc;
}

export interface ReplayOptions {
  /** Node CPU counts; `COUNTxCPUS` repeats (e.g. `16,64,192` or `1000x32`). */
  readonly nodes: string;
  readonly memoryPerCpu: string;
  readonly pods: number;
  readonly podCpu: string;
  readonly podMemory: string;
  readonly honourCapacity: boolean;
  readonly strategies: readonly Strategy[];
  readonly seed: number;
}

/** Parses `16,64,192` / `3x16,1000x32` into CPU counts (cores). @throws Error on a malformed list. */
export function parseNodeCpus(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',').map((s) => s.trim())) {
    const match = /^(?:(\d+)x)?(\d+(?:\.\d+)?)$/.exec(part);
    if (!match) throw new UsageError(`--nodes: "${part}" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)`);
    const count = match[1] ? Number(match[1]) : 1;
    if (count > MAX_REPLAY_NODES) throw new UsageError(`--nodes: "${part}" is more than ${MAX_REPLAY_NODES} nodes`);
    if (!(Number(match[2]) > 0) || count < 1) throw new UsageError(`--nodes: "${part}" must have at least one node of more than 0 CPUs`);
    for (let i = 0; i < count; i++) cpus.push(Number(match[2]));
  }
  if (cpus.length > MAX_REPLAY_NODES) throw new UsageError(`--nodes: ${cpus.length} nodes; at most ${MAX_REPLAY_NODES}`);
  return cpus;
}

/** Kubernetes' own limit is 5,000 nodes; the replay allows more, but not unbounded memory. */
const MAX_REPLAY_NODES = 100_000;

/** A positive quantity option in scheduler units (cpu: millicores). @throws UsageError */
function positiveQuantity(option: string, text: string, units: 'milli' | 'units'): number {
  let q;
  try {
    q = parseQuantity(text);
  } catch (err) {
    throw new UsageError(`${option}: ${(err as Error).message}`);
  }
  const amount = Number(units === 'milli' ? milliValue(q) : value(q));
  if (!(amount > 0) || !Number.isSafeInteger(amount)) throw new UsageError(`${option}: "${text}" must be a positive quantity`);
  return amount;
}

/** Builds the replay spec (cpu in millicores, memory in bytes). @throws UsageError */
export function replaySpec(options: ReplayOptions): ReplaySpec {
  const dims: Dimensions = { names: ['cpu', 'memory'] };
  const memoryPerCpu = positiveQuantity('--memory-per-cpu', options.memoryPerCpu, 'units');
  const nodes = parseNodeCpus(options.nodes).map((cores, i) => ({
    name: `node-${String(i).padStart(4, '0')}-${cores}cpu`,
    allocatable: [Math.round(cores * 1000), Math.round(cores * memoryPerCpu)],
  }));
  const podRequest = [positiveQuantity('--pod-cpu', options.podCpu, 'milli'), positiveQuantity('--pod-memory', options.podMemory, 'units')];
  return { dims, nodes, podRequest, podCount: options.pods, honourCapacity: options.honourCapacity };
}

/** `replay`: one run per strategy and the discrete optimum, as a table and the summary line. */
export function replayCommand(options: ReplayOptions): string {
  const spec = replaySpec(options);
  const results = options.strategies.map((s) => replay(spec, s, randomSource(options.seed)));
  const optimum = discreteOptimum(spec);
  const cpus = parseNodeCpus(options.nodes);
  const shown = cpus.length <= 8 ? `nodes of ${cpus.join('/')} CPUs` : `${cpus.length} nodes (${Math.min(...cpus)}–${Math.max(...cpus)} CPUs)`;
  const title =
    `replay: ${shown}, ${options.memoryPerCpu} memory per CPU, ${options.pods} pods of ${options.podCpu} CPU / ${options.podMemory}, ` +
    (options.honourCapacity ? 'capacity honoured' : 'capacity ignored (overcommit)');
  const perNode = spec.nodes.length <= 8;
  const header = ['STRATEGY', 'PEAK PRESSURE', 'PLACED', 'UNPLACED', ...(perNode ? spec.nodes.map((n) => `PODS ${n.name}`) : [])];
  const rows = results.map((r) => [r.strategy, r.peakPressure.toFixed(4), String(r.placed), String(r.unplaced), ...(perNode ? r.podsPerNode.map(String) : [])]);
  const summary = [...results.map((r) => `${r.strategy}=${r.peakPressure.toFixed(4)}`), `optimum=${optimum === null ? 'n/a' : optimum.toFixed(4)}`];
  return [title, formatTable([header, ...rows]), `peak allocation pressure: ${summary.join(' ')}`].join('\n');
}

export const DEFAULT_REPLAY_STRATEGIES: readonly Strategy[] = ['round_robin', 'least_loaded', 'most_loaded', 'random'];
export { STRATEGIES };
