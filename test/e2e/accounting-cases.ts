/**
 * Seeded generator of quantity strings and pods for the differential accounting test
 * (accounting.e2e.test.ts): the same seed gives the same cases, in the same order.
 *
 * Quantities are drawn from classes that reach every branch of apimachinery's parser and accessors:
 * realistic forms, random decimals (signs, leading zeros, fractions, every suffix, exponents), huge values
 * (int64 and 2^53 boundaries, E and Ei, exponents up to 10^4100), sub-nano values, strings around the
 * 128-character bound, int32/int64 wrap of the exponent, digit-less numbers, and malformed text.
 * Exponents stay within ±4200 (or wrap to that range): Go's inf.Dec path computes 10^|exponent| exactly, so
 * an exponent near 2^31 would make the oracle itself run for minutes.
 *
 * Pods mix containers, plain and restartable ("sidecar") init containers, overhead, limits (read by neither
 * side), pod-level requests (supported and unsupported keys), container and pod-level status resources
 * (absent, `{}`, partial, allocated ahead or behind), PodResizePending conditions (Infeasible, Deferred, in
 * any position) and a node name on about half of them. Their quantities are mostly realistic, sometimes
 * exotic (any non-negative class above, JSON numbers, whitespace Go trims); rarely negative or invalid, and
 * then only in spec.containers requests, which both option sets read.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

export class Rand {
  private readonly rng: ReturnType<typeof xoroshiro128plus>;

  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed);
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return uniformInt(this.rng, lo, hi);
  }

  chance(p: number): boolean {
    return this.int(0, 999_999) < p * 1_000_000;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)] as T;
  }

  /** `n` random decimal digits; the first is non-zero when `nonZeroFirst`. */
  digits(n: number, nonZeroFirst = false): string {
    let out = '';
    for (let i = 0; i < n; i++) out += String(i === 0 && nonZeroFirst ? this.int(1, 9) : this.int(0, 9));
    return out;
  }

  /** Picks a key by weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let ticket = this.int(0, entries.reduce((sum, [, w]) => sum + w, 0) - 1);
    for (const [key, w] of entries) {
      if (ticket < w) return key;
      ticket -= w;
    }
    return entries[entries.length - 1]![0];
  }
}

export const DECIMAL_SUFFIXES = ['', 'n', 'u', 'm', 'k', 'M', 'G', 'T', 'P', 'E'] as const;
export const BINARY_SUFFIXES = ['Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'] as const;

const REALISTIC = [
  '4',
  '3920m',
  '15991868Ki',
  '47060071478',
  '98831908Ki',
  '14082Mi',
  '1k',
  '129e6',
  '400G',
  '0',
  '0.5',
  '.5',
  '1.5',
  '100m',
  '250m',
  '500m',
  '1',
  '2',
  '8',
  '64',
  '110',
  '1Gi',
  '512Mi',
  '70Mi',
  '128Mi',
  '2Gi',
  '1.5Gi',
  '2000000000n',
  '128974848000m',
  '1.2e3',
  '1.3E+6',
  '1m',
  '1500u',
  '3.001n',
  '1e-10',
  '128m',
  '1E3',
  '1e+3',
  '+1',
  '1.',
  '1.G',
  '350M',
  '110G',
  '32880776Ki',
  '129550072Ki',
  '63770m',
  '1900m',
  '0.000000000001Ki',
  '100.035Ki',
  '5000m',
];

/** Exponent digits: mostly small, sometimes large, rarely wrapping int32 (2^32 + k → k) or at int64's edge. */
function exponent(r: Rand): string {
  switch (r.weighted({ small: 70, medium: 18, large: 8, wrap: 4 })) {
    case 'small':
      return String(r.int(-40, 40));
    case 'medium':
      return String(r.int(-400, 400));
    case 'large':
      return String(r.pick([r.int(-4200, 4200), r.int(4080, 4100), -r.int(4080, 4100)]));
    case 'wrap':
      return r.pick([
        String(2 ** 32 + r.int(-40, 40)),
        String(-(2 ** 32) + r.int(-40, 40)),
        String(2 ** 33 + r.int(-9, 9)),
        '9223372036854775807',
        '-9223372036854775808',
        '9223372036854775808',
        '-9223372036854775809',
      ]);
  }
}

