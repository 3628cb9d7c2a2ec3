import {
  benchPattern,
  CPU_ETCD,
  CPU_EXTENDER,
  CPU_HARNESS,
  derivePerfConfig,
  parseBenchLine,
  parseVariants,
  parseWorkloadId,
  ratioTable,
  samplingOf,
  throughputOf,
  throughputText,
  variantOrder,
  variantsIn,
  variantTable,
  type PerfTestCase,
  type ThroughputRun,
  type Variant,
} from '../../bench/schedulerPerfStats.js';

// The shape of upstream's misc/performance-config.yaml (k8s.io/kubernetes v1.36.3), trimmed.
const UPSTREAM: PerfTestCase[] = [
  {
    name: 'SchedulingBasic',
    defaultPodTemplatePath: '../templates/pod-default.yaml',
    workloadTemplate: [
      { opcode: 'createNodes', countParam: '$initNodes' },
      { opcode: 'createPods', countParam: '$measurePods', collectMetrics: true },
    ],
    workloads: [
      { name: '5Nodes', labels: ['integration-test', 'short'], params: { initNodes: 5, measurePods: 10 } },
      { name: '500Nodes', params: { initNodes: 500, measurePods: 1000 } },
      {
        name: '5000Nodes_10000Pods_QueueingHintsEnabled',
        labels: ['performance'],
        threshold: 270,
        featureGates: { SchedulerQueueingHints: true },
        params: { initNodes: 5000, measurePods: 10000 },
      },
    ],
  },
  {
    name: 'Unschedulable',
    labels: ['x'],
    workloadTemplate: [],
    workloads: [{ name: '500Nodes/10Init/1kPods', threshold: { misc: 140 }, params: { initNodes: 500 } }],
  },
];

describe('parseWorkloadId', () => {
  it('splits at the first slash; the workload keeps its own slashes', () => {
    expect(parseWorkloadId('SchedulingBasic/500Nodes')).toEqual({ testCase: 'SchedulingBasic', workload: '500Nodes' });
    expect(parseWorkloadId('Unschedulable/500Nodes/10Init/1kPods')).toEqual({
      testCase: 'Unschedulable',
      workload: '500Nodes/10Init/1kPods',
    });
  });
  it.each(['SchedulingBasic', '/500Nodes', 'SchedulingBasic/'])('refuses %j', (id) => {
    expect(() => parseWorkloadId(id)).toThrow('is not TESTCASE/WORKLOAD');
  });
});

describe('derivePerfConfig', () => {
  it('keeps only the chosen upstream workload, without labels and threshold, and returns the threshold', () => {
    const { config, upstreamThreshold } = derivePerfConfig(UPSTREAM, {
      testCase: 'SchedulingBasic',
      workload: '5000Nodes_10000Pods_QueueingHintsEnabled',
    });
    expect(upstreamThreshold).toBe(270);
    expect(config).toEqual([
      {
        name: 'SchedulingBasic',
        defaultPodTemplatePath: '../templates/pod-default.yaml',
        workloadTemplate: UPSTREAM[0]!.workloadTemplate,
        workloads: [
          {
            name: '5000Nodes_10000Pods_QueueingHintsEnabled',
            featureGates: { SchedulerQueueingHints: true },
            params: { initNodes: 5000, measurePods: 10000 },
          },
        ],
      },
    ]);
    expect(config[0]).not.toHaveProperty('schedulerConfigPath');
  });

  it('sets schedulerConfigPath for the sandbox variant and drops the test case labels', () => {
    const { config, upstreamThreshold } = derivePerfConfig(
      UPSTREAM,
      { testCase: 'Unschedulable', workload: '500Nodes/10Init/1kPods' },
      '/out/scheduler.yaml',
    );
    expect(upstreamThreshold).toBe(140);
    expect(config[0]!.schedulerConfigPath).toBe('/out/scheduler.yaml');
    expect(config[0]).not.toHaveProperty('labels');
    expect(config[0]!.workloads).toEqual([{ name: '500Nodes/10Init/1kPods', params: { initNodes: 500 } }]);
  });

  it('adds a workload given its params, and does not change the upstream list', () => {
    const before = structuredClone(UPSTREAM);
    const { config, upstreamThreshold } = derivePerfConfig(UPSTREAM, {
      testCase: 'SchedulingBasic',
      workload: '1000Nodes_5000Pods',
      params: { initNodes: 1000, initPods: 1000, measurePods: 5000 },
    });
    expect(upstreamThreshold).toBeNull();
    expect(config[0]!.workloads).toEqual([
      { name: '1000Nodes_5000Pods', params: { initNodes: 1000, initPods: 1000, measurePods: 5000 } },
    ]);
    expect(UPSTREAM).toEqual(before);
  });

  it('names what exists when the test case or workload does not', () => {
    expect(() => derivePerfConfig(UPSTREAM, { testCase: 'Nope', workload: 'x' })).toThrow(
      "no test case Nope in the harness's config (it has: SchedulingBasic, Unschedulable)",
    );
    expect(() => derivePerfConfig(UPSTREAM, { testCase: 'SchedulingBasic', workload: '1000Nodes' })).toThrow(
      'no workload 1000Nodes in test case SchedulingBasic (it has: 5Nodes, 500Nodes, 5000Nodes_10000Pods_QueueingHintsEnabled)',
    );
  });
});

