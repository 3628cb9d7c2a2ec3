import { benchPattern, derivePerfConfig, parseBenchLine, parseWorkloadId, throughputOf, throughputText, type PerfTestCase } from '../../bench/schedulerPerfStats.js';

// The shape of upstream's misc/performance-config.yaml (k8s.io/kubernetes v1.36.3), trimmed.
const UPSTREAM: PerfTestCase[] = [
  {
    name: 'SchedulingBasic',
    defaultPodTemplatePath: '../templates/pod-default.yaml',
    workloadTemplate: [{ opcode: 'createNodes', countParam: '$initNodes' }, { opcode: 'createPods', countParam: '$measurePods', collectMetrics: true }],
    workloads: [
      { name: '5Nodes', labels: ['integration-test', 'short'], params: { initNodes: 5, measurePods: 10 } },
      { name: '500Nodes', params: { initNodes: 500, measurePods: 1000 } },
      { name: '5000Nodes_10000Pods_QueueingHintsEnabled', labels: ['performance'], threshold: 270, featureGates: { SchedulerQueueingHints: true }, params: { initNodes: 5000, measurePods: 10000 } },
    ],
  },
  { name: 'Unschedulable', labels: ['x'], workloadTemplate: [], workloads: [{ name: '500Nodes/10Init/1kPods', threshold: { misc: 140 }, params: { initNodes: 500 } }] },
];

describe('parseWorkloadId', () => {
  it('splits at the first slash; the workload keeps its own slashes', () => {
    expect(parseWorkloadId('SchedulingBasic/500Nodes')).toEqual({ testCase: 'SchedulingBasic', workload: '500Nodes' });
    expect(parseWorkloadId('Unschedulable/500Nodes/10Init/1kPods')).toEqual({ testCase: 'Unschedulable', workload: '500Nodes/10Init/1kPods' });
  });
  it.each(['SchedulingBasic', '/500Nodes', 'SchedulingBasic/'])('refuses %j', (id) => {
    expect(() => parseWorkloadId(id)).toThrow('is not TESTCASE/WORKLOAD');
  });
});

describe('derivePerfConfig', () => {
  it("keeps only the chosen upstream workload, without labels and threshold, and returns the threshold", () => {
    const { config, upstreamThreshold } = derivePerfConfig(UPSTREAM, { testCase: 'SchedulingBasic', workload: '5000Nodes_10000Pods_QueueingHintsEnabled' });
    expect(upstreamThreshold).toBe(270);
    expect(config).toEqual([
      {
        name: 'SchedulingBasic',
        defaultPodTemplatePath: '../templates/pod-default.yaml',
        workloadTemplate: UPSTREAM[0]!.workloadTemplate,
        workloads: [{ name: '5000Nodes_10000Pods_QueueingHintsEnabled', featureGates: { SchedulerQueueingHints: true }, params: { initNodes: 5000, measurePods: 10000 } }],
      },
    ]);
    expect(config[0]).not.toHaveProperty('schedulerConfigPath');
  });

  it('sets schedulerConfigPath for the sandbox variant and drops the test case labels', () => {
    const { config, upstreamThreshold } = derivePerfConfig(UPSTREAM, { testCase: 'Unschedulable', workload: '500Nodes/10Init/1kPods' }, '/out/scheduler.yaml');
    expect(upstreamThreshold).toBe(140);
    expect(config[0]!.schedulerConfigPath).toBe('/out/scheduler.yaml');
    expect(config[0]).not.toHaveProperty('labels');
    expect(config[0]!.workloads).toEqual([{ name: '500Nodes/10Init/1kPods', params: { initNodes: 500 } }]);
  });

  it('adds a workload given its params, and does not change the upstream list', () => {
    const before = structuredClone(UPSTREAM);
    const { config, upstreamThreshold } = derivePerfConfig(UPSTREAM, { testCase: 'SchedulingBasic', workload: '1000Nodes_5000Pods', params: { initNodes: 1000, initPods: 1000, measurePods: 5000 } });
    expect(upstreamThreshold).toBeNull();
    expect(config[0]!.workloads).toEqual([{ name: '1000Nodes_5000Pods', params: { initNodes: 1000, initPods: 1000, measurePods: 5000 } }]);
    expect(UPSTREAM).toEqual(before);
  });

  it('names what exists when the test case or workload does not', () => {
    expect(() => derivePerfConfig(UPSTREAM, { testCase: 'Nope', workload: 'x' })).toThrow('no test case Nope in the harness\'s config (it has: SchedulingBasic, Unschedulable)');
    expect(() => derivePerfConfig(UPSTREAM, { testCase: 'SchedulingBasic', workload: '1000Nodes' })).toThrow('no workload 1000Nodes in test case SchedulingBasic (it has: 5Nodes, 500Nodes, 5000Nodes_10000Pods_QueueingHintsEnabled)');
  });
});

