/**
 * Differential test of the extender's resource accounting against Kubernetes itself, no cluster needed.
 *
 * test/e2e/tools/accounting is a small Go program on k8s.io/apimachinery, k8s.io/api and
 * k8s.io/component-helpers v0.36.3 (built by `test/e2e/build-tools.sh --accounting` into a cache folder of
 * its own). This test generates cases with a seeded generator (accounting-cases.ts), feeds them to it and
 * compares its answers with src/core:
 * - quantities: `resource.ParseQuantity` accept/reject and its error (ErrFormatWrong, ErrSuffix, ErrNumeric),
 *   the exact value, the remembered format, and `MilliValue()`/`Value()` (how kube-scheduler reads cpu and
 *   everything else) against parseQuantity, milliValue and value;
 * - pods: `PodRequests` with kube-scheduler v1.36's options for an assigned pod (PodInfo.CalculateResource)
 *   and for the incoming pod (fit.go computePodResourceRequest), per resource exactly and in scheduler units,
 *   against podRequestsExact with ASSIGNED_POD_OPTIONS / INCOMING_POD_OPTIONS, and the request vector that
 *   records.ts builds (options chosen by spec.nodeName) against the matching Go result.
 * Any difference fails the test unless it is one of the intended deviations below, each checked to be what it
 * says (not skipped on sight).
 *
 * Environment: ACCOUNTING_SEED (default 20260512), ACCOUNTING_QUANTITIES (default 100000), ACCOUNTING_PODS
 * (default 12000, so that at least 10000 are accepted by both sides and compared in full). The figures are
 * printed and written to .e2e/logs/accounting.txt; the first differing cases, if any, with Go's answers, to
 * .e2e/logs/accounting-differences.jsonl.
 *
 * Not generated, and so not in the list: JSON escape sequences of ordinary characters inside a quantity
 * (`"\u0031"`: decoded by JSON.parse here, kept raw and rejected by Go's Quantity.UnmarshalJSON), and JSON
 * numbers that a double cannot hold (JSON.parse rounds them before parseQuantityValue sees them). Kubernetes
 * never writes either.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ASSIGNED_POD_OPTIONS,
  INCOMING_POD_OPTIONS,
  podRequestsExact,
  type PodRequestsOptions,
} from '../../src/core/objects/podRequests.js';
import { QuantityError, milliValue, parseQuantity, value, type Quantity } from '../../src/core/objects/quantity.js';
import { requestVector } from '../../src/core/objects/records.js';
import type { Pod } from '../../src/core/objects/kubeObjects.js';
import {
  BINARY_SUFFIXES,
  DECIMAL_SUFFIXES,
  Rand,
  generatePod,
  quantityString,
  type PodTraits,
} from './accounting-cases.js';
import { E2E_DIR, STATE_DIR, run } from './kit/controlPlane.js';

const SEED = Number(process.env.ACCOUNTING_SEED ?? 20260512);
const QUANTITIES = Number(process.env.ACCOUNTING_QUANTITIES ?? 100_000);
const PODS = Number(process.env.ACCOUNTING_PODS ?? 12_000);

/**
 * The intended deviations: where src/core knowingly differs from Kubernetes, and why.
 * Anything else that differs is a bug.
 */
const DEVIATIONS = {
  /** Longer than MAX_QUANTITY_LENGTH (128): rejected before any work (Go has no bound; see quantity.ts). */
  length: 'string longer than 128 characters: rejected here, parsed by Go',
  /** Nano count above 10^4096: rejected (Go stores it; its int64 accessors overflow on it anyway). */
  magnitude: 'magnitude above 10^4087: rejected here, stored by Go',
  /** Go's int64 accessors wrap or return 0 when the result (or, for a negative inf.Dec, the nano count) leaves int64. */
  int64Overflow: 'accessor result outside int64: Go wraps or returns 0, here the exact value',
  /** Go's inf.Dec path truncates a negative toward zero and adds one when inexact; here: away from zero. */
  negativeDec: 'negative value Go holds as inf.Dec: Go truncates then adds one, here rounded away from zero',
  /** A negative request fails the pod here (the API server's validation rejects it); Go sums it. */
  negativeInPod: 'negative quantity in a pod: rejected here, summed by Go',
  /** requestVector (schedulerAmount) saturates at 2^53 − 1 so the model's numbers stay exact doubles. */
  saturation: 'request vector entry above 2^53 - 1: saturated here',
} as const;
type Deviation = keyof typeof DEVIATIONS;

