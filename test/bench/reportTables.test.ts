/**
 * The tables the bench programs put in their reports, built from made-up figures (no benchmark runs here): each
 * is a table bench/results.ts accepts, and those meant for a published table have its id and columns, so that
 * `npm run bench -- --publish` takes them.
 */
import { fileURLToPath } from 'node:url';
import { verbsTables, type VerbsFigures } from '../../bench/bench.js';
import { ceilingTable, type Step } from '../../bench/ceilingStats.js';
import { pooledTables, type Options, type RunResult, type ScaleRecord } from '../../bench/cluster.js';
import { perfTables, type Options as PerfOptions, type RunRecord } from '../../bench/schedulerPerf.js';
import { memoryTables, type ColdStart } from '../../bench/memory.js';
import { publish, startReport, tableOf } from '../../bench/report.js';
import { figureRows as agentSandboxRows, type RunResult as AgentSandboxRun } from '../../bench/agentSandbox.js';
import { boundsTables } from '../../bench/requestBounds.js';
import { samplingTables, type SamplingResult } from '../../bench/sampling.js';
import { takeoverTable } from '../../bench/failover.js';
import { modelTable, type Options as LocalityOptions, type RunResult as LocalityRun } from '../../bench/locality.js';
import { burstTable as pendingTable, type BurstFigures } from '../../bench/pendingQueue.js';
import { overcommitTable, type Options as SharedOptions, type Round } from '../../bench/sharedNodes.js';
import {
  burstTable as startingTable,
  type Options as StartingOptions,
  type RunResult as StartingRun,
} from '../../bench/startingBurst.js';
import { readyReportTable, type Options as ReadyOptions, type RunResult as ReadyRun } from '../../bench/timeToReady.js';
import { loadResults, tableSchema, type Scenario, type Table } from '../../bench/results.js';

const published = loadResults(fileURLToPath(new URL('../../', import.meta.url)));

/** Every table valid; `ids` are the published tables' ids and columns; a report of them publishes. */
function expectPublishable(scenario: Scenario, tables: Table[], ids: string[]): void {
  for (const t of tables) expect(tableSchema.safeParse(t).error).toBeUndefined();
  const result = published.get(scenario)!;
  const same = tables.filter((t) => result.tables.some((p) => p.id === t.id));
  expect(same.map((t) => t.id).sort()).toEqual([...ids].sort());
  for (const t of same) expect(t.columns).toEqual(result.tables.find((p) => p.id === t.id)!.columns);
  if (ids.length === 0) return;
  const report = startReport(scenario, {}, { BENCH_SCENARIO: scenario, BENCH_COMMAND: `npm run bench -- ${scenario}` });
  expect(publish(result, { ...report, runs: [{}], tables }).replaced.sort()).toEqual([...ids].sort());
}

const step = (rate: number, p50: number, p99: number): Step => ({
  rate,
  durationSeconds: 15,
  requests: rate * 15,
  throughput: rate || 1200,
  sentRate: rate,
  placed: rate * 15,
  notPlaced: 0,
  failed: 0,
  statusCodes: { '200': rate * 15 },
  errors: [],
  sampleBodies: [],
  latencyMs: { mean: p50, p50, p90: p99, p95: p99, p99, max: p99 * 2 },
});