describe('benchPattern', () => {
  it('anchors every level, splitting the workload name at its slashes', () => {
    expect(benchPattern('SchedulingBasic', '500Nodes')).toBe('^BenchmarkPerfScheduling$/^SchedulingBasic$/^500Nodes$');
    expect(benchPattern('Unschedulable', '500Nodes/10Init/1kPods')).toBe(
      '^BenchmarkPerfScheduling$/^Unschedulable$/^500Nodes$/^10Init$/^1kPods$',
    );
  });
  it('escapes regular-expression characters and writes spaces as b.Run does', () => {
    expect(benchPattern('A.B', 'x+y (z)')).toBe('^BenchmarkPerfScheduling$/^A\\.B$/^x\\+y_\\(z\\)$');
    expect(new RegExp(benchPattern('A.B', 'x+y (z)').split('/')[2]!).test('x+y_(z)')).toBe(true);
  });
});

describe('throughputOf', () => {
  const items = {
    version: 'v1',
    dataItems: [
      {
        data: { Average: 4.7, Perc50: 2.5, Perc90: 7.8, Perc95: 16, Perc99: 50.7 },
        unit: 'ms',
        labels: {
          Metric: 'scheduler_scheduling_attempt_duration_seconds',
          Name: 'SchedulingBasic/500Nodes/namespace-2',
        },
      },
      {
        data: { Average: 412.25, Perc50: 420, Perc90: 450.5, Perc95: 451, Perc99: 452 },
        unit: 'pods/s',
        labels: { Metric: 'SchedulingThroughput', Name: 'SchedulingBasic/500Nodes/namespace-2' },
      },
    ],
  };
  it('reads the SchedulingThroughput item', () => {
    expect(throughputOf(items)).toEqual({
      name: 'SchedulingBasic/500Nodes/namespace-2',
      average: 412.25,
      perc50: 420,
      perc90: 450.5,
      perc95: 451,
      perc99: 452,
    });
  });
  it('is null without one (all pods placed within one sample)', () => {
    expect(throughputOf({ version: 'v1', dataItems: [items.dataItems[0]] })).toBeNull();
  });
  it('refuses what is not a data items file, or an item without its buckets', () => {
    expect(() => throughputOf({ version: 'v1' })).toThrow('not a scheduler_perf data items file');
    expect(() => throughputOf(null)).toThrow('not a scheduler_perf data items file');
    expect(() =>
      throughputOf({
        dataItems: [{ data: { Average: 1 }, unit: 'pods/s', labels: { Metric: 'SchedulingThroughput' } }],
      }),
    ).toThrow('SchedulingThroughput item without Perc50');
  });
});

describe('parseBenchLine', () => {
  const line =
    'BenchmarkPerfScheduling/SchedulingBasic/500Nodes-2         \t       1\t       412.2 SchedulingThroughput/Average\t       420.0 SchedulingThroughput/Perc50\t         0 ns/op\t        31.50 runtime_seconds';
  it('reads name, procs, iterations and every value-unit pair', () => {
    expect(parseBenchLine(line)).toEqual({
      name: 'BenchmarkPerfScheduling/SchedulingBasic/500Nodes',
      procs: 2,
      iterations: 1,
      metrics: {
        'SchedulingThroughput/Average': 412.2,
        'SchedulingThroughput/Perc50': 420,
        'ns/op': 0,
        runtime_seconds: 31.5,
      },
    });
  });
  it('prints the SchedulingThroughput part as the harness did', () => {
    expect(throughputText(parseBenchLine(line)!)).toBe(
      '412.2 SchedulingThroughput/Average  420 SchedulingThroughput/Perc50',
    );
  });
  it.each([
    'goos: linux',
    'PASS',
    'BenchmarkPerfScheduling',
    'BenchmarkPerfScheduling/x-2 abc',
    'ok  \tsandbox-extender.invalid/e2e-tools/scheduler-perf\t98.2s',
  ])('is null for %j', (other) => {
    expect(parseBenchLine(other)).toBeNull();
  });
});