interface GoQuantity {
  readonly ok: boolean;
  readonly err?: string;
  readonly milli?: string;
  readonly value?: string;
  readonly nanos?: string;
  readonly dec?: boolean;
  readonly format?: string;
}
interface GoAmount {
  readonly nanos: string | null;
  readonly scaled: string;
}
interface GoPod {
  readonly ok: boolean;
  readonly err?: string;
  readonly assigned?: Record<string, GoAmount>;
  readonly incoming?: Record<string, GoAmount>;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MAGNITUDE_NANOS = 10n ** 4096n;
const DIMS = {
  names: [
    'cpu',
    'memory',
    'ephemeral-storage',
    'hugepages-2Mi',
    'hugepages-1Gi',
    'nvidia.com/gpu',
    'example.com/widget',
  ],
};

const fitsInt64 = (v: bigint) => v >= INT64_MIN && v <= INT64_MAX;
const abs = (v: bigint) => (v < 0n ? -v : v);

/** Go's `scaledValue` small path for a negative inf.Dec at scale 9: truncate toward zero, +1 when inexact. */
function goDecNegative(nanos: bigint, divisor: bigint): bigint {
  return nanos / divisor + (nanos % divisor !== 0n ? 1n : 0n);
}

/** The Go error a QuantityError corresponds to, or the deviation that made it, or null (a plain error). */
function tsErrorKind(err: QuantityError): string {
  const m = /\b(ErrFormatWrong|ErrSuffix|ErrNumeric)\b/.exec(err.message);
  if (m) return m[1]!;
  if (err.message.includes('the limit is 128')) return 'length';
  if (err.message.includes('magnitude above')) return 'magnitude';
  if (err.message.includes('negative quantity')) return 'negative';
  return `other: ${err.message}`;
}

class Tally {
  readonly deviations = new Map<Deviation, number>();
  readonly differences: string[] = [];
  /** The first differing cases, input and Go's answer (written to .e2e/logs/accounting-differences.jsonl). */
  readonly cases: { input: unknown; go: unknown }[] = [];
  compared = 0;
  /** Every difference, listed or not. */
  total = 0;
  current: { input: unknown; go: unknown } = { input: null, go: null };

  deviate(kind: Deviation): void {
    this.deviations.set(kind, (this.deviations.get(kind) ?? 0) + 1);
  }

