import {
  schedulerColumns,
  cpuSecondsPerThousand,
  cpuShares,
  firstRunRatio,
  loadDisturbance,
  otherCores,
  medianOf,
  spreadOf,
  stockRateOutliers,
  histogram,
  histogramDelta,
  histogramMean,
  histogramQuantile,
  histogramsBy,
  median,
  parsePrometheusText,
  percentile,
  placementSoundness,
  podsPerSecond,
  ratio,
  selfTimeTable,
  sumBy,
  sumDelta,
  sumSamples,
  counterDeltas,
  startTimeOfStat,
  type CpuProfile,
  type CpuSample,
} from '../../bench/clusterStats.js';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { parseProcStat } from '../../bench/procStats.js';

const SCHEDULER_TEXT = `# HELP scheduler_pod_scheduling_sli_duration_seconds [BETA] E2e latency
# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.1"} 3
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.2"} 6
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="+Inf"} 7
scheduler_pod_scheduling_sli_duration_seconds_sum{attempts="1"} 1.1
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} 7
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.1"} 0
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="0.2"} 2
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="2",le="+Inf"} 3
scheduler_pod_scheduling_sli_duration_seconds_sum{attempts="2"} 0.9
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="2"} 3
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="sandbox-scheduler",result="scheduled"} 10 1700000000000
scheduler_schedule_attempts_total{profile="sandbox-scheduler",result="unschedulable"} 2
weird{path="C:\\\\DIR\\"x\\"",msg="a\\nb"} -Inf
`;

describe('parsePrometheusText', () => {
  const samples = parsePrometheusText(SCHEDULER_TEXT);

  it('reads names, labels (unescaped), values and skips comments and timestamps', () => {
    expect(samples).toHaveLength(13);
    expect(samples[2]).toEqual({
      name: 'scheduler_pod_scheduling_sli_duration_seconds_bucket',
      labels: { attempts: '1', le: '+Inf' },
      value: 7,
    });
    expect(samples[10]).toEqual({
      name: 'scheduler_schedule_attempts_total',
      labels: { profile: 'sandbox-scheduler', result: 'scheduled' },
      value: 10,
    });
    expect(samples[12]).toEqual({ name: 'weird', labels: { path: 'C:\\DIR"x"', msg: 'a\nb' }, value: -Infinity });
  });

  it('sums and groups counters by label', () => {
    expect(sumSamples(samples, 'scheduler_schedule_attempts_total')).toBe(12);
    expect(sumSamples(samples, 'scheduler_schedule_attempts_total', { result: 'unschedulable' })).toBe(2);
    expect(sumSamples(samples, 'absent')).toBe(0);
    expect([...sumBy(samples, 'scheduler_schedule_attempts_total', 'result')]).toEqual([
      ['scheduled', 10],
      ['unschedulable', 2],
    ]);
  });

  it('gives how much each counter grew, leaving out the ones that did not, a reset counting from 0', () => {
    const before = parsePrometheusText('c{result="scheduled"} 10\nc{result="error"} 3\nc{result="unschedulable"} 7');
    const after = parsePrometheusText(
      'c{result="scheduled"} 25\nc{result="error"} 3\nc{result="unschedulable"} 2\nc{result="new"} 4',
    );
    expect(counterDeltas(after, before, 'c', 'result')).toEqual({ scheduled: 15, unschedulable: 2, new: 4 });
    expect(counterDeltas(after, before, 'c', 'result', { result: 'scheduled' })).toEqual({ scheduled: 15 });
  });

  it('gives the plain difference of two sums, a counter that went down included', () => {
    const before = parsePrometheusText('c{result="placed"} 10\nc{result="no_fit"} 3');
    const after = parsePrometheusText('c{result="placed"} 25\nc{result="no_fit"} 1');
    expect(sumDelta(after, before, 'c')).toBe(13);
    expect(sumDelta(after, before, 'c', { result: 'placed' })).toBe(15);
    expect(sumDelta(after, before, 'c', { result: 'no_fit' })).toBe(-2);
    expect(sumDelta(after, before, 'absent')).toBe(0);
  });

  it('reads the special values in any letter case, as Prometheus does (prom-client writes Nan)', () => {
    const values = parsePrometheusText('a Nan\nb NaN\nc +inf\nd -INF\ne 1.5e3').map((x) => x.value);
    expect(values).toEqual([NaN, NaN, Infinity, -Infinity, 1500]);
    expect(() => parsePrometheusText('x nanx')).toThrow('bad value in Prometheus sample line: x nanx');
  });

  it('throws on a malformed sample line, naming it', () => {
    expect(() => parsePrometheusText('good 1\n{bad} 2')).toThrow('not a Prometheus sample line: {bad} 2');
    expect(() => parsePrometheusText('x{a="1"}')).toThrow('bad value in Prometheus sample line: x{a="1"}');
    expect(() => parsePrometheusText('x{a="1} 2')).toThrow('unterminated label value');
  });
});

