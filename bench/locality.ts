/**
 * `npm run bench -- locality`: time to a Ready sandbox when images must be pulled, on the e2e control plane's KWOK
 * nodes with modelled pulls (bench/imageCache.ts): the stock default-scheduler (ImageLocality on) against
 * sandbox-scheduler with template locality off / on, each with the starting limit off / on. Never in CI. The
 * workload, the runs and the figures: docs/benchmarks.md#template-locality. `--help` lists the options.
 */
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { Command } from 'commander';
import { randomSource } from '../src/randomSource.js';
import { fmt, percentile } from './clusterStats.js';
import {
  benchPod,
  deleteAllPods,
  ensureNamespace,
  inParallel,
  Kube,
  PodWatch,
  retryBusy,
  untaintNodes,
  type PodEventType,
} from '../test/e2e/kit/adminClient.js';
import { log, nowMs, readClusterEnv, script, sleep, waitUntil } from '../test/e2e/kit/controlPlane.js';
import { milliCpu } from '../test/e2e/kit/kubectl.js';
import { SimulatedImageCache, drawFrom, zipfCdf, type ImageSpec, type PullKind } from './imageCache.js';
import { StartingTracker } from './startingStats.js';
import {
  LABELS,
  localityPlacementsSince,
  SETUPS,
  writeSetupConfigs,
  type Setup,
  type SetupConfigs,
} from './localitySetups.js';
import { exitWith, startReport, tableOf, textTable, writeReport } from './report.js';
import type { Table } from './results.js';
import {
  clusterNodes,
  exitOnUsage,
  listOf,
  nonNegative,
  oneOf,
  fraction,
  positive,
  positiveInt,
  quantity,
} from './cliOptions.js';

const NAMESPACE = 'bench-locality';
const TEMPLATE_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
const READY_DELAY_ANNOTATION = 'e2e.sandbox-extender.io/ready-delay';
const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export interface Options {
  nodes: string;
  pods: number;
  bursts: number;
  burstIntervalMs: number;
  templates: number;
  zipf: number;
  imageMinGib: number;
  imageMaxGib: number;
  seedShare: number;
  podCpu: string;
  podMemory: string;
  bandwidthMib: number;
  warmStartMs: number;
  slopeMs: number;
  perNode: number;
  band: number;
  runs: number;
  setups: Setup[];
  seed: number;
  concurrency: number;
  reuse: boolean;
}

interface Workload {
  readonly images: readonly ImageSpec[];
  /** Per template, the nodes that hold its image at first. */
  readonly seeded: readonly (readonly string[])[];
  /** Per pod, its template. */
  readonly podTemplates: readonly number[];
}

export interface RunResult {
  setup: Setup;
  run: number;
  pods: number;
  kinds: Record<PullKind, number>;
  createToReadyMs: { p50: number | null; p99: number | null; max: number | null };
  allReadySeconds: number;
  peakPressure: number;
  peakStarting: number;
  /** The extender's sandbox_extender_placements_by_locality_total deltas (sandbox setups). */
  byLocality: Record<string, number> | null;
  watchReopens: number;
}

// ------------------------------------------------------------------------------------------ the workload

function workload(o: Options, nodeNames: readonly string[]): Workload {
  const random = randomSource(o.seed);
  // Sizes spread evenly over [min, max], assigned to templates in a shuffled order (size unrelated to popularity).
  const order = Array.from({ length: o.templates }, (_, k) => k);
  for (let k = order.length - 1; k > 0; k--) {
    const j = Math.floor(random() * (k + 1));
    [order[k], order[j]] = [order[j]!, order[k]!];
  }
  const images = order.map((slot, k) => {
    const id = String(k).padStart(2, '0');
    const gib = o.imageMinGib + ((o.imageMaxGib - o.imageMinGib) * slot) / Math.max(1, o.templates - 1);
    return {
      name: `registry.example/sandbox/tmpl-${id}:v1`,
      digestName: `registry.example/sandbox/tmpl-${id}@sha256:${id.repeat(32)}`,
      sizeBytes: Math.round(gib * GiB),
    };
  });
  // 0: every cache cold; otherwise at least one node per image.
  const perTemplate = o.seedShare === 0 ? 0 : Math.max(1, Math.round(o.seedShare * nodeNames.length));
  const seeded = images.map(() => {
    const pick = [...nodeNames];
    for (let i = 0; i < perTemplate; i++) {
      const j = i + Math.floor(random() * (pick.length - i));
      [pick[i], pick[j]] = [pick[j]!, pick[i]!];
    }
    return pick.slice(0, perTemplate);
  });
  const cdf = zipfCdf(o.templates, o.zipf);
  const podTemplates = Array.from({ length: o.pods }, () => drawFrom(cdf, random()));
  return { images, seeded, podTemplates };
}

