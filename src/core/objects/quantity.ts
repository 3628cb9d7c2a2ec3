/**
 * Exact Kubernetes `resource.Quantity` parsing, in integers: a quantity is an exact BigInt count of nano-units
 * (value × 10^9), no floating point anywhere. Mirrors k8s.io/apimachinery/pkg/api/resource (quantity.go
 * `ParseQuantity`, `parseQuantityString`, `UnmarshalJSON`; suffix.go `interpret`; `ScaledValue`/`MilliValue`/`Value`).
 * test/core/objects/quantity.test.ts holds the grammar's edge cases (85 rows from the upstream Go code). The
 * deviations from Go, all outside anything an API server returns, are stated on the functions they concern and
 * checked against apimachinery v0.36.3 by test/e2e/accounting.e2e.test.ts (listed in test/e2e/README.md).
 */

/**
 * Thrown for anything that is not a valid quantity (or, in podRequests, not a valid resource list).
 * `message` says what was wrong and quotes the offending text; `input` is the rejected value.
 */
export class QuantityError extends Error {
  /** The value that was rejected (the raw string, number, or other JSON value). */
  readonly input: unknown;

  constructor(message: string, input: unknown, options?: ErrorOptions) {
    super(message, options);
    this.name = 'QuantityError';
    this.input = input;
  }
}

/** The serialisation format a quantity remembers (Go `resource.Format`). */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** A parsed quantity: the exact value × 10^9 (nano-units; may be negative) and its remembered format. */
export interface Quantity {
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

const NANOS_PER_UNIT = 1_000_000_000n;
const NANOS_PER_MILLI = 1_000_000n;
const INT64_MAX = (1n << 63n) - 1n;
/** Go's `maxAllowed`: BinarySI values are clamped to 2^63 − 1 units. */
const BINARY_MAX_NANOS = INT64_MAX * NANOS_PER_UNIT;
/** Largest power of ten applied to the digits (bounds BigInt work on hostile exponents). */
const MAX_POW10 = 4096;
const SUFFIX_SHAPE = /^[eEinumkKMGTP]*[-+]?[0-9]*$/;
const EXPONENT_SHAPE = /^[+-]?[0-9]+$/;
const GO_FORMAT_REGEX = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);

/** What the scanner extracted: sign, integer digits without leading zeros ("0" if none), fraction digits. */
interface Scanned {
  readonly negative: boolean;
  readonly hasDigits: boolean;
  readonly num: string;
  readonly denom: string;
  readonly suffix: string;
}

interface Suffix {
  readonly base: 2 | 10;
  readonly exponent: number;
  readonly format: QuantityFormat;
}

function show(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

function fail(input: string, reason: string): never {
  throw new QuantityError(`invalid quantity ${show(input)} (${reason})`, input);
}

function digitsEnd(str: string, from: number): number {
  let i = from;
  while (i < str.length && str.charCodeAt(i) >= 48 && str.charCodeAt(i) <= 57) i++;
  return i;
}

/** Mirrors `parseQuantityString`: [sign] [zeros] [digits] [. digits] then suffix chars, [sign], digits. */
function scan(str: string): Scanned {
  const negative = str[0] === '-';
  let pos = negative || str[0] === '+' ? 1 : 0;
  const numberStart = pos;
  while (str[pos] === '0') pos++;
  const intEnd = digitsEnd(str, pos);
  const num = str.slice(pos, intEnd) || '0';
  pos = intEnd;
  let denom = '';
  if (str[pos] === '.') {
    const fracEnd = digitsEnd(str, pos + 1);
    denom = str.slice(pos + 1, fracEnd);
    pos = fracEnd;
  }
  const hasDigits = digitsEnd(str, numberStart) > numberStart || denom.length > 0;
  const suffix = str.slice(pos);
  if (!SUFFIX_SHAPE.test(suffix)) {
    fail(
      str,
      `ErrFormatWrong: unexpected text ${show(suffix)} after the number; quantities must match '${GO_FORMAT_REGEX}'`,
    );
  }
  return { negative, hasDigits, num, denom, suffix };
}

/** Mirrors suffix.go `interpret`: decimal table, binary table, then `e`/`E` + int64 exponent (cast to int32). */
function interpretSuffix(input: string, suffix: string): Suffix {
  const decimal = DECIMAL_SUFFIXES.get(suffix);
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES.get(suffix);
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  const digits = suffix.slice(1);
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && EXPONENT_SHAPE.test(digits)) {
    const parsed = BigInt(digits);
    if (parsed <= INT64_MAX && parsed >= -INT64_MAX - 1n) {
      return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
    }
  }
  return fail(
    input,
    `ErrSuffix: unknown suffix ${show(suffix)}; suffixes are case-sensitive: n u m k M G T P E, ` +
      'Ki Mi Gi Ti Pi Ei, or e/E followed by an integer exponent',
  );
}