describe('histograms', () => {
  const samples = parsePrometheusText(SCHEDULER_TEXT);

  it('sums the series of a histogram over the labels not matched', () => {
    expect(histogram(samples, 'scheduler_pod_scheduling_sli_duration_seconds')).toEqual({
      buckets: [
        { le: 0.1, count: 3 },
        { le: 0.2, count: 8 },
        { le: Infinity, count: 10 },
      ],
      sum: 2,
      count: 10,
    });
    expect(histogram(samples, 'scheduler_pod_scheduling_sli_duration_seconds', { attempts: '2' }).count).toBe(3);
    expect([...histogramsBy(samples, 'scheduler_pod_scheduling_sli_duration_seconds', 'attempts').keys()]).toEqual([
      '1',
      '2',
    ]);
  });

  it('interpolates quantiles as histogram_quantile does', () => {
    const h = histogram(samples, 'scheduler_pod_scheduling_sli_duration_seconds');
    expect(histogramQuantile(0.5, h)).toBeCloseTo(0.14, 12); // rank 5 in (0.1, 0.2]: 0.1 + 0.1 · 2/5
    expect(histogramQuantile(0.2, h)).toBeCloseTo(0.1 * (2 / 3), 12); // rank 2 in (0, 0.1]
    expect(histogramQuantile(0.99, h)).toBe(0.2); // in the +Inf bucket: the highest finite bound
    expect(histogramQuantile(0.5, { buckets: [], sum: 0, count: 0 })).toBeNull();
    expect(histogramMean(h)).toBe(0.2);
  });

  it('subtracts an earlier scrape bucket by bucket, and keeps the later one after a restart', () => {
    const before = {
      buckets: [
        { le: 0.1, count: 1 },
        { le: Infinity, count: 2 },
      ],
      sum: 0.5,
      count: 2,
    };
    const after = {
      buckets: [
        { le: 0.1, count: 4 },
        { le: Infinity, count: 7 },
      ],
      sum: 2,
      count: 7,
    };
    expect(histogramDelta(after, before)).toEqual({
      buckets: [
        { le: 0.1, count: 3 },
        { le: Infinity, count: 5 },
      ],
      sum: 1.5,
      count: 5,
    });
    const restarted = {
      buckets: [
        { le: 0.1, count: 1 },
        { le: Infinity, count: 1 },
      ],
      sum: 0.05,
      count: 1,
    };
    expect(histogramDelta(restarted, before)).toBe(restarted);
    expect(histogramDelta(after, undefined)).toBe(after);
  });
});

describe('client-side figures', () => {
  it('nearest-rank percentiles', () => {
    expect(percentile([5, 1, 3, 2, 4], 0.5)).toBe(3);
    expect(percentile([5, 1, 3, 2, 4], 0.99)).toBe(5);
    expect(percentile([5, 1, 3, 2, 4], 0.2)).toBe(1);
    expect(percentile([], 0.5)).toBeNull();
  });

  it('median of an even count is the mean of the middle two', () => {
    expect(median([21.6, 13.6])).toBeCloseTo(17.6, 12);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([])).toBeNull();
  });

  it('pods/s over the binding window counts intervals, not pods', () => {
    expect(podsPerSecond([3000, 1000, 1500])).toBe(1);
    expect(podsPerSecond([1000])).toBeNull();
    expect(podsPerSecond([1000, 1000])).toBeNull();
  });

  it('ratio is null without both figures', () => {
    expect(ratio(3, 4)).toBe(0.75);
    expect(ratio(null, 4)).toBeNull();
    expect(ratio(3, 0)).toBeNull();
  });
});