describe('parseVariants', () => {
  it('takes the names in the order given, spaces and empty items ignored', () => {
    expect(parseVariants('stock,sandbox,floor')).toEqual(['stock', 'sandbox', 'floor']);
    expect(parseVariants(' floor , sandbox,')).toEqual(['floor', 'sandbox']);
  });
  it.each([
    ['', 'no variant given (choose from stock, sandbox, floor)'],
    [' , ', 'no variant given'],
    ['stock,default', 'unknown variant "default" (choose from stock, sandbox, floor)'],
    ['Floor', 'unknown variant "Floor"'],
    ['sandbox,floor,sandbox', 'variant "sandbox" given twice'],
  ])('refuses %j', (text, message) => {
    expect(() => parseVariants(text)).toThrow(message);
  });
});

describe('variantOrder', () => {
  it('rotates three variants so that each takes each place once in three runs', () => {
    const all: Variant[] = ['stock', 'sandbox', 'floor'];
    expect([1, 2, 3, 4].map((run) => variantOrder(all, run))).toEqual([
      ['stock', 'sandbox', 'floor'],
      ['sandbox', 'floor', 'stock'],
      ['floor', 'stock', 'sandbox'],
      ['stock', 'sandbox', 'floor'],
    ]);
  });
  it('flips two variants every run, as before the floor', () => {
    expect([1, 2, 3].map((run) => variantOrder(['stock', 'sandbox'], run))).toEqual([
      ['stock', 'sandbox'],
      ['sandbox', 'stock'],
      ['stock', 'sandbox'],
    ]);
  });
  it('keeps one variant, and does not change the list given', () => {
    const one: Variant[] = ['floor'];
    expect(variantOrder(one, 2)).toEqual(['floor']);
    expect(variantOrder([], 1)).toEqual([]);
    const list: Variant[] = ['stock', 'sandbox', 'floor'];
    variantOrder(list, 2);
    expect(list).toEqual(['stock', 'sandbox', 'floor']);
  });
});

describe('samplingOf', () => {
  it('names stock as shipped and the profile variants by --sandbox-percentage', () => {
    expect(samplingOf('stock', 100)).toBe('as shipped (adaptive)');
    expect(samplingOf('stock', 0)).toBe('as shipped (adaptive)');
    expect(samplingOf('sandbox', 100)).toBe('100 % (--sandbox-percentage)');
    expect(samplingOf('floor', 50)).toBe('50 % (--sandbox-percentage)');
    expect(samplingOf('floor', 0)).toBe('adaptive (--sandbox-percentage 0)');
  });
});

