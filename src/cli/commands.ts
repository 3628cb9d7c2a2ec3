/**
 * The offline commands behind the CLI: `rank` (the ranked table for one pod on a snapshot) and
 * `replay` (the heterogeneous replay). They return text; main.ts prints it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { agentSandboxOf, describeAgentSandbox } from '../core/objects/agentSandboxPods.js';
import { formatCandidacyFailure, nodeCandidacy, type CandidacyFailure } from './candidacy.js';
import { zeroRequestNote } from '../core/text/explain.js';
import type { Node, Pod } from '../core/objects/kubeObjects.js';
import { STRATEGIES, type Strategy } from '../core/fit/strategies/index.js';
import {
  INCOMING_POD_OPTIONS,
  nodeAllocatableExact,
  podRequestsExact,
  schedulerAmount,
} from '../core/objects/podRequests.js';
import { formatFailure, formatAmount, type FitFailure } from '../core/fit/reasons.js';
import { podKey, toPodRecord, type Dimensions } from '../core/objects/records.js';
import { numFeasibleNodesToFind } from '../core/fit/kubeSchedulerSampling.js';
import { discreteOptimum, replay, type ReplaySpec } from './replay.js';
import { applyListing, listingOf } from '../core/cache/sync.js';
import { milliValue, parseQuantity, value } from '../core/objects/quantity.js';
import { MAX_BYTES, readTextBounded } from '../fileRead.js';
import type { Config } from '../config/schema.js';
import { randomSource } from '../randomSource.js';
import { buildCacheDoors, recordOptions } from '../runtime/cacheDoors.js';
import { readListing, SnapshotError, whatDocument, type Snapshot } from '../snapshot/snapshotFile.js';

/** A command-line argument that cannot be used (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * The `version` of sandbox-extender's package.json, found by walking up from `moduleUrl` (this
 * module: dist/src/cli/ when built, src/cli/ from the sources, the same inside an installed
 * package or the image). @throws Error when no such package.json is found.
 */
