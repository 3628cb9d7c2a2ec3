import {
  MAX_QUANTITY_LENGTH,
  PARSE_MEMO_MAX_ENTRIES,
  PARSE_MEMO_MAX_KEY_CHARS,
  QuantityError,
  ceilDiv,
  parseMemoSize,
  milliValue,
  parseQuantity,
  parseQuantityValue,
  toSafeInteger,
  value,
  type QuantityFormat,
} from '../../../src/core/objects/quantity.js';
import { thrown } from '../../fixtures/thrown.js';

/** "3.92" / "-0.0001" (≤ 9 decimals) → exact nanos, so the table's "exact value" column can be asserted. */
function decimalToNanos(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const nanos = BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'));
  return negative ? -nanos : nanos;
}

// Edge cases of k8s.io/apimachinery v0.36 resource.ParseQuantity (pkg/api/resource/quantity.go), accepted rows: [row, input, format, exact value (AsDec), MilliValue(), Value()].
// Rows 41, 43 and 47–50 overflow int64 in Go; the Go column is in the comment, the expected value is the
// exact BigInt ceiling this module returns instead (documented in milliValue/value).
type AcceptedRow = readonly [number, string, QuantityFormat, string, string, string];
const accepted: readonly AcceptedRow[] = [
  [1, '4', 'DecimalSI', '4', '4000', '4'],
  [2, '3920m', 'DecimalSI', '3.92', '3920', '4'],
  [3, '15991868Ki', 'BinarySI', '16375672832', '16375672832000', '16375672832'],
  [4, '47060071478', 'DecimalSI', '47060071478', '47060071478000', '47060071478'],
  [5, '98831908Ki', 'BinarySI', '101203873792', '101203873792000', '101203873792'],
  [6, '14082Mi', 'BinarySI', '14766047232', '14766047232000', '14766047232'],
  [7, '1k', 'DecimalSI', '1000', '1000000', '1000'],
  [8, '129e6', 'DecimalExponent', '129000000', '129000000000', '129000000'],
  [9, '400G', 'DecimalSI', '400000000000', '400000000000000', '400000000000'],
  [10, '0', 'DecimalSI', '0', '0', '0'],
  [11, '0.5', 'DecimalSI', '0.5', '500', '1'],
  [12, '.5', 'DecimalSI', '0.5', '500', '1'],
  [13, '1.5', 'DecimalSI', '1.5', '1500', '2'],
  [14, '0.1', 'DecimalSI', '0.1', '100', '1'],
  [15, '1.0', 'DecimalSI', '1', '1000', '1'],
  [16, '5000m', 'DecimalSI', '5', '5000', '5'],
  [17, '1000', 'DecimalSI', '1000', '1000000', '1000'],
  [18, '1000M', 'DecimalSI', '1000000000', '1000000000000', '1000000000'],
  [19, '1024Mi', 'BinarySI', '1073741824', '1073741824000', '1073741824'],
  [20, '1.5Gi', 'BinarySI', '1610612736', '1610612736000', '1610612736'],
  [21, '1.5Mi', 'BinarySI', '1572864', '1572864000', '1572864'],
  [22, '0.5Ki', 'BinarySI', '512', '512000', '512'],
  [23, '1.1Ki', 'BinarySI', '1126.4', '1126400', '1127'],
  [24, '100.035Ki', 'BinarySI', '102435.84', '102435840', '102436'],
  [25, '2000000000n', 'DecimalSI', '2', '2000', '2'],
  [26, '128974848000m', 'DecimalSI', '128974848', '128974848000', '128974848'],
  [27, '1.2e3', 'DecimalExponent', '1200', '1200000', '1200'],
  [28, '1.3E+6', 'DecimalExponent', '1300000', '1300000000', '1300000'],
  [29, '1m', 'DecimalSI', '0.001', '1', '1'],
  [30, '0.1m', 'DecimalSI', '0.0001', '1', '1'],
  [31, '1500u', 'DecimalSI', '0.0015', '2', '1'],
  [32, '1u', 'DecimalSI', '0.000001', '1', '1'],
  [33, '1n', 'DecimalSI', '0.000000001', '1', '1'],
  [34, '3.001n', 'DecimalSI', '0.000000004', '1', '1'],
  [35, '1e-10', 'DecimalExponent', '0.000000001', '1', '1'],
  [36, '0.000000000001Ki', 'DecimalSI', '0.000000002', '1', '1'],
  [37, '128m', 'DecimalSI', '0.128', '128', '1'],
  [38, '1e3', 'DecimalExponent', '1000', '1000000', '1000'],
  [39, '1E3', 'DecimalExponent', '1000', '1000000', '1000'],
  [40, '1e+3', 'DecimalExponent', '1000', '1000000', '1000'],
  // Go MilliValue() = 0 (overflow)
  [41, '1E', 'DecimalSI', '1000000000000000000', '1000000000000000000000', '1000000000000000000'],
  [42, '1e-3', 'DecimalExponent', '0.001', '1', '1'],
  // Go MilliValue() = 0, Value() = 0 (overflow)
  [43, '10E', 'DecimalSI', '10000000000000000000', '10000000000000000000000', '10000000000000000000'],
  [44, '+1', 'DecimalSI', '1', '1000', '1'],
  [45, '1.', 'DecimalSI', '1', '1000', '1'],
  [46, '1.G', 'DecimalSI', '1000000000', '1000000000000', '1000000000'],
  // Go MilliValue() = -9223372036854775808 (overflow)
  [47, '7Ei', 'BinarySI', '8070450532247928832', '8070450532247928832000', '8070450532247928832'],
  // clamped to 2^63-1 at parse; Go MilliValue() = -1000 (overflow)
  [48, '8Ei', 'BinarySI', '9223372036854775807', '9223372036854775807000', '9223372036854775807'],
  // Go MilliValue() = -1000 (overflow)
  [49, '9223372036854775807', 'DecimalSI', '9223372036854775807', '9223372036854775807000', '9223372036854775807'],
  // Go MilliValue() = 0, Value() = -9223372036854775808 (overflow)
  [50, '9223372036854775808', 'DecimalSI', '9223372036854775808', '9223372036854775808000', '9223372036854775808'],
  [51, '-1', 'DecimalSI', '-1', '-1000', '-1'],
  [52, '-1.5', 'DecimalSI', '-1.5', '-1500', '-2'],
  [53, '-0.1m', 'DecimalSI', '-0.0001', '-1', '-1'],
  [54, 'Mi', 'BinarySI', '0', '0', '0'],
  [55, 'm', 'DecimalSI', '0', '0', '0'],
  [56, '.', 'DecimalSI', '0', '0', '0'],
  [57, '+', 'DecimalSI', '0', '0', '0'],
  [58, '-', 'DecimalSI', '0', '0', '0'],
  [59, 'e3', 'DecimalExponent', '0', '0', '0'],
  [60, '00', 'DecimalSI', '0', '0', '0'],
  [84, '100m', 'DecimalSI', '0.1', '100', '1'],
  [85, '70Mi', 'BinarySI', '73400320', '73400320000', '73400320'],
];

