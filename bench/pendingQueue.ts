/**
 * `npm run bench -- pending`: a runaway Pending queue on the local control plane: pods that only the extender
 * rejects (the nodes hold paused sandboxes kube-scheduler does not count), retried by kube-scheduler on every
 * cluster event, beside a burst that fits, then nodes added. Never part of CI. Why this is the extender's worst
 * case: docs/cluster-mode.md#a-runaway-pending-queue; the steps and figures:
 * docs/benchmarks.md#a-runaway-pending-queue. `npm run bench -- pending -- --help` for the options.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { Command, InvalidArgumentError } from 'commander';
import {
  benchPod,
  createPods,
  ensureNamespace,
  httpsGet,
  inParallel,
  Kube,
  PodChangeLog,
  scrape,
  taintsToClear,
  untaintNodes,
} from '../test/e2e/kit/adminClient.js';
import {
  log,
  nowMs,
  readClusterEnv,
  script,
  STATE_DIR,
  waitUntil,
  type ClusterEnv,
} from '../test/e2e/kit/controlPlane.js';
import { exitWith, startReport, tableOf, textTable, writeReport } from './report.js';
import type { Table } from './results.js';
import {
  counterDeltas,
  histogram,
  histogramDelta,
  histogramQuantile,
  parsePrometheusText,
  percentile,
  podsPerSecond,
  sumBy,
  sumDelta,
  sumSamples,
  type Histogram,
  type Sample,
} from './clusterStats.js';
import { clusterNodes, exitOnUsage, positiveInt, quantity } from './cliOptions.js';

const FILL_NS = 'bench-pending-fill';
const HOPELESS_NS = 'bench-pending';
const BURST_NS = 'bench-pending-burst';
const PAUSED = 'sandbox-extender.io/paused';

/** The PriorityClass of the burst with --burst-priority. */
const BURST_PRIORITY_CLASS = 'bench-pending-burst';

interface Options {
  nodes: string;
  hopeless: number;
  burst: number;
  addNodes: number;
  fillCpu: number;
  hopelessCpu: number;
  hopelessMemory: string;
  burstCpu: string;
  burstMemory: string;
  concurrency: number;
  burstPriority: number;
  reuse: boolean;
  out?: string | undefined;
}

interface Scrapes {
  extender: Sample[];
  scheduler: Sample[];
}

async function scrapeBoth(env: ClusterEnv, kube: Kube): Promise<Scrapes> {
  const [extender, scheduler] = await Promise.all([
    scrape(env.EXTENDER_URL!, kube),
    httpsGet(`${env.SANDBOX_SCHEDULER_URL}/metrics`, kube.clientCert)
      .then(parsePrometheusText)
      .catch(() => []),
  ]);
  return { extender, scheduler };
}

/** VmRSS of the extender (its pid file), MB. */
function extenderRssMb(): number {
  const pid = Number(readFileSync(join(STATE_DIR, 'pids', 'sandbox-extender'), 'utf8').split(' ')[0]);
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}

const ms = (h: Histogram, q: number) => {
  const v = histogramQuantile(q, h);
  return v === null ? null : v * 1000;
};

async function emptyNamespace(kube: Kube, namespace: string): Promise<void> {
  await kube.api.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 });
  await waitUntil(
    `${namespace} to be empty`,
    600_000,
    async () => (await kube.api.listNamespacedPod({ namespace, limit: 1 })).items.length === 0,
    1000,
  );
}

export interface BurstFigures {
  label: string;
  pods: number;
  podsPerSecond: number | null;
  createToBoundP50Ms: number | null;
  createToBoundP99Ms: number | null;
  windowSeconds: number;
  filterCalls: number;
  filterP50Ms: number | null;
  filterP99Ms: number | null;
  eventLoopP99Ms: number | null;
  extenderRssMb: number;
  scheduleAttempts: Record<string, number>;
  queueMovesByEvent: Record<string, number>;
  pendingPods: Record<string, number>;
  requeueWrites: number;
  podsNudged: number;
  rejectedRemembered: number;
  rejectedDropped: number;
}

