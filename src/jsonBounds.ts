/**
 * How deep a JSON text nests and how many elements it holds, counted in one pass over its raw text before it is
 * parsed, since JSON.parse and the streamed snapshot parser cost time and memory in proportion to both (why, the
 * bounds and their cost: docs/configuration.md#request-bounds). Fed piece by piece (a request body as it arrives,
 * a file as it is read); a piece may end anywhere, even inside an escape. It does not validate: what it lets
 * through may still be invalid JSON, and JSON.parse says so.
 */

/** Which bound a JSON text exceeds. */
export type JsonBound = 'depth' | 'elements' | 'members';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/**
 * Counted outside strings only (strings, the bulk of any Kubernetes object, are skipped with indexOf): depth is the
 * number of arrays and objects open at once; elements are the brackets that open an array or an object plus the
 * commas between elements, which is exactly the number of array elements and object members, an empty array or
 * object counting as one (`[1,2,3]` has 3, `{"a":1,"b":[]}` has 3). Optionally the members of any one object are
 * bounded too (maxObjectMembers).
 */
export class JsonBounds {
  /** Arrays and objects open at the end of what was scanned. */
  depth = 0;
  /** The deepest nesting seen. */
  maxDepthSeen = 0;
  /** Elements counted so far (see the class docstring). */
  elements = 0;
  private inString = false;
  /** Inside a string, the piece before ended with an odd run of backslashes: the next character is escaped. */
  private escaped = false;
  private exceeded: JsonBound | null = null;
  /** Per open level (index = depth): whether it is an object, and the commas seen in it. */
  private isObject: Uint8Array;
  private commas: Int32Array;
  /** Whether the members of each object are bounded (maxObjectMembers finite). */
  private readonly countMembers: boolean;

  /**
   * @param maxDepth arrays and objects open at once, at most.
   * @param maxElements elements at most (default: no bound).
   * @param maxObjectMembers members of any one object at most (default: no bound).
   */
  constructor(
    readonly maxDepth: number,
    readonly maxElements: number = Infinity,
    readonly maxObjectMembers: number = Infinity,
  ) {
    this.countMembers = Number.isFinite(maxObjectMembers);
    // Grown as the nesting deepens (maxDepth may be unbounded): 64 levels hold any real Kubernetes object.
    this.isObject = new Uint8Array(this.countMembers ? 64 : 0);
    this.commas = new Int32Array(this.isObject.length);
  }

  /** Scans the next piece of UTF-8 bytes. @returns null while within both bounds, else the bound exceeded (and so on for every later piece). */
  push(piece: Uint8Array): JsonBound | null {
    if (this.exceeded !== null) return this.exceeded;
    const n = piece.length;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        const q = piece.indexOf(QUOTE, i);
        if (q < 0) {
          this.escaped = oddRunBefore(piece, n, i, this.escaped);
          return null;
        }
        // A quote ends the string unless an odd run of backslashes precedes it.
        if (!oddRunBefore(piece, q, i, this.escaped)) this.inString = false;
        this.escaped = false;
        i = q + 1;
        continue;
      }
      const c = piece[i++]!;
      if (c === QUOTE) this.inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (this.open(c === OPEN_OBJECT) !== null) return this.exceeded;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) this.depth--;
      else if (c === COMMA && this.comma() !== null) return this.exceeded;
    }
    return null;
  }

  /** As {@link push}, for text already decoded (a file read whole). */
  pushText(piece: string): JsonBound | null {
    if (this.exceeded !== null) return this.exceeded;
    const n = piece.length;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        const q = piece.indexOf('"', i);
        if (q < 0) {
          this.escaped = oddRunBeforeText(piece, n, i, this.escaped);
          return null;
        }
        if (!oddRunBeforeText(piece, q, i, this.escaped)) this.inString = false;
        this.escaped = false;
        i = q + 1;
        continue;
      }
      const c = piece.charCodeAt(i++);
      if (c === QUOTE) this.inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (this.open(c === OPEN_OBJECT) !== null) return this.exceeded;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) this.depth--;
      else if (c === COMMA && this.comma() !== null) return this.exceeded;
    }
    return null;
  }

  private open(object: boolean): JsonBound | null {
    if (++this.depth > this.maxDepthSeen) this.maxDepthSeen = this.depth;
    if (this.depth > this.maxDepth) return (this.exceeded = 'depth');
    if (++this.elements > this.maxElements) return (this.exceeded = 'elements');
    if (this.countMembers) {
      if (this.depth >= this.commas.length) this.grow();
      this.isObject[this.depth] = object ? 1 : 0;
      this.commas[this.depth] = 0;
    }
    return null;
  }

  private grow(): void {
    const isObject = new Uint8Array(this.isObject.length * 2);
    isObject.set(this.isObject);
    const commas = new Int32Array(isObject.length);
    commas.set(this.commas);
    this.isObject = isObject;
    this.commas = commas;
  }

  /** A comma outside strings: one more element, and one more member of the object it is in (members = commas + 1). */
  private comma(): JsonBound | null {
    if (++this.elements > this.maxElements) return (this.exceeded = 'elements');
    const d = this.depth;
    if (d > 0 && d < this.commas.length && this.isObject[d] === 1 && ++this.commas[d]! + 1 > this.maxObjectMembers)
      return (this.exceeded = 'members');
    return null;
  }
}

/** Whether the backslashes right before `end` (back to `start` at most, plus one carried over from the piece before) are an odd run. */
function oddRunBefore(piece: Uint8Array, end: number, start: number, carried: boolean): boolean {
  let j = end - 1;
  while (j >= start && piece[j] === BACKSLASH) j--;
  const run = end - 1 - j + (j < start && carried ? 1 : 0);
  return (run & 1) === 1;
}

function oddRunBeforeText(piece: string, end: number, start: number, carried: boolean): boolean {
  let j = end - 1;
  while (j >= start && piece.charCodeAt(j) === BACKSLASH) j--;
  const run = end - 1 - j + (j < start && carried ? 1 : 0);
  return (run & 1) === 1;
}