  differ(what: string): void {
    this.total++;
    if (this.differences.length < 50) {
      this.differences.push(what);
      if (this.cases.at(-1) !== this.current) this.cases.push(this.current);
    } else if (this.differences.length === 50) this.differences.push('… (more differences not listed)');
  }
}

function compareQuantity(input: string, go: GoQuantity, t: Tally): void {
  t.compared++;
  t.current = { input, go };
  let ts: Quantity | QuantityError;
  try {
    ts = parseQuantity(input);
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    ts = err;
  }
  const show = JSON.stringify(input.length > 60 ? `${input.slice(0, 60)}…(${input.length} chars)` : input);
  if (ts instanceof QuantityError) {
    const kind = tsErrorKind(ts);
    if (!go.ok) {
      // both reject; the Go error must match unless this side stopped at its length bound first
      if (kind !== 'length' && kind !== go.err) t.differ(`${show}: Go ${go.err}, here ${kind}`);
      return;
    }
    if (kind === 'length' && input.length > 128) return t.deviate('length');
    if (kind === 'magnitude' && (go.nanos === undefined || abs(BigInt(go.nanos)) > MAGNITUDE_NANOS))
      return t.deviate('magnitude');
    return t.differ(`${show}: Go accepts (nanos ${go.nanos?.slice(0, 40)}), here ${ts.message}`);
  }
  if (!go.ok) return t.differ(`${show}: Go ${go.err}, here accepted as ${ts.nanos} nanos`);
  if (go.nanos === undefined || BigInt(go.nanos) !== ts.nanos)
    return t.differ(`${show}: nanos Go ${go.nanos?.slice(0, 40)}, here ${ts.nanos}`);
  if (go.format !== ts.format) t.differ(`${show}: format Go ${go.format}, here ${ts.format}`);
  for (const [name, goText, exact, divisor] of [
    ['MilliValue', go.milli, milliValue(ts), 1_000_000n],
    ['Value', go.value, value(ts), 1_000_000_000n],
  ] as const) {
    const goValue = BigInt(goText ?? 'NaN');
    if (!fitsInt64(exact) || (ts.nanos < INT64_MIN && go.dec === true)) {
      t.deviate('int64Overflow');
    } else if (ts.nanos < 0n && go.dec === true) {
      const rule = goDecNegative(ts.nanos, divisor);
      if (goValue !== rule)
        t.differ(`${show}: ${name} Go ${goValue} does not follow the documented inf.Dec rule (${rule})`);
      else if (rule !== exact) t.deviate('negativeDec');
    } else if (goValue !== exact) {
      t.differ(`${show}: ${name} Go ${goValue}, here ${exact}`);
    }
  }
}

function scaled(resource: string, nanos: bigint): bigint {
  const q = { nanos, format: 'DecimalSI' } as const;
  return resource === 'cpu' ? milliValue(q) : value(q);
}

function comparePodOptions(
  name: string,
  pod: Pod,
  options: PodRequestsOptions,
  go: GoPod,
  goList: Record<string, GoAmount> | undefined,
  t: Tally,
): boolean {
  t.compared++;
  let ts: Map<string, bigint>;
  try {
    ts = podRequestsExact(pod, options);
  } catch (err) {
    if (!(err instanceof QuantityError)) throw err;
    if (!go.ok) return false;
    const kind = tsErrorKind(err);
    if (kind === 'negative') t.deviate('negativeInPod');
    else if (kind === 'length' || kind === 'magnitude') t.deviate(kind);
    else t.differ(`${name}: Go accepts, here ${err.message}`);
    return false;
  }
  if (!go.ok || !goList) {
    t.differ(`${name}: Go rejects (${go.err}), here accepted`);
    return false;
  }
  const goNames = Object.keys(goList).sort();
  const tsNames = [...ts.keys()].sort();
  if (goNames.join() !== tsNames.join())
    t.differ(`${name}: resources Go [${goNames.join()}], here [${tsNames.join()}]`);
  for (const resource of goNames) {
    const g = goList[resource]!;
    const mine = ts.get(resource);
    if (mine === undefined) continue;
    if (g.nanos === null || BigInt(g.nanos) !== mine) {
      t.differ(`${name}: ${resource} nanos Go ${g.nanos?.slice(0, 40)}, here ${mine}`);
      continue;
    }
    const exact = scaled(resource, mine);
    if (!fitsInt64(exact)) t.deviate('int64Overflow');
    else if (BigInt(g.scaled) !== exact) t.differ(`${name}: ${resource} scaled Go ${g.scaled}, here ${exact}`);
  }
  return true;
}

function comparePod(pod: Pod, go: GoPod, t: Tally): { assignedDiffers: boolean; full: boolean } {
  const name = pod.metadata?.name ?? '?';
  t.current = { input: pod, go };
  const okAssigned = comparePodOptions(`${name} (assigned)`, pod, ASSIGNED_POD_OPTIONS, go, go.assigned, t);
  const okIncoming = comparePodOptions(`${name} (incoming)`, pod, INCOMING_POD_OPTIONS, go, go.incoming, t);
  const assignedDiffers = JSON.stringify(go.assigned) !== JSON.stringify(go.incoming);
  if (!okAssigned || !okIncoming) return { assignedDiffers, full: false };
  // records.ts: the request vector, with the options kube-scheduler uses for this pod
  const goList = (pod.spec?.nodeName ? go.assigned : go.incoming)!;
  const vector = requestVector(pod, DIMS);
  DIMS.names.forEach((resource, i) => {
    const g = goList[resource];
    const exact = g?.nanos ? scaled(resource, BigInt(g.nanos)) : 0n;
    if (exact > MAX_SAFE) t.deviate('saturation');
    const expected = Number(exact > MAX_SAFE ? MAX_SAFE : exact);
    if (vector[i] !== expected)
      t.differ(`${name}: requestVector ${resource} ${vector[i]}, Go ${g?.scaled ?? 'absent'}`);
  });
  return { assignedDiffers, full: true };
}

describe('accounting: differential test against k8s.io/apimachinery and component-helpers v0.36.3', () => {
  let oracle: string;

  beforeAll(async () => {
    const { stdout } = await run('bash', [join(E2E_DIR, 'build-tools.sh'), '--accounting'], { timeoutMs: 600_000 });
    oracle = stdout.trim().split('\n').pop()!;
  }, 610_000);

  it(`${QUANTITIES} quantities and ${PODS} pods (seed ${SEED}) agree, but for the documented deviations`, async () => {
    const r = new Rand(SEED);
    const quantities = Array.from({ length: QUANTITIES }, () => quantityString(r));
    const generated = Array.from({ length: PODS }, (_, i) => generatePod(r, i));
    const lines = [
      ...quantities.map((q) => JSON.stringify({ q })),
      ...generated.map(({ pod }) => JSON.stringify({ pod })),
    ];
    const t0 = Date.now();
    const { stdout } = await run(oracle, [], { input: `${lines.join('\n')}\n`, timeoutMs: 300_000 });
    const goMs = Date.now() - t0;
    const answers = stdout.trimEnd().split('\n');
    expect(answers).toHaveLength(lines.length);

    const tq = new Tally();
    const t1 = Date.now();
    quantities.forEach((q, i) => compareQuantity(q, JSON.parse(answers[i]!) as GoQuantity, tq));
    const tp = new Tally();
    let assignedDiffers = 0;
    let fullyCompared = 0;
    generated.forEach(({ pod }, i) => {
      const outcome = comparePod(pod as Pod, JSON.parse(answers[QUANTITIES + i]!) as GoPod, tp);
      if (outcome.assignedDiffers) assignedDiffers++;
      if (outcome.full) fullyCompared++;
    });
    const tsMs = Date.now() - t1;

    // What the generator reached (so a weakened generator fails here, not silently).
    const goQ = answers.slice(0, QUANTITIES).map((a) => JSON.parse(a) as GoQuantity);
    const reach = {
      'accepted by Go': goQ.filter((g) => g.ok).length,
      'rejected by Go': goQ.filter((g) => !g.ok).length,
      'ErrFormatWrong / ErrSuffix / ErrNumeric': ['ErrFormatWrong', 'ErrSuffix', 'ErrNumeric']
        .map((e) => goQ.filter((g) => g.err === e).length)
        .join(' / '),
      'inf.Dec (Go slow path)': goQ.filter((g) => g.dec).length,
      negative: goQ.filter((g) => g.ok && g.nanos?.startsWith('-')).length,
      'Value() beyond int64': goQ.filter(
        (g) => g.ok && (g.nanos === undefined || abs(BigInt(g.nanos)) > INT64_MAX * 1_000_000_000n),
      ).length,
      'over 10 fractional digits': quantities.filter((q) => /\.\d{11}/.test(q)).length,
      'with an exponent': quantities.filter((q) => /^[+-]?[\d.]*[eE][+-]?\d+$/.test(q)).length,
      'longer than 128': quantities.filter((q) => q.length > 128).length,
    };
    const suffixesSeen = [...DECIMAL_SUFFIXES.filter((s) => s !== ''), ...BINARY_SUFFIXES].filter((s) =>
      quantities.some((q, i) => goQ[i]!.ok && /\d$/.test(q.slice(0, q.length - s.length)) && q.endsWith(s)),
    );
    const traits = generated.map((g) => g.traits);
    const count = (f: (t: PodTraits) => boolean) => traits.filter(f).length;
    const podReach = {
      'accepted by both sides, compared in full (both option sets and the request vector)': fullyCompared,
      'rejected by Go (an invalid quantity; rejected here too)': answers
        .slice(QUANTITIES)
        .filter((a) => a.startsWith('{"ok":false')).length,
      assigned: count((t) => t.assigned),
      'with sidecars': count((t) => t.sidecars > 0),
      'with overhead': count((t) => t.overhead),
      'pod-level requests': count((t) => t.podLevel),
      'pod-level resize in progress (assigned, status.resources)': count((t) => t.assigned && t.podLevelStatus),
      'PodResizePending Infeasible': count((t) => t.infeasible),
      'assigned result differs from incoming (Go)': assignedDiffers,
    };

    const report = [
      `seed ${SEED}: ${QUANTITIES} quantities, ${PODS} pods; oracle ${goMs} ms, comparison ${tsMs} ms`,
      `quantities compared: ${tq.compared}, differences: ${tq.total}`,
      ...Object.entries(reach).map(([k, v]) => `  ${k}: ${v}`),
      `  suffixes seen after digits: ${suffixesSeen.join(' ')}`,
      `pod computations compared (assigned + incoming): ${tp.compared}, differences: ${tp.total}`,
      ...Object.entries(podReach).map(([k, v]) => `  ${k}: ${v}`),
      'intended deviations (quantities / pods):',
      ...(Object.keys(DEVIATIONS) as Deviation[]).map(
        (k) => `  ${k}: ${tq.deviations.get(k) ?? 0} / ${tp.deviations.get(k) ?? 0}  (${DEVIATIONS[k]})`,
      ),
      ...[...tq.differences, ...tp.differences].map((d) => `DIFFERENCE ${d}`),
    ].join('\n');
    mkdirSync(join(STATE_DIR, 'logs'), { recursive: true });
    writeFileSync(join(STATE_DIR, 'logs', 'accounting.txt'), `${report}\n`);
    writeFileSync(
      join(STATE_DIR, 'logs', 'accounting-differences.jsonl'),
      [...tq.cases, ...tp.cases].map((c) => `${JSON.stringify(c)}\n`).join(''),
    );
    console.log(report);

    expect([...tq.differences, ...tp.differences]).toEqual([]);
    expect(tq.compared).toBeGreaterThanOrEqual(Math.min(QUANTITIES, 100_000));
    expect(tp.compared).toBe(2 * PODS);
    if (QUANTITIES >= 100_000 && PODS >= 12_000) {
      expect(fullyCompared).toBeGreaterThanOrEqual(10_000);
      expect(reach['inf.Dec (Go slow path)']).toBeGreaterThan(1000);
      expect(reach.negative).toBeGreaterThan(1000);
      expect(reach['Value() beyond int64']).toBeGreaterThan(1000);
      expect(reach['over 10 fractional digits']).toBeGreaterThan(1000);
      expect(reach['with an exponent']).toBeGreaterThan(1000);
      expect(reach['longer than 128']).toBeGreaterThan(100);
      expect(suffixesSeen).toHaveLength(DECIMAL_SUFFIXES.length - 1 + BINARY_SUFFIXES.length);
      expect(podReach['pod-level resize in progress (assigned, status.resources)']).toBeGreaterThan(500);
      expect(podReach['PodResizePending Infeasible']).toBeGreaterThan(1000);
      expect(podReach['assigned result differs from incoming (Go)']).toBeGreaterThan(1000);
      for (const k of Object.keys(DEVIATIONS) as Deviation[]) {
        expect([k, (tq.deviations.get(k) ?? 0) + (tp.deviations.get(k) ?? 0)]).not.toEqual([k, 0]); // each one is reached
      }
    }
  }, 600_000);
});