export function packageVersion(moduleUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'sandbox-extender' && typeof pkg.version === 'string') return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json of sandbox-extender above ${fileURLToPath(moduleUrl)}`);
    dir = parent;
  }
}

/**
 * Lays out rows as left-aligned columns separated by two spaces. A line ends at its last character that is not a
 * blank: empty last cells (rank's REASON of a node that fits) leave no padding or separator behind.
 */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_OR_BACKSLASH = /[\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * `text` with its control characters escaped as in a JSON string: `\n`, `\r`, `\t`, `\b`, `\f`, and `\u00XX` for the
 * rest of C0, DEL and C1 (U+2028 and U+2029 too, which some viewers break lines at); a backslash as `\\`, so that an
 * escape read back is never ambiguous. `rank` prints names from the files as written: a node name holding a newline
 * would otherwise print a line of its own (a forged row), an escape sequence would drive the terminal.
 */
export function escapeControl(text: string): string {
  return text.replace(
    CONTROL_OR_BACKSLASH,
    (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function formatPressure(p: number): string {
  return Number.isNaN(p) ? '-' : p.toFixed(4);
}

/**
 * `rank`: every node of the snapshot for one pod, in the order kube-scheduler's candidates would
 * be offered to the extender and ranked by least_loaded: first the candidates that fit (lower
 * projected pressure first), then the candidates that do not fit, then the nodes that are not
 * candidates at all (not Ready, cordoned, an untolerated NoSchedule/NoExecute taint, nodeSelector
 * or required node affinity; see cli/candidacy.ts), each with its reasons.
 *
 * `snapshotPaths` are merged (e.g. `kubectl get nodes -o json` and `kubectl get pods -A -o json`
 * dumped separately): Nodes by name and Pods by uid (by namespace/name without one), a later file
 * winning. The pod's own record in the snapshot (same uid; same namespace/name when the pod file
 * has no uid) is left out, so a pod already in the dump is not counted against itself.
 *
 * Output: a title line with the pod's requests, notes (another scheduler's pod, the record left
 * out, a pod ranked as zero requests: no containers, or none of them requests anything of the
 * dimensions; requested resources outside `dimensions`), the table, then a summary line; every quantity in
 * the units of core/fit/reasons.ts formatAmount. Control characters in what comes from the files (names, reasons) are
 * escaped JSON-style (escapeControl): every line of the output is one the command wrote.
 * @throws SnapshotError for an unreadable file or when no file holds a Node that can be read; UsageError,
 *   naming the file, for an unusable pod file.
 */
export function rankCommand(config: Config, snapshotPaths: string | readonly string[], podPath: string): string {
  const paths = typeof snapshotPaths === 'string' ? [snapshotPaths] : snapshotPaths;
  if (paths.length === 0) throw new UsageError('rank: at least one --snapshot file is needed');
  const merged = mergeListings(paths.map((path) => readListing(path)));
  if (merged.nodes.length === 0)
    throw new SnapshotError(
      `${paths.join(', ')}: no Node objects (expected kubectl get nodes -o json, or nodes,pods -A -o json)`,
    );
  const pod = readPod(podPath);
  const dims = config.dimensions;
  const { service, updates } = buildCacheDoors(config);
  const options = recordOptions(config);
  // Ranked as the incoming pod kube-scheduler schedules: unbound (its requests from the spec, as Fit.PreFilter reads them).
  let record: ReturnType<typeof toPodRecord>;
  try {
    record = toPodRecord(
      { ...pod, metadata: { uid: RANK_UID, ...pod.metadata }, spec: { ...pod.spec, nodeName: null } },
      service.cache.dims,
      { ...options, withImages: true },
    );
  } catch (err) {
    // QuantityError or ObjectError: what is wrong with the pod, prefixed with the file it came from.
    throw new UsageError(`--pod ${podPath}: ${(err as Error).message}`);
  }

  const notes: string[] = [];
  const own = pod.metadata?.uid
    ? (p: Pod) => p.metadata?.uid === pod.metadata!.uid
    : (p: Pod) => podKey(p) === record.key;
  const ownRecords = merged.pods.filter(own);
  for (const p of ownRecords)
    notes.push(
      `note: the pod's own record in the snapshot${p.spec?.nodeName ? ` (bound to ${p.spec.nodeName})` : ''} is left out; the pod is ranked as if it were pending`,
    );
  const sync = listingOf(
    service.cache.dims,
    merged.nodes,
    merged.pods.filter((p) => !own(p)),
    options,
  );
  applyListing(updates, sync);
  if (service.cache.size.nodes === 0)
    throw new SnapshotError(
      `${paths.join(', ')}: no usable Node object (${sync.errors
        .filter((e) => e.startsWith('node '))
        .slice(0, 3)
        .join('; ')})`,
    );
  if (pod.spec?.nodeName && ownRecords.length === 0)
    notes.push(`note: the pod file is bound to ${pod.spec.nodeName} (spec.nodeName); ranked as if it were pending`);
  if (!service.ownsSchedulerName(record.schedulerName)) {
    notes.push(
      `note: the pod's schedulerName is ${record.schedulerName}, not ${config.schedulerName}: kube-scheduler's ${record.schedulerName} places it and ` +
        `the extender passes it through (filter keeps every node, prioritize scores 0); the table is what the extender would answer for a ${config.schedulerName} pod`,
    );
  }
  const agentSandbox = agentSandboxOf(pod);
  if (agentSandbox) notes.push(`note: ${describeAgentSandbox(agentSandbox)}; ranked like any other pod`);
  const zero = zeroRequestNote(pod, record.request, service.cache.dims);
  if (zero)
    notes.push(
      `note: ${zero}${pod.spec?.containers?.length ? (agentSandbox ? ' (set requests in its SandboxTemplate)' : '') : ' (the API server refuses a pod without containers)'}`,
    );
  const untracked = untrackedRequests(pod, dims);
  if (untracked.size > 0) {
    const listed = [...untracked].map(([name, amount]) => `${name}=${formatAmount(name, amount)}`).join(', ');
    notes.push(
      `warning: the pod requests ${listed}, outside the configured dimensions (${dims.join(', ')}): checked only against each node's allocatable ` +
        `(what other pods use of them is not counted) and not in the pressure; add them to \`dimensions\` to count them`,
    );
  }

  const nodesByName = new Map(merged.nodes.map((n) => [n.metadata?.name ?? '', n]));
  const evaluations = service.rank(record, { names: [...service.cache.nodeNames()] }, Date.now());
  const locality = config.locality.enabled;
  if (locality) {
    const inBand = evaluations.filter((e) => e.inBand).length;
    notes.push(
      `locality: template key ${record.localityKey ?? '(none: no template label, no image)'}; the ${inBand} node(s) within ${config.locality.pressureBand} of the lowest ` +
        'projected pressure are ranked warm, partial, cold first (from node.status.images and the pods of the snapshot)',
    );
  }
  const rows = evaluations.map((e) => {
    const node = nodesByName.get(e.name) ?? {};
    return {
      e,
      excluded: nodeCandidacy(node, pod),
      failures: [...e.failures, ...untrackedShortfalls(node, untracked)],
    };
  });
  const group = (r: { excluded: readonly CandidacyFailure[]; failures: readonly FitFailure[] }) =>
    r.excluded.length > 0 ? 2 : r.failures.length > 0 ? 1 : 0;
  rows.sort((a, b) => group(a) - group(b)); // stable: service.rank's order within each group

  const header = [
    '#',
    'NODE',
    'FITS',
    'PRESSURE',
    ...dims.map((d) => d.toUpperCase()),
    'STARTING',
    'RUNNING',
    'PAUSED',
    ...(locality ? ['LOCALITY'] : []),
    'REASON',
  ];
  const table = rows.map((row, i) => [
    String(i + 1),
    row.e.name,
    group(row) === 0 ? 'yes' : 'no',
    row.e.capacityKnown ? formatPressure(row.e.pressure) : 'unknown',
    ...dims.map((_, r) => formatPressure(row.e.projected[r] ?? NaN)),
    String(row.e.starting),
    String(row.e.running),
    String(row.e.paused),
    ...(locality ? [`${row.e.locality ?? 'cold'}${row.e.inBand ? '' : ' (outside band)'}`] : []),
    [
      ...row.excluded.map(formatCandidacyFailure),
      ...row.failures.map(formatFailure),
      ...(row.e.capacityKnown ? [] : ['capacity unknown (no allocatable): ranked last']),
    ].join('; '),
  ]);
  const request = dims.map((d, r) => `${d}=${formatAmount(d, record.request[r]!)}`).join(' ');
  // Each line and each cell escaped before they are joined: a name from the files prints as one line, one cell.
  const lines = [
    `pod ${record.key} requests ${request}; projected pressure = (allocated + paused + reserved + requested) / allocatable`,
    ...notes,
  ].map(escapeControl);
  lines.push(formatTable([header, ...table.map((cells) => cells.map(escapeControl))]));
  lines.push(
    summary(
      rows.map(group),
      rows.map((r) => r.excluded),
    ) +
      (paths.length > 1 ? `; merged ${paths.length} files` : '') +
      (merged.duplicates > 0 ? ` (${merged.duplicates} duplicate object(s): the later file's copy used)` : ''),
  );
  if (sync.errors.length > 0)
    lines.push(escapeControl(`skipped ${sync.errors.length} snapshot object(s): ${sync.errors.join('; ')}`));
  return lines.join('\n');
}