describe('CPU from /proc', () => {
  it('reads utime + stime past a comm with spaces and parentheses (parseProcStat, as the sampler does)', () => {
    const stat = '4242 (kube sched (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 173 27 0 0 20 0 12 0 9876 1000000 200';
    expect(parseProcStat(stat).ticks).toBe(200);
    expect(() => parseProcStat('garbage')).toThrow('not a /proc/PID/stat line');
  });

  it('reads the start time (field 22) as cluster-up.sh records it', () => {
    const stat = '4242 (kube sched (x)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 173 27 0 0 20 0 12 0 9876 1000000 200';
    expect(startTimeOfStat(stat)).toBe('9876');
    expect(() => startTimeOfStat('4242 (x) S 1')).toThrow('not a /proc/PID/stat line');
  });

  it('shares over the window widened to the samples around it; a new pid counts from zero', () => {
    const samples: CpuSample[] = [
      { tMs: 0, procs: { a: { pid: 1, ticks: 100 }, b: { pid: 2, ticks: 50 } } },
      { tMs: 1000, procs: { a: { pid: 1, ticks: 150 }, b: { pid: 2, ticks: 60 } } },
      { tMs: 2000, procs: { a: { pid: 1, ticks: 300 }, b: { pid: 3, ticks: 40 }, c: { pid: 4, ticks: 10 } } },
    ];
    const { windowMs, cores } = cpuShares(samples, 500, 1500, 100);
    expect(windowMs).toBe(2000);
    expect([...cores]).toEqual([
      ['a', 1], // 200 ticks / 100 per s / 2 s
      ['b', 0.2], // restarted: its 40 ticks since the new start
    ]);
  });
});

describe('selfTimeTable', () => {
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 } },
      { id: 2, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
      {
        id: 3,
        callFrame: { functionName: 'evaluate', url: 'file:///repo/dist/src/core/fit/placer.js', lineNumber: 9 },
      },
      { id: 4, callFrame: { functionName: '', url: 'node:internal/streams/readable', lineNumber: 0 } },
      { id: 5, callFrame: { functionName: '(garbage collector)', url: '', lineNumber: -1 } },
    ],
    startTime: 0,
    endTime: 600,
    samples: [3, 3, 2, 4, 5],
    timeDeltas: [10, 100, 100, 100, 100], // samples at 10, 110, 210, 310, 410
  };

  it('counts each sample for the sampling interval (the median gap) and sorts by self time', () => {
    const t = selfTimeTable(profile, { stripPrefix: '/repo' });
    expect(t.totalMs).toBeCloseTo(0.5, 12);
    expect(t.idleMs).toBeCloseTo(0.1, 12);
    expect(t.busyMs).toBeCloseTo(0.4, 12);
    expect(t.gcMs).toBeCloseTo(0.1, 12);
    expect(t.top.map((e) => [e.functionName, e.location, Math.round(e.selfMs * 1000)])).toEqual([
      ['evaluate', 'dist/src/core/fit/placer.js:10', 200],
      ['(anonymous)', 'node:internal/streams/readable:1', 100],
      ['(garbage collector)', '', 100],
    ]);
    expect(t.top[0]!.share).toBeCloseTo(200 / 400, 12);
  });

  it('does not charge a preemption (a long gap before the next sample) to the function sampled before it', () => {
    const preempted: CpuProfile = { ...profile, endTime: 5500, timeDeltas: [10, 5000, 100, 100, 100] }; // evaluate, then 5 ms off the CPU
    const t = selfTimeTable(preempted);
    expect(t.top.find((e) => e.functionName === 'evaluate')!.selfMs).toBeCloseTo(0.2, 12);
    expect(t.busyMs).toBeCloseTo(0.4, 12);
  });

  it('counts only the samples inside a window, and at most `top` entries', () => {
    const t = selfTimeTable(profile, { fromUs: 100, toUs: 320, top: 1 });
    expect(t.totalMs).toBeCloseTo(0.3, 12); // the samples at 110, 210 and 310
    // evaluate and the anonymous function have 0.1 ms each: ties go by name
    expect(t.top).toEqual([
      { functionName: '(anonymous)', location: 'node:internal/streams/readable:1', selfMs: 0.1, share: 0.5 },
    ]);
    const u = selfTimeTable(profile, { fromUs: 100, toUs: 220 });
    expect(u.top).toEqual([
      { functionName: 'evaluate', location: '/repo/dist/src/core/fit/placer.js:10', selfMs: 0.1, share: 1 },
    ]);
  });
});

