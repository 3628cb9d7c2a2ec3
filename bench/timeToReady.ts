/**
 * `npm run bench -- time-to-ready`: creation → Ready of sandbox pods on real nodes (a kubelet and a containerd
 * each) with real image pulls, from cold and warm image caches: the stock kube-scheduler against sandbox-scheduler
 * with template locality and the starting limit off / on. Not in CI. The cluster, images, workload, setups and
 * figures: docs/benchmarks.md#time-to-ready-on-real-nodes. `--help` lists the options; `--reuse` uses a cluster that is
 * up with real nodes (and leaves it up).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { Command, InvalidArgumentError } from 'commander';
import { randomSource } from '../src/randomSource.js';
import { fmt, median } from './clusterStats.js';
import {
  ensureNamespace,
  inParallel,
  Kube,
  deleteAllPods,
  PodWatch,
  retryBusy,
  untaintNodes,
} from '../test/e2e/kit/adminClient.js';
import { log, nowMs, readClusterEnv, REPO_ROOT, script, STATE_DIR, waitUntil } from '../test/e2e/kit/controlPlane.js';
import { clusterNodes, exitOnUsage, listOf, oneOf, fraction, positive, positiveInt, quantity } from './cliOptions.js';
import { drawFrom, zipfCdf } from './imageCache.js';
import { ProcWatch, type CpuReport } from './procWatch.js';
import { StartingTracker } from './startingStats.js';
import {
  LABELS,
  localityPlacementsSince,
  SETUPS,
  writeSetupConfigs,
  type Setup,
  type SetupConfigs,
} from './localitySetups.js';
import { exitWith, startReport, tableOf, writeReport } from './report.js';
import type { Table } from './results.js';
import {
  burstFigures,
  nodePullRates,
  parsePulledMessage,
  pullThroughput,
  readyRows,
  readyTable,
  type BurstFigures,
  type PodTiming,
  type PullRecord,
} from './timeToReadyStats.js';

const run = promisify(execFile);
const NAMESPACE = 'bench-ready';
const TEMPLATE_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
const REAL_LABEL = { type: 'real' } as const;
const BENCH_REPO = '/sandbox-bench/';
const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10.1';

type Cache = 'cold' | 'warm';
const CACHES: readonly Cache[] = ['cold', 'warm'];

export interface Options {
  realNodes: number;
  kwokNodes: string;
  pods: number;
  imageMib: number[];
  zipf: number;
  podCpu: string;
  podMemory: string;
  perNode: number;
  band: number;
  runs: number;
  setups: Setup[];
  caches: Cache[];
  seed: number;
  concurrency: number;
  reuse: boolean;
}

interface Template {
  readonly ref: string;
  readonly sizeBytes: number;
}

export interface RunResult {
  setup: Setup;
  cache: Cache;
  run: number;
  figures: BurstFigures;
  peakStarting: number;
  /** kubelet's finished pulls (its Pulled Events), with the node that reported each. */
  pulls: (PullRecord & { node: string | null })[];
  cpu: CpuReport;
  /** The extender's sandbox_extender_placements_by_locality_total deltas (sandbox setups). */
  byLocality: Record<string, number> | null;
  /** Seconds spent before the burst: removing or pulling images, waiting for status.images, the extender's restart. */
  prepareSeconds: number;
}

// ------------------------------------------------------------------------------------------ the nodes' caches

const nodeSocket = (node: string) => join(STATE_DIR, 'nodes', node, 'containerd.sock');
const ctr = (node: string, args: readonly string[]) =>
  run('ctr', ['--address', nodeSocket(node), '--namespace', 'k8s.io', ...args], { maxBuffer: 16 * 1024 * 1024 });

/**
 * The node's image records of the benchmark's images: their references (tag and digest) and the names CRI adds
 * for the same manifest (`sha256:<image ID>`), which hold the content as long as they exist.
 */
async function benchImagesOn(node: string): Promise<string[]> {
  const { stdout } = await ctr(node, ['images', 'ls']);
  const rows = stdout
    .split('\n')
    .slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((r) => r.length >= 3);
  const digests = new Set(rows.filter((r) => r[0]!.includes(BENCH_REPO)).map((r) => r[2]!));
  return rows.filter((r) => digests.has(r[2]!)).map((r) => r[0]!);
}

/** The node's containers of a benchmark image (kubelet removes those of deleted pods shortly after). */
async function benchContainersOn(node: string, images: ReadonlySet<string>): Promise<number> {
  const { stdout } = await ctr(node, ['containers', 'ls']);
  return stdout
    .split('\n')
    .slice(1)
    .filter((l) => images.has(l.trim().split(/\s+/)[1] ?? '')).length;
}

