import {
  burstFigures,
  goDurationMs,
  modelRatio,
  nodePullRates,
  parsePulledMessage,
  pullThroughput,
  readyTable,
  type PodTiming,
  type RunRow,
} from '../../bench/timeToReadyStats.js';

const pod = (
  name: string,
  template: number,
  node: string | null,
  createdMs: number,
  readyMs: number | null,
): PodTiming => ({ name, template, node, createdMs, readyMs });

describe('burstFigures: the figures of one burst on real nodes', () => {
  const pods = [
    pod('a', 0, 'n1', 0, 12_000), // pull of template 0 on n1
    pod('b', 0, 'n1', 10, 12_010), // same pull joined: still one pull
    pod('c', 1, 'n1', 20, 2_020), // n1 held template 1 already: a warm hit
    pod('d', 0, 'n2', 30, 15_030), // template 0 pulled on n2 too
    pod('e', 2, 'n2', 40, 9_040),
  ];
  const held = (node: string, template: number) => node === 'n1' && template === 1;

  it('percentiles of creation → Ready, all Ready from the first create, pulls as distinct (node, template) pairs not held', () => {
    const f = burstFigures(pods, held);
    // latencies sorted: 2000, 9000, 12000, 12000, 15000
    expect(f.createToReadyMs).toEqual({ p50: 12_000, p99: 15_000, max: 15_000 });
    expect(f.allReadyMs).toBe(15_030);
    expect(f.warmHits).toBe(1);
    expect(f.pulls).toBe(3);
    expect(f.podsPerNode).toEqual({ n1: 3, n2: 2 });
    expect([f.pods, f.ready]).toEqual([5, 5]);
  });

  it('a pod never Ready is out of the percentiles and leaves all Ready unknown; an unbound pod makes no pull', () => {
    const f = burstFigures([...pods, pod('f', 2, 'n3', 50, null), pod('g', 2, null, 60, null)], held);
    expect(f.ready).toBe(5);
    expect(f.createToReadyMs.p99).toBe(15_000);
    expect(f.allReadyMs).toBeNull();
    expect(f.pulls).toBe(4); // n3 × template 2 was asked for
    expect(f.podsPerNode).toEqual({ n1: 3, n2: 2, n3: 1 });
  });

  it('p99 of 30 pods is the largest (nearest rank), p50 the 15th', () => {
    const many = Array.from({ length: 30 }, (_, i) => pod(`p${i}`, 0, 'n1', 0, (i + 1) * 100));
    expect(burstFigures(many, () => true).createToReadyMs).toEqual({ p50: 1500, p99: 3000, max: 3000 });
    expect(burstFigures(many, () => true).pulls).toBe(0);
  });

  it('no pods: no figures', () => {
    expect(burstFigures([], () => false)).toEqual({
      pods: 0,
      ready: 0,
      createToReadyMs: { p50: null, p99: null, max: null },
      allReadyMs: null,
      warmHits: 0,
      pulls: 0,
      podsPerNode: {},
    });
  });
});

describe("goDurationMs: time.Duration's String", () => {
  it.each([
    ['850ms', 850],
    ['1.5s', 1500],
    ['2m3.04s', 123_040],
    ['1h0m0s', 3_600_000],
    ['12µs', 0.012],
    ['12us', 0.012],
    ['0s', 0],
  ])('%s = %d ms', (text, ms) => expect(goDurationMs(text)).toBeCloseTo(ms, 9));

  it.each(['', '5', 's', '1.5 s', '1.5sx', '-1s', '1d'])('%j is refused', (text) =>
    expect(() => goDurationMs(text)).toThrow(/not a Go duration/),
  );
});

describe("parsePulledMessage: kubelet's Pulled Event", () => {
  it('reads the image, both durations and the size', () => {
    expect(
      parsePulledMessage(
        'Successfully pulled image "127.0.0.1:5000/sandbox-bench/tmpl-0:abc" in 7.254s (9.1s including waiting). Image size: 262144000 bytes.',
      ),
    ).toEqual({
      image: '127.0.0.1:5000/sandbox-bench/tmpl-0:abc',
      pullMs: 7254,
      withWaitingMs: 9100,
      sizeBytes: 262_144_000,
    });
  });

  it('is null for any other message', () => {
    expect(parsePulledMessage('Container image "x:1" already present on machine')).toBeNull();
    expect(parsePulledMessage('Pulling image "x:1"')).toBeNull();
  });

  it('throws on a Pulled message whose duration is not one', () => {
    expect(() =>
      parsePulledMessage('Successfully pulled image "x:1" in soon (7s including waiting). Image size: 1 bytes.'),
    ).toThrow(/not a Go duration/);
  });
});

describe('pullThroughput', () => {
  it('the median of size / pull time per pull, and the median pull time', () => {
    const MiB = 1024 ** 2;
    const t = pullThroughput([
      { image: 'a', pullMs: 2000, withWaitingMs: 2000, sizeBytes: 100 * MiB }, // 50 MiB/s
      { image: 'b', pullMs: 4000, withWaitingMs: 5000, sizeBytes: 100 * MiB }, // 25
      { image: 'c', pullMs: 1000, withWaitingMs: 1000, sizeBytes: 100 * MiB }, // 100
    ]);
    expect(t.perPullMiBps).toBeCloseTo(50, 9);
    expect(t.medianPullMs).toBe(2000);
    expect(pullThroughput([])).toEqual({ perPullMiBps: null, medianPullMs: null });
  });
});

