/**
 * `npm run bench -- shared`: two schedulers, one set of nodes. A mixed burst of default-scheduler and
 * sandbox-scheduler pods, created together onto KWOK nodes that end full on the local control plane, under four
 * configurations (stock, bind-off, bind-on, one-process), over-commit counted by bench/overcommit.ts. Never part
 * of CI. The configurations and figures: docs/benchmarks.md#two-schedulers-on-one-set-of-nodes;
 * `npm run bench -- shared -- --help` for the options.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { parse, stringify } from 'yaml';
import type { Node } from '../src/core/objects/kubeObjects.js';
import {
  benchPod,
  createPods,
  deleteBurst,
  ensureNamespace,
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
  REPO_ROOT,
  script,
  sleep,
  STATE_DIR,
  waitUntil,
  type ClusterEnv,
} from '../test/e2e/kit/controlPlane.js';
import { sumSamples } from './clusterStats.js';
import { placementsFromLog, replayOvercommit, type OvercommitReport } from './overcommit.js';
import { exitWith, startReport, tableOf, textTable, writeReport } from './report.js';
import type { Table } from './results.js';
import { clusterNodes, exitOnUsage, positiveInt, quantity } from './cliOptions.js';

const NAMESPACE = 'bench-shared';
const CONFIGS = ['stock', 'bind-off', 'bind-on', 'one-process'] as const;
export type Config = (typeof CONFIGS)[number];

export interface Options {
  nodes: string;
  pods: number;
  podCpu: string;
  podMemory: string;
  rounds: number;
  configs: Config[];
  concurrency: number;
  stallSeconds: number;
  reuse: boolean;
  out?: string | undefined;
}

export interface Round {
  config: Config;
  round: number;
  pods: number;
  bound: Record<string, number>;
  unbound: Record<string, number>;
  overAtEnd: OvercommitReport['overAtEnd'];
  nodesEverOver: number;
  peakOverAtOnce: number;
  overflowsBy: Record<string, number>;
  violations: OvercommitReport['violations'];
  placementsJudged: number;
  bindRefused: number;
  seconds: number;
}

// ------------------------------------------------------------------------------------------ the sandbox scheduler's configuration

type SchedulerConfig = {
  profiles: Record<string, unknown>[];
  extenders?: Record<string, unknown>[];
  [k: string]: unknown;
};

/**
 * Sets the configuration under test. `component.sh bind on|off` writes the canonical extender configuration
 * (and restarts when it changes); stock and one-process are written from it here and applied by a restart.
 */
async function configure(config: Config, env: ClusterEnv, current: { config: Config | null }): Promise<void> {
  if (current.config === config) return;
  if (current.config === 'one-process') await script('component.sh', ['start', 'kube-scheduler-default']);
  await script('component.sh', ['bind', config === 'bind-off' ? 'off' : 'on']);
  if (config === 'stock' || config === 'one-process') {
    const file = env.SANDBOX_SCHEDULER_CONFIG!;
    const yaml = parse(readFileSync(file, 'utf8')) as SchedulerConfig;
    const sandboxProfile = yaml.profiles[0]!;
    if (config === 'stock') {
      delete yaml.extenders;
      yaml.profiles = [{ schedulerName: sandboxProfile.schedulerName }];
    } else {
      yaml.profiles = [sandboxProfile, { schedulerName: 'default-scheduler' }];
      await script('component.sh', ['stop', 'kube-scheduler-default']);
    }
    writeFileSync(file, stringify(yaml));
    await script('component.sh', ['restart', 'kube-scheduler-sandbox']);
  }
  current.config = config;
}

// ------------------------------------------------------------------------------------------ one round

const counts = (m: ReadonlyMap<string, number>) =>
  Object.fromEntries([...m].map(([k, v]) => [k === 'default-scheduler' ? 'default' : 'sandbox', v]));