/** status.images of the node: the benchmark's templates it lists (by the pods' references). */
function listedTemplates(node: V1Node, templates: readonly Template[]): Set<number> {
  const names = new Set((node.status?.images ?? []).flatMap((i) => i.names ?? []));
  return new Set(templates.map((t, k) => (names.has(t.ref) ? k : -1)).filter((k) => k >= 0));
}

async function realNodes(kube: Kube): Promise<V1Node[]> {
  return (await kube.api.listNode({ labelSelector: 'type=real' })).items;
}

/** Puts the real nodes' caches in `cache` state and waits until their status.images says so. */
async function prepareCaches(
  cache: Cache,
  kube: Kube,
  nodes: readonly string[],
  templates: readonly Template[],
): Promise<void> {
  await inParallel(nodes, nodes.length, async (node) => {
    if (cache === 'cold') {
      const refs = await benchImagesOn(node);
      await waitUntil(
        `node ${node}: the previous run's containers removed`,
        180_000,
        async () => (await benchContainersOn(node, new Set(refs))) === 0,
        1000,
      );
      if (refs.length) await ctr(node, ['images', 'rm', '--sync', ...refs]);
      const left = await benchImagesOn(node);
      if (left.length) throw new Error(`node ${node}: images left after removal: ${left.join(' ')}`);
    } else {
      const have = new Set((await benchImagesOn(node)).filter((r) => r.includes(BENCH_REPO)));
      for (const t of templates) if (!have.has(t.ref)) await ctr(node, ['images', 'pull', '--plain-http', t.ref]);
    }
  });
  // kubelet refreshes its image list every 30 s and reports a change at its next status update (10 s).
  await waitUntil(
    `the real nodes' status.images ${cache}`,
    120_000,
    async () => {
      const listed = (await realNodes(kube)).map((n) => listedTemplates(n, templates).size);
      return listed.every((n) => (cache === 'cold' ? n === 0 : n === templates.length));
    },
    1000,
  );
}

// ------------------------------------------------------------------------------------------ one run

function podManifest(name: string, template: number, t: Template, schedulerName: string | null, o: Options): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NAMESPACE, labels: { app: 'bench-ready', [TEMPLATE_LABEL]: `tmpl-${template}` } },
    spec: {
      ...(schedulerName ? { schedulerName } : {}),
      nodeSelector: { ...REAL_LABEL },
      hostNetwork: true,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'sandbox',
          image: t.ref,
          imagePullPolicy: 'IfNotPresent',
          resources: {
            requests: { cpu: o.podCpu, memory: o.podMemory },
            limits: { cpu: o.podCpu, memory: o.podMemory },
          },
        },
      ],
    },
  };
}

/** The processes of the run, by category (comm as the kernel keeps it: 15 characters). */
function cpuCategories(extenderPid: number | null): ConstructorParameters<typeof ProcWatch>[0] {
  const byComm: Record<string, string> = {
    kubelet: 'nodes',
    containerd: 'nodes',
    'containerd-shim': 'nodes',
    runc: 'nodes',
    pause: 'nodes',
    'docker-registry': 'registry',
    'kube-apiserver': 'control plane',
    etcd: 'control plane',
    'kube-controller': 'control plane',
    'kube-scheduler': 'control plane',
    kwok: 'control plane',
  };
  return (all) =>
    all.flatMap((proc) => {
      if (proc.pid === process.pid) return [{ proc, category: 'bench' }];
      if (proc.pid === extenderPid) return [{ proc, category: 'extender' }];
      const category = byComm[proc.comm] ?? (proc.comm.startsWith('containerd-shim') ? 'nodes' : undefined);
      return category ? [{ proc, category }] : [];
    });
}

function extenderPid(): number | null {
  try {
    const pid = Number(
      readFileSync(join(STATE_DIR, 'pids', 'sandbox-extender'), 'utf8')
        .trim()
        .split(/\s+/)[0],
    );
    return Number.isInteger(pid) ? pid : null;
  } catch {
    return null;
  }
}

