/**
 * Template locality: where a pod's images or template are likely cached, so that a sandbox starts without a pull
 * (docs/model.md#template-locality: the warm/partial/cold signal, its two sources and their bounds). Node images
 * come from `node.status.images` (kubelet's nodeStatusMaxImages largest, by size: Kubernetes v1.36
 * pkg/kubelet/nodestatus/setters.go Images); the memory of templates started per node is like E2B's index (build
 * ID → nodes that recently created, resumed or paused it, 8 h). Names compare as ImageLocality's (image_locality.go
 * normalizedImageName: a pod's image without tag or digest gets `:latest`; a node's names are taken as reported).
 * Every loop stops at a fixed count and every string kept has a fixed maximum length: O(1) per event, any input.
 */
import type { Node, Pod } from './kubeObjects.js';

/** kubelet's default nodeStatusMaxImages: the images a node reports in status.images. */
export const KUBELET_MAX_IMAGES = 50;
/** Entries of status.images looked at, at most (kubelet sorts them by size: the largest come first). */
export const MAX_IMAGE_ENTRIES_READ = 1024;
/** Names of one image kept, at most (kubelet reports its tags and digests; usually two); four times as many are looked at. */
export const MAX_NAMES_PER_IMAGE = 8;
/** A longer image name is ignored (a valid reference is far shorter: 255 for the name, 128 for a tag). */
export const MAX_IMAGE_NAME_LENGTH = 512;
/** Images of a pod looked at, at most (containers, then init containers). */
export const MAX_POD_IMAGES = 32;
/** A key made of images longer than this is no key (the pod is then ranked by its images alone, not remembered). */
export const MAX_IMAGES_KEY_LENGTH = 2048;
/** A Kubernetes label value: at most 63 characters of [A-Za-z0-9._-], alphanumeric at both ends. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;
/** The longest label value Kubernetes accepts (apimachinery validation IsValidLabelValue). */
const MAX_LABEL_VALUE_LENGTH = 63;
/** Prefix of a key made of images (a label value cannot contain ':', so the two never collide). */
const IMAGES_KEY_PREFIX = 'images:';

/** One entry of node.status.images as a record keeps it. */
export interface NodeImage {
  /** Tags and digests, as the node reports them. */
  readonly names: readonly string[];
  /** 0 when the node reports none (kube-scheduler counts such an image as 0 bytes too). */
  readonly sizeBytes: number;
}

/** How records are made when locality is on. */
export interface LocalityRecordOptions {
  /** The pod label whose value is a pod's template key. */
  readonly templateLabel: string;
  /** Images kept per node, the largest first. */
  readonly maxImagesPerNode: number;
}

/** A pod's signal on a node. */
export type LocalitySignal = 'warm' | 'partial' | 'cold';
export const COLD = 0;
export const PARTIAL = 1;
export const WARM = 2;
/** Signal names by number. */
export const SIGNALS: readonly LocalitySignal[] = ['cold', 'partial', 'warm'];

function sizeOf(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
}

/**
 * The images a node reports, at most `max` of them, the largest first: of the first
 * MAX_IMAGE_ENTRIES_READ entries, those with at least one usable name (a string of at most
 * MAX_IMAGE_NAME_LENGTH characters; MAX_NAMES_PER_IMAGE kept). Never throws: entries of the wrong
 * shape are skipped. O(MAX_IMAGE_ENTRIES_READ × max) at worst.
 */
