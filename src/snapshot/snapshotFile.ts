/**
 * The snapshot file: what `kubectl get nodes,pods -A -o json` (or `-o yaml`) prints, a v1 `List`
 * (or a `NodeList` / `PodList`) whose items are Nodes and Pods. Other kinds in the list are ignored.
 *
 * Serving reads it as a stream ({@link readSnapshotRecords}): a JSON listing is parsed one item at a
 * time (@streamparser/json-node) and each item is turned into a compact record at once, so a dump of
 * 150,000 pods (about 1 GB, above V8's largest string) loads in bounded memory and leaves no text in the
 * heap. YAML is read whole (the yaml library has no streaming reader). `rank` keeps whole objects (it
 * reads taints, labels and conditions): {@link readSnapshot}.
 */
import { closeSync, createReadStream, openSync, readSync, statSync, type Stats } from 'node:fs';
import { Transform } from 'node:stream';
import { Lexer, parse as parseYaml } from 'yaml';
import type { Node, Pod } from '../core/objects/kubeObjects.js';
import type { Dimensions, PodRecordOptions } from '../core/objects/records.js';
import { ListingReader } from '../core/cache/sync.js';
import { MAX_BYTES, readTextBounded } from '../fileRead.js';
import { JsonBounds } from '../jsonBounds.js';

export interface Snapshot {
  readonly nodes: readonly Node[];
  readonly pods: readonly Pod[];
}

/** Thrown when the file cannot be read or is not a Kubernetes List. */
export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

/**
 * The deepest a snapshot file may nest arrays and objects (JSON, or YAML flow collections `[...]`/`{...}`),
 * checked before it is parsed: a Node or a Pod of `kubectl get -o json`, managedFields included, nests about
 * 15 levels; a file nested 1,000,000 deep froze the streamed parser (and with it every verb and the shutdown).
 * YAML's indented (block) nesting costs a line per level, so the file's size bounds it.
 */
export const MAX_SNAPSHOT_DEPTH = 100;

function tooDeep(source: string): SnapshotError {
  return new SnapshotError(
    `${source}: nests arrays and objects deeper than ${MAX_SNAPSHOT_DEPTH} levels, the most a snapshot may (a Node or a Pod nests about 15); not read`,
  );
}

/** Whether YAML text nests flow collections deeper than MAX_SNAPSHOT_DEPTH (yaml's own lexer: brackets in strings and comments do not count). */
function yamlTooDeep(text: string): boolean {
  let depth = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > MAX_SNAPSHOT_DEPTH) return true;
    } else if (token === ']' || token === '}') depth--;
  }
  return false;
}

/**
 * What a parsed document is, for a message that expected an object of some kind: an empty document, an array, plain
 * text, another scalar, or an object's kind (`kind null` when it has none).
 */
export function whatDocument(doc: unknown): string {
  if (doc == null) return 'an empty document';
  if (Array.isArray(doc)) return 'an array';
  if (typeof doc === 'string') return 'plain text';
  if (typeof doc !== 'object') return String(doc);
  return `kind ${JSON.stringify((doc as { kind?: unknown }).kind ?? null)}`;
}

/**
 * Parses snapshot text (JSON, or YAML: JSON is tried first as it is much faster for large files).
 * @throws SnapshotError with the reason, also when the listing holds no Node.
 */
export function parseSnapshot(text: string, source: string): Snapshot {
  const listing = parseListing(text, source);
  // A cluster always has nodes: a listing without any (say `kubectl get pods -o json` written over
  // the file) would silently empty the model, so it is refused and the previous state kept.
  if (listing.nodes.length === 0)
    throw new SnapshotError(`${source}: no Node objects (expected kubectl get nodes,pods -A -o json); not applied`);
  return listing;
}

/**
 * Parses one listing like {@link parseSnapshot}, but a listing without Nodes is accepted (one of
 * several files, e.g. `kubectl get pods -A -o json` beside `kubectl get nodes -o json`).
 * @throws SnapshotError when the text nests deeper than MAX_SNAPSHOT_DEPTH or is not a v1 List (or NodeList/PodList).
 */
