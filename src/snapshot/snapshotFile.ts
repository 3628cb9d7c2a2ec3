/**
 * The snapshot file: what `kubectl get nodes,pods -A -o json` (or `-o yaml`) prints, a v1 `List`
 * (or a `NodeList` / `PodList`) whose items are Nodes and Pods. Other kinds in the list are ignored.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Node, Pod } from '../core/kube.js';

export interface Snapshot {
  readonly nodes: readonly Node[];
  readonly pods: readonly Pod[];
}

/** Thrown when the file cannot be read or is not a Kubernetes List. */
export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

/**
 * Parses snapshot text (JSON, or YAML: JSON is tried first as it is much faster for large files).
 * @throws SnapshotError with the reason, also when the listing holds no Node.
 */
export function parseSnapshot(text: string, source: string): Snapshot {
  const listing = parseListing(text, source);
  // A cluster always has nodes: a listing without any (say `kubectl get pods -o json` written over
  // the file) would silently empty the model, so it is refused and the previous state kept.
  if (listing.nodes.length === 0) throw new SnapshotError(`${source}: no Node objects (expected kubectl get nodes,pods -A -o json); not applied`);
  return listing;
}

/**
 * Parses one listing like {@link parseSnapshot}, but a listing without Nodes is accepted (one of
 * several files, e.g. `kubectl get pods -A -o json` beside `kubectl get nodes -o json`).
 * @throws SnapshotError when the text is not a v1 List (or NodeList/PodList).
 */
export function parseListing(text: string, source: string): Snapshot {
  let doc: unknown;
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a UTF-8 byte-order mark, as some editors write
  try {
    doc = /^\s*[{[]/.test(text) ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new SnapshotError(`${source}: not valid JSON or YAML: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new SnapshotError(`${source}: expected a v1 List of Nodes and Pods (kubectl get nodes,pods -A -o json), got ${Array.isArray(doc) ? 'an array' : typeof doc === 'string' ? 'plain text' : String(doc)}`);
  }
  const items = (doc as { items?: unknown }).items;
  const kind = (doc as { kind?: unknown } | null)?.kind;
  if (!Array.isArray(items) || !['List', 'NodeList', 'PodList'].includes(String(kind))) {
    throw new SnapshotError(`${source}: expected a v1 List of Nodes and Pods (kubectl get nodes,pods -A -o json), got kind ${JSON.stringify(kind ?? null)}`);
  }
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
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new SnapshotError(`${path}: cannot read: ${(err as Error).message}`);
  }
}