export function nodeImages(node: Node, max: number): NodeImage[] {
  const list: unknown = (node.status as { images?: unknown } | null | undefined)?.images;
  if (!Array.isArray(list) || max <= 0) return [];
  const kept: NodeImage[] = [];
  let smallest = 0; // index in kept of the smallest, once kept is full
  const n = Math.min(list.length, MAX_IMAGE_ENTRIES_READ);
  for (let i = 0; i < n; i++) {
    const entry: unknown = list[i];
    if (typeof entry !== 'object' || entry === null) continue;
    const { names: rawNames, sizeBytes } = entry as { names?: unknown; sizeBytes?: unknown };
    if (!Array.isArray(rawNames)) continue;
    const size = sizeOf(sizeBytes);
    if (kept.length === max && size <= kept[smallest]!.sizeBytes) continue;
    const names: string[] = [];
    for (let k = 0; k < rawNames.length && k < 4 * MAX_NAMES_PER_IMAGE && names.length < MAX_NAMES_PER_IMAGE; k++) {
      const name: unknown = rawNames[k];
      if (typeof name === 'string' && name.length > 0 && name.length <= MAX_IMAGE_NAME_LENGTH) names.push(name);
    }
    if (names.length === 0) continue;
    if (kept.length < max) kept.push({ names, sizeBytes: size });
    else kept[smallest] = { names, sizeBytes: size };
    if (kept.length === max) {
      smallest = 0;
      for (let k = 1; k < max; k++) if (kept[k]!.sizeBytes < kept[smallest]!.sizeBytes) smallest = k;
    }
  }
  return kept.sort((a, b) => b.sizeBytes - a.sizeBytes);
}

/** kube-scheduler's normalizedImageName: a name without a tag or digest gets `:latest`. */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

/**
 * The images of a pod's containers and init containers (ImageLocality counts both), normalized,
 * without repeats, in order: at most MAX_POD_IMAGES, names longer than MAX_IMAGE_NAME_LENGTH left out.
 */
export function podImages(pod: Pod): string[] {
  const out: string[] = [];
  const lists = [pod.spec?.containers, pod.spec?.initContainers];
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length && out.length < MAX_POD_IMAGES; i++) {
      const image: unknown = (list[i] as { image?: unknown } | null)?.image;
      if (typeof image !== 'string' || image.length === 0 || image.length > MAX_IMAGE_NAME_LENGTH) continue;
      const name = normalizedImageName(image);
      if (!out.includes(name)) out.push(name);
    }
  }
  return out;
}

/**
 * A pod's template key: the value of `label` when it is a valid label value (at most 63
 * characters), else `images:` and its sorted images joined by spaces; null when it has neither, or
 * when that is longer than MAX_IMAGES_KEY_LENGTH.
 */
export function localityKey(pod: Pod, label: string): string | null {
  const value: unknown = pod.metadata?.labels?.[label];
  if (isLabelValue(value)) return value;
  const images = podImages(pod);
  const key = `${IMAGES_KEY_PREFIX}${images.sort().join(' ')}`;
  return images.length === 0 || key.length > MAX_IMAGES_KEY_LENGTH ? null : key;
}

/**
 * Whether `value` is a non-empty Kubernetes label value (apimachinery IsValidLabelValue): at most 63
 * characters, checked by length first, so a value of any size costs O(1).
 */
export function isLabelValue(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length > 0 && value.length <= MAX_LABEL_VALUE_LENGTH && LABEL_VALUE.test(value)
  );
}

/** What a decision asks about a pod (PodRecord.localityKey and .images). */
export interface PodLocality {
  readonly localityKey?: string | null | undefined;
  readonly images?: readonly string[] | undefined;
}

/** One name of an image as the index holds it: the nodes (NodeInfo ids) that report it. */
interface ImageState {
  readonly name: string;
  readonly nodes: Set<number>;
}

/** A template key seen on a node, and when. */
interface Recent {
  readonly key: string;
  readonly nodeId: number;
  atMs: number;
}

/** A pod's locality, resolved once per decision (see LocalityView.query). */
export interface LocalityQuery {
  /** The nodes of the pod's key, if the memory has any. */
  readonly recent: ReadonlyMap<number, Recent> | undefined;
  /** Per pod image, its state (undefined: no node reports it). */
  readonly images: readonly (ImageState | undefined)[];
  /** Memory entries touched at or before this are expired. */
  readonly expiredAtOrBeforeMs: number;
  /** Whether any node can be anything but cold (else the ranking can skip looking). */
  readonly anyKnown: boolean;
}