/** Whether Go's int64 fast path handles this input (otherwise it re-parses the number with inf.Dec). */
function goFastPath(s: Scanned, sfx: Suffix): boolean {
  if (sfx.base === 10) {
    return 18 - (s.num.length + s.denom.length) >= 0 && sfx.exponent - s.denom.length >= -9;
  }
  if (s.denom.length > 0) return false;
  const precision = 15 - s.num.length - Math.floor((sfx.exponent * 3) / 10) - 1;
  return precision >= 0 && BigInt(s.num) << BigInt(sfx.exponent) <= INT64_MAX;
}

/** ceil(n × 10^pow) for n ≥ 0; null when pow exceeds MAX_POW10. */
function shiftCeil(n: bigint, pow: number): bigint | null {
  if (n === 0n) return 0n;
  if (pow >= 0) return pow > MAX_POW10 ? null : n * 10n ** BigInt(pow);
  const down = -pow;
  if (down > n.toString().length) return 1n;
  return ceilDiv(n, 10n ** BigInt(down));
}

/** Exact |value| in nanos, rounded up (away from zero) to a whole nano as Go's `Round(…, Nano, RoundUp)`. */
function magnitudeNanos(input: string, s: Scanned, sfx: Suffix): bigint {
  const digits = BigInt(s.num + s.denom);
  const scaled = sfx.base === 2 ? digits << BigInt(sfx.exponent) : digits;
  const pow = (sfx.base === 10 ? sfx.exponent : 0) - s.denom.length + 9;
  const nanos = shiftCeil(scaled, pow);
  if (nanos === null) fail(input, `magnitude above 10^${MAX_POW10 - 9} is not supported`);
  return sfx.format === 'BinarySI' && nanos > BINARY_MAX_NANOS ? BINARY_MAX_NANOS : nanos;
}

/**
 * Longest quantity string accepted, in characters (UTF-16 code units).
 *
 * Kubernetes itself has no bound, but everything kube-scheduler reads from a quantity is an int64
 * (`MilliValue()`, `Value()`) of a value `ParseQuantity` keeps to the nano: at most 19 integer and 9
 * fractional significant digits, plus a sign, a point and a suffix (`"e-2147483648"` is 12 characters),
 * about 42 characters in all; the canonical form the API server stores (`String()`) of such a value is shorter
 * still. Anything longer only adds zero padding, digits that parsing rounds away, or a magnitude whose int64
 * accessors overflow. 128 is three times that, and keeps parsing cheap: BigInt conversion of decimal text is
 * quadratic (a 7.6 MB, 8M-digit value took seconds and blocked the event loop).
 */
export const MAX_QUANTITY_LENGTH = 128;

/**
 * Parses a quantity string exactly as apimachinery `resource.ParseQuantity` does (the real scanner, not
 * the BNF): an empty number part is zero (`"Mi"`, `"m"`, `"."`, `"+"`, `"e3"`), `"1."`, `".5"`, `"1.G"` are
 * accepted, suffixes `n u m "" k M G T P E`, `Ki…Ei`, `e<int>`/`E<int>` are case-sensitive, no whitespace.
 * Values finer than a nano are rounded up (away from zero); BinarySI magnitudes are clamped at 2^63 − 1
 * units; decimal values are not clamped. A BinarySI value strictly between 0 and 1 becomes DecimalSI.
 * Like Go, a digit-less number on Go's inf.Dec path (`"Pi"`, `"Ei"`, `"e-10"`) is ErrNumeric. Go wraps
 * `scale - len(fraction)` in int32; here that arithmetic is unbounded (only the parsed exponent itself is
 * wrapped to int32, as Go's `int32(parsed)` does).
 *
 * @returns `{ nanos, format }`, nanos = exact value × 10^9.
 * @throws QuantityError naming the input and the Go error it corresponds to (ErrFormatWrong,
 *   ErrSuffix, ErrNumeric), a string longer than {@link MAX_QUANTITY_LENGTH} (checked first, before any
 *   other work; Go has no bound), or a magnitude above 10^4087 (a decimal exponent pushing the nano count past
 *   10^4096; Go stores it in an int64Amount/inf.Dec whose accessors overflow anyway).
 */