async function oneRun(
  setup: Setup,
  cache: Cache,
  round: number,
  o: Options,
  templates: readonly Template[],
  podTemplates: readonly number[],
  kube: Kube,
  env: Record<string, string>,
  nodes: readonly string[],
  configs: SetupConfigs,
): Promise<RunResult> {
  const t00 = nowMs();
  log(`round ${round}: ${cache} ${setup}: preparing`);
  await deleteAllPods(kube, NAMESPACE, env.EXTENDER_URL!, { graceSeconds: 1, events: true });
  await prepareCaches(cache, kube, nodes, templates);
  const held = new Map(nodes.map((n) => [n, new Set<number>()]));
  for (const n of await realNodes(kube)) held.set(n.metadata!.name!, listedTemplates(n, templates));
  if (setup !== 'stock') await script('component.sh', ['restart', 'sandbox-extender', '--config', configs[setup]]);
  const byLocalitySince = setup === 'stock' ? null : await localityPlacementsSince(env.EXTENDER_URL!);
  const prepareSeconds = (nowMs() - t00) / 1000;

  const tracker = new StartingTracker();
  const createdAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const nodeOf = new Map<string, string>();
  const from = (await kube.api.listNamespacedPod({ namespace: NAMESPACE, limit: 1 })).metadata?.resourceVersion;
  const cpu = new ProcWatch(cpuCategories(extenderPid()));
  cpu.start();
  const t0 = nowMs();
  const watch = new PodWatch(
    kube,
    NAMESPACE,
    (type, pod) => {
      const t = nowMs() - t0;
      const { name, node, ready } = tracker.observePod(pod, type === 'DELETED');
      if (node) nodeOf.set(name, node);
      if (ready && !readyAt.has(name)) readyAt.set(name, t);
    },
    from ?? '',
  );
  await watch.start();
  const schedulerName = setup === 'stock' ? null : env.SANDBOX_SCHEDULER_NAME!;
  const width = String(o.pods - 1).length;
  const names = podTemplates.map((_, i) => `sbx-${String(i).padStart(width, '0')}`);
  await inParallel(names, o.concurrency, async (name, i) => {
    const template = podTemplates[i]!;
    await retryBusy(() =>
      kube.api.createNamespacedPod({
        namespace: NAMESPACE,
        body: podManifest(name, template, templates[template]!, schedulerName, o),
      }),
    );
    createdAt.set(name, nowMs() - t0);
  });
  await waitUntil(`${cache} ${setup}: all ${o.pods} pods Ready`, 10 * 60_000, () => readyAt.size >= o.pods, 200);
  const cpuReport = cpu.stop();
  watch.stop();

  const timings: PodTiming[] = names.map((name, i) => ({
    name,
    template: podTemplates[i]!,
    node: nodeOf.get(name) ?? null,
    createdMs: createdAt.get(name)!,
    readyMs: readyAt.get(name) ?? null,
  }));
  const figures = burstFigures(timings, (node, template) => held.get(node)?.has(template) === true);
  const events = await kube.api.listNamespacedEvent({ namespace: NAMESPACE });
  const pulls = events.items.flatMap((e) => {
    const p = e.reason === 'Pulled' ? parsePulledMessage(e.message ?? '') : null;
    return p ? [{ ...p, node: e.source?.host ?? e.reportingInstance ?? null }] : [];
  });
  const byLocality = byLocalitySince ? await byLocalitySince() : null;
  const peakStarting = Math.max(0, ...tracker.peaks([...nodes]).values());
  const tp = pullThroughput(pulls);
  log(
    `${cache} ${setup}: p50 ${fmt((figures.createToReadyMs.p50 ?? NaN) / 1000)} s, p99 ${fmt((figures.createToReadyMs.p99 ?? NaN) / 1000)} s, all Ready ${fmt((figures.allReadyMs ?? NaN) / 1000)} s; ` +
      `pulls ${figures.pulls} (kubelet: ${pulls.length}, median ${fmt((tp.medianPullMs ?? NaN) / 1000)} s, ${fmt(tp.perPullMiBps)} MiB/s each), peak starting ${peakStarting}, pods per node ${JSON.stringify(figures.podsPerNode)}; ` +
      `other load ${cpuReport.otherCores.toFixed(2)} cores`,
  );
  return { setup, cache, run: round, figures, peakStarting, pulls, cpu: cpuReport, byLocality, prepareSeconds };
}

// ------------------------------------------------------------------------------------------ output

function describe(o: Options, templates: readonly Template[]): string {
  const sizes = templates.map((t) => `${(t.sizeBytes / 1024 ** 2).toFixed(0)} MiB`).join(', ');
  return (
    `Time to Ready on real nodes: ${o.pods} hostNetwork pods of ${o.podCpu} / ${o.podMemory} at once on ${o.realNodes} real nodes (kubelet + containerd each; ` +
    `KWOK nodes ${o.kwokNodes} excluded by nodeSelector type=real); ${o.imageMib.length} templates (${sizes}; random bytes, loopback registry), Zipf ${o.zipf}; ` +
    `locality.pressureBand ${o.band}; limit = startingLimit.perNode ${o.perNode}; ${o.runs} round(s) of ${o.caches.join(' + ')} × ${o.setups.join(', ')}, interleaved`
  );
}