describe('the in-process programs’ report tables', () => {
  it('verbs: `verbs` and `ranking-model` as published, its parts’ own', () => {
    const f: VerbsFigures = {
      day: '2026-12-04',
      verbs: [{ size: 1000, verb: 'prioritize (two calls)', floorMs: 0.27, workMs: 0.59, ratio: 2.18 }],
      rankingUs: 88,
      http: [
        ['nodes', 'node:http ms'],
        ['1000', '0.1'],
      ],
      model: { nodes: 5000, pods: 150_000, ms: 900, heapBytes: 60 * 1024 * 1024, podRecords: 150_000 },
    };
    const tables = verbsTables(f);
    expect(tables.map((t) => t.id)).toEqual(['verbs', 'ranking', 'http', 'model', 'ranking-model']);
    expect(tables[0]!.rows[0]).toEqual(['1,000', 'prioritize (two calls)', 0.27, 0.59, 2.18, '4 December', null]);
    expect(tables.find((t) => t.id === 'ranking-model')!.rows.map((r) => r[1])).toEqual(['88.0', '5.8', '60']);
    expectPublishable('verbs', tables, ['verbs', 'ranking-model']);
    expectPublishable('verbs', verbsTables({ ...f, rankingUs: null, model: null, verbs: [] }), []);
  });

  it('memory: the model run’s and the cluster run’s own tables', () => {
    const model = memoryTables({
      nodes: 5000,
      pods: 150_000,
      model: { ms: 1000, perEventUs: 6.4, heapMb: 75, rssMb: 170, peakMb: 180 },
      dumpMb: 1400,
      whole: { ok: false, seconds: 3, error: 'Cannot create a string longer than 0x1fffffe8 characters' },
      served: { seconds: 40, rss: 200, peak: 230, objects: '' },
    });
    expectPublishable('memory', model, []);
    const cold: ColdStart = {
      readySeconds: 154.5,
      nodesSeconds: 2,
      podsSeconds: 152.3,
      pods: 150_000,
      rss: 593,
      peak: 620,
    };
    const cluster = memoryTables({
      nodes: 5000,
      pods: 150_000,
      rss: 267,
      peak: 286,
      pageSize: 500,
      coldStarts: [cold],
    });
    expect(cluster.map((t) => t.id)).toEqual(['cluster', 'cold-starts']);
    expect(cluster[1]!.columns).toEqual(published.get('memory')!.tables.find((t) => t.id === 'cold-start')!.columns);
    expectPublishable('memory', cluster, []);
  });

  it('ceiling: the table `ceiling` as published', () => {
    const scale = {
      nodes: 1000,
      bodyBytes: 40 * 1024,
      serial: step(0, 0.73, 1),
      baseline: step(25, 1, 2.84),
      ceiling: step(128, 1.72, 5.6),
      firstFailure: step(142, 3, 5.81),
    };
    const table = ceilingTable([scale, { ...scale, nodes: 5000, ceiling: null, firstFailure: null }], 25);
    expect(table.rows[0]).toEqual([
      '1,000',
      '40 KiB',
      '1200 (0.73)',
      '2.84',
      '128',
      '1.72 / 5.60',
      '142/s (p99 5.81 ms)',
    ]);
    expect(table.rows[1]!.slice(4)).toEqual(['none sustained', null, null]);
    expectPublishable('ceiling', [table], ['ceiling']);
  });

  it('bounds: `requests` and `hostile` as published', () => {
    const tables = boundsTables(
      [
        {
          label: 'full Node objects',
          bytes: 23.17e6,
          depth: 12,
          elements: 742742,
          parseMs: 65.1,
          passMs: 24.6,
          ratio: 0.379,
          refused: null,
        },
      ],
      [{ label: 'nested arrays ([[[...]]])', bytes: 60e6, refused: 'depth', read: 65536, us: 7 }],
    );
    expect(tables[1]!.rows).toEqual([['nested arrays ([[[...]]])', 'depth', '65536 bytes', '7 µs']]);
    expectPublishable('bounds', tables, ['requests', 'hostile']);
  });
});

describe('the sampling model’s report tables', () => {
  it('sampling: `nodes-N` as published, every figure in `all-N`', () => {
    const windows: Record<number, number> = { 5: 100, 10: 100, 25: 250, 0: 420, 50: 500, 100: 1000 };
    const percentages = [5, 10, 25, 0, 50, 100];
    const results: SamplingResult[] = percentages.map((p) => ({
      set: 'paused sandboxes',
      nodes: 1000,
      percentage: p,
      window: windows[p]!,
      pods: 18288,
      placed: 18288,
      peak: p === 5 || p === 10 ? 0.52 : 0.5,
      optimum: 0.5,
      podsAboveOptimum: p === 5 || p === 10 ? 100 : 0,
      withinOnePod: p !== 5 && p !== 10,
    }));
    const tables = samplingTables(1000, results, percentages);
    expect(tables[0]!.rows).toEqual([
      [
        'paused sandboxes (18,288)',
        '**100** (peak 0.52, optimum 0.50)',
        '**100** (peak 0.52, optimum 0.50)',
        0,
        0,
        0,
        0,
      ],
    ]);
    expectPublishable('sampling', tables, ['nodes-1000']);
  });
});