const EXCLUSIONS: readonly [CandidacyFailure['code'], string][] = [
  ['NodeNotReady', 'not ready'],
  ['NodeUnschedulable', 'cordoned'],
  ['UntoleratedTaints', 'untolerated taints'],
  ['NodeAffinityMismatch', "didn't match node affinity/selector"],
];

/** `12 nodes: 1 fits, 6 candidates do not fit, 5 are not candidates (3 not ready, 1 cordoned, ...)`; a node may count under several exclusions. */
function summary(groups: readonly number[], excluded: readonly (readonly CandidacyFailure[])[]): string {
  const count = (g: number) => groups.filter((x) => x === g).length;
  const [fit, misfit, out] = [count(0), count(1), count(2)];
  const parts = [`${fit} fit${fit === 1 ? 's' : ''}`];
  if (misfit > 0) parts.push(`${misfit} candidate${misfit === 1 ? ' does' : 's do'} not fit`);
  if (out > 0) {
    const reasons = EXCLUSIONS.map(
      ([code, text]) => [excluded.filter((f) => f.some((x) => x.code === code)).length, text] as const,
    ).filter(([n]) => n > 0);
    parts.push(
      `${out} ${out === 1 ? 'is not a candidate' : 'are not candidates'} (${reasons.map(([n, text]) => `${n} ${text}`).join(', ')})`,
    );
  }
  return `${groups.length} node${groups.length === 1 ? '' : 's'}: ${parts.join(', ')}`;
}

/** The uid given to a pod file without metadata.uid (no real uid has this form). */
const RANK_UID = '<rank>';