function suffix(r: Rand, allowLargeExponent = true): string {
  switch (r.weighted({ decimal: 45, binary: 30, exponent: 25 })) {
    case 'decimal':
      return r.pick(DECIMAL_SUFFIXES);
    case 'binary':
      return r.pick(BINARY_SUFFIXES);
    case 'exponent': {
      const e = allowLargeExponent ? exponent(r) : String(r.int(-30, 30));
      const signed = e.startsWith('-') ? e : r.pick(['', '', '+']) + e;
      return r.pick(['e', 'E']) + signed;
    }
  }
}

/** A number part: optional sign, leading zeros, integer digits, optional point and fraction. */
function numberPart(r: Rand, opts: { negative?: boolean; maxInt?: number; maxFraction?: number } = {}): string {
  let out: string = r.weighted(opts.negative === false ? { '': 80, '-': 0, '+': 20 } : { '': 84, '-': 11, '+': 5 });
  if (r.chance(0.1)) out += '0'.repeat(r.int(1, 5));
  const intDigits = r.int(0, opts.maxInt ?? 20);
  out += r.digits(intDigits, true);
  if (r.chance(0.45)) {
    const fraction = r.chance(0.1) ? r.int(0, opts.maxFraction ?? 100) : r.int(0, 12);
    out += `.${r.digits(fraction)}`;
  } else if (intDigits === 0) {
    out += r.digits(1);
  }
  return out;
}

const TWO_53 = 2n ** 53n;
const TWO_63 = 2n ** 63n;

function huge(r: Rand, negative: boolean): string {
  const sign = negative && r.chance(0.15) ? '-' : '';
  switch (r.weighted({ digits: 30, boundary: 30, binary: 20, exponent: 20 })) {
    case 'digits':
      return sign + r.digits(r.int(18, 45), true) + r.pick(['', '', 'k', 'E', 'm', 'Ki', 'Ei', 'n']);
    case 'boundary': {
      const base = r.pick([TWO_53, TWO_63, 2n * TWO_63, TWO_53 * 1000n, TWO_63 / 1000n, TWO_63 / 1_000_000_000n]);
      return sign + String(base + BigInt(r.int(-3, 3))) + r.pick(['', '', 'm', 'n', 'k', 'Ki']);
    }
    case 'binary':
      return (
        sign +
        r.pick([
          '7Ei',
          '8Ei',
          '9Ei',
          '16Ei',
          '8191Pi',
          '8192Pi',
          '9Pi',
          '1023Ei',
          '0.5Ei',
          '7.99Ei',
          `${r.int(1, 99999)}Ti`,
        ])
      );
    case 'exponent':
      return `${sign}${r.digits(r.int(1, 5), true)}${r.pick(['', `.${r.digits(r.int(1, 4))}`])}e${r.int(15, 60)}`;
  }
}

function tiny(r: Rand, negative: boolean): string {
  const sign = negative && r.chance(0.2) ? '-' : '';
  if (r.chance(0.5))
    return `${sign}0.${'0'.repeat(r.int(6, 60))}${r.digits(r.int(1, 5), true)}${r.pick(['', 'n', 'u', 'm', 'k', 'Ki', 'G'])}`;
  return `${sign}${r.digits(r.int(1, 4), true)}e-${r.int(8, 420)}`;
}

/** Strings around the 128-character bound (and some far beyond it), mostly valid. */
function long(r: Rand, negative: boolean): string {
  const length = r.chance(0.8) ? r.int(120, 136) : r.int(137, 3000);
  const sign = negative && r.chance(0.2) ? '-' : '';
  const tail = r.pick(['', 'm', 'Ki', 'e3', 'E-5', 'n']);
  const room = Math.max(2, length - sign.length - tail.length);
  switch (r.pick(['zeros', 'fraction', 'digits'] as const)) {
    case 'zeros':
      return sign + '0'.repeat(room - 3) + r.digits(3, true) + tail;
    case 'fraction':
      return `${sign}${r.digits(1, true)}.${r.digits(room - 2)}${tail}`;
    case 'digits':
      return sign + r.digits(room, true) + tail;
  }
}