/** What the index shows of one node (the debug view). */
export interface NodeLocalityView {
  /** status.images as kept: the largest first. */
  readonly images: readonly NodeImage[];
  /** Keys touched on this node within the TTL, the most recent first, at most `limit`; with their age. */
  readonly recentTemplates: readonly { readonly key: string; readonly ageSeconds: number }[];
  /** How many keys the memory holds for this node (recentTemplates may show fewer). */
  readonly recentTemplateCount: number;
}

/** The read side of the locality index: what rankings, explanations and the debug view read. */
export interface LocalityView {
  /** Resolves a pod's key and images once; O(pod images). */
  query(pod: PodLocality, nowMs: number): LocalityQuery;
  /** The pod's signal on the node of NodeInfo id `nodeId`: COLD, PARTIAL or WARM. O(pod images). */
  signal(query: LocalityQuery, nodeId: number): number;
  /** Entries in the template memory. */
  readonly memorySize: number;
  /** Distinct image names reported by the nodes. */
  readonly imageNames: number;
  /** What the index holds for each node of `nodeIds` (the debug view; O(memory entries)). */
  nodesLocality(nodeIds: ReadonlySet<number>, nowMs: number, limit: number): Map<number, NodeLocalityView>;
}

export interface LocalityIndexOptions {
  /** How long a template stays warm on a node after it was last seen starting there (ms, > 0). */
  readonly ttlMs: number;
  /** Template memory entries kept at most (≥ 1). */
  readonly maxEntries: number;
}

const EMPTY: readonly NodeImage[] = [];

/**
 * The index. Updates (the scheduler cache's informer and decision sides call them):
 * setNodeImages O(images kept), touch O(1) amortized (plus the key's length). Reads: see LocalityView.
 */
export class LocalityIndex implements LocalityView {
  private readonly byName = new Map<string, ImageState>();
  /** Per NodeInfo id: its images as kept, and the states of their names (to take them back out). */
  private readonly nodeImagesById = new Map<
    number,
    { readonly images: readonly NodeImage[]; readonly states: readonly ImageState[] }
  >();
  /** Template memory, least recently touched first (key `nodeId key`). */
  private readonly recent = new Map<string, Recent>();
  /** One copy of each template key the cache's pod records hold (bounded like the memory; the oldest dropped first). */
  private readonly keys = new Map<string, string>();
  private readonly byKey = new Map<string, Map<number, Recent>>();
  readonly ttlMs: number;
  readonly maxEntries: number;

  /** @throws RangeError when ttlMs or maxEntries is not positive. */
  constructor(options: LocalityIndexOptions) {
    if (!(options.ttlMs > 0)) throw new RangeError(`locality ttlMs must be > 0, got ${options.ttlMs}`);
    if (!(Number.isInteger(options.maxEntries) && options.maxEntries >= 1))
      throw new RangeError(`locality maxEntries must be an integer ≥ 1, got ${options.maxEntries}`);
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries;
  }

  get memorySize(): number {
    return this.recent.size;
  }

  get imageNames(): number {
    return this.byName.size;
  }

  /** Replaces the images of node `nodeId` (undefined or empty: none). */
  setNodeImages(nodeId: number, images: readonly NodeImage[] | undefined): void {
    this.clearNodeImages(nodeId);
    if (!images || images.length === 0) return;
    const states: ImageState[] = [];
    const kept: NodeImage[] = [];
    for (const image of images) {
      const names: string[] = [];
      for (const name of image.names) {
        let state = this.byName.get(name);
        if (!state) {
          state = { name, nodes: new Set() };
          this.byName.set(name, state);
        }
        if (state.nodes.has(nodeId)) continue; // the same name twice on one node
        state.nodes.add(nodeId);
        states.push(state);
        names.push(state.name); // the index's copy: one string per name, however many nodes report it
      }
      if (names.length > 0) kept.push({ names, sizeBytes: image.sizeBytes });
    }
    this.nodeImagesById.set(nodeId, { images: kept, states });
  }