/**
 * Several listings as one: Nodes by name, Pods by uid (by namespace/name when a pod has none);
 * a later listing's copy replaces an earlier one (counted in `duplicates`).
 */
export function mergeListings(listings: readonly Snapshot[]): Snapshot & { readonly duplicates: number } {
  const nodes = new Map<string, Node>();
  const pods = new Map<string, Pod>();
  let duplicates = 0;
  let unnamed = 0;
  for (const listing of listings) {
    for (const node of listing.nodes) {
      const key = node.metadata?.name ?? `<unnamed ${unnamed++}>`;
      if (nodes.has(key)) duplicates++;
      nodes.set(key, node);
    }
    for (const pod of listing.pods) {
      const key = pod.metadata?.uid ? `uid:${pod.metadata.uid}` : `key:${podKey(pod)}`;
      if (pods.has(key)) duplicates++;
      pods.set(key, pod);
    }
  }
  return { nodes: [...nodes.values()], pods: [...pods.values()], duplicates };
}

/**
 * The pod's non-zero requests of resources outside `dims` as the incoming pod (component-helpers
 * PodRequests with kube-scheduler's options for it: the spec only), by name (sorted), in scheduler units. @throws QuantityError on an invalid quantity.
 */
export function untrackedRequests(pod: Pod, dims: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, nanos] of [...podRequestsExact(pod, INCOMING_POD_OPTIONS)].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  )) {
    if (!dims.includes(name) && nanos !== 0n) out.set(name, schedulerAmount(name, nanos));
  }
  return out;
}

/**
 * Untracked requests above the node's whole allocatable of that resource (kube-scheduler
 * NodeResourcesFit fitsRequest, the part that needs no usage: none of `nvidia.com/gpu` on a node
 * without GPUs). A node of unknown capacity, or whose allocatable cannot be read (reported as a
 * skipped object), is not judged here.
 */
function untrackedShortfalls(node: Node, untracked: ReadonlyMap<string, number>): FitFailure[] {
  if (untracked.size === 0) return [];
  let allocatable: Map<string, bigint> | null;
  try {
    allocatable = nodeAllocatableExact(node);
  } catch {
    return [];
  }
  if (!allocatable) return [];
  const failures: FitFailure[] = [];
  for (const [resource, requested] of untracked) {
    const available = schedulerAmount(resource, allocatable.get(resource) ?? 0n);
    if (requested > available)
      failures.push({ code: 'RequestExceedsAllocatable', resource, requested, allocatable: available });
  }
  return failures;
}