function cpuTable(results: readonly RunResult[]): string {
  const cats = ['nodes', 'control plane', 'registry', 'extender', 'bench'];
  const lines = results.map(
    (r) =>
      `${r.cache.padEnd(4)} ${LABELS[r.setup].padEnd(24)} ${r.cpu.seconds.toFixed(0).padStart(4)} s  ${cats.map((c) => `${c} ${(r.cpu.cores[c] ?? 0).toFixed(2)}`).join(', ')}; other ${r.cpu.otherCores.toFixed(2)} of ${r.cpu.cpus} cores`,
  );
  return ['CPU over each run (cores):', ...lines].join('\n');
}

function pullLine(results: readonly RunResult[]): string {
  const pulls = results.flatMap((r) => r.pulls);
  const tp = pullThroughput(pulls);
  const alone = pullThroughput(results.filter((r) => r.pulls.length === 1).flatMap((r) => r.pulls));
  const perNode = results.flatMap((r) => [...nodePullRates(r.pulls).values()]);
  return (
    `kubelet's pulls: ${pulls.length}, median ${fmt((tp.medianPullMs ?? NaN) / 1000)} s, median ${fmt(tp.perPullMiBps)} MiB/s per pull (pulls overlap: a node pulls in parallel)` +
    `${alone.perPullMiBps !== null ? `; alone ${fmt(alone.perPullMiBps)} MiB/s` : ''}; a node's pulls as one queue: median ${fmt(median(perNode))} MiB/s (${perNode.length} node-runs)`
  );
}

/** The table `ready` of bench/results/time-to-ready.json: readyTable's rows, stock's column named `stock`; kubelet's pulls below. */
export function readyReportTable(results: readonly RunResult[], o: Options): Table {
  return tableOf(
    'ready',
    "Median of the runs; in brackets, the ratio to stock's",
    readyRows(results, o.setups, o.caches, { ...LABELS, stock: 'stock' }, 'stock', 'figure'),
    [`${pullLine(results)}.`],
  );
}

function summary(o: Options, templates: readonly Template[], results: readonly RunResult[]): string {
  return [
    describe(o, templates),
    '',
    readyTable(results, o.setups, o.caches, LABELS, 'stock'),
    '',
    pullLine(results),
    '',
    cpuTable(results),
  ].join('\n');
}

// ------------------------------------------------------------------------------------------ main

function mibList(v: string): number[] {
  const xs = v.split(',').map(Number);
  if (xs.length === 0 || xs.some((x) => !Number.isInteger(x) || x < 1))
    throw new InvalidArgumentError('expected sizes in MiB, e.g. 200,300,400');
  return xs;
}