describe('benchPattern', () => {
  it('anchors every level, splitting the workload name at its slashes', () => {
    expect(benchPattern('SchedulingBasic', '500Nodes')).toBe('^BenchmarkPerfScheduling$/^SchedulingBasic$/^500Nodes$');
    expect(benchPattern('Unschedulable', '500Nodes/10Init/1kPods')).toBe('^BenchmarkPerfScheduling$/^Unschedulable$/^500Nodes$/^10Init$/^1kPods$');
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
      { data: { Average: 4.7, Perc50: 2.5, Perc90: 7.8, Perc95: 16, Perc99: 50.7 }, unit: 'ms', labels: { Metric: 'scheduler_scheduling_attempt_duration_seconds', Name: 'SchedulingBasic/500Nodes/namespace-2' } },
      { data: { Average: 412.25, Perc50: 420, Perc90: 450.5, Perc95: 451, Perc99: 452 }, unit: 'pods/s', labels: { Metric: 'SchedulingThroughput', Name: 'SchedulingBasic/500Nodes/namespace-2' } },
    ],
  };
  it('reads the SchedulingThroughput item', () => {
    expect(throughputOf(items)).toEqual({ name: 'SchedulingBasic/500Nodes/namespace-2', average: 412.25, perc50: 420, perc90: 450.5, perc95: 451, perc99: 452 });
  });
  it('is null without one (all pods placed within one sample)', () => {
    expect(throughputOf({ version: 'v1', dataItems: [items.dataItems[0]] })).toBeNull();
  });
  it('refuses what is not a data items file, or an item without its buckets', () => {
    expect(() => throughputOf({ version: 'v1' })).toThrow('not a scheduler_perf data items file');
    expect(() => throughputOf(null)).toThrow('not a scheduler_perf data items file');
    expect(() => throughputOf({ dataItems: [{ data: { Average: 1 }, unit: 'pods/s', labels: { Metric: 'SchedulingThroughput' } }] })).toThrow('SchedulingThroughput item without Perc50');
  });
});

describe('parseBenchLine', () => {
  const line = 'BenchmarkPerfScheduling/SchedulingBasic/500Nodes-2         \t       1\t       412.2 SchedulingThroughput/Average\t       420.0 SchedulingThroughput/Perc50\t         0 ns/op\t        31.50 runtime_seconds';
  it('reads name, procs, iterations and every value-unit pair', () => {
    expect(parseBenchLine(line)).toEqual({
      name: 'BenchmarkPerfScheduling/SchedulingBasic/500Nodes',
      procs: 2,
      iterations: 1,
      metrics: { 'SchedulingThroughput/Average': 412.2, 'SchedulingThroughput/Perc50': 420, 'ns/op': 0, runtime_seconds: 31.5 },
    });
  });
  it('prints the SchedulingThroughput part as the harness did', () => {
    expect(throughputText(parseBenchLine(line)!)).toBe('412.2 SchedulingThroughput/Average  420 SchedulingThroughput/Perc50');
  });
  it.each(['goos: linux', 'PASS', 'BenchmarkPerfScheduling', 'BenchmarkPerfScheduling/x-2 abc', 'ok  \tsandbox-extender.invalid/e2e-tools/scheduler-perf\t98.2s'])('is null for %j', (other) => {
    expect(parseBenchLine(other)).toBeNull();
  });
});