export function parseQuantity(input: string): Quantity {
  if (typeof input === 'string' && input.length > MAX_QUANTITY_LENGTH) {
    fail(input, `the quantity is ${input.length} characters long; the limit is ${MAX_QUANTITY_LENGTH}`);
  }
  const cached = memo.get(input);
  if (cached) return cached;
  const quantity = parseUncached(input);
  if (memo.size >= PARSE_MEMO_MAX_ENTRIES || memoKeyChars + input.length > PARSE_MEMO_MAX_KEY_CHARS) {
    memo.clear();
    memoKeyChars = 0;
  }
  memo.set(input, quantity);
  memoKeyChars += input.length;
  return quantity;
}

/** Most quantities the parse memo holds. */
export const PARSE_MEMO_MAX_ENTRIES = 4096;
/** Most characters of keys the parse memo holds (UTF-16 code units: at most 2 bytes each, so ≤ 256 KiB). */
export const PARSE_MEMO_MAX_KEY_CHARS = 128 * 1024;

/**
 * Parsed quantities by input string. Clusters repeat a handful of strings (`"2"`, `"4Gi"`, one
 * allocatable per instance type), so parsing each once saves BigInt work on every request. Bounded by
 * entries and by the total length of its keys (cleared when either would be exceeded), so adversarial
 * input cannot grow it. Quantities are immutable, so sharing is safe.
 */
const memo = new Map<string, Quantity>();
let memoKeyChars = 0;

/** Current size of the parse memo: entries, and total characters of their keys. */
export function parseMemoSize(): { readonly entries: number; readonly keyChars: number } {
  return { entries: memo.size, keyChars: memoKeyChars };
}

function parseUncached(input: string): Quantity {
  if (typeof input !== 'string') {
    throw new QuantityError(`invalid quantity: expected a string, got ${describe(input)}`, input);
  }
  if (input.length === 0) fail(input, 'ErrFormatWrong: empty string');
  const scanned = scan(input);
  const sfx = interpretSuffix(input, scanned.suffix);
  if (!scanned.hasDigits && !goFastPath(scanned, sfx)) {
    fail(input, 'ErrNumeric: unable to parse numeric part of quantity (no digits)');
  }
  const magnitude = magnitudeNanos(input, scanned, sfx);
  const format = sfx.format === 'BinarySI' && magnitude > 0n && magnitude < NANOS_PER_UNIT ? 'DecimalSI' : sfx.format;
  return { nanos: scanned.negative ? -magnitude : magnitude, format };
}

/**
 * Go's `unicode.IsSpace` characters that a JSON string can hold unescaped. Its other spaces, `\t \n \v \f \r`,
 * are control characters: JSON carries them only as escape sequences, which `Quantity.UnmarshalJSON` does not
 * decode (it trims and parses the raw bytes between the quotes), so Kubernetes rejects a quantity written
 * with one.
 */
const JSON_RAW_GO_SPACE = new Set([0x20, 0x85, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);
const ESCAPED_GO_SPACE = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d]);

function isJsonRawGoSpace(code: number): boolean {
  return JSON_RAW_GO_SPACE.has(code) || (code >= 0x2000 && code <= 0x200a);
}

/**
 * Go `strings.TrimSpace` of the raw JSON text, given the decoded string (unlike String#trim: trims U+0085,
 * keeps U+FEFF). Only the surrounding whitespace is scanned.
 * @throws QuantityError when a tab, newline, vertical tab, form feed or carriage return surrounds the value.
 */
function jsonTrimSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isJsonRawGoSpace(text.charCodeAt(start))) start++;
  while (end > start && isJsonRawGoSpace(text.charCodeAt(end - 1))) end--;
  if (ESCAPED_GO_SPACE.has(text.charCodeAt(start)) || ESCAPED_GO_SPACE.has(text.charCodeAt(end - 1))) {
    fail(
      text,
      'a tab, newline or other control character can be in a JSON string only as an escape sequence, ' +
        'which Quantity.UnmarshalJSON does not decode: Kubernetes rejects it',
    );
  }
  return text.slice(start, end);
}

function describe(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'an array';
  if (typeof input === 'number') return String(input);
  return typeof input === 'object' ? 'an object' : typeof input;
}

