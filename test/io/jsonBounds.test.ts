/**
 * The one-pass depth and element count of a JSON text (src/jsonBounds.ts), against the parsed value: for any
 * JSON text cut into pieces anywhere (inside a string, an escape, a multi-byte character), what it counts is
 * what the value holds.
 */
import fc from 'fast-check';
import { JsonBounds } from '../../src/jsonBounds.js';

/** Depth (arrays and objects open at once) and elements (array elements and object members, an empty container counting one) of a parsed value. */
function reference(value: unknown, depth = 0): { depth: number; elements: number } {
  if (value === null || typeof value !== 'object') return { depth, elements: 0 };
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  let deepest = depth + 1;
  let elements = Math.max(children.length, 1);
  for (const child of children) {
    const r = reference(child, depth + 1);
    deepest = Math.max(deepest, r.depth);
    elements += r.elements;
  }
  return { depth: deepest, elements };
}

/** The [from, to) ranges that cut a text of `length` at `cuts` (taken modulo length + 1). */
function ranges(length: number, cuts: readonly number[]): [number, number][] {
  const at = [...new Set(cuts.map((c) => c % (length + 1)))].sort((a, b) => a - b);
  const out: [number, number][] = [];
  let from = 0;
  for (const c of at) {
    out.push([from, c]);
    from = c;
  }
  out.push([from, length]);
  return out;
}

function scanBytes(
  text: string,
  cuts: readonly number[] = [],
  maxDepth = Infinity,
  maxElements = Infinity,
): JsonBounds & { result: string | null } {
  const bounds = new JsonBounds(maxDepth, maxElements);
  let result: string | null = null;
  const bytes = Buffer.from(text);
  for (const [from, to] of ranges(bytes.length, cuts)) result = bounds.push(bytes.subarray(from, to));
  return Object.assign(bounds, { result });
}

function scanText(
  text: string,
  cuts: readonly number[] = [],
  maxDepth = Infinity,
  maxElements = Infinity,
): JsonBounds & { result: string | null } {
  const bounds = new JsonBounds(maxDepth, maxElements);
  let result: string | null = null;
  for (const [from, to] of ranges(text.length, cuts)) result = bounds.pushText(text.slice(from, to));
  return Object.assign(bounds, { result });
}

// Strings full of what a scanner could mistake for structure: quotes, backslashes, brackets, commas, non-ASCII.
const trickyString = fc.string({
  unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', ',', 'a', 'é', '😀', '\n', '\\"', '\\\\'),
});
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    trickyString,
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(trickyString, tie('value'), { maxKeys: 5 }),
})).value;

describe('JsonBounds', () => {
  it('counts the depth and elements of any JSON value, its bytes cut anywhere', () => {
    fc.assert(
      fc.property(json, fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), (value, cuts, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const want = reference(value);
        const bytes = scanBytes(text, cuts);
        expect({
          depth: bytes.maxDepthSeen,
          elements: bytes.elements,
          open: bytes.depth,
          result: bytes.result,
        }).toEqual({ ...want, open: 0, result: null });
        const chars = scanText(text, cuts);
        expect({ depth: chars.maxDepthSeen, elements: chars.elements, open: chars.depth }).toEqual({
          ...want,
          open: 0,
        });
      }),
      { numRuns: 500 },
    );
  });

  it('examples: [1,2,3] has 3 elements, {"a":1,"b":[]} 3, a scalar 0; brackets and escaped quotes in strings do not count', () => {
    expect(scanBytes('[1,2,3]').elements).toBe(3);
    expect(scanBytes('{"a":1,"b":[]}').elements).toBe(3);
    expect(scanBytes('"x"').elements).toBe(0);
    const tricky = scanBytes(String.raw`["\"[[{,", "\\", "\\\"]]"]`);
    expect({ depth: tricky.maxDepthSeen, elements: tricky.elements, open: tricky.depth }).toEqual({
      depth: 1,
      elements: 3,
      open: 0,
    });
  });

  it('an escape split between two pieces: a backslash ending one piece escapes the quote that starts the next', () => {
    // ["a\"]" ,[1]]: the quote after the backslash does not end the string, so "]" is inside it.
    const text = String.raw`["a\"]", [1]]`;
    for (let cut = 0; cut <= text.length; cut++) {
      const r = scanBytes(text, [cut]);
      expect({ cut, depth: r.maxDepthSeen, elements: r.elements, open: r.depth }).toEqual({
        cut,
        depth: 2,
        elements: 3,
        open: 0,
      });
    }
  });

  it('says which bound is passed, at the first byte past it, and keeps saying it', () => {
    expect(scanBytes('[[[]]]', [], 3).result).toBeNull();
    const deep = new JsonBounds(3);
    expect(deep.push(Buffer.from('[[['))).toBeNull();
    expect(deep.push(Buffer.from('['))).toBe('depth');
    expect(deep.push(Buffer.from(']'))).toBe('depth');
    expect(scanBytes('[1,2,3]', [], 10, 3).result).toBeNull();
    expect(scanBytes('[1,2,3,4]', [], 10, 3).result).toBe('elements');
    expect(scanText('[[1,2],[3]]', [], 10, 4).result).toBe('elements');
  });

  it('stops at the bound: 1,000,000 nested arrays are refused in the first 101 bytes', () => {
    const bounds = new JsonBounds(100);
    const text = Buffer.from('['.repeat(1_000_000));
    expect(bounds.push(text)).toBe('depth');
    expect(bounds.depth).toBe(101);
  });
});

describe('JsonBounds: the members of one object', () => {
  const scan = (text: string, maxMembers: number) => new JsonBounds(100, Infinity, maxMembers).pushText(text);

  it('counts the members of each object on its own level, not arrays', () => {
    expect(scan('{"a":1,"b":2,"c":3}', 3)).toBeNull();
    expect(scan('{"a":1,"b":2,"c":3}', 2)).toBe('members');
    expect(scan('[1,2,3,4,5]', 2)).toBeNull();
    expect(scan('[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2}]', 2)).toBeNull();
    expect(scan('{"x":{"a":1,"b":2},"y":[1,2,3,4]}', 2)).toBeNull();
    expect(scan('{"x":{"a":1,"b":2,"c":3},"y":1}', 2)).toBe('members');
    expect(scan('{"a":",,,,","b":"{,}"}', 2)).toBeNull();
  });

  it('works with an unbounded depth, deeper than its first 64 levels', () => {
    const deep = (members: number) =>
      `${'['.repeat(200)}{${Array.from({ length: members }, (_, i) => `"k${i}":1`).join(',')}}${']'.repeat(200)}`;
    expect(new JsonBounds(Infinity, Infinity, 3).pushText(deep(3))).toBeNull();
    expect(new JsonBounds(Infinity, Infinity, 3).pushText(deep(4))).toBe('members');
  });

  it('is the same fed byte by byte', () => {
    const text = Buffer.from('{"x":[1,2,3],"y":{"a":1,"b":2,"c":3}}');
    const b = new JsonBounds(100, Infinity, 2);
    let got: string | null = null;
    for (const byte of text) got = b.push(Uint8Array.of(byte)) ?? got;
    expect(got).toBe('members');
  });
});