async function burst(label: string, env: ClusterEnv, kube: Kube, o: Options, round: number): Promise<BurstFigures> {
  log(`burst: ${label}`);
  const changes = new PodChangeLog(kube, BURST_NS);
  await changes.start();
  const before = await scrapeBoth(env, kube);
  const priority = o.burstPriority > 0 ? { priorityClassName: BURST_PRIORITY_CLASS } : {};
  const manifests = Array.from({ length: o.burst }, (_, i) =>
    benchPod(`burst-${round}-${i}`, BURST_NS, {
      schedulerName: env.SANDBOX_SCHEDULER_NAME!,
      cpu: o.burstCpu,
      memory: o.burstMemory,
      ...priority,
    }),
  );
  const creation = await createPods(kube, BURST_NS, manifests, o.concurrency);
  await waitUntil(`the ${o.burst} pods of the burst bound`, 3_600_000, () => changes.boundAt().size >= o.burst, 100);
  const after = await scrapeBoth(env, kube);
  changes.stop();
  const bound = changes.boundAt();
  const binds = [...bound.values()];
  const latencies = manifests.map(
    (m) => bound.get(`${BURST_NS}/${m.metadata!.name}`)! - creation.ackMs.get(m.metadata!.name!)!,
  );
  const windowSeconds = (Math.max(...binds) - creation.startMs) / 1000;
  const filter = histogramDelta(
    histogram(after.extender, 'sandbox_extender_http_request_duration_seconds', { verb: 'filter' }),
    histogram(before.extender, 'sandbox_extender_http_request_duration_seconds', { verb: 'filter' }),
  );
  const loop = histogramDelta(
    histogram(after.extender, 'sandbox_extender_event_loop_delay_seconds'),
    histogram(before.extender, 'sandbox_extender_event_loop_delay_seconds'),
  );
  const profile = { profile: env.SANDBOX_SCHEDULER_NAME! };
  const figures: BurstFigures = {
    label,
    pods: o.burst,
    podsPerSecond: podsPerSecond(binds),
    createToBoundP50Ms: percentile(latencies, 0.5),
    createToBoundP99Ms: percentile(latencies, 0.99),
    windowSeconds,
    filterCalls: filter.count,
    filterP50Ms: ms(filter, 0.5),
    filterP99Ms: ms(filter, 0.99),
    eventLoopP99Ms: ms(loop, 0.99),
    extenderRssMb: extenderRssMb(),
    scheduleAttempts: counterDeltas(
      after.scheduler,
      before.scheduler,
      'scheduler_schedule_attempts_total',
      'result',
      profile,
    ),
    queueMovesByEvent: counterDeltas(after.scheduler, before.scheduler, 'scheduler_queue_incoming_pods_total', 'event'),
    pendingPods: Object.fromEntries(sumBy(after.scheduler, 'scheduler_pending_pods', 'queue')),
    requeueWrites: sumDelta(after.extender, before.extender, 'sandbox_extender_requeue_writes_total'),
    podsNudged: sumDelta(after.extender, before.extender, 'sandbox_extender_pods_nudged_total'),
    rejectedRemembered: sumSamples(after.extender, 'sandbox_extender_rejected_pods'),
    rejectedDropped: sumSamples(after.extender, 'sandbox_extender_rejected_pods_dropped_total'),
  };
  log(`burst ${label}: ${JSON.stringify(figures)}`);
  await emptyNamespace(kube, BURST_NS);
  return figures;
}

/** KWOK nodes as cluster-nodes.mjs makes them (examples/cluster/README.md), named PREFIX-NNN. */
function kwokNode(name: string, cpu: string, memory: string): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: {},
    status: { allocatable: { cpu, memory, pods: '110' }, capacity: { cpu, memory, pods: '110' } },
  };
}