describe('placementSoundness', () => {
  const node = (name: string): Node => ({
    metadata: { name },
    status: { allocatable: { cpu: '1', memory: '1Gi', pods: '110' } },
  });
  const pod = (name: string, nodeName: string | undefined, cpu = '500m', phase = 'Running'): Pod => ({
    metadata: { name, namespace: 'bench', uid: name },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: 'c', resources: { requests: { cpu, memory: '256Mi' } } }],
    },
    status: { phase },
  });
  const nodes = [node('a'), node('b')];

  it('accepts a placement within allocatable at the optimum', () => {
    const s = placementSoundness(nodes, [
      pod('p1', 'a'),
      pod('p2', 'a'),
      pod('p3', 'b'),
      pod('pending', undefined),
      pod('done', 'b', '500m', 'Succeeded'),
    ]);
    expect(s).toEqual({
      boundPods: 3,
      overAllocatable: [],
      peakPressure: 1,
      peakNode: 'a',
      optimum: 1,
      onePodStep: 0.5,
      withinOnePodOfOptimum: true,
    });
  });

  it('reports nodes over allocatable and a peak more than one pod above the optimum', () => {
    const s = placementSoundness(
      nodes,
      ['p1', 'p2', 'p3', 'p4'].map((n) => pod(n, 'a')),
    );
    expect(s.overAllocatable).toEqual([{ node: 'a', resource: 'cpu', requested: 2000, allocatable: 1000 }]);
    expect(s.peakPressure).toBe(2);
    expect(s.optimum).toBe(1); // 2 + 2
    expect(s.withinOnePodOfOptimum).toBe(false);
  });

  it('counts the pod slots too, and gives no optimum for pods that differ', () => {
    const small: Node = { metadata: { name: 'tiny' }, status: { allocatable: { cpu: '8', memory: '8Gi', pods: '1' } } };
    const s = placementSoundness([small], [pod('p1', 'tiny', '100m'), pod('p2', 'tiny', '200m')]);
    expect(s.overAllocatable).toEqual([{ node: 'tiny', resource: 'pods', requested: 2, allocatable: 1 }]);
    expect(s.optimum).toBeNull();
    expect(s.withinOnePodOfOptimum).toBeNull();
  });
});