// Edge cases of k8s.io/apimachinery v0.36 resource.ParseQuantity, rejected rows: [row, input, Go error].
type RejectedRow = readonly [number, string, 'ErrFormatWrong' | 'ErrSuffix'];
const rejected: readonly RejectedRow[] = [
  [61, '', 'ErrFormatWrong'],
  [62, '1.5.5', 'ErrFormatWrong'],
  [63, '1 Gi', 'ErrFormatWrong'],
  [64, ' 1', 'ErrFormatWrong'],
  [65, '1 ', 'ErrFormatWrong'],
  [66, '1e', 'ErrSuffix'],
  [67, '1E3i', 'ErrFormatWrong'],
  [68, '1K', 'ErrSuffix'],
  [69, '1KB', 'ErrFormatWrong'],
  [70, '1kb', 'ErrFormatWrong'],
  [71, '1gi', 'ErrFormatWrong'],
  [72, '1mi', 'ErrSuffix'],
  [73, '1i', 'ErrSuffix'],
  [74, '1Kii', 'ErrSuffix'],
  [75, '1mm', 'ErrSuffix'],
  [76, '--1', 'ErrSuffix'],
  [77, '1ee3', 'ErrSuffix'],
  [78, '1e-3m', 'ErrFormatWrong'],
  [79, '0x10', 'ErrFormatWrong'],
  [80, '1,5', 'ErrFormatWrong'],
  [81, 'NaN', 'ErrFormatWrong'],
  [82, '1.1.M', 'ErrFormatWrong'],
  [83, '1+1.0M', 'ErrFormatWrong'],
];

function parseError(run: () => unknown): QuantityError {
  return thrown(QuantityError, run);
}