describe('the cluster programs’ report tables', () => {
  const run = (
    scheduler: 'sandbox' | 'default',
    mode: 'drain' | 'burst',
    pps: number,
    variant: RunResult['variant'] = null,
    cpu = 2.22,
  ) =>
    ({
      nodes: 1000,
      mode,
      scheduler,
      run: 1,
      profiled: false,
      variant,
      disturbed: [],
      podsPerSecond: pps,
      sli: { count: 1000, p50Ms: 5, p99Ms: 50 },
      algorithm: { count: 1000, meanMs: 1.5, p99Ms: 3 },
      createToBound: mode === 'burst' ? { p50Ms: 900, p99Ms: 2346, maxMs: 3000 } : null,
      cpuPerThousand: {
        binding: { 'sandbox-extender': 2 },
        lifecycle: { 'sandbox-extender': cpu },
        lifecycleSeconds: 9,
      },
      otherCores: 0.02,
    }) as unknown as RunResult;
  const records = [
    {
      nodes: 1000,
      settings: { sandbox: { percentageOfNodesToScore: 100 }, default: { percentageOfNodesToScore: null } },
      results: [
        run('sandbox', 'drain', 172),
        run('default', 'drain', 329.2),
        run('sandbox', 'drain', 231, 'floor extender', 0.587),
        run('sandbox', 'burst', 161.3),
        run('default', 'burst', 224.7),
        run('sandbox', 'burst', 149, 'floor extender', 0.587),
      ],
    },
  ] as unknown as ScaleRecord[];
  const opts = { modes: ['drain', 'burst'], pin: false, first: 'sandbox' } as unknown as Options;

  it('cluster: `readme` (or with --pin `pinned`) as published, its pooled tables its own', () => {
    const tables = pooledTables(records, opts);
    expect(tables.map((t) => t.id)).toEqual(['summary', 'readme']);
    expect(tables[0]!.rows[0]).toEqual([
      'drain',
      'pods/s over the binding window',
      '172.0 [172.0–172.0]',
      '329.2 [329.2–329.2]',
      '0.52',
    ]);
    expect(tables[1]!.rows).toEqual([
      ['drain pods/s', 172, 231, 329.2, 0.52],
      ['burst pods/s', 161.3, 149, 224.7, 0.72],
      ['burst create→bound p99 ms', '2346', null, '2346', 1],
      // the floor's CPU as text with two decimals, as the extender's: its column's one decimal made 0.59 read 0.6
      ['extender CPU-s / 1,000 pods, drain', '2.22', '0.59', null, null],
      ['extender CPU-s / 1,000 pods, burst', '2.22', '0.59', null, null],
    ]);
    expectPublishable('cluster', tables, ['readme']);
    const pinned = pooledTables(records, { ...opts, pin: true });
    expectPublishable('cluster', pinned, ['pinned']);
    expect(pinned.at(-1)!.rows[0]).toEqual(['drain pods/s', 172, 231, 329.2, 0.52, 0.7, 0.74]);
  });

  it('scheduler-perf: `throughput` (or with Filter plugins off `fit-filter-cut`) as published', () => {
    const perf = (variant: RunRecord['variant'], average: number) =>
      ({
        run: 1,
        workload: 'SchedulingBasic/500Nodes',
        variant,
        throughput: { name: 'x', average, perc50: average, perc90: average, perc95: average, perc99: average },
        cpu: { cores: { extender: 0.5 }, otherCores: 0 },
        upstreamThreshold: 270,
      }) as unknown as RunRecord;
    const runs = [perf('stock', 315.2), perf('sandbox', 293.1), perf('floor', 289.4)];
    const o = {
      workloads: ['SchedulingBasic/500Nodes'],
      sandboxPercentage: 100,
      sandboxFiltersOff: [] as string[],
    } as PerfOptions;
    const tables = perfTables(runs, o);
    expect(tables.at(-1)!.rows).toEqual([['SchedulingBasic/500Nodes', 315.2, 293.1, 289.4, 1.01, 0.93, null, null]]);
    expectPublishable('scheduler-perf', tables, ['throughput']);
    expectPublishable('scheduler-perf', perfTables(runs, { ...o, sandboxFiltersOff: ['NodeResourcesFit'] }), [
      'fit-filter-cut',
    ]);
  });
});