function parseShape(shape: string): { count: number; cpu: number; memory: string } {
  const m = /^(\d+)x(\d+)\/(\S+)$/.exec(shape);
  if (!m) throw new InvalidArgumentError(`expected COUNTxCPUS/MEMORY, e.g. 100x32/128Gi, not ${shape}`);
  return { count: Number(m[1]), cpu: Number(m[2]), memory: m[3]! };
}

/** What the hopeless pods and the added nodes gave, for the table's notes (the run's `hopeless` and `nodesAdded`). */
export interface QueueFigures {
  readonly hopeless: {
    readonly pods: number;
    readonly createSeconds: number;
    readonly allTriedSeconds: number;
    readonly rejectedRemembered: number;
  };
  readonly nodesAdded: {
    readonly nodes: number;
    readonly podsThatFit: number;
    readonly allFitBoundSeconds: number;
    readonly boundOutsideTheAddedNodes: number;
    readonly requeueWrites: number;
  };
}

/** A finite number with `d` decimals, else "-". */
const f = (v: number | null | undefined, d = 1) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '-');

/** The queue moves a burst caused beyond its own pods' arrival and failures, most first ("29042 AssignedPodAdd, …"). */
function queueMoves(moves: Record<string, number>): string | null {
  const own = new Set(['UnschedulablePodAdd', 'ScheduleAttemptFailure']);
  const rest = Object.entries(moves)
    .filter(([event, n]) => !own.has(event) && n > 0)
    .sort((a, b) => b[1] - a[1]);
  return rest.length ? rest.map(([event, n]) => `${n} ${event}`).join(', ') : null;
}

/** kube-scheduler's attempts by result, as "1000 placed, 30064 unschedulable". */
function attempts(byResult: Record<string, number>): string {
  const { scheduled = 0, ...rest } = byResult;
  return [`${scheduled} placed`, ...Object.entries(rest).map(([result, n]) => `${n} ${result}`)].join(', ');
}

/**
 * The burst alone and beside the waiting pods, as bench/results/pending.json's `same-priority` (or, with a
 * PriorityClass for the burst, `priority`) table; the notes say what the waiting pods and the added nodes gave.
 */
