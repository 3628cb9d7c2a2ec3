/**
 * Pure helpers of the ceiling scenario (ceiling.ts): whether one open-loop step was sustained, the step-up search
 * for the highest such rate, the loadgen's JSON line and the report's table. No I/O. A step at R calls/s is
 * sustained when its p99 is at most `p99Factor` × the baseline step's, no request failed, and the generator sent at
 * least `minSent` × R/s (else it measured itself). The search multiplies R by `factor` while steps hold, then
 * bisects to `precision`; the ceiling is the highest sustained rate below every unsustained one.
 */
import type { Table } from './results.js';

/** What loadgen (test/e2e/tools/loadgen) prints for one step. */
export interface Step {
  rate: number;
  durationSeconds: number;
  requests: number;
  /** Successful replies per second over the step and its drain (vegeta's Throughput). */
  throughput: number;
  /** Requests per second actually sent (vegeta's Rate): below `rate` when the generator could not keep up. */
  sentRate: number;
  placed: number;
  notPlaced: number;
  failed: number;
  statusCodes: Record<string, number>;
  errors: string[];
  sampleBodies: string[];
  latencyMs: { mean: number; p50: number; p90: number; p95: number; p99: number; max: number };
}

export interface SearchOptions {
  startRate: number;
  factor: number;
  precision: number;
  maxSteps: number;
  p99Factor: number;
  minSent: number;
}

export const DEFAULT_SEARCH: SearchOptions = {
  startRate: 50,
  factor: 1.5,
  precision: 0.1,
  maxSteps: 16,
  p99Factor: 2,
  minSent: 0.95,
};

/**
 * Parses loadgen's output line. @throws Error when it is not one (missing fields).
 */
export function parseStep(line: string): Step {
  const s = JSON.parse(line) as Partial<Step>;
  for (const k of ['rate', 'requests', 'throughput', 'sentRate', 'placed', 'notPlaced', 'failed'] as const) {
    if (typeof s[k] !== 'number') throw new Error(`not a loadgen result: no number ${k} in ${line.slice(0, 200)}`);
  }
  if (!s.latencyMs || typeof s.latencyMs.p99 !== 'number')
    throw new Error(`not a loadgen result: no latencyMs.p99 in ${line.slice(0, 200)}`);
  return s as Step;
}

/** Whether a step was sustained against the baseline's p99 (ms), and if not, why (first reason). */
export function sustained(
  step: Step,
  baselineP99Ms: number,
  o: SearchOptions = DEFAULT_SEARCH,
): { ok: boolean; why: string } {
  if (step.failed > 0) return { ok: false, why: `${step.failed} requests failed` };
  if (step.latencyMs.p99 > o.p99Factor * baselineP99Ms)
    return {
      ok: false,
      why: `p99 ${step.latencyMs.p99.toFixed(2)} ms > ${o.p99Factor} × baseline ${baselineP99Ms.toFixed(2)} ms`,
    };
  if (step.sentRate < o.minSent * step.rate)
    return { ok: false, why: `the generator sent ${step.sentRate.toFixed(0)}/s < ${o.minSent} × ${step.rate}/s` };
  return { ok: true, why: '' };
}

/** The highest sustained rate below every unsustained one (null: none), and the lowest unsustained step. */
export function ceilingOf(
  steps: readonly Step[],
  baselineP99Ms: number,
  o: SearchOptions = DEFAULT_SEARCH,
): { ceiling: Step | null; firstFailure: Step | null } {
  const failures = steps.filter((s) => !sustained(s, baselineP99Ms, o).ok);
  const lowestFailure = failures.reduce<Step | null>((m, s) => (m === null || s.rate < m.rate ? s : m), null);
  const below = steps.filter(
    (s) => sustained(s, baselineP99Ms, o).ok && (lowestFailure === null || s.rate < lowestFailure.rate),
  );
  const ceiling = below.reduce<Step | null>((m, s) => (m === null || s.rate > m.rate ? s : m), null);
  return { ceiling, firstFailure: lowestFailure };
}

/**
 * The rate of the next step (requests per second, an integer), or null when the search is done: the bracket
 * is within `precision`, `maxSteps` were run, or the rate would fall below 1.
 */
export function nextRate(
  steps: readonly Step[],
  baselineP99Ms: number,
  o: SearchOptions = DEFAULT_SEARCH,
): number | null {
  if (steps.length === 0) return o.startRate;
  if (steps.length >= o.maxSteps) return null;
  const { ceiling, firstFailure } = ceilingOf(steps, baselineP99Ms, o);
  let next: number;
  if (!firstFailure) {
    next = Math.round(Math.max(...steps.map((s) => s.rate)) * o.factor);
  } else {
    const lo = ceiling?.rate ?? 0;
    const hi = firstFailure.rate;
    if (lo > 0 && (hi - lo) / hi <= o.precision) return null;
    next = Math.round((lo + hi) / 2);
  }
  if (next < 1 || steps.some((s) => s.rate === next)) return null;
  return next;
}

/** What the ceiling table shows of one node count: its request's size and its serial, baseline and ceiling steps. */
export interface ScaleFigures {
  nodes: number;
  bodyBytes: number;
  serial: Step;
  baseline: Step;
  ceiling: Step | null;
  firstFailure: Step | null;
}

/** The table `ceiling` of bench/results/ceiling.json, one row per node count; `baselineRate` names the baseline. */
export function ceilingTable(scales: readonly ScaleFigures[], baselineRate: number): Table {
  const ms = (v: number) => v.toFixed(2);
  return {
    id: 'ceiling',
    title: `Filter calls naming every node, open loop; the ceiling is the highest rate whose p99 stays within twice the baseline's (${baselineRate}/s)`,
    columns: [
      'nodes',
      'request',
      'serial calls/s (p50 ms)',
      'baseline p99 ms',
      'ceiling calls/s',
      'p50 / p99 ms at the ceiling',
      'first rate not sustained',
    ],
    rows: scales.map((s) => [
      s.nodes.toLocaleString('en-US'),
      `${(s.bodyBytes / 1024).toFixed(0)} KiB`,
      `${s.serial.throughput.toFixed(0)} (${ms(s.serial.latencyMs.p50)})`,
      ms(s.baseline.latencyMs.p99),
      s.ceiling ? String(s.ceiling.rate) : 'none sustained',
      s.ceiling ? `${ms(s.ceiling.latencyMs.p50)} / ${ms(s.ceiling.latencyMs.p99)}` : null,
      s.firstFailure ? `${s.firstFailure.rate}/s (p99 ${ms(s.firstFailure.latencyMs.p99)} ms)` : null,
    ]),
  };
}