function parseListing(text: string, source: string): Snapshot {
  let doc: unknown;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte-order mark, as some editors write
  const json = /^\s*[{[]/.test(text);
  if (json ? new JsonBounds(MAX_SNAPSHOT_DEPTH).pushText(text) !== null : yamlTooDeep(text)) throw tooDeep(source);
  try {
    doc = json ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new SnapshotError(`${source}: not valid JSON or YAML: ${(err as Error).message}`);
  }
  const items = (doc as { items?: unknown } | null)?.items;
  const kind = (doc as { kind?: unknown } | null)?.kind;
  if (!Array.isArray(items) || !['List', 'NodeList', 'PodList'].includes(String(kind)) || Array.isArray(doc))
    throw new SnapshotError(
      `${source}: expected a v1 List of Nodes and Pods (kubectl get nodes,pods -A -o json), got ${whatDocument(doc)}`,
    );
  const itemKind = kind === 'NodeList' ? 'Node' : kind === 'PodList' ? 'Pod' : undefined;
  const nodes: Node[] = [];
  const pods: Pod[] = [];
  for (const item of items as { kind?: string }[]) {
    const k = item?.kind ?? itemKind;
    if (k === 'Node') nodes.push(item as Node);
    else if (k === 'Pod') pods.push(item as Pod);
  }
  return { nodes, pods };
}

/** Reads and parses a snapshot file. @throws SnapshotError */
export function readSnapshot(path: string): Snapshot {
  return parseSnapshot(readText(path), path);
}

/** Reads and parses one listing file, Nodes optional (see {@link parseListing}). @throws SnapshotError */
export function readListing(path: string): Snapshot {
  return parseListing(readText(path), path);
}

function readText(path: string): string {
  try {
    return readTextBounded(path, MAX_BYTES.snapshot);
  } catch (err) {
    throw new SnapshotError(`${path}: cannot read: ${(err as Error).message}`);
  }
}

const LIST_KINDS = ['List', 'NodeList', 'PodList'];
const EXPECTED = 'expected a v1 List of Nodes and Pods (kubectl get nodes,pods -A -o json)';

/**
 * Serving re-reads its snapshot when the file changes, on the main thread: a FIFO put in its place would block that
 * thread in open() until a writer came (every verb and probe waiting), a device would be read to the size bound.
 * @throws SnapshotError unless `path` (symlinks followed) is a regular file.
 */
function regularFile(path: string): void {
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    throw new SnapshotError(`${path}: cannot read: ${(err as Error).message}`);
  }
  if (stats.isFile()) return;
  const kind = stats.isFIFO()
    ? 'a pipe'
    : stats.isDirectory()
      ? 'a directory'
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? 'a device'
        : stats.isSocket()
          ? 'a socket'
          : 'not a file';
  throw new SnapshotError(
    `${path}: ${kind}; serve re-reads its snapshot when the file changes, so it must be a regular file (kubectl get nodes,pods -A -o json > FILE)`,
  );
}

/** The first bytes of a file: whether it starts with a UTF-8 byte-order mark, and whether it is JSON. */
function sniff(path: string): { bom: boolean; json: boolean; array: boolean } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new SnapshotError(`${path}: cannot read: ${(err as Error).message}`);
  }
  try {
    const head = Buffer.alloc(4096);
    const n = readSync(fd, head, 0, head.length, 0);
    const bom = n >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf;
    const first = /^\s*([{[])/.exec(head.subarray(bom ? 3 : 0, n).toString('utf8'))?.[1];
    return { bom, json: first !== undefined, array: first === '[' };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a snapshot file into records (see the module header): JSON as a stream, YAML whole. Items of
 * unknown kind are ignored; an item without `kind` takes the list's (NodeList, PodList).
 * @returns the records and the lines for objects that could not be read (their old state is kept).
 * @throws SnapshotError when the file cannot be read, nests deeper than MAX_SNAPSHOT_DEPTH, is not valid JSON/YAML, is not a v1 List, or holds no Node
 *   that can be read (every Node object skipped).
 */
export async function readSnapshotRecords(
  path: string,
  dims: Dimensions,
  options: PodRecordOptions,
): Promise<ListingReader> {
  const reader = new ListingReader(dims, options);
  regularFile(path);
  const { bom, json, array } = sniff(path);
  if (!json) {
    const listing = readSnapshot(path);
    for (const node of listing.nodes) reader.addNode(node);
    for (const pod of listing.pods) reader.addPod(pod);
    return reader;
  }
  let kind: unknown;
  let itemsInArray = true;
  const untyped: unknown[] = []; // items without their own kind, until the list's kind is known (it comes last)
  const { JSONParser } = await import('@streamparser/json-node'); // only the streamed load needs it (rank reads files whole)
  const add = (item: unknown, as: unknown) => {
    if (as === 'Node') reader.addNode(item as Node);
    else if (as === 'Pod') reader.addPod(item as Pod);
  };
  await new Promise<void>((resolve, reject) => {
    const parser = new JSONParser({ paths: ['$.items.*', '$.kind'], keepStack: false });
    const input = createReadStream(path, { start: bom ? 3 : 0, highWaterMark: 1 << 20 });
    // Each piece is checked before the parser sees it: nesting costs the parser far more than its bytes.
    const bounds = new JsonBounds(MAX_SNAPSHOT_DEPTH);
    const guard = new Transform({
      transform: (chunk: Buffer, _encoding, done) =>
        bounds.push(chunk) === null ? done(null, chunk) : done(tooDeep(path)),
    });
    const fail = (err: Error) => {
      input.destroy();
      guard.destroy();
      parser.destroy();
      reject(err instanceof SnapshotError ? err : new SnapshotError(`${path}: not valid JSON: ${err.message}`));
    };
    input.on('error', (err) => fail(new SnapshotError(`${path}: cannot read: ${err.message}`)));
    guard.on('error', fail);
    parser.on('error', fail);
    parser.on('data', ({ value, key, stack }: { value: unknown; key: unknown; stack: readonly unknown[] }) => {
      if (stack.length === 1 && key === 'kind') {
        kind = value;
        return;
      }
      if (typeof key !== 'number') itemsInArray = false;
      const own = (value as { kind?: unknown } | null)?.kind;
      if (own === undefined) untyped.push(value);
      else add(value, own);
    });
    parser.on('end', () => resolve());
    input.pipe(guard).pipe(parser);
  });
  if (!itemsInArray || !LIST_KINDS.includes(String(kind)))
    throw new SnapshotError(`${path}: ${EXPECTED}, got ${array ? 'an array' : `kind ${JSON.stringify(kind ?? null)}`}`);
  const listKind = kind === 'NodeList' ? 'Node' : kind === 'PodList' ? 'Pod' : undefined;
  for (const item of untyped) add(item, listKind);
  if (reader.nodes.length + reader.keptNodes.size === 0)
    throw new SnapshotError(`${path}: no Node objects (${EXPECTED}); not applied`);
  // Nodes that could not be read are "kept as they are" in a relist, but a file in which no Node is
  // usable would replace the model with none: refused, as a file without nodes is.
  if (reader.nodes.length === 0)
    throw new SnapshotError(
      `${path}: no usable Node object (${reader.errors
        .filter((e) => e.startsWith('node '))
        .slice(0, 3)
        .join('; ')}); not applied`,
    );
  return reader;
}