describe('the other cluster programs’ report tables', () => {
  it('failover: `takeover` as published', () => {
    const t = takeoverTable(
      {
        boundAtKill: 518,
        standbyModelAtKill: { allocatedMilliCpu: 129500, expectedMilliCpu: [129500, 130250], reservedMilliCpu: 0 },
        standbyFilterCallsBeforeLeading: 0,
        killToLeaseSeconds: 18.5497,
        killToFirstBindSeconds: 18.5508,
        killToLastBindSeconds: 20.1622,
        boundByOld: 607,
        boundByNew: 393,
        podsPerSecondBefore: 25.6608,
        podsPerSecondAfter: 243.261,
        burstSeconds: 25.8416,
        nodesEverOver: 0,
        unbound: {},
        newLeader: { placed: 395, releasedBound: 395, releasedExpired: 0, reservationsPending: 0, relists: 0 },
      },
      'The takeover',
    );
    expect(t.rows).toEqual(published.get('failover')!.tables[0]!.rows);
    expectPublishable('failover', [t], ['takeover']);
  });

  it('locality: `model` as published', () => {
    const setups = ['stock', 'off', 'on', 'off+limit', 'on+limit'] as const;
    const runs = setups.map(
      (setup) =>
        ({
          setup,
          pods: 2000,
          kinds: { warm: 1400, joined: 100, pulled: 500 },
          createToReadyMs: { p50: 30000, p99: 50000, max: 60000 },
          allReadySeconds: 90,
          peakPressure: 0.07,
          peakStarting: 4,
          byLocality: setup === 'stock' ? null : { warm: 1892, cold: 108 },
        }) as unknown as LocalityRun,
    );
    const t = modelTable(runs, { setups: [...setups] } as LocalityOptions);
    expect(t.rows.at(-1)).toEqual([
      'extender placements warm/partial/cold',
      '-',
      '1892/0/108',
      '1892/0/108',
      '1892/0/108',
      '1892/0/108',
    ]);
    expectPublishable('locality', [t], ['model']);
  });

  it('agent-sandbox: `pool` (runs listed, medians compared) and `claims` as published', () => {
    const run = (kind: 'pool' | 'claims', scheduler: 'sandbox' | 'default', podsPerSecond: number) =>
      ({
        kind,
        scheduler,
        podsPerSecond,
        createToBoundP50Ms: 600,
        createToBoundP99Ms: 1800,
        allReadySeconds: 36.5,
        soundness: {
          peakPressure: scheduler === 'sandbox' ? 0.015625 : 0.03125,
          optimum: 0.015625,
          overAllocatable: [],
        },
        startingPeaks: { max: scheduler === 'sandbox' ? 1 : 2 },
        filterRequests: scheduler === 'sandbox' ? 1000 : 0,
      }) as unknown as AgentSandboxRun;
    const runs = [run('pool', 'sandbox', 24.4), run('pool', 'default', 41.5), run('pool', 'sandbox', 36.8)];
    runs.push(run('pool', 'default', 32.6), run('claims', 'sandbox', 16.1), run('claims', 'default', 17));
    const pool = tableOf('pool', 'pool', agentSandboxRows(runs, 'pool'));
    expect(pool.rows[0]).toEqual(['pods/s over the binding window', '24.4, 36.8', '41.5, 32.6', '0.83']);
    expect(pool.rows[4]).toEqual(['peak pressure (the optimum 0.0156)', '0.0156, 0.0156', '0.0313, 0.0313', '0.50']);
    const claims = tableOf('claims', 'claims', agentSandboxRows(runs, 'claims'));
    expect(claims.columns.at(-1)).toBe('sandbox/stock');
    expectPublishable('agent-sandbox', [pool, claims], ['pool', 'claims']);
  });

  it('pending: `same-priority` or, with a PriorityClass, `priority` as published', () => {
    const burst = (label: string, p50 = 2983, p99 = 3828) =>
      ({
        label,
        podsPerSecond: 100,
        createToBoundP50Ms: p50,
        createToBoundP99Ms: p99,
        filterCalls: 1000,
        filterP50Ms: 0.91,
        filterP99Ms: 16.18,
        eventLoopP99Ms: 20,
        extenderRssMb: 268,
        scheduleAttempts: { scheduled: 1000 },
        requeueWrites: 0,
        podsNudged: 0,
        rejectedRemembered: 0,
        rejectedDropped: 0,
      }) as unknown as BurstFigures;
    const pair = [burst('alone'), burst('beside 30,000 waiting pods')] as const;
    expectPublishable('pending', [pendingTable(pair, 0)], ['same-priority']);
    expectPublishable('pending', [pendingTable(pair, 1000)], ['priority']);
    // The ratio of the waiting times: two decimals near 1 (4 December's priority run printed "1 / 1"), none when large.
    const near = pendingTable([burst('alone', 2074, 2773), burst('beside', 2478, 3477)], 1000);
    expect(near.rows[1]!.at(-1)).toBe('1.19 / 1.25');
    const starved = pendingTable([burst('alone', 1646, 2213), burst('beside', 115465, 117533)], 0);
    expect(starved.rows[1]!.at(-1)).toBe('70 / 53');
  });

  it('shared: `overcommit` as published', () => {
    const round = {
      config: 'stock',
      overAtEnd: ['n1'],
      nodesEverOver: 1,
      peakOverAtOnce: 1,
      overflowsBy: { sandbox: 1 },
      violations: [],
      bindRefused: 0,
      unbound: {},
      seconds: 3,
    } as unknown as Round;
    const t = overcommitTable([round, round], ['stock', 'bind-on'], { pods: 160 } as SharedOptions);
    expect(t.rows).toEqual([
      [
        'stock (a second kube-scheduler, no extender)',
        '2',
        '1 1 (Σ 2)',
        '1 1 (Σ 2)',
        '1 1',
        '2 / 0',
        '0',
        '0',
        '0 0',
        '3.0',
      ],
    ]);
    expectPublishable('shared', [t], ['overcommit']);
  });

  it('starting: `burst` as published', () => {
    const peaks = { min: 1, p50: 4, p90: 4, max: 4, counts: [[4, 100]] as const };
    const run = (setup: string) =>
      ({
        setup,
        apiPeaks: peaks,
        modelPeaks: setup === 'default' ? null : peaks,
        createSeconds: 5,
        allBoundSeconds: 9,
        allReadySeconds: 14,
        podsPerSecond: 71.7,
        filterRequests: setup === 'default' ? null : 1000,
        startingLimitHeld: setup === 'default' ? null : 0,
      }) as unknown as StartingRun;
    const t = startingTable([run('limit off'), run('limit on'), run('default')], { perNode: 4 } as StartingOptions);
    expect(t.rows[1]).toEqual(['per-node peaks, API, last run (value×nodes)', '4×100', '4×100', '4×100']);
    // the stock scheduler has no model: one dash, not one per run
    expect(t.rows[2]).toEqual(['peak starting on any node (extender model)', '4', '4', '-']);
    expectPublishable('starting', [t], ['burst']);
  });

  it('time-to-ready: `ready` as published', () => {
    const setups = ['stock', 'off', 'on', 'off+limit', 'on+limit'] as const;
    const runs = setups.map(
      (setup) =>
        ({
          setup,
          cache: 'cold',
          peakStarting: 4,
          figures: { createToReadyMs: { p50: 12500, p99: 15100 }, allReadyMs: 16000, pulls: 8, podsPerNode: { a: 10 } },
          pulls: [{ image: 'tmpl-0', sizeBytes: 200 * 1024 ** 2, pullMs: 4000, withWaitingMs: 4000, node: 'real-0' }],
        }) as unknown as ReadyRun,
    );
    const t = readyReportTable(runs, { setups: [...setups], caches: ['cold', 'warm'] } as ReadyOptions);
    expect(t.rows[0]).toEqual([
      'cold: creation → Ready p50 s',
      '12.5',
      '12.5 (1.00×)',
      '12.5 (1.00×)',
      '12.5 (1.00×)',
      '12.5 (1.00×)',
    ]);
    expectPublishable('time-to-ready', [t], ['ready']);
  });
});