async function oneRound(
  kube: Kube,
  env: ClusterEnv,
  nodes: Node[],
  config: Config,
  round: number,
  o: Options,
): Promise<Round> {
  const extenderLog = join(STATE_DIR, 'logs', 'sandbox-extender.log');
  const logFrom = existsSync(extenderLog) ? statSync(extenderLog).size : 0;
  const doesNotFit = async () =>
    sumSamples(await scrape(env.EXTENDER_URL!, kube), 'sandbox_extender_binds_total', { result: 'does_not_fit' });
  const refusedBefore = await doesNotFit();
  const changes = new PodChangeLog(kube);
  await changes.start();
  const width = String(o.pods - 1).length;
  const pod = { cpu: o.podCpu, memory: o.podMemory, labels: { app: 'bench-shared' } };
  const manifests = Array.from({ length: o.pods }, (_, i) => [
    benchPod(`sbx-${round}-${String(i).padStart(width, '0')}`, NAMESPACE, {
      ...pod,
      schedulerName: env.SANDBOX_SCHEDULER_NAME!,
    }),
    benchPod(`std-${round}-${String(i).padStart(width, '0')}`, NAMESPACE, {
      ...pod,
      schedulerName: 'default-scheduler',
    }),
  ]).flat();
  const names = new Set(manifests.map((m) => m.metadata!.name!));
  const t0 = nowMs();
  await createPods(kube, NAMESPACE, manifests, o.concurrency);
  // Until every pod is bound, or no pod was bound for stallSeconds (an over-committed cluster leaves some without room).
  let lastBound = -1;
  let lastChangeMs = nowMs();
  let doneMs = nowMs();
  await waitUntil(
    'the burst to be placed',
    600_000,
    () => {
      const bound = new Set(
        changes.changes
          .filter((c) => names.has(c.pod.metadata!.name!) && c.pod.spec?.nodeName)
          .map((c) => c.pod.metadata!.name!),
      ).size;
      if (bound !== lastBound) {
        lastBound = bound;
        lastChangeMs = doneMs = nowMs();
      }
      return bound === names.size || nowMs() - lastChangeMs > o.stallSeconds * 1000;
    },
    100,
  );
  const seconds = (doneMs - t0) / 1000;
  const bindRefused = (await doesNotFit()) - refusedBefore;
  changes.stop();
  const placements = placementsFromLog(readFileSync(extenderLog, 'utf8').slice(logFrom)).filter((p) =>
    p.pod.startsWith(`${NAMESPACE}/`),
  );
  const replay = replayOvercommit(nodes, changes.changes, placements);
  const overflowsBy: Record<string, number> = {};
  for (const f of replay.overflows)
    overflowsBy[f.schedulerName === 'default-scheduler' ? 'default' : 'sandbox'] =
      (overflowsBy[f.schedulerName === 'default-scheduler' ? 'default' : 'sandbox'] ?? 0) + 1;
  const result: Round = {
    config,
    round,
    pods: names.size,
    bound: counts(replay.bound),
    unbound: counts(replay.unbound),
    overAtEnd: replay.overAtEnd,
    nodesEverOver: replay.nodesEverOver,
    peakOverAtOnce: replay.peakOverAtOnce,
    overflowsBy,
    violations: replay.violations,
    placementsJudged: placements.length,
    bindRefused,
    seconds,
  };
  log(
    `round ${round} ${config}: over at the end ${replay.overAtEnd.length}, at any time ${replay.nodesEverOver}, taken over by ${JSON.stringify(overflowsBy)}, violations ${replay.violations.length}, refused ${bindRefused}, unbound ${JSON.stringify(result.unbound)}`,
  );
  // Clean up: every pod of the round gone, the extender settled (no reservation pending).
  await deleteBurst(kube, NAMESPACE, { timeoutMs: 180_000, everyMs: 500 });
  await waitUntil(
    'the extender to settle',
    120_000,
    async () => {
      const m = await scrape(env.EXTENDER_URL!, kube);
      return (
        sumSamples(m, 'sandbox_extender_reservations_pending') === 0 &&
        sumSamples(m, 'sandbox_extender_snapshot_objects', { kind: 'pod' }) === 0
      );
    },
    500,
  );
  return result;
}

// ------------------------------------------------------------------------------------------ output

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** Each configuration as the published table names it. */
const CONFIG_LABEL: Record<Config, string> = {
  stock: 'stock (a second kube-scheduler, no extender)',
  'bind-off': "bind-off (the extender's Filter; the chart's default)",
  'bind-on': 'bind-on (the extender binds, re-checking the node)',
  'one-process': 'one-process (both profiles in one kube-scheduler)',
};

/** The table `overcommit` of bench/results/shared.json: per configuration, each round's figures, then their sum. */

export function overcommitTable(rounds: readonly Round[], configs: readonly Config[], o: Options): Table {
  const rows = [
    [
      'configuration',
      'rounds',
      'over at end',
      'over at any time',
      'most at once',
      'taken over by sandbox / default',
      'violations',
      'bind refused',
      'pods unbound',
      'placed in (median s)',
    ],
  ];
  for (const c of configs) {
    const rs = rounds.filter((r) => r.config === c);
    if (rs.length === 0) continue;
    const per = (f: (r: Round) => number) => rs.map(f).join(' ');
    const secs = rs.map((r) => r.seconds).sort((a, b) => a - b);
    rows.push([
      CONFIG_LABEL[c],
      String(rs.length),
      `${per((r) => r.overAtEnd.length)} (Σ ${sum(rs.map((r) => r.overAtEnd.length))})`,
      `${per((r) => r.nodesEverOver)} (Σ ${sum(rs.map((r) => r.nodesEverOver))})`,
      per((r) => r.peakOverAtOnce),
      `${sum(rs.map((r) => r.overflowsBy.sandbox ?? 0))} / ${sum(rs.map((r) => r.overflowsBy.default ?? 0))}`,
      String(sum(rs.map((r) => r.violations.length))),
      String(sum(rs.map((r) => r.bindRefused))),
      per((r) => sum(Object.values(r.unbound))),
      secs[Math.floor(secs.length / 2)]!.toFixed(1),
    ]);
  }
  return tableOf(
    'overcommit',
    `${o.pods} sandbox-scheduler + ${o.pods} default-scheduler pods of ${o.podCpu} CPU / ${o.podMemory}, created together, on ${o.nodes} (per round values, then the sum)`,
    rows,
  );
}