describe('parseQuantity: the edge cases of resource.ParseQuantity (checked against Go by test/e2e/accounting.e2e.test.ts)', () => {
  it('covers all 85 rows exactly once', () => {
    const rows = [...accepted.map((r) => r[0]), ...rejected.map((r) => r[0])].sort((a, b) => a - b);
    expect(rows).toEqual(Array.from({ length: 85 }, (_, i) => i + 1));
  });

  it.each(accepted)('row %i: %j parses as %s = %s (milli %s, value %s)', (_row, input, format, exact, milli, units) => {
    const q = parseQuantity(input);
    expect(q.format).toBe(format);
    expect(q.nanos).toBe(decimalToNanos(exact));
    expect(milliValue(q)).toBe(BigInt(milli));
    expect(value(q)).toBe(BigInt(units));
  });

  it.each(rejected)('row %i: %j is rejected (%s)', (_row, input, goError) => {
    const err = parseError(() => parseQuantity(input));
    expect(err.input).toBe(input);
    expect(err.message).toContain(JSON.stringify(input));
    expect(err.message).toContain(goError);
  });

  it.each(accepted)('row %i: JSON string %j decodes like ParseQuantity', (_row, input) => {
    expect(parseQuantityValue(input)).toEqual(parseQuantity(input));
  });

  it.each(rejected.filter(([row]) => row !== 64 && row !== 65))(
    'row %i: JSON string %j is rejected too',
    (_row, input) => {
      expect(() => parseQuantityValue(input)).toThrow(QuantityError);
    },
  );
});

describe('parseQuantity: scanner quirks beyond the table (mirroring apimachinery)', () => {
  it.each([
    ['digit-less Pi goes to the inf.Dec path', 'Pi', 'ErrNumeric'],
    ['digit-less Ei goes to the inf.Dec path', 'Ei', 'ErrNumeric'],
    ['digit-less e-10 goes to the inf.Dec path', 'e-10', 'ErrNumeric'],
    ['exponent outside int64', '1e9223372036854775808', 'ErrSuffix'],
    ['lone sign in exponent', '1e+', 'ErrSuffix'],
    ['non-ASCII digit', '１', 'ErrFormatWrong'],
    ['magnitude beyond the supported bound', '1e5000', 'magnitude above'],
  ])('%s: %j is rejected (%s)', (_name, input, reason) => {
    const err = parseError(() => parseQuantity(input));
    expect(err.message).toContain(reason);
    expect(err.message).toContain(JSON.stringify(input));
  });

  it.each([
    ['zero with digits takes the fast path', '0Pi', 0n, 'BinarySI'],
    ['digit-less Ti still fits the fast path', 'Ti', 0n, 'BinarySI'],
    ['zero with a huge exponent is still zero', '0e99999', 0n, 'DecimalExponent'],
    ['exponent is wrapped to int32 like Go', '1e4294967296', 1_000_000_000n, 'DecimalExponent'],
    ['tiny values round up to one nano', '1e-400', 1n, 'DecimalExponent'],
    ['negative BinarySI is clamped by magnitude', '-8Ei', -9223372036854775807_000_000_000n, 'BinarySI'],
    ['negative sub-nano rounds away from zero', '-0.1n', -1n, 'DecimalSI'],
    ['nano suffix', '5n', 5n, 'DecimalSI'],
    ['tera suffix', '2T', 2_000_000_000_000_000_000_000n, 'DecimalSI'],
    ['peta suffix', '1P', 1_000_000_000_000_000_000_000_000n, 'DecimalSI'],
    ['tebi suffix', '1Ti', 1_099_511_627_776_000_000_000n, 'BinarySI'],
    ['pebi with digits', '1Pi', 1_125_899_906_842_624_000_000_000n, 'BinarySI'],
    ['minus zero', '-0', 0n, 'DecimalSI'],
  ])('%s: %j → %s nanos', (_name, input, nanos, format) => {
    const q = parseQuantity(input);
    expect(q.nanos).toBe(nanos);
    expect(q.format).toBe(format);
  });
});

