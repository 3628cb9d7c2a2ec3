import { ceilingOf, DEFAULT_SEARCH, nextRate, parseStep, sustained, type Step } from '../../bench/ceilingStats.js';

/** A step at `rate` with p99 `p99` ms whose replies kept up (or `throughput`). */
function step(rate: number, p99: number, extra: Partial<Step> = {}): Step {
  return {
    rate,
    durationSeconds: 15,
    requests: rate * 15,
    throughput: rate,
    sentRate: rate,
    placed: rate * 15,
    notPlaced: 0,
    failed: 0,
    statusCodes: { '200': rate * 15 },
    errors: [],
    sampleBodies: [],
    latencyMs: { mean: p99 / 2, p50: p99 / 2, p90: p99, p95: p99, p99, max: p99 * 2 },
    ...extra,
  };
}

describe('sustained', () => {
  it('holds up to twice the baseline p99, no failure and the generator sending at 0.95 of the rate', () => {
    expect(sustained(step(100, 4), 2)).toEqual({ ok: true, why: '' });
    expect(sustained(step(100, 4.01), 2)).toEqual({ ok: false, why: 'p99 4.01 ms > 2 × baseline 2.00 ms' });
    expect(sustained(step(100, 1, { sentRate: 95 }), 2).ok).toBe(true);
    expect(sustained(step(100, 1, { sentRate: 94.9 }), 2)).toEqual({
      ok: false,
      why: 'the generator sent 95/s < 0.95 × 100/s',
    });
    expect(sustained(step(100, 1, { throughput: 50 }), 2).ok).toBe(true);
    expect(sustained(step(100, 1, { failed: 1 }), 2)).toEqual({ ok: false, why: '1 requests failed' });
  });
});

describe('nextRate: the step-up search', () => {
  const o = { ...DEFAULT_SEARCH, startRate: 100, factor: 2, precision: 0.1, maxSteps: 20 };
  /** Runs the search against a server whose p99 is 1 ms up to `capacity` and 10 ms above it. */
  function search(capacity: number) {
    const steps: Step[] = [];
    for (let r = nextRate(steps, 1, o); r !== null; r = nextRate(steps, 1, o))
      steps.push(step(r, r <= capacity ? 1 : 10));
    return { rates: steps.map((s) => s.rate), ...ceilingOf(steps, 1, o) };
  }

  it('starts at startRate, multiplies while sustained, then bisects to within the precision', () => {
    const r = search(1000);
    expect(r.rates).toEqual([100, 200, 400, 800, 1600, 1200, 1000, 1100]);
    expect(r.ceiling?.rate).toBe(1000);
    expect(r.firstFailure?.rate).toBe(1100);
  });

  it('bisects down from the start rate when even that is not sustained', () => {
    const r = search(30);
    expect(r.rates[0]).toBe(100);
    expect(r.ceiling?.rate).toBeLessThanOrEqual(30);
    expect(r.ceiling!.rate).toBeGreaterThan(30 * 0.9 * 0.9);
  });

  it('stops at maxSteps without a failure', () => {
    const steps = [step(100, 1), step(200, 1)];
    expect(nextRate(steps, 1, { ...o, maxSteps: 2 })).toBeNull();
    expect(ceilingOf(steps, 1, o)).toEqual({ ceiling: steps[1], firstFailure: null });
  });

  it('takes the highest sustained rate below the lowest failure (a lucky step above it does not count)', () => {
    const steps = [step(100, 1), step(200, 1), step(400, 10), step(300, 1), step(500, 1)];
    expect(ceilingOf(steps, 1, o).ceiling?.rate).toBe(300);
    expect(ceilingOf(steps, 1, o).firstFailure?.rate).toBe(400);
  });
});

describe('parseStep', () => {
  it("reads loadgen's line", () => {
    const s = step(50, 2);
    expect(parseStep(JSON.stringify(s))).toEqual(s);
  });
  it('refuses a line without the figures', () => {
    expect(() => parseStep('{"rate": 5}')).toThrow('not a loadgen result: no number requests');
    expect(() => parseStep(JSON.stringify({ ...step(5, 1), latencyMs: {} }))).toThrow('no latencyMs.p99');
    expect(() => parseStep('not json')).toThrow();
  });
});