const DIGITLESS = [
  'Mi',
  'Pi',
  'Ei',
  'Ki',
  'Ti',
  'Gi',
  'm',
  'k',
  'E',
  'e3',
  'e-10',
  'E+5',
  '+',
  '-',
  '.',
  '-.',
  '+.e5',
  '-Ki',
  '.Ei',
  'n',
  'u',
  '+Pi',
  '-e-3',
  '0Pi',
];
const MALFORMED = [
  '',
  ' 1',
  '1 ',
  '1 Gi',
  '1e',
  'e',
  '1.5.5',
  '--1',
  '1E3i',
  '1K',
  '1KB',
  '1kb',
  '1gi',
  '1mi',
  '1i',
  '1Kii',
  '1mm',
  '1ee3',
  '1e-3m',
  '0x10',
  '1,5',
  'NaN',
  '1.1.M',
  '1+1.0M',
  '１',
  '1e+',
  '1e-',
  'Infinity',
  '1_000',
  '٣',
  '\t1',
  '1\n',
  'e+',
  '++1',
  '1.-5',
  '1e3.5',
  '1Mi5',
];
const SOUP = '0123456789.+-eEinumkKMGTP x,_';

function malformed(r: Rand): string {
  switch (r.weighted({ listed: 20, soup: 35, mutated: 45 })) {
    case 'listed':
      return r.pick(MALFORMED);
    case 'soup': {
      let out = '';
      for (let i = r.int(1, 12); i > 0; i--) out += SOUP[r.int(0, SOUP.length - 1)];
      return out;
    }
    case 'mutated': {
      const base = numberPart(r, { maxInt: 8, maxFraction: 8 }) + suffix(r, false);
      const at = r.int(0, base.length);
      const ch = SOUP[r.int(0, SOUP.length - 1)]!;
      switch (r.pick(['insert', 'delete', 'replace'] as const)) {
        case 'insert':
          return base.slice(0, at) + ch + base.slice(at);
        case 'delete':
          return base.slice(0, at) + base.slice(at + 1);
        case 'replace':
          return base.slice(0, at) + ch + base.slice(at + 1);
      }
    }
  }
}

export type QuantityClass = 'realistic' | 'decimal' | 'huge' | 'tiny' | 'long' | 'digitless' | 'malformed';

/** One quantity string of the given (or a weighted random) class; `negative: false` keeps it unsigned or `+`. */
export function quantityString(r: Rand, cls?: QuantityClass, negative = true): string {
  const c =
    cls ??
    r.weighted<QuantityClass>({ realistic: 12, decimal: 38, huge: 10, tiny: 6, long: 5, digitless: 4, malformed: 25 });
  switch (c) {
    case 'realistic':
      return r.chance(0.5) ? r.pick(REALISTIC) : String(r.int(0, 100000)) + suffix(r, false);
    case 'decimal':
      return numberPart(r, { negative }) + suffix(r);
    case 'huge':
      return huge(r, negative);
    case 'tiny':
      return tiny(r, negative);
    case 'long':
      return long(r, negative);
    case 'digitless':
      return r.pick(DIGITLESS).replace(/^-/, negative ? '-' : '');
    case 'malformed':
      return malformed(r);
  }
}

// ------------------------------------------------------------------------------------------------- pods

type Json = Record<string, unknown>;

const CONTAINER_RESOURCES = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'hugepages-2Mi',
  'hugepages-1Gi',
  'nvidia.com/gpu',
  'example.com/widget',
] as const;
const POD_LEVEL_RESOURCES = ['cpu', 'memory', 'hugepages-2Mi', 'ephemeral-storage', 'nvidia.com/gpu'] as const;

function realisticFor(r: Rand, resource: string): string {
  switch (resource) {
    case 'cpu':
      return r.pick([
        '100m',
        '250m',
        '500m',
        '1',
        '2',
        '4',
        '1.5',
        '3920m',
        `${r.int(1, 64000)}m`,
        String(r.int(0, 96)),
      ]);
    case 'memory':
      return r.pick([
        '64Mi',
        '128Mi',
        '512Mi',
        '1Gi',
        '4Gi',
        '1.5Gi',
        '512M',
        '2G',
        `${r.int(1, 65536)}Mi`,
        `${r.int(1, 99999999)}Ki`,
        '128m',
      ]);
    case 'ephemeral-storage':
      return r.pick(['1Gi', '10Gi', '2G', `${r.int(1, 999)}Mi`, '47060071478']);
    case 'hugepages-2Mi':
      return `${2 * r.int(0, 512)}Mi`;
    case 'hugepages-1Gi':
      return `${r.int(0, 16)}Gi`;
    default:
      return String(r.int(0, 8));
  }
}