/** Runs a script of the repository (not test/e2e's) and returns its stdout; its stderr is echoed. */
async function repoScript(path: string, args: readonly string[]): Promise<string> {
  const child = run('bash', [join(REPO_ROOT, path), ...args], { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
  child.child.stderr?.on('data', (d: Buffer) => process.stderr.write(d));
  return (await child).stdout;
}

function envFile(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

async function main(): Promise<void> {
  const program = new Command('bench:time-to-ready')
    .exitOverride(exitOnUsage)
    .description(
      'creation → Ready of sandbox pods on real nodes with real image pulls: stock default-scheduler vs sandbox-scheduler, locality off/on, the starting limit off/on, cold and warm image caches.',
    )
    .option('--real-nodes <n>', 'real nodes (kubelet + containerd each)', positiveInt, 3)
    .option(
      '--kwok-nodes <shape>',
      'CLUSTER_NODES of cluster-up.sh: the KWOK nodes beside them (never used by the pods)',
      clusterNodes,
      '4x32/128Gi',
    )
    .option('--pods <n>', 'pods per burst', positiveInt, 30)
    .option('--image-mib <list>', 'one template per size (MiB of random bytes)', mibList, [200, 300, 400])
    .option('--zipf <s>', 'Zipf exponent of template popularity', positive, 1)
    .option('--pod-cpu <q>', 'cpu request (= limit) per pod', quantity, '25m')
    .option('--pod-memory <q>', 'memory request (= limit) per pod', quantity, '64Mi')
    .option('--per-node <n>', 'startingLimit.perNode of the limit setups', positiveInt, 4)
    .option('--band <x>', 'locality.pressureBand of the locality-on setups', fraction, 0.05)
    .option('--runs <n>', 'rounds (each: every cache state × every setup)', positiveInt, 1)
    .option('--setups <list>', `setups, in this order (${SETUPS.join(',')})`, listOf(oneOf(SETUPS)), [...SETUPS])
    .option('--caches <list>', `cache states, in this order (${CACHES.join(',')})`, listOf(oneOf(CACHES)), [...CACHES])
    .option('--seed <n>', 'seed of the templates drawn', positiveInt, 1)
    .option('--concurrency <n>', 'creates in flight', positiveInt, 16)
    .option(
      '--reuse',
      'use the cluster that is up (with real nodes, REAL_NODE_REGISTRY the engine registry) and leave it running',
      false,
    )
    .parse();
  const o = program.opts<Options>();
  const configs = writeSetupConfigs('time-to-ready', o);

  // The engine, the pause image for the nodes, the sandbox images in the registry (kept between runs).
  const imageEnv = envFile((await repoScript('test/image/engine.sh', ['up'])).trim().split('\n').at(-1)!);
  await repoScript('test/image/images.sh', ['pause']);
  const pauseTar = (await repoScript('test/image/images.sh', ['export', PAUSE_IMAGE])).trim().split('\n').at(-1)!;
  const templates: Template[] = (await repoScript('bench/sandbox-images.sh', o.imageMib.map(String)))
    .trim()
    .split('\n')
    .map((l) => {
      const [ref, size] = l.trim().split(/\s+/);
      return { ref: ref!, sizeBytes: Number(size) };
    });
  log(`templates: ${templates.map((t) => `${t.ref} (${(t.sizeBytes / 1024 ** 2).toFixed(0)} MiB)`).join(', ')}`);
  const random = randomSource(o.seed);
  const cdf = zipfCdf(templates.length, o.zipf);
  const podTemplates = Array.from({ length: o.pods }, () => drawFrom(cdf, random()));

  if (!o.reuse) {
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: o.kwokNodes,
      REAL_NODES: String(o.realNodes),
      REAL_NODE_PAUSE_IMAGE: PAUSE_IMAGE,
      REAL_NODE_IMAGE_ARCHIVES: pauseTar,
      REAL_NODE_REGISTRY: imageEnv.IMAGE_REGISTRY!,
      EXTENDER_MODE: 'cluster',
      EXTENDER_BIND: '0', // kube-scheduler binds, as the chart installs it
      AGENT_SANDBOX: '0',
      E2E_START_TIMEOUT: '300',
    });
  }
  const results: RunResult[] = [];
  // the templates drawn are the workload: the report keeps them with the options
  const report = startReport('time-to-ready', { ...o, templates, podTemplates });
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL', 'SANDBOX_SCHEDULER_NAME']);
    if (env.EXTENDER_MODE !== 'cluster') throw new Error('the bench needs the extender in cluster mode');
    const kube = await Kube.connect(env.KUBECONFIG!, o.concurrency);
    await untaintNodes(kube);
    const nodes = (await realNodes(kube)).map((n) => n.metadata!.name!).sort();
    if (nodes.length === 0) throw new Error('no node labelled type=real: start the cluster with REAL_NODES');
    log(
      `real nodes: ${nodes.join(', ')}; ${o.pods} pods: ${templates.map((_, k) => `tmpl-${k} ×${podTemplates.filter((t) => t === k).length}`).join(', ')}`,
    );
    await ensureNamespace(kube, NAMESPACE);
    for (let round = 1; round <= o.runs; round++) {
      for (const cache of o.caches) {
        for (const setup of o.setups) {
          results.push(await oneRun(setup, cache, round, o, templates, podTemplates, kube, env, nodes, configs));
          report.runs = results;
          report.tables = [readyReportTable(results, o)];
          writeReport(report, undefined, () => undefined);
        }
      }
    }
    await deleteAllPods(kube, NAMESPACE, env.EXTENDER_URL!, { graceSeconds: 1, events: true });
    kube.agent.destroy();
  } finally {
    if (!o.reuse) await script('cluster-down.sh', ['--keep-logs']).catch((e: Error) => log(e.message));
    else await script('component.sh', ['restart', 'sandbox-extender']).catch((e: Error) => log(e.message));
  }
  console.log(`${summary(o, templates, results)}\n`);
  writeReport(report);
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:time-to-ready'));