describe('the summary tables', () => {
  const W = 'SchedulingBasic/500Nodes';
  const W2 = 'SchedulingWithMixedChurn/1000Nodes';
  const tp = (average: number, perc50: number, perc99: number) => ({
    name: W,
    average,
    perc50,
    perc90: 0,
    perc95: 0,
    perc99,
  });
  const run = (
    workload: string,
    variant: Variant,
    t: ReturnType<typeof tp> | null,
    cores: Record<string, number>,
    upstreamThreshold: number | null = null,
  ): ThroughputRun => ({ workload, variant, throughput: t, cpu: { cores }, upstreamThreshold });
  // Two runs of each variant on W (medians: the mean of two), one failed floor run and one stock run on W2.
  const runs: ThroughputRun[] = [
    run(W, 'stock', tp(400, 380, 500), { [CPU_HARNESS]: 1.2, [CPU_ETCD]: 0.2 }, 270),
    run(W, 'sandbox', tp(180, 170, 260), { [CPU_HARNESS]: 1.0, [CPU_ETCD]: 0.1, [CPU_EXTENDER]: 0.3 }, 270),
    run(W, 'floor', tp(200, 190, 300), { [CPU_HARNESS]: 1.1, [CPU_ETCD]: 0.1, [CPU_EXTENDER]: 0.1 }, 270),
    run(W, 'floor', tp(240, 210, 320), { [CPU_HARNESS]: 1.3, [CPU_ETCD]: 0.3, [CPU_EXTENDER]: 0.2 }, 270),
    run(W, 'sandbox', tp(200, 190, 280), { [CPU_HARNESS]: 1.2, [CPU_ETCD]: 0.2, [CPU_EXTENDER]: 0.5 }, 270),
    run(W, 'stock', tp(420, 400, 520), { [CPU_HARNESS]: 1.4, [CPU_ETCD]: 0.2 }, 270),
    run(W2, 'stock', tp(100, 100, 100), { [CPU_HARNESS]: 1 }),
    run(W2, 'floor', null, { [CPU_HARNESS]: 0.5, [CPU_EXTENDER]: 0.01 }),
  ];

  it('lists the variants with runs, in stock, sandbox, floor order', () => {
    expect(variantsIn(runs)).toEqual(['stock', 'sandbox', 'floor']);
    expect(variantsIn(runs.filter((r) => r.variant !== 'sandbox'))).toEqual(['stock', 'floor']);
  });

  it('has a row per workload and variant run: sampling, runs ok, median pods/s and median cores', () => {
    expect(variantTable(runs, [W, W2], 100)).toEqual([
      [
        'workload',
        'variant',
        'sampling (percentageOfNodesToScore)',
        'runs ok',
        'avg pods/s',
        'p50',
        'p99',
        'harness cores',
        'etcd',
        'extender',
      ],
      [W, 'stock', 'as shipped (adaptive)', '2/2', '410.0', '390.0', '510.0', '1.30', '0.20', '-'],
      [W, 'sandbox', '100 % (--sandbox-percentage)', '2/2', '190.0', '180.0', '270.0', '1.10', '0.15', '0.40'],
      [W, 'floor', '100 % (--sandbox-percentage)', '2/2', '220.0', '200.0', '310.0', '1.20', '0.20', '0.15'],
      [W2, 'stock', 'as shipped (adaptive)', '1/1', '100.0', '100.0', '100.0', '1.00', '-', '-'],
      [W2, 'floor', '100 % (--sandbox-percentage)', '0/1', '-', '-', '-', '0.50', '-', '0.01'],
    ]);
  });

  it('says adaptive for the profile variants at --sandbox-percentage 0', () => {
    const rows = variantTable(runs, [W], 0);
    expect(rows.map((r) => r[2])).toEqual([
      'sampling (percentageOfNodesToScore)',
      'as shipped (adaptive)',
      'adaptive (--sandbox-percentage 0)',
      'adaptive (--sandbox-percentage 0)',
    ]);
  });

  it('has sandbox/stock, floor/stock and sandbox/floor of the medians, "-" where a median is missing', () => {
    expect(ratioTable(runs, [W, W2])).toEqual([
      [
        'workload',
        'sandbox/stock avg',
        'p50',
        'p99',
        'floor/stock avg',
        'p50',
        'p99',
        'sandbox/floor avg',
        'p50',
        'p99',
        "upstream's threshold (avg)",
      ],
      // 190/410, 180/390, 270/510 | 220/410, 200/390, 310/510 | 190/220, 180/200, 270/310
      [W, '0.46', '0.46', '0.53', '0.54', '0.51', '0.61', '0.86', '0.90', '0.87', '270'],
      [W2, '-', '-', '-', '-', '-', '-', '-', '-', '-', '-'],
    ]);
  });

  it('prints a report from before the floor: only sandbox/stock', () => {
    const old = runs.filter((r) => r.variant !== 'floor');
    expect(ratioTable(old, [W])).toEqual([
      ['workload', 'sandbox/stock avg', 'p50', 'p99', "upstream's threshold (avg)"],
      [W, '0.46', '0.46', '0.53', '270'],
    ]);
    expect(variantTable(old, [W], 100).map((r) => r[1])).toEqual(['variant', 'stock', 'sandbox']);
  });

  it('has only sandbox/floor when stock was not run', () => {
    const rows = ratioTable(
      runs.filter((r) => r.variant !== 'stock'),
      [W],
    );
    expect(rows[0]).toEqual(['workload', 'sandbox/floor avg', 'p50', 'p99', "upstream's threshold (avg)"]);
    expect(rows[1]).toEqual([W, '0.86', '0.90', '0.87', '270']);
  });
});