/** Digits, an optional fraction and a valid suffix: always a valid quantity for Go (maybe a huge one). */
function validExotic(r: Rand): string {
  const fraction = r.chance(0.5) ? `.${r.digits(r.int(1, 40))}` : '';
  const sfx = r.chance(0.3)
    ? `e${r.pick([String(r.int(-40, 40)), String(r.int(-400, 400)), String(r.int(-4200, 4200))])}`
    : suffix(r, false);
  return r.digits(r.int(1, 25), true) + fraction + sfx;
}

/**
 * A non-negative quantity (a string, sometimes a JSON number or whitespace-padded). `spec` lists are read by
 * both option sets, so they may hold anything a parser can reject; `status` lists are read only for an
 * assigned pod, and Go decodes the whole pod, so they hold only values Go accepts (else the incoming pod's
 * result would be lost to a decode error that says nothing about accounting).
 */
function podQuantity(r: Rand, resource: string, list: 'spec' | 'status'): unknown {
  switch (r.weighted({ realistic: 70, exotic: 19, long: 1, number: 5, padded: 3, huge: 2 })) {
    case 'realistic':
      return realisticFor(r, resource);
    case 'exotic': {
      if (list === 'status') return validExotic(r);
      const cls = r.weighted({ valid: 34, decimal: 4, tiny: 2, digitless: 1 });
      return cls === 'valid' ? validExotic(r) : quantityString(r, cls, false);
    }
    case 'long':
      return quantityString(r, 'long', false);
    case 'number':
      return r.pick([0, 1, 2, 4, 0.5, 0.25, 1e3, 1e-7, 123456789, 0.1 + 0.2, 1e21, 3.5]);
    case 'padded': {
      // JSON carries \t and \n only escaped, which Go's Quantity.UnmarshalJSON rejects: spec lists only
      const raw = [' ', '\u00a0', '\u3000', '\u0085', '\u2028'];
      const pads = list === 'spec' && r.chance(0.1) ? ['\t', '\n'] : raw;
      return r.pick(pads) + realisticFor(r, resource) + r.pick(['', ...raw]);
    }
    case 'huge':
      return quantityString(r, 'huge', false);
  }
}

function resourceList(
  r: Rand,
  names: readonly string[],
  min: number,
  max: number,
  value: (name: string) => unknown = (n) => podQuantity(r, n, 'spec'),
): Json {
  const out: Json = {};
  const count = r.int(min, Math.min(max, names.length));
  const pool = [...names];
  for (let i = 0; i < count; i++) {
    const [name] = pool.splice(r.int(0, pool.length - 1), 1);
    out[name!] = value(name!);
  }
  return out;
}

/** Spec requests of a regular container: like resourceList, rarely with a negative or invalid quantity. */
function specRequests(r: Rand): Json {
  return resourceList(r, CONTAINER_RESOURCES, 0, 4, (name) => {
    if (r.chance(0.004)) return `-${realisticFor(r, name)}`;
    if (r.chance(0.004)) return quantityString(r, 'malformed');
    return podQuantity(r, name, 'spec');
  });
}

/**
 * A status resource list that keeps some of `spec`'s values, moves some up or down, drops some, adds some.
 * (A kept spec value may be one Go rejects: then both option sets reject the pod at the spec already.)
 */
function statusList(r: Rand, spec: Json, names: readonly string[]): Json {
  const out: Json = {};
  for (const [name, v] of Object.entries(spec)) {
    if (r.chance(0.2)) continue;
    out[name] = r.chance(0.5) ? v : podQuantity(r, name, 'status');
  }
  if (r.chance(0.25))
    Object.assign(
      out,
      resourceList(r, names, 1, 2, (n) => podQuantity(r, n, 'status')),
    );
  return out;
}

function containerStatus(r: Rand, name: string, spec: Json): Json {
  const status: Json = { name };
  switch (r.weighted({ none: 25, empty: 10, requests: 65 })) {
    case 'none':
      break;
    case 'empty':
      status['resources'] = {};
      break;
    case 'requests':
      status['resources'] = r.chance(0.1) ? { requests: {} } : { requests: statusList(r, spec, CONTAINER_RESOURCES) };
      break;
  }
  if (r.chance(0.7)) status['allocatedResources'] = statusList(r, spec, CONTAINER_RESOURCES);
  return status;
}