function seededCache(o: Options, w: Workload): SimulatedImageCache {
  const cache = new SimulatedImageCache({
    bandwidthBytesPerSecond: o.bandwidthMib * MiB,
    warmStartMs: o.warmStartMs,
    slopeMsPerStarting: o.slopeMs,
    maxImages: 50,
  });
  w.seeded.forEach((nodes, k) => nodes.forEach((n) => cache.seed(n, w.images[k]!)));
  return cache;
}

/** Writes `images` to the node's status.images (a merge patch of the status subresource replaces the list). */
async function patchNodeImages(
  kube: Kube,
  node: string,
  images: readonly { names: string[]; sizeBytes: number }[],
): Promise<void> {
  await retryBusy(
    () =>
      kube.api.patchNodeStatus(
        { name: node, body: { status: { images } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    { idempotent: true },
  );
}

function podManifest(
  name: string,
  template: number,
  image: ImageSpec,
  schedulerName: string | null,
  o: Options,
): V1Pod {
  return benchPod(name, NAMESPACE, {
    schedulerName,
    cpu: o.podCpu,
    memory: o.podMemory,
    image: image.name,
    labels: { app: 'bench-locality', [TEMPLATE_LABEL]: `tmpl-${String(template).padStart(2, '0')}` },
  });
}

// ------------------------------------------------------------------------------------------ one run

/**
 * One run. `kube` creates and watches the pods; `patcher`, on connections of its own, writes the model's ready
 * delays and the nodes' images, so that those never queue behind a burst of creates.
 */
async function oneRun(
  setup: Setup,
  run: number,
  o: Options,
  w: Workload,
  kube: Kube,
  patcher: Kube,
  env: Record<string, string>,
  nodeNames: readonly string[],
  nodeMilliCpu: number,
  configs: SetupConfigs,
): Promise<RunResult> {
  log(`run ${run}: ${setup}: resetting node images`);
  await deleteAllPods(kube, NAMESPACE, env.EXTENDER_URL!);
  const sim = seededCache(o, w);
  await inParallel(nodeNames, o.concurrency, (n) => patchNodeImages(patcher, n, sim.statusImages(n)));
  if (setup !== 'stock') await script('component.sh', ['restart', 'sandbox-extender', '--config', configs[setup]]);
  const byLocalitySince = setup === 'stock' ? null : await localityPlacementsSince(env.EXTENDER_URL!);

  const tracker = new StartingTracker();
  const kinds: Record<PullKind, number> = { warm: 0, joined: 0, pulled: 0 };
  const ackAt = new Map<string, number>();
  const readyAt = new Map<string, number>();
  const planned = new Set<string>();
  const boundCount = new Map<string, number>();
  const templateOf = new Map<string, number>();
  const patches: Promise<unknown>[] = [];
  const t0 = nowMs();
  const onPod = (type: PodEventType, pod: V1Pod) => {
    const t = nowMs() - t0;
    const { name, node, ready } = tracker.observePod(pod, type === 'DELETED');
    if (ready && !readyAt.has(name)) readyAt.set(name, t);
    if (node && !planned.has(name) && templateOf.has(name)) {
      planned.add(name);
      boundCount.set(node, (boundCount.get(node) ?? 0) + 1);
      const plan = sim.bind(node, w.images[templateOf.get(name)!]!, t, Math.max(0, tracker.startingOn(node) - 1));
      kinds[plan.kind]++;
      const body = { metadata: { annotations: { [READY_DELAY_ANNOTATION]: `${Math.round(plan.delayMs)}ms` } } };
      patches.push(
        retryBusy(
          () =>
            patcher.api.patchNamespacedPod(
              { name, namespace: NAMESPACE, body },
              setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
            ),
          { idempotent: true },
        ).catch((e: Error) => log(`annotating ${name}: ${e.message}`)),
      );
    }
  };
  const from = (await kube.api.listNamespacedPod({ namespace: NAMESPACE, limit: 1 })).metadata?.resourceVersion;
  const watch = new PodWatch(kube, NAMESPACE, onPod, from ?? '');
  await watch.start();
  // Finished pulls go to the nodes' status.images, as kubelet would report them at its next status update.
  let pulling = true;
  const pulls = (async () => {
    while (pulling) {
      const changed = sim.finishPulls(nowMs() - t0);
      await inParallel(changed, 16, (n) =>
        patchNodeImages(patcher, n, sim.statusImages(n)).catch(
          (e: Error) => void log(`node ${n} images: ${e.message}`),
        ),
      );
      await sleep(250);
    }
  })();

  const schedulerName = setup === 'stock' ? null : env.SANDBOX_SCHEDULER_NAME!;
  const perBurst = Math.ceil(o.pods / o.bursts);
  const width = String(o.pods - 1).length;
  for (let b = 0; b * perBurst < o.pods; b++) {
    const due = b * o.burstIntervalMs;
    const wait = due - (nowMs() - t0);
    if (wait > 0) await sleep(wait);
    const indexes = Array.from({ length: Math.min(perBurst, o.pods - b * perBurst) }, (_, i) => b * perBurst + i);
    await inParallel(indexes, o.concurrency, async (i) => {
      const name = `sbx-${String(i).padStart(width, '0')}`;
      const template = w.podTemplates[i]!;
      templateOf.set(name, template);
      await retryBusy(() =>
        kube.api.createNamespacedPod({
          namespace: NAMESPACE,
          body: podManifest(name, template, w.images[template]!, schedulerName, o),
        }),
      );
      ackAt.set(name, nowMs() - t0);
    });
  }
  await waitUntil(`${setup}: all ${o.pods} pods Ready`, 15 * 60_000, () => readyAt.size >= o.pods, 200);
  pulling = false;
  await pulls;
  watch.stop();
  await Promise.all(patches);

  const latencies = [...readyAt].map(([name, t]) => t - ackAt.get(name)!).sort((a, b) => a - b);
  const peakStarting = Math.max(0, ...tracker.peaks([...nodeNames]).values());
  const podMilliCpu = milliCpu(o.podCpu);
  const peakPressure = (Math.max(0, ...boundCount.values()) * podMilliCpu) / nodeMilliCpu;
  const byLocality = byLocalitySince ? await byLocalitySince() : null;
  const result: RunResult = {
    setup,
    run,
    pods: o.pods,
    kinds,
    createToReadyMs: {
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      max: latencies.at(-1) ?? null,
    },
    allReadySeconds: Math.max(...readyAt.values()) / 1000,
    peakPressure,
    peakStarting,
    byLocality,
    watchReopens: watch.reopens,
  };
  log(
    `${setup} run ${run}: warm ${kinds.warm}, joined ${kinds.joined}, pulled ${kinds.pulled}; create→Ready p50 ${fmt(result.createToReadyMs.p50, 0)} ms, p99 ${fmt(result.createToReadyMs.p99, 0)} ms; all Ready in ${result.allReadySeconds.toFixed(1)} s`,
  );
  return result;
}

// ------------------------------------------------------------------------------------------ output

/** The table `model` of bench/results/locality.json: the medians of each setup's runs (a ratio to stock's in brackets). */
export function modelTable(results: readonly RunResult[], o: Options): Table {
  const setups = o.setups.filter((s) => results.some((r) => r.setup === s));
  const med = (s: Setup, f: (r: RunResult) => number | null) => {
    const xs = results
      .filter((r) => r.setup === s)
      .map(f)
      .filter((x): x is number => x !== null);
    return xs.length === 0
      ? null
      : percentile(
          [...xs].sort((a, b) => a - b),
          0.5,
        );
  };
  const stock = (f: (r: RunResult) => number | null) => med('stock', f);
  const rows: string[][] = [['median of runs', ...setups.map((s) => (s === 'stock' ? 'stock' : LABELS[s]))]];
  const row = (label: string, f: (r: RunResult) => number | null, digits: number, vsStock = false) =>
    rows.push([
      label,
      ...setups.map((s) => {
        const v = med(s, f);
        const base = stock(f);
        return fmt(v, digits) + (vsStock && s !== 'stock' && v !== null && base ? ` (${(v / base).toFixed(2)}×)` : '');
      }),
    ]);
  row('warm-hit rate (image on the node at bind)', (r) => r.kinds.warm / r.pods, 3);
  row('joined a pull in flight', (r) => r.kinds.joined / r.pods, 3);
  row('pulls made', (r) => r.kinds.pulled, 0);
  row('creation → Ready p50 ms', (r) => r.createToReadyMs.p50, 0, true);
  row('creation → Ready p99 ms', (r) => r.createToReadyMs.p99, 0, true);
  row('creation → Ready max ms', (r) => r.createToReadyMs.max, 0, true);
  row('first create → all Ready s', (r) => r.allReadySeconds, 1, true);
  row('peak projected pressure (cpu)', (r) => r.peakPressure, 3);
  row('peak starting on any node', (r) => r.peakStarting, 0);
  rows.push([
    'extender placements warm/partial/cold',
    ...setups.map((s) => {
      const r = results.find((x) => x.setup === s && x.byLocality);
      return r?.byLocality ? `${r.byLocality.warm ?? 0}/${r.byLocality.partial ?? 0}/${r.byLocality.cold ?? 0}` : '-';
    }),
  ]);
  return tableOf('model', "The model: medians of the runs; in brackets, the ratio to stock's", rows);
}

function describe(o: Options): string {
  return (
    `Locality: ${o.pods} pods of ${o.podCpu} / ${o.podMemory} in ${o.bursts} bursts ${o.burstIntervalMs / 1000} s apart on ${o.nodes} (KWOK); ` +
    `${o.templates} templates, Zipf ${o.zipf}, images ${o.imageMinGib}–${o.imageMaxGib} GiB, each on ${o.seedShare * 100} % of the nodes at first; ` +
    `pulls ${o.bandwidthMib} MiB/s one at a time per node, warm start ${o.warmStartMs} ms + ${o.slopeMs} ms per sandbox starting on the node; ` +
    `locality.pressureBand ${o.band}; limit = startingLimit.perNode ${o.perNode}; ${o.runs} run(s) per setup, interleaved`
  );
}

// ------------------------------------------------------------------------------------------ main

async function main(): Promise<void> {
  const program = new Command('bench:locality')
    .exitOverride(exitOnUsage)
    .description(
      'Time to a Ready sandbox under a pull-cost model on KWOK: stock default-scheduler vs sandbox-scheduler with locality off and on, the starting limit off and on.',
    )
    .option('--nodes <shape>', 'CLUSTER_NODES of cluster-up.sh', clusterNodes, '1000x32/128Gi')
    .option('--pods <n>', 'pods per run', positiveInt, 2000)
    .option('--bursts <n>', 'bursts per run (pods split evenly)', positiveInt, 10)
    .option('--burst-interval-ms <ms>', 'time between the starts of two bursts', positiveInt, 5000)
    .option('--templates <n>', 'templates (one image each)', positiveInt, 20)
    .option('--zipf <s>', 'Zipf exponent of template popularity', positive, 1)
    .option('--image-min-gib <g>', 'smallest image', positive, 0.3)
    .option('--image-max-gib <g>', 'largest image', positive, 2)
    .option(
      '--seed-share <x>',
      'share of the nodes holding each image at first (0: none; else at least one node)',
      fraction,
      0.05,
    )
    .option('--pod-cpu <q>', 'cpu request (= limit) per pod', quantity, '500m')
    .option('--pod-memory <q>', 'memory request (= limit) per pod', quantity, '1Gi')
    .option('--bandwidth-mib <x>', 'pull bandwidth of a node, MiB/s', positive, 100)
    .option('--warm-start-ms <ms>', 'bind → Ready with the image on the node', positiveInt, 1000)
    .option('--slope-ms <ms>', 'added per sandbox already starting on the node', nonNegative, 250)
    .option('--per-node <n>', 'startingLimit.perNode of the limit setups', positiveInt, 4)
    .option('--band <x>', 'locality.pressureBand of the locality-on setups', fraction, 0.05)
    .option('--runs <n>', 'runs per setup', positiveInt, 1)
    .option('--setups <list>', `which setups, in this order each run (${SETUPS.join(',')})`, listOf(oneOf(SETUPS)), [
      ...SETUPS,
    ])
    .option('--seed <n>', 'seed of the workload', positiveInt, 1)
    .option('--concurrency <n>', 'API requests in flight', positiveInt, 32)
    .option(
      '--reuse',
      'use the cluster that is up (started with KWOK_POD_READY_DELAY=3600s) and leave it running',
      false,
    )
    .parse();
  const o = program.opts<Options>();
  if (o.imageMinGib > o.imageMaxGib) program.error('error: --image-min-gib must not exceed --image-max-gib');
  const configs = writeSetupConfigs('locality', o);
  if (!o.reuse)
    await script('cluster-up.sh', [], {
      CLUSTER_NODES: o.nodes,
      KWOK_POD_READY_DELAY: '3600s',
      EXTENDER_MODE: 'cluster',
      EXTENDER_BIND: '0',
      AGENT_SANDBOX: '0',
      E2E_START_TIMEOUT: '600',
    });
  const results: RunResult[] = [];
  const report = startReport('locality', o);
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL', 'SANDBOX_SCHEDULER_NAME']);
    if (env.EXTENDER_MODE !== 'cluster') throw new Error('the bench needs the extender in cluster mode');
    if (Number(env.KWOK_POD_READY_DELAY_MS) < 600_000)
      throw new Error(
        `the cluster's default ready delay is ${env.KWOK_POD_READY_DELAY_MS} ms: start it with KWOK_POD_READY_DELAY=3600s, so that only the model's delay applies`,
      );
    const kube = await Kube.connect(env.KUBECONFIG!, o.concurrency);
    const patcher = await Kube.connect(env.KUBECONFIG!, o.concurrency);
    const untaint = await untaintNodes(kube);
    const nodes = await kube.nodes();
    const nodeNames = nodes.map((n) => n.metadata!.name!).sort();
    const nodeMilliCpu = milliCpu(String(nodes[0]?.status?.allocatable?.cpu ?? '1'));
    log(`${nodeNames.length} nodes (${untaint.removed} not-ready taints removed)`);
    await ensureNamespace(kube, NAMESPACE);
    const w = workload(o, nodeNames);
    for (let run = 1; run <= o.runs; run++) {
      for (const setup of o.setups) {
        results.push(await oneRun(setup, run, o, w, kube, patcher, env, nodeNames, nodeMilliCpu, configs));
        report.runs = results;
        report.tables = [modelTable(results, o)];
        writeReport(report, undefined, () => undefined);
      }
    }
    await deleteAllPods(kube, NAMESPACE, env.EXTENDER_URL!);
    kube.agent.destroy();
    patcher.agent.destroy();
  } finally {
    if (!o.reuse) await script('cluster-down.sh', ['--keep-logs']).catch((e: Error) => log(e.message));
    else await script('component.sh', ['restart', 'sandbox-extender']).catch((e: Error) => log(e.message));
  }
  console.log([describe(o), '', textTable(modelTable(results, o)), ''].join('\n'));
  writeReport(report);
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:locality'));