/**
 * Parses a decoded JSON value the way `Quantity.UnmarshalJSON` accepts it: a string (surrounding
 * whitespace trimmed with Go's `strings.TrimSpace` rules, then `ParseQuantity`), or a finite JSON number
 * (YAML `cpu: 2` or `0.5`; parsed from its JavaScript decimal text, so integers above 2^53 have already
 * lost precision in JSON.parse). Unlike Go, `null` is rejected.
 *
 * Go parses the raw bytes between the quotes, without decoding escape sequences. A decoded string cannot
 * show them, so two cases differ: a tab, newline, vertical tab, form feed or carriage return around the
 * value (necessarily escaped in JSON) is rejected here as in Go; an escaped ordinary character (`"\u0031"`)
 * is accepted here and rejected by Go. Kubernetes never writes either (its quantities are ASCII
 * letters, digits, `.`, `+` and `-`).
 *
 * @throws QuantityError for an invalid string, a non-finite number, or any other type.
 */
export function parseQuantityValue(input: unknown): Quantity {
  if (typeof input === 'string') return parseQuantity(jsonTrimSpace(input));
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) {
      throw new QuantityError(`invalid quantity ${String(input)} (a number must be finite)`, input);
    }
    return parseQuantity(String(input));
  }
  throw new QuantityError(`invalid quantity: expected a string or a finite number, got ${describe(input)}`, input);
}

/** Divides and rounds the magnitude up, keeping the sign (int64Amount `AsScaledInt64` rounding). */
function roundAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  return numerator < 0n ? -ceilDiv(-numerator, denominator) : ceilDiv(numerator, denominator);
}

/**
 * The quantity in thousandths, rounded up: what kube-scheduler uses for cpu (millicores).
 * Mirrors `Quantity.MilliValue()` = `ScaledValue(resource.Milli)`: for q ≥ 0 this is ceil(q × 1000), as in Go.
 * Unlike Go it never overflows: the result is an exact BigInt (`"1E"` → 10^21, where Go returns 0).
 *
 * Negative values round away from zero: −ceil(|q| × 1000) (`"-0.1m"` → −1, `"-1.5000000001"` → −1501).
 * Go agrees on its int64 fast path (`negativeScaleInt64`), but a quantity it holds as an inf.Dec (more than
 * 18 digits, sub-nano digits, a fractional BinarySI value) goes through `scaledValue`, which truncates toward
 * zero and then adds one when inexact (`"-1.50000000000000000000001"` → −1499). That is not mirrored: the result
 * would depend on Go's internal representation, and no accounting reads a negative value (the API server's
 * `ValidateResourceQuantityValue` rejects negative resource values, and podRequests/nodeAllocatable reject them).
 */
export function milliValue(q: Quantity): bigint {
  return roundAwayFromZero(q.nanos, NANOS_PER_MILLI);
}

/**
 * The quantity in whole units, rounded up: what kube-scheduler uses for memory, ephemeral-storage,
 * pods, hugepages and extended resources (bytes or counts). Mirrors `Quantity.Value()` =
 * `ScaledValue(0)`: for q ≥ 0 this is ceil(q). Never overflows, unlike Go (`"10E"` → 10^19, Go returns 0).
 * Negative values round away from zero (`"-1.5"` → −2), which Go does only on its int64 fast path; see
 * {@link milliValue} for why its inf.Dec rounding of negatives (`"-1.50000000000000000000001"` → 0) is not mirrored.
 */
export function value(q: Quantity): bigint {
  return roundAwayFromZero(q.nanos, NANOS_PER_UNIT);
}

/**
 * Mathematical ceiling of numerator / denominator (e.g. 7/2 → 4, −7/2 → −3).
 * @throws RangeError when denominator ≤ 0.
 */
export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError(`ceilDiv: denominator must be positive, got ${denominator}`);
  const quotient = numerator / denominator;
  return numerator > 0n && numerator % denominator !== 0n ? quotient + 1n : quotient;
}

/** Number.MAX_SAFE_INTEGER (2^53 − 1) as a bigint: the largest amount the model holds exactly. */
export const MAX_SAFE_INTEGER_BIG = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Converts to a JavaScript number when |v| ≤ Number.MAX_SAFE_INTEGER (2^53 − 1).
 * @param what names the value in the error message (e.g. `"memory (bytes)"`).
 * @throws QuantityError naming `what` and the value when it is out of range.
 */
export function toSafeInteger(v: bigint, what: string): number {
  if (v > MAX_SAFE_INTEGER_BIG || v < -MAX_SAFE_INTEGER_BIG) {
    throw new QuantityError(`${what}: ${v} is outside the safe integer range ±${Number.MAX_SAFE_INTEGER}`, v);
  }
  return Number(v);
}