  /** Forgets the images of node `nodeId` (its Node object is gone). */
  clearNodeImages(nodeId: number): void {
    const held = this.nodeImagesById.get(nodeId);
    if (!held) return;
    this.nodeImagesById.delete(nodeId);
    for (const state of held.states) {
      state.nodes.delete(nodeId);
      if (state.nodes.size === 0) this.byName.delete(state.name);
    }
  }

  /**
   * The one copy of `key` this index holds, so that the pod records of one template share one string
   * rather than one each (150,000 records of one template: 8 bytes each, not ~100). At most maxEntries
   * keys are held; a key dropped is merely copied again.
   */
  intern(key: string): string {
    const held = this.keys.get(key);
    if (held !== undefined) return held;
    this.keys.set(key, key);
    if (this.keys.size > this.maxEntries) this.keys.delete(this.keys.keys().next().value!);
    return key;
  }

  /** Template `key` started (or is starting) on node `nodeId` at `nowMs`. */
  touch(key: string, nodeId: number, nowMs: number): void {
    const id = `${nodeId} ${key}`;
    let entry = this.recent.get(id);
    if (entry) {
      this.recent.delete(id);
      entry.atMs = nowMs;
    } else {
      entry = { key, nodeId, atMs: nowMs };
      let nodes = this.byKey.get(key);
      if (!nodes) {
        nodes = new Map();
        this.byKey.set(key, nodes);
      }
      nodes.set(nodeId, entry);
    }
    this.recent.set(id, entry);
    this.sweep(nowMs);
  }

  /** Drops the least recently touched entries past the size bound, and expired ones from the front. */
  private sweep(nowMs: number): void {
    for (const [id, entry] of this.recent) {
      if (this.recent.size <= this.maxEntries && entry.atMs + this.ttlMs > nowMs) return;
      this.recent.delete(id);
      const nodes = this.byKey.get(entry.key)!;
      nodes.delete(entry.nodeId);
      if (nodes.size === 0) this.byKey.delete(entry.key);
    }
  }

  query(pod: PodLocality, nowMs: number): LocalityQuery {
    const key = pod.localityKey ?? null;
    const recent = key === null ? undefined : this.byKey.get(key);
    const images = (pod.images ?? []).map((name) => this.byName.get(name));
    return {
      recent,
      images,
      expiredAtOrBeforeMs: nowMs - this.ttlMs,
      anyKnown: recent !== undefined || images.some((s) => s !== undefined),
    };
  }

  signal(query: LocalityQuery, nodeId: number): number {
    const entry = query.recent?.get(nodeId);
    if (entry !== undefined && entry.atMs > query.expiredAtOrBeforeMs) return WARM;
    const images = query.images;
    let present = 0;
    for (let k = 0; k < images.length; k++) if (images[k]?.nodes.has(nodeId) === true) present++;
    return present === 0 ? COLD : present === images.length ? WARM : PARTIAL;
  }

  /**
   * What the index holds for each node of `nodeIds`: its images and the template keys recently
   * touched on it (within the TTL at `nowMs`, the most recent first, at most `limit`), in one pass
   * over the memory: for the debug view, not for decisions.
   */
  nodesLocality(nodeIds: ReadonlySet<number>, nowMs: number, limit: number): Map<number, NodeLocalityView> {
    const recentByNode = new Map<number, Recent[]>();
    for (const entry of this.recent.values()) {
      if (!nodeIds.has(entry.nodeId) || entry.atMs + this.ttlMs <= nowMs) continue;
      const list = recentByNode.get(entry.nodeId) ?? [];
      list.push(entry);
      recentByNode.set(entry.nodeId, list);
    }
    const out = new Map<number, NodeLocalityView>();
    for (const id of nodeIds) {
      const list = (recentByNode.get(id) ?? []).sort((a, b) => b.atMs - a.atMs);
      out.set(id, {
        images: this.nodeImagesById.get(id)?.images ?? EMPTY,
        recentTemplates: list
          .slice(0, limit)
          .map((e) => ({ key: e.key, ageSeconds: Math.max(0, (nowMs - e.atMs) / 1000) })),
        recentTemplateCount: list.length,
      });
    }
    return out;
  }
}