function readPod(path: string): Pod {
  let doc: Pod | null;
  try {
    const text = readTextBounded(path, MAX_BYTES.pod);
    doc = (/^\s*\{/.test(text) ? JSON.parse(text) : parseYaml(text)) as Pod | null;
  } catch (err) {
    throw new UsageError(`--pod ${path}: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc) || (doc.kind && doc.kind !== 'Pod'))
    throw new UsageError(`--pod ${path}: expected a Pod object, got ${whatDocument(doc)}`);
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
  /** kube-scheduler's percentageOfNodesToScore (0: its adaptive default); absent: every node offered to every pod. */
  readonly percentageOfNodesToScore?: number;
  /** Zones the nodes sit in, node i in zone i mod zones (kube-scheduler interleaves zones); with the percentage only. */
  readonly zones?: number;
}

/** Parses `16,64,192` / `3x16,1000x32` into CPU counts (cores). @throws Error on a malformed list. */
export function parseNodeCpus(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',').map((s) => s.trim())) {
    const match = /^(?:(\d+)x)?(\d+(?:\.\d+)?)$/.exec(part);
    if (!match) throw new UsageError(`--nodes: "${part}" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)`);
    const count = match[1] ? Number(match[1]) : 1;
    if (count > MAX_REPLAY_NODES) throw new UsageError(`--nodes: "${part}" is more than ${MAX_REPLAY_NODES} nodes`);
    if (!(Number(match[2]) > 0) || count < 1)
      throw new UsageError(`--nodes: "${part}": the count must be at least 1 and the CPUs above 0`);
    for (let i = 0; i < count; i++) cpus.push(Number(match[2]));
  }
  if (cpus.length > MAX_REPLAY_NODES)
    throw new UsageError(`--nodes: ${cpus.length} nodes; at most ${MAX_REPLAY_NODES}`);
  return cpus;
}

/** Kubernetes' own limit is 5,000 nodes; the replay allows more, but not unbounded memory. */
const MAX_REPLAY_NODES = 100_000;
/** Pods × nodes one replay strategy may rank (~10 s per 100 million on one core). */
const MAX_REPLAY_RANKINGS = 500_000_000;

/** A positive quantity option in scheduler units (cpu: millicores). @throws UsageError */
function positiveQuantity(option: string, text: string, units: 'milli' | 'units'): number {
  let q;
  try {
    q = parseQuantity(text);
  } catch (err) {
    throw new UsageError(`${option}: ${(err as Error).message}`);
  }
  const amount = Number(units === 'milli' ? milliValue(q) : value(q));
  if (!(amount > 0)) throw new UsageError(`${option}: "${text}" must be a positive quantity`);
  if (!Number.isSafeInteger(amount)) throw new UsageError(`${option}: "${text}" is too large`);
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
  const podRequest = [
    positiveQuantity('--pod-cpu', options.podCpu, 'milli'),
    positiveQuantity('--pod-memory', options.podMemory, 'units'),
  ];
  // Each pod is ranked over every node: a size that would run for hours is refused up front.
  if (nodes.length * options.pods > MAX_REPLAY_RANKINGS) {
    throw new UsageError(
      `--pods ${options.pods} over ${nodes.length} nodes ranks ${nodes.length * options.pods} nodes per strategy, more than ${MAX_REPLAY_RANKINGS.toLocaleString('en-US')} (about a minute each); use fewer pods or nodes`,
    );
  }
  if (options.zones !== undefined && options.percentageOfNodesToScore === undefined) {
    throw new UsageError(
      '--zones: only with --percentage-of-nodes-to-score (zones only change the order of a sampled walk)',
    );
  }
  const sampling =
    options.percentageOfNodesToScore === undefined
      ? {}
      : {
          sampling: {
            percentageOfNodesToScore: options.percentageOfNodesToScore,
            zones: nodes.map((_, i) => `zone-${i % (options.zones ?? 1)}`),
          },
        };
  return { dims, nodes, podRequest, podCount: options.pods, honourCapacity: options.honourCapacity, ...sampling };
}

/** `replay`: one run per strategy and the discrete optimum, as a table and the summary line. */
export function replayCommand(options: ReplayOptions): string {
  const spec = replaySpec(options);
  const results = options.strategies.map((s) => replay(spec, s, randomSource(options.seed)));
  const optimum = discreteOptimum(spec);
  const cpus = parseNodeCpus(options.nodes);
  const shown =
    cpus.length <= 8
      ? `nodes of ${cpus.join('/')} CPUs`
      : `${cpus.length} nodes (${Math.min(...cpus)}–${Math.max(...cpus)} CPUs)`;
  const title =
    `replay: ${shown}, ${options.memoryPerCpu} memory per CPU, ${options.pods} pods of ${options.podCpu} CPU / ${options.podMemory}, ` +
    (options.honourCapacity ? 'capacity honoured' : 'capacity ignored (overcommit)') +
    (options.percentageOfNodesToScore === undefined
      ? ''
      : `, kube-scheduler sampling ${options.percentageOfNodesToScore === 0 ? 'adaptive' : `${options.percentageOfNodesToScore} %`}` +
        ` (${numFeasibleNodesToFind(options.percentageOfNodesToScore, spec.nodes.length)} feasible nodes offered per pod, ${options.zones ?? 1} zone${(options.zones ?? 1) === 1 ? '' : 's'})`);
  const perNode = spec.nodes.length <= 8;
  const header = [
    'STRATEGY',
    'PEAK PRESSURE',
    'PLACED',
    'UNPLACED',
    ...(perNode ? spec.nodes.map((n) => `PODS ${n.name}`) : []),
  ];
  const rows = results.map((r) => [
    r.strategy,
    r.peakPressure.toFixed(4),
    String(r.placed),
    String(r.unplaced),
    ...(perNode ? r.podsPerNode.map(String) : []),
  ]);
  const summary = [
    ...results.map((r) => `${r.strategy}=${r.peakPressure.toFixed(4)}`),
    `optimum=${optimum === null ? 'n/a' : optimum.toFixed(4)}`,
  ];
  return [title, formatTable([header, ...rows]), `peak allocation pressure: ${summary.join(' ')}`].join('\n');
}

export const DEFAULT_REPLAY_STRATEGIES: readonly Strategy[] = ['round_robin', 'least_loaded', 'most_loaded', 'random'];
export { STRATEGIES };