// ------------------------------------------------------------------------------------------ main

function parseOptions(argv: string[]): Options {
  const program = new Command('bench:shared')
    .exitOverride(exitOnUsage)
    .description('Over-commit when default-scheduler and sandbox-scheduler share the nodes (see bench/sharedNodes.ts)')
    .option('--nodes <shape>', 'CLUSTER_NODES of the cluster ([COUNTx]CPUS[/MEMORY])', clusterNodes, '40x8/32Gi')
    .option('--pods <n>', 'pods per scheduler per round', positiveInt, 160)
    .option('--pod-cpu <q>', 'cpu request of each pod', quantity, '1')
    .option('--pod-memory <q>', 'memory request of each pod', quantity, '2Gi')
    .option('--rounds <n>', 'rounds per configuration', positiveInt, 5)
    .option(
      '--configs <list>',
      `configurations, comma-separated (${CONFIGS.join(', ')})`,
      (v) => {
        const list = v.split(',').map((s) => s.trim());
        for (const c of list)
          if (!(CONFIGS as readonly string[]).includes(c)) throw new InvalidArgumentError(`unknown configuration ${c}`);
        return list as Config[];
      },
      [...CONFIGS],
    )
    .option('--concurrency <n>', 'creates in flight', positiveInt, 32)
    .option(
      '--stall-seconds <n>',
      'a round ends when no pod was bound for this long (pods without room stay pending)',
      positiveInt,
      10,
    )
    .option(
      '--reuse',
      'use the running cluster (started with an extender config holding logLevel: debug) and leave it up',
      false,
    )
    .option('--out <file>', 'the report (default .e2e-bench/shared-DATE.json; bench/report.ts)')
    .parse(['node', 'bench:shared', ...argv]);
  return program.opts<Options>();
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  const outDir = join(REPO_ROOT, '.e2e-bench');
  mkdirSync(outDir, { recursive: true });
  const report = startReport('shared', o);
  const outFile = o.out ? resolve(o.out) : undefined;
  if (!o.reuse) {
    // The decisions' debug lines carry the pods' resourceVersion the extender had.
    const config = join(outDir, 'shared-extender.yaml');
    writeFileSync(config, stringify({ logLevel: 'debug' }));
    log(`cluster up: ${o.nodes}`);
    await script('cluster-up.sh', [], { CLUSTER_NODES: o.nodes, EXTENDER_CONFIG: config, AGENT_SANDBOX: '0' });
  }
  const current: { config: Config | null } = { config: null };
  try {
    const env = readClusterEnv(['KUBECONFIG', 'EXTENDER_URL', 'SANDBOX_SCHEDULER_CONFIG', 'SANDBOX_SCHEDULER_NAME']);
    const kube = await Kube.connect(env.KUBECONFIG!, o.concurrency);
    await ensureNamespace(kube, NAMESPACE);
    const rounds: Round[] = [];
    for (let round = 0; round < o.rounds; round++) {
      // Interleaved, the order turning each round, so that no configuration always runs first or last.
      const order = o.configs.map((_, i) => o.configs[(i + round) % o.configs.length]!);
      for (const config of order) {
        const tainted = (await kube.nodes()).filter((n) => taintsToClear(n).length > 0).length;
        if (tainted > 0) await untaintNodes(kube);
        await configure(config, env, current);
        await sleep(2000); // the restarted scheduler's informers are warm
        const nodes = (await kube.nodes()) as unknown as Node[];
        rounds.push(await oneRound(kube, env, nodes, config, round, o));
        report.runs = rounds;
        report.tables = [overcommitTable(rounds, o.configs, o)];
        writeReport(report, outFile, () => undefined);
      }
    }
    process.stdout.write(`${textTable(report.tables[0]!)}\n\n`);
    writeReport(report, outFile);
  } finally {
    if (o.reuse) {
      if (current.config === 'one-process')
        await script('component.sh', ['start', 'kube-scheduler-default']).catch(() => undefined);
      await script('component.sh', ['bind', 'on']).catch(() => undefined);
    } else await script('cluster-down.sh', ['--keep-logs']);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main().catch(exitWith('bench:shared'));