export function burstTable(
  [alone, beside]: readonly [BurstFigures, BurstFigures],
  burstPriority: number,
  queue?: QueueFigures,
): Table {
  /** a ÷ b, with 2 decimals below 10 (1.19) and none from 10 on (70: the waiting time of a starved burst). */
  const ratio = (a: number | null, b: number | null) =>
    a !== null && b !== null && b > 0 ? (a / b).toFixed(a / b < 10 ? 2 : 0) : '-';
  const pair = (x: BurstFigures, a: keyof BurstFigures, b: keyof BurstFigures, d: number) =>
    `${f(x[a] as number | null, d)} / ${f(x[b] as number | null, d)}`;
  const rows: (string | null)[][] = [
    ['burst figure', alone.label, beside.label, 'ratio'],
    [
      'pods/s over the binding window',
      f(alone.podsPerSecond),
      f(beside.podsPerSecond),
      ratio(beside.podsPerSecond, alone.podsPerSecond),
    ],
    [
      'creation → bound p50 / p99 ms',
      pair(alone, 'createToBoundP50Ms', 'createToBoundP99Ms', 0),
      pair(beside, 'createToBoundP50Ms', 'createToBoundP99Ms', 0),
      `${ratio(beside.createToBoundP50Ms, alone.createToBoundP50Ms)} / ${ratio(beside.createToBoundP99Ms, alone.createToBoundP99Ms)}`,
    ],
    ['extender Filter calls in the window', String(alone.filterCalls), String(beside.filterCalls), null],
    [
      'extender Filter p50 / p99 ms',
      pair(alone, 'filterP50Ms', 'filterP99Ms', 2),
      pair(beside, 'filterP50Ms', 'filterP99Ms', 2),
      null,
    ],
    ['extender RSS MB', f(alone.extenderRssMb, 0), f(beside.extenderRssMb, 0), null],
    ['kube-scheduler attempts', attempts(alone.scheduleAttempts), attempts(beside.scheduleAttempts), null],
    [
      'kube-scheduler queue moves in the window',
      queueMoves(alone.queueMovesByEvent ?? {}) ?? null,
      queueMoves(beside.queueMovesByEvent ?? {}) ?? null,
      null,
    ],
    [
      'rejected pods remembered / dropped (total)',
      `${alone.rejectedRemembered} / ${alone.rejectedDropped}`,
      `${beside.rejectedRemembered} / ${beside.rejectedDropped}`,
      null,
    ],
  ];
  const count = (n: number) => n.toLocaleString('en-US');
  const waiting = queue
    ? `The ${count(queue.hopeless.pods)} waiting pods: created in ${f(queue.hopeless.createSeconds)} s, each tried ` +
      `once ${f(queue.hopeless.allTriedSeconds, 0)} s after the first was created; rejected pods remembered ` +
      `${count(queue.hopeless.rejectedRemembered)} (requeue.maxPods).`
    : '';
  const added = queue
    ? `${queue.nodesAdded.nodes} nodes added (${count(queue.nodesAdded.podsThatFit)} waiting pods fit on them): ` +
      `all ${count(queue.nodesAdded.podsThatFit)} bound ${f(queue.nodesAdded.allFitBoundSeconds)} s after the first ` +
      `node was created, ${queue.nodesAdded.boundOutsideTheAddedNodes} elsewhere; ${queue.nodesAdded.requeueWrites} requeue writes.`
    : '';
  // the waiting pods' line only in the same-priority table (the priority table is the same queue again)
  const notes = queue ? [burstPriority > 0 ? added : `${waiting} ${added}`] : undefined;
  return tableOf(
    burstPriority > 0 ? 'priority' : 'same-priority',
    burstPriority > 0
      ? `The burst in a PriorityClass of ${burstPriority} (preemptionPolicy: Never), the waiting pods in none`
      : 'The burst alone and beside the waiting pods, all of one priority',
    rows,
    notes,
  );
}