describe('parseQuantityValue: what Quantity.UnmarshalJSON accepts', () => {
  it.each([
    ['leading space trimmed (row 64)', ' 1', 1000n],
    ['trailing space trimmed (row 65)', '1 ', 1000n],
    ['U+0085 is space for Go', '\u00852', 2000n],
    ['no-break and ideographic spaces (raw in JSON) are trimmed', '\u00a0250m\u3000', 250n],
    ['JSON number 0.5 (YAML cpu: 0.5)', 0.5, 500n],
    ['JSON number 2 (YAML cpu: 2)', 2, 2000n],
    ['JSON number 1e21', 1e21, 1_000_000_000_000_000_000_000_000n],
    ['JSON number -0', -0, 0n],
    ['JSON number 1e-7', 1e-7, 1n],
  ])('%s: %j → %s millicores', (_name, input, milli) => {
    expect(milliValue(parseQuantityValue(input))).toBe(milli);
  });

  it.each([
    ['null', null, 'null'],
    ['undefined', undefined, 'undefined'],
    ['object', { cpu: '1' }, 'an object'],
    ['array', ['1'], 'an array'],
    ['boolean', true, 'boolean'],
    ['bigint', 1n, 'bigint'],
    ['NaN', Number.NaN, 'NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'Infinity'],
    ['-Infinity', Number.NEGATIVE_INFINITY, '-Infinity'],
  ])('%s is rejected', (_name, input, mentioned) => {
    const err = parseError(() => parseQuantityValue(input));
    expect(err.input).toBe(input);
    expect(err.message).toContain(mentioned);
  });

  // Go's UnmarshalJSON trims the raw bytes between the quotes; these characters are in a JSON string only
  // as escapes (\t, \n, …), so Go sees a backslash and rejects the value (checked against apimachinery v0.36.3).
  it.each([
    ['a tab before', '\t500m'],
    ['a newline after', '500m\n'],
    ['a carriage return and form feed', '\r\f1'],
    ['a vertical tab after a space', ' \u000b1'],
  ])('%s: %j is rejected naming the escape', (_name, input) => {
    expect(() => parseQuantityValue(input)).toThrow(
      /only as an escape sequence, which Quantity\.UnmarshalJSON does not decode/,
    );
  });

  it.each([
    ['U+FEFF is not space for Go', '\uFEFF1'],
    ['inner whitespace still rejected', ' 1 Gi '],
    ['blank string', '   '],
  ])('%s: %j is rejected', (_name, input) => {
    expect(() => parseQuantityValue(input)).toThrow(QuantityError);
  });
});

describe('error messages', () => {
  it('names the offending input and the reason', () => {
    expect(() => parseQuantity('1.5.5')).toThrow(/invalid quantity "1\.5\.5" \(ErrFormatWrong: .*"\.5"/);
    expect(() => parseQuantity('1K')).toThrow(/invalid quantity "1K" \(ErrSuffix: unknown suffix "K"/);
    expect(() => parseQuantity('')).toThrow('invalid quantity "" (ErrFormatWrong: empty string)');
  });

  it('is a QuantityError with name and input', () => {
    const err = parseError(() => parseQuantity('1gi'));
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('QuantityError');
    expect(err.input).toBe('1gi');
  });

  it('truncates very long inputs in the message', () => {
    const input = `${'9'.repeat(200)}x`;
    const err = parseError(() => parseQuantity(input));
    expect(err.message.length).toBeLessThan(400);
    expect(err.input).toBe(input);
  });
});

describe('milliValue / value', () => {
  it.each([
    ['ceil for a fraction of a millicore', '1.5m', 2n, 1n],
    ['exact millicores are not rounded', '3920m', 3920n, 4n],
    ['0.128 byte charges one byte', '128m', 128n, 1n],
    ['sub-nano input after rounding', '0.0000000001', 1n, 1n],
  ])('%s: %j → milli %s, value %s', (_name, input, milli, units) => {
    const q = parseQuantity(input);
    expect(milliValue(q)).toBe(milli);
    expect(value(q)).toBe(units);
  });
});

describe('ceilDiv', () => {
  it.each([
    [7n, 2n, 4n],
    [6n, 3n, 2n],
    [0n, 5n, 0n],
    [1n, 1_000_000_000n, 1n],
    [-7n, 2n, -3n],
    [-6n, 3n, -2n],
  ])('ceil(%s / %s) = %s', (numerator, denominator, expected) => {
    expect(ceilDiv(numerator, denominator)).toBe(expected);
  });

  it.each([[0n], [-1n]])('rejects denominator %s', (denominator) => {
    expect(() => ceilDiv(1n, denominator)).toThrow(RangeError);
  });
});

describe('toSafeInteger', () => {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  it.each([
    ['zero', 0n, 0],
    ['largest safe', max, Number.MAX_SAFE_INTEGER],
    ['smallest safe', -max, -Number.MAX_SAFE_INTEGER],
    ['ordinary bytes', 16375672832n, 16375672832],
  ])('%s: %s converts', (_name, v, expected) => {
    expect(toSafeInteger(v, 'memory')).toBe(expected);
  });

  it.each([
    ['one above', max + 1n],
    ['one below', -max - 1n],
    ['2^63 - 1', 9223372036854775807n],
  ])('%s: %s throws naming what', (_name, v) => {
    const err = parseError(() => toSafeInteger(v, 'memory (bytes)'));
    expect(err.message).toContain('memory (bytes)');
    expect(err.message).toContain(v.toString());
    expect(err.input).toBe(v);
  });
});

describe('length bound: a quantity longer than MAX_QUANTITY_LENGTH is rejected before any arithmetic', () => {
  it('the bound is 128 characters', () => {
    expect(MAX_QUANTITY_LENGTH).toBe(128);
  });

  it('a valid quantity of exactly the bound still parses', () => {
    const input = `1.${'0'.repeat(MAX_QUANTITY_LENGTH - 3)}1`; // 1 + 10^-126, rounded up to a whole nano
    expect(input).toHaveLength(MAX_QUANTITY_LENGTH);
    expect(parseQuantity(input).nanos).toBe(1_000_000_001n);
  });

  it('one character more is rejected, naming the length and the limit', () => {
    const input = `1.${'0'.repeat(MAX_QUANTITY_LENGTH - 2)}1`;
    const err = parseError(() => parseQuantity(input));
    expect(err.message).toContain(`is ${MAX_QUANTITY_LENGTH + 1} characters long`);
    expect(err.message).toContain(`the limit is ${MAX_QUANTITY_LENGTH}`);
    expect(err.input).toBe(input);
  });

  it('a valid quantity with 8M fractional digits is rejected with the limit in the message', () => {
    const input = `1.${'5'.repeat(8_000_000)}`;
    const err = parseError(() => parseQuantity(input));
    expect(err.message).toContain('is 8000002 characters long; the limit is 128');
    expect(err.message.length).toBeLessThan(400);
  });

  it("applies to JSON values after Go's whitespace trimming", () => {
    expect(milliValue(parseQuantityValue(`  ${'0'.repeat(MAX_QUANTITY_LENGTH - 1)}1  `))).toBe(1000n);
    expect(() => parseQuantityValue(`${'0'.repeat(MAX_QUANTITY_LENGTH)}1`)).toThrow(/the limit is 128/);
  });
});

describe('parse memo: bounded by entries and by the characters of its keys', () => {
  it('40 × 5 MiB keys are rejected and never stored', () => {
    const before = parseMemoSize();
    for (let i = 0; i < 40; i++) {
      const input = `${i}${'0'.repeat(5 * 1024 * 1024)}`;
      expect(() => parseQuantity(input)).toThrow(/the limit is 128/);
    }
    const after = parseMemoSize();
    expect(after.keyChars).toBeLessThanOrEqual(PARSE_MEMO_MAX_KEY_CHARS);
    expect(after.keyChars).toBeLessThanOrEqual(before.keyChars);
  });

  it('distinct keys of the maximum length stay under the character bound', () => {
    const keys = Math.ceil((2 * PARSE_MEMO_MAX_KEY_CHARS) / MAX_QUANTITY_LENGTH); // twice the bound, fewer than max entries
    expect(keys).toBeLessThan(PARSE_MEMO_MAX_ENTRIES);
    let peak = 0;
    for (let i = 0; i < keys; i++) {
      const digits = String(i);
      const input = `${'0'.repeat(MAX_QUANTITY_LENGTH - digits.length)}${digits}`;
      expect(parseQuantity(input).nanos).toBe(BigInt(i) * 1_000_000_000n);
      peak = Math.max(peak, parseMemoSize().keyChars);
    }
    expect(peak).toBeLessThanOrEqual(PARSE_MEMO_MAX_KEY_CHARS);
    expect(peak).toBeGreaterThan(PARSE_MEMO_MAX_KEY_CHARS / 2); // the memo was in use, not bypassed
  });

  it('short keys are bounded by the entry count', () => {
    let peak = 0;
    for (let i = 0; i < 2 * PARSE_MEMO_MAX_ENTRIES; i++) {
      parseQuantity(`${i}m`);
      peak = Math.max(peak, parseMemoSize().entries);
    }
    expect(peak).toBe(PARSE_MEMO_MAX_ENTRIES);
  });
});

describe('negative quantities: rounded away from zero on every representation', () => {
  // Go v0.36.3 (printed by test/e2e/tools/accounting): "-1.5" MilliValue -1500, Value -2 (int64 fast path);
  // "-1.50000000000000000000001" MilliValue -1499, Value 0 (inf.Dec path: truncate, then +1 when inexact).
  // This module gives the magnitude's ceiling, negated, on both: -1500/-2 and -1501/-2.
  it.each([
    ['-1.5', -1500n, -2n],
    ['-1.50000000000000000000001', -1501n, -2n],
    ['-0.1m', -1n, -1n],
  ])('%j → milli %s, value %s', (input, milli, units) => {
    const q = parseQuantity(input);
    expect(milliValue(q)).toBe(milli);
    expect(value(q)).toBe(units);
  });
});