describe("nodePullRates: a node's pulls as one serial queue", () => {
  it('distinct images per node over its longest pull, waiting included', () => {
    const MiB = 1024 ** 2;
    const rates = nodePullRates([
      { node: 'n1', image: 'a', pullMs: 9000, withWaitingMs: 10_000, sizeBytes: 200 * MiB },
      { node: 'n1', image: 'a', pullMs: 8000, withWaitingMs: 9_000, sizeBytes: 200 * MiB }, // the same image, joined: counted once
      { node: 'n1', image: 'b', pullMs: 19_000, withWaitingMs: 20_000, sizeBytes: 300 * MiB },
      { node: 'n2', image: 'a', pullMs: 4000, withWaitingMs: 4000, sizeBytes: 200 * MiB },
      { node: null, image: 'c', pullMs: 1, withWaitingMs: 1, sizeBytes: 1 },
    ]);
    expect([...rates.keys()]).toEqual(['n1', 'n2']);
    expect(rates.get('n1')).toBeCloseTo(25, 9); // 500 MiB / 20 s
    expect(rates.get('n2')).toBeCloseTo(50, 9);
  });

  it('leaves out pulls read from a result file written before their node was kept (no node key at all)', () => {
    const old = [{ image: 'a', pullMs: 1000, withWaitingMs: 1000, sizeBytes: 1024 ** 2 }] as unknown as Parameters<
      typeof nodePullRates
    >[0];
    expect(nodePullRates(old).size).toBe(0);
  });
});

describe('readyTable', () => {
  type S = 'stock' | 'on';
  type C = 'cold' | 'warm';
  const row = (
    setup: S,
    cache: C,
    p50: number,
    p99: number,
    all: number | null,
    pulls: number,
    peakStarting = 3,
  ): RunRow<S, C> => ({
    setup,
    cache,
    peakStarting,
    figures: {
      pods: 10,
      ready: 10,
      createToReadyMs: { p50, p99, max: p99 },
      allReadyMs: all,
      warmHits: 0,
      pulls,
      podsPerNode: { n1: 6, n2: 4 },
    },
  });

  it('medians per setup and cache state, times with the ratio to the baseline', () => {
    const text = readyTable(
      [
        row('stock', 'cold', 10_000, 20_000, 21_000, 6),
        row('on', 'cold', 5_000, 10_000, 12_000, 3),
        row('on', 'cold', 7_000, 14_000, 16_000, 5),
        row('stock', 'warm', 2_000, 4_000, 4_000, 0),
      ],
      ['stock', 'on'],
      ['cold', 'warm'],
      { stock: 'stock', on: 'locality on' },
      'stock',
    );
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^median of runs\s+stock\s+locality on$/);
    expect(lines.find((l) => l.startsWith('cold: creation → Ready p50 s'))).toMatch(/10\.0\s+6\.0 \(0\.60×\)$/);
    expect(lines.find((l) => l.startsWith('cold: creation → Ready p99 s'))).toMatch(/20\.0\s+12\.0 \(0\.60×\)$/);
    // counts print as whole numbers (a median between two counts keeps its .5: below)
    expect(lines.find((l) => l.startsWith('cold: pulls made'))).toMatch(/\s6\s+4$/);
    expect(lines.find((l) => l.startsWith('cold: runs'))).toMatch(/1\s+2$/);
    expect(lines.find((l) => l.startsWith('cold: pods on the fullest node'))).toMatch(/\s6\s+6$/);
    const between = readyTable(
      [row('stock', 'cold', 1, 1, 1, 3), row('stock', 'cold', 1, 1, 1, 4)],
      ['stock'],
      ['cold'],
      { stock: 'stock', on: 'locality on' },
      'stock',
    );
    expect(between.split('\n').find((l) => l.startsWith('cold: pulls made'))).toMatch(/\s3\.5$/);
    // warm: no run of "on", so "-" and no ratio
    expect(lines.find((l) => l.startsWith('warm: creation → Ready p50 s'))).toMatch(/2\.0\s+-$/);
    expect(lines.find((l) => l.startsWith('warm: runs'))).toMatch(/1\s+0$/);
  });

  it('a cache state without runs has no rows', () => {
    expect(
      readyTable(
        [row('stock', 'cold', 1, 1, 1, 1)],
        ['stock', 'on'],
        ['cold', 'warm'],
        { stock: 'stock', on: 'on' },
        'stock',
      ),
    ).not.toMatch(/^warm/m);
  });
});

describe('modelRatio', () => {
  it('model / measured', () => {
    expect(modelRatio(15, 10)).toBeCloseTo(1.5, 9);
    expect(modelRatio(null, 10)).toBeNull();
    expect(modelRatio(5, 0)).toBeNull();
  });
});