function conditions(r: Rand): Json[] {
  const out: Json[] = [];
  if (r.chance(0.3)) out.push({ type: 'Ready', status: r.pick(['True', 'False']) });
  if (r.chance(0.4))
    out.push({
      type: 'PodResizePending',
      status: 'True',
      reason: r.weighted({ Infeasible: 60, Deferred: 35, Other: 5 }),
    });
  if (r.chance(0.15)) out.push({ type: 'PodResizeInProgress', status: 'True' });
  if (r.chance(0.05))
    out.push({ type: 'PodResizePending', status: 'True', reason: r.pick(['Infeasible', 'Deferred']) }); // only the first counts
  for (let i = out.length - 1; i > 0; i--) {
    const j = r.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Facts about a generated pod, for the test's coverage assertions. */
export interface PodTraits {
  readonly assigned: boolean;
  readonly podLevel: boolean;
  readonly podLevelStatus: boolean;
  readonly infeasible: boolean;
  readonly sidecars: number;
  readonly overhead: boolean;
}

export function generatePod(r: Rand, index: number): { pod: Json; traits: PodTraits } {
  const containers: Json[] = [];
  const statuses: Json[] = [];
  for (let i = r.int(1, 4); i > 0; i--) {
    const name = `c${containers.length}`;
    const requests = specRequests(r);
    const resources: Json = { requests };
    if (r.chance(0.3)) resources['limits'] = resourceList(r, CONTAINER_RESOURCES, 1, 3, (n) => realisticFor(r, n));
    containers.push({ name, image: 'example.invalid/none', resources });
    if (r.chance(0.6)) statuses.push(containerStatus(r, name, requests));
  }
  const initContainers: Json[] = [];
  const initStatuses: Json[] = [];
  let sidecars = 0;
  for (let i = r.chance(0.5) ? r.int(1, 4) : 0; i > 0; i--) {
    const name = `i${initContainers.length}`;
    const requests = resourceList(r, CONTAINER_RESOURCES, 0, 3);
    const container: Json = { name, image: 'example.invalid/none', resources: { requests } };
    const policy = r.weighted({ Always: 50, none: 45, Never: 5 });
    if (policy !== 'none') container['restartPolicy'] = policy;
    if (policy === 'Always') sidecars++;
    initContainers.push(container);
    if (r.chance(0.6)) initStatuses.push(containerStatus(r, name, requests));
  }
  if (r.chance(0.03)) statuses.push({ name: 'not-a-container', resources: { requests: { cpu: '64' } } });

  const assigned = r.chance(0.55);
  const spec: Json = { containers };
  if (initContainers.length > 0) spec['initContainers'] = initContainers;
  if (assigned) spec['nodeName'] = `node-${r.int(0, 9)}`;
  const overhead = r.chance(0.2);
  if (overhead)
    spec['overhead'] = resourceList(r, ['cpu', 'memory', 'example.com/widget'], 1, 2, (n) => realisticFor(r, n));

  const status: Json = { phase: assigned ? 'Running' : 'Pending' };
  let podLevel = false;
  let podLevelStatus = false;
  if (r.chance(0.45)) {
    podLevel = true;
    const requests = r.chance(0.1)
      ? resourceList(r, ['ephemeral-storage', 'nvidia.com/gpu'], 1, 2) // unsupported keys only: IsPodLevelRequestsSet is false
      : resourceList(r, POD_LEVEL_RESOURCES, 1, 4);
    const resources: Json = { requests };
    if (r.chance(0.3)) resources['limits'] = resourceList(r, ['cpu', 'memory'], 1, 2, (n) => realisticFor(r, n));
    spec['resources'] = resources;
    if (r.chance(0.6)) {
      podLevelStatus = true;
      status['resources'] = r.chance(0.1) ? {} : { requests: statusList(r, requests, POD_LEVEL_RESOURCES) };
    }
    if (r.chance(0.6)) status['allocatedResources'] = statusList(r, requests, POD_LEVEL_RESOURCES);
  }
  const conds = conditions(r);
  if (conds.length > 0) status['conditions'] = conds;
  if (statuses.length > 0) status['containerStatuses'] = statuses;
  if (initStatuses.length > 0) status['initContainerStatuses'] = initStatuses;

  const firstResize = conds.find((c) => c['type'] === 'PodResizePending');
  return {
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${index}`, namespace: 'default', uid: `uid-${index}` },
      spec,
      status,
    },
    traits: {
      assigned,
      podLevel,
      podLevelStatus,
      infeasible: firstResize?.['reason'] === 'Infeasible',
      sidecars,
      overhead,
    },
  };
}