describe('CPU per 1,000 pods, quiet-run checks, spread and warm-up', () => {
  const samples: CpuSample[] = [
    { tMs: 0, procs: { ext: { pid: 1, ticks: 0 }, api: { pid: 2, ticks: 0 } } },
    { tMs: 10_000, procs: { ext: { pid: 1, ticks: 300 }, api: { pid: 2, ticks: 1000 } } },
  ];

  it('charges each component its CPU over the window per 1,000 pods, minus its idle share', () => {
    // ext: 300 ticks at 100/s = 3 CPU-s over 10 s; idle 0.05 cores × 10 s = 0.5 CPU-s; 2.5 CPU-s for 500 pods = 5 per 1,000.
    const { windowMs, perThousand } = cpuSecondsPerThousand(samples, 0, 10_000, 100, 500, new Map([['ext', 0.05]]));
    expect(windowMs).toBe(10_000);
    expect(perThousand.get('ext')).toBeCloseTo(5, 10);
    expect(perThousand.get('api')).toBeCloseTo(20, 10); // not corrected: 10 CPU-s for 500 pods
    expect(cpuSecondsPerThousand(samples, 0, 10_000, 100, 0).perThousand.size).toBe(0);
  });

  it('counts the cores other processes took and flags a run above the limit', () => {
    const cores = { '(machine)': 1.9, ext: 0.5, api: 1.2, bench: 0.05 };
    const other = otherCores(cores, '(machine)', ['ext', 'api', 'bench']);
    expect(other).toBeCloseTo(0.15, 10);
    expect(otherCores({ ext: 1 }, '(machine)', ['ext'])).toBeNull();
    const limits = { maxOtherCores: 0.1, maxStockDeviation: 0.25 };
    expect(loadDisturbance(other, limits)).toEqual(['other processes took 0.15 cores (> 0.1)']);
    expect(loadDisturbance(0.1, limits)).toEqual([]);
    expect(loadDisturbance(null, limits)).toEqual([]);
  });

  it('flags stock runs whose rate lies off the median of their mode', () => {
    const runs = [
      { mode: 'drain', stock: true, podsPerSecond: 250 },
      { mode: 'drain', stock: false, podsPerSecond: 100 }, // not stock: never flagged
      { mode: 'drain', stock: true, podsPerSecond: 260 },
      { mode: 'drain', stock: true, podsPerSecond: 180 }, // median 250: −28 %
      { mode: 'burst', stock: true, podsPerSecond: 180 }, // its own mode's median
      { mode: 'burst', stock: true, podsPerSecond: null },
    ];
    const out = stockRateOutliers(runs, 0.25);
    expect([...out.keys()]).toEqual([3]);
    expect(out.get(3)).toBe('stock 180.0 pods/s is -28 % off the median of stock drain runs (250.0)');
    expect(stockRateOutliers(runs, 0.3).size).toBe(0);
  });

  it('takes the median and the spread of the runs, leaving out what is not a number', () => {
    expect(spreadOf([10, 12, 20, null, Number.NaN, undefined])).toEqual({ median: 12, min: 10, max: 20, n: 3 });
    expect(spreadOf([null])).toEqual({ median: null, min: null, max: null, n: 0 });
  });

  it('gives the first run against the median of the later ones', () => {
    expect(firstRunRatio([70, 100, 90, 110])).toBeCloseTo(0.7, 10);
    expect(firstRunRatio([70])).toBeNull();
    expect(firstRunRatio([null, 100])).toBeNull();
    expect(firstRunRatio([70, null, 100])).toBeCloseTo(0.7, 10);
  });
});

describe('schedulerColumns', () => {
  const settings = (sandbox: unknown, stock: unknown) => ({
    sandbox: { percentageOfNodesToScore: sandbox },
    default: { percentageOfNodesToScore: stock },
  });

  it('names stock as shipped when /configz reports 0 (the v1 default for unset) or nothing', () => {
    expect(schedulerColumns(settings(100, 0))).toEqual(['sandbox-scheduler (100 %)', 'stock as shipped (adaptive)']);
    expect(schedulerColumns(settings(0, undefined))).toEqual([
      'sandbox-scheduler (adaptive)',
      'stock as shipped (adaptive)',
    ]);
  });

  it('labels stock with a percentage set as not shipped', () => {
    expect(schedulerColumns(settings(10, 100))[1]).toBe('stock at 100 % (not as shipped)');
  });
});

describe('medianOf', () => {
  it('takes the median of a field, leaving out null, undefined and non-finite values', () => {
    const rows = [{ v: 3 }, { v: null }, { v: 1 }, { v: undefined }, { v: NaN }, { v: Infinity }, { v: 2 }, { v: 10 }];
    expect(medianOf(rows, (r) => r.v)).toBe(2.5);
  });
  it('is null when no value is left', () => {
    expect(medianOf([{ v: null }, { v: NaN }], (r) => r.v)).toBeNull();
  });
});