async function main(): Promise<void> {
  const o = new Command('bench:pending')
    .exitOverride(exitOnUsage)
    .description('A runaway Pending queue beside a normal burst, then nodes added (see bench/pendingQueue.ts)')
    .option('--nodes <shape>', 'CLUSTER_NODES of the cluster (COUNTxCPUS/MEMORY)', clusterNodes, '100x32/128Gi')
    .option('--hopeless <n>', 'pods that fit nowhere', positiveInt, 30_000)
    .option('--burst <n>', 'pods of the burst that fit', positiveInt, 1000)
    .option('--add-nodes <n>', 'empty nodes added at the end (the cluster shape)', positiveInt, 500)
    .option(
      '--fill-cpu <n>',
      'CPUs each node holds in a paused Succeeded sandbox (the extender counts it, kube-scheduler does not)',
      positiveInt,
      24,
    )
    .option(
      '--hopeless-cpu <n>',
      "CPUs of each hopeless pod (more than a node has left in the extender's model)",
      positiveInt,
      12,
    )
    .option('--hopeless-memory <q>', 'memory of each hopeless pod', quantity, '8Gi')
    .option('--burst-cpu <q>', 'cpu of each burst pod', quantity, '250m')
    .option('--burst-memory <q>', 'memory of each burst pod', quantity, '512Mi')
    .option('--concurrency <n>', 'creates in flight', positiveInt, 32)
    .option(
      '--burst-priority <n>',
      `the burst's pods in PriorityClass ${BURST_PRIORITY_CLASS} of this value (preemptionPolicy Never); 0: no class, the hopeless pods' priority`,
      (v) => (v === '0' ? 0 : positiveInt(v)),
      0,
    )
    .option('--reuse', 'use the running cluster (the shape of --nodes) and leave it up', false)
    .option('--out <file>', 'the report (default .e2e-bench/pending-DATE.json; bench/report.ts)')
    .parse(['node', 'bench:pending', ...process.argv.slice(2)])
    .opts<Options>();
  const shape = parseShape(o.nodes);
  if (o.hopelessCpu <= shape.cpu - o.fillCpu)
    throw new InvalidArgumentError('--hopeless-cpu must exceed what a node has left after --fill-cpu');
  const report = startReport('pending', o);
  const outFile = o.out ? resolve(o.out) : undefined;
  if (!o.reuse) {
    log(`cluster up: ${o.nodes}`);
    await script('cluster-up.sh', [], { CLUSTER_NODES: o.nodes, AGENT_SANDBOX: '0' });
  }
  // the run's figures, the report's one run record, written after each step
  const record: Record<string, unknown> = {};
  report.runs = [record];
  const save = () => writeReport(report, outFile, () => undefined);
  try {
    const env = readClusterEnv([
      'KUBECONFIG',
      'KUBECTL',
      'EXTENDER_URL',
      'SANDBOX_SCHEDULER_URL',
      'SANDBOX_SCHEDULER_NAME',
    ]);
    const kube = await Kube.connect(env.KUBECONFIG!, o.concurrency);
    if ((await kube.nodes()).some((n) => taintsToClear(n).length > 0)) await untaintNodes(kube);
    for (const ns of [FILL_NS, HOPELESS_NS, BURST_NS]) await ensureNamespace(kube, ns);
    if (o.burstPriority > 0) {
      // kube-scheduler's active queue is ordered by priority first (PrioritySort), so the burst goes before every
      // waiting pod of a lower priority, however many there are; Never: it takes no one's place.
      const manifest = {
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: BURST_PRIORITY_CLASS },
        value: o.burstPriority,
        preemptionPolicy: 'Never',
        globalDefault: false,
      };
      execFileSync(env.KUBECTL!, ['--kubeconfig', env.KUBECONFIG!, 'apply', '-f', '-'], {
        input: JSON.stringify(manifest),
        stdio: ['pipe', 'ignore', 'inherit'],
      });
    }
    const nodeNames = (await kube.nodes()).map((n) => n.metadata!.name!);

    // ---- every node full in the extender's model: a paused sandbox of fillCpu, Succeeded
    log(`filling ${nodeNames.length} nodes with a paused Succeeded sandbox of ${o.fillCpu} CPUs each`);
    const fillers = nodeNames.map((n) =>
      benchPod(`fill-${n}`, FILL_NS, {
        schedulerName: 'default-scheduler',
        cpu: String(o.fillCpu),
        memory: `${o.fillCpu * 4}Gi`,
        nodeName: n,
        labels: { [PAUSED]: 'true' },
      }),
    );
    await createPods(kube, FILL_NS, fillers, o.concurrency);
    await waitUntil(
      'the fillers Running',
      300_000,
      async () =>
        (await kube.api.listNamespacedPod({ namespace: FILL_NS })).items.filter((p) => p.status?.phase === 'Running')
          .length === fillers.length,
      1000,
    );
    await inParallel(fillers, 16, async (f) => {
      await kube.api.patchNamespacedPodStatus(
        { name: f.metadata!.name!, namespace: FILL_NS, body: { status: { phase: 'Succeeded' } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    });
    await waitUntil(
      "the extender's model to count the fillers as paused",
      120_000,
      async () => {
        const view = (await (await fetch(`${env.EXTENDER_URL}/debug/nodes`)).json()) as { paused: { cpu: number } }[];
        return view.reduce((s, n) => s + n.paused.cpu, 0) === nodeNames.length * o.fillCpu * 1000;
      },
      1000,
    );
    record.rssAfterFillMb = extenderRssMb();

    // ---- 1. the burst alone
    const bursts: BurstFigures[] = [];
    record.bursts = bursts;
    bursts.push(await burst('alone', env, kube, o, 0));
    save();

    // ---- 2. the hopeless pods, each tried once
    const hopeless = Array.from({ length: o.hopeless }, (_, i) =>
      benchPod(`hopeless-${i}`, HOPELESS_NS, {
        schedulerName: env.SANDBOX_SCHEDULER_NAME!,
        cpu: String(o.hopelessCpu),
        memory: o.hopelessMemory,
      }),
    );
    const beforeHopeless = await scrapeBoth(env, kube);
    log(`creating ${o.hopeless} pods of ${o.hopelessCpu} CPUs that fit nowhere in the extender's model`);
    const creation = await createPods(kube, HOPELESS_NS, hopeless, o.concurrency);
    const attempts = (s: Sample[]) =>
      sumSamples(s, 'scheduler_schedule_attempts_total', {
        profile: env.SANDBOX_SCHEDULER_NAME!,
        result: 'unschedulable',
      });
    const tTried = nowMs();
    await waitUntil(
      `${o.hopeless} unschedulable attempts (each hopeless pod tried)`,
      3_600_000,
      async () => attempts((await scrapeBoth(env, kube)).scheduler) - attempts(beforeHopeless.scheduler) >= o.hopeless,
      2000,
    );
    const afterHopeless = await scrapeBoth(env, kube);
    record.hopeless = {
      pods: o.hopeless,
      createdPerSecond: (o.hopeless * 1000) / (creation.endMs - creation.startMs),
      createSeconds: (creation.endMs - creation.startMs) / 1000,
      allTriedSeconds: (nowMs() - creation.startMs) / 1000,
      waitedAfterCreateSeconds: (nowMs() - tTried) / 1000,
      extenderRssMb: extenderRssMb(),
      rejectedRemembered: sumSamples(afterHopeless.extender, 'sandbox_extender_rejected_pods'),
      rejectedDropped: sumSamples(afterHopeless.extender, 'sandbox_extender_rejected_pods_dropped_total'),
      requeueWrites: sumDelta(afterHopeless.extender, beforeHopeless.extender, 'sandbox_extender_requeue_writes_total'),
      pendingPods: Object.fromEntries(sumBy(afterHopeless.scheduler, 'scheduler_pending_pods', 'queue')),
    };
    log(`hopeless: ${JSON.stringify(record.hopeless)}`);
    save();

    // ---- 3. the burst beside them
    bursts.push(await burst(`beside ${o.hopeless.toLocaleString('en-US')} waiting pods`, env, kube, o, 1));
    save();

    // ---- 4. nodes added: the hopeless pods that now fit must be bound
    const fitPerNode = Math.min(
      Math.floor(shape.cpu / o.hopelessCpu),
      Math.floor(parseFloat(shape.memory) / parseFloat(o.hopelessMemory)),
    );
    const expected = Math.min(o.hopeless, o.addNodes * fitPerNode);
    const changes = new PodChangeLog(kube, HOPELESS_NS);
    await changes.start();
    const boundBefore = changes.boundAt().size;
    const beforeAdd = await scrapeBoth(env, kube);
    const width = String(o.addNodes - 1).length;
    const added = Array.from({ length: o.addNodes }, (_, i) =>
      kwokNode(`added-${String(i).padStart(width, '0')}`, String(shape.cpu), shape.memory),
    );
    log(
      `adding ${o.addNodes} nodes of ${shape.cpu} CPUs / ${shape.memory}: ${expected} hopeless pods fit on them (${fitPerNode} each)`,
    );
    const tAdd = nowMs();
    await inParallel(added, o.concurrency, async (n) => {
      await kube.api.createNode({ body: n });
    });
    const tCreated = nowMs();
    const untaint = untaintNodes(kube).then(() => nowMs());
    await waitUntil(
      `${expected} hopeless pods bound on the added nodes`,
      3_600_000,
      () => changes.boundAt().size - boundBefore >= expected,
      200,
    );
    const tUntainted = await untaint;
    const afterAdd = await scrapeBoth(env, kube);
    changes.stop();
    const binds = [...changes.boundAt().values()].filter((t) => t >= tAdd);
    const wrongNode = changes.changes.filter(
      (c) => c.pod.spec?.nodeName && !c.pod.spec.nodeName.startsWith('added-'),
    ).length;
    record.nodesAdded = {
      nodes: o.addNodes,
      podsThatFit: expected,
      createNodesSeconds: (tCreated - tAdd) / 1000,
      nodesUntaintedSeconds: (tUntainted - tAdd) / 1000,
      allFitBoundSeconds: (Math.max(...binds) - tAdd) / 1000,
      firstBoundSeconds: (Math.min(...binds) - tAdd) / 1000,
      podsPerSecond: podsPerSecond(binds),
      boundOutsideTheAddedNodes: wrongNode,
      requeueWrites: sumDelta(afterAdd.extender, beforeAdd.extender, 'sandbox_extender_requeue_writes_total'),
      podsNudged: sumDelta(afterAdd.extender, beforeAdd.extender, 'sandbox_extender_pods_nudged_total'),
      scheduleAttempts: counterDeltas(
        afterAdd.scheduler,
        beforeAdd.scheduler,
        'scheduler_schedule_attempts_total',
        'result',
        {
          profile: env.SANDBOX_SCHEDULER_NAME!,
        },
      ),
      extenderRssMb: extenderRssMb(),
      rejectedRemembered: sumSamples(afterAdd.extender, 'sandbox_extender_rejected_pods'),
      rejectedDropped: sumSamples(afterAdd.extender, 'sandbox_extender_rejected_pods_dropped_total'),
    };
    log(`nodes added: ${JSON.stringify(record.nodesAdded)}`);
    save();

    // ---- report
    const table = burstTable(bursts as [BurstFigures, BurstFigures], o.burstPriority, {
      hopeless: record.hopeless as QueueFigures['hopeless'],
      nodesAdded: record.nodesAdded as QueueFigures['nodesAdded'],
    });
    report.tables = [table];
    writeReport(report, outFile, () => undefined);
    const h = record.hopeless as Record<string, number>;
    const a = record.nodesAdded as Record<string, number>;
    process.stdout.write(
      `A runaway Pending queue on ${o.nodes} (each node holding a paused Succeeded sandbox of ${o.fillCpu} CPUs: full for the extender, not for kube-scheduler)${o.burstPriority > 0 ? `; the burst in PriorityClass ${BURST_PRIORITY_CLASS} (${o.burstPriority}), the hopeless pods without one` : ''}:\n\n` +
        `${textTable(table)}\n\n` +
        `hopeless pods: ${o.hopeless} of ${o.hopelessCpu} CPUs created in ${f(h.createSeconds)} s, each tried once after ${f(h.allTriedSeconds)} s; extender RSS ${f(h.extenderRssMb, 0)} MB; ` +
        `rejected pods remembered ${h.rejectedRemembered}, dropped ${h.rejectedDropped}; requeue writes meanwhile ${h.requeueWrites}\n` +
        `${o.addNodes} nodes added (${a.podsThatFit} hopeless pods fit on them): created in ${f(a.createNodesSeconds)} s, untainted after ${f(a.nodesUntaintedSeconds)} s, first bound after ${f(a.firstBoundSeconds)} s, ` +
        `all ${a.podsThatFit} bound ${f(a.allFitBoundSeconds)} s after the first node was created (${f(a.podsPerSecond)} pods/s; ${a.boundOutsideTheAddedNodes} bound elsewhere); requeue writes ${a.requeueWrites}\n\n`,
    );
    writeReport(report, outFile);
  } finally {
    if (!o.reuse) await script('cluster-down.sh', ['--keep-logs']);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:pending'));
