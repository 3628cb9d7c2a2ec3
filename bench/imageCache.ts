/**
 * The cold-start model of the locality benchmark (bench/locality.ts): a simulated kubelet image cache per KWOK
 * node, so that a pod's time from bind to Ready depends on where it was placed — pulls one at a time per node
 * (KubeletConfiguration serializeImagePulls), a warm start, a slope per sandbox already starting there, and
 * status.images as kubelet reports it (nodeStatusMaxImages). The formulas and their sources:
 * docs/benchmarks.md#the-cold-start-model. Pure: no clock, no I/O.
 */

export interface ColdStartModel {
  /** Pull bandwidth of a node, bytes per second. */
  readonly bandwidthBytesPerSecond: number;
  /** Bind → Ready of a sandbox whose image is on the node, ms. */
  readonly warmStartMs: number;
  /** Added to a start per sandbox already starting on the node, ms. */
  readonly slopeMsPerStarting: number;
  /** Images a node reports in status.images (kubelet's nodeStatusMaxImages). */
  readonly maxImages: number;
}

export interface ImageSpec {
  /** Its reference, as pods name it (e.g. `registry.example/tmpl-03:v1`). */
  readonly name: string;
  /** Its digest reference, reported beside the name. */
  readonly digestName: string;
  readonly sizeBytes: number;
}

/** How a pod found its image on its node at bind. */
export type PullKind = 'warm' | 'joined' | 'pulled';

export interface StartPlan {
  /** ms from bind to Ready. */
  readonly delayMs: number;
  readonly kind: PullKind;
  /** ms of the delay spent waiting for the image. */
  readonly pullWaitMs: number;
}

interface NodeCache {
  readonly present: Map<string, ImageSpec>;
  /** Image name → when its pull ends (ms). */
  readonly pulling: Map<string, { readonly image: ImageSpec; readonly doneAtMs: number }>;
  queueFreeAtMs: number;
}

export class SimulatedImageCache {
  private readonly nodes = new Map<string, NodeCache>();

  constructor(readonly model: ColdStartModel) {
    if (!(model.bandwidthBytesPerSecond > 0)) throw new RangeError('bandwidthBytesPerSecond must be > 0');
  }

  private node(name: string): NodeCache {
    let n = this.nodes.get(name);
    if (!n) {
      n = { present: new Map(), pulling: new Map(), queueFreeAtMs: 0 };
      this.nodes.set(name, n);
    }
    return n;
  }

  /** Puts `image` on `node` (the initial state). */
  seed(node: string, image: ImageSpec): void {
    this.node(node).present.set(image.name, image);
  }

  /** Whether `image` is on `node` now (pulled and not merely queued). */
  has(node: string, image: string): boolean {
    return this.nodes.get(node)?.present.has(image) === true;
  }

  /** The start of a pod bound to `node` at `nowMs`, with `startingOnNode` other sandboxes starting there. */
  bind(node: string, image: ImageSpec, nowMs: number, startingOnNode: number): StartPlan {
    const n = this.node(node);
    let pulledAtMs: number;
    let kind: PullKind;
    if (n.present.has(image.name)) {
      pulledAtMs = nowMs;
      kind = 'warm';
    } else {
      const inFlight = n.pulling.get(image.name);
      if (inFlight) {
        pulledAtMs = Math.max(nowMs, inFlight.doneAtMs);
        kind = 'joined';
      } else {
        const start = Math.max(nowMs, n.queueFreeAtMs);
        pulledAtMs = start + (image.sizeBytes / this.model.bandwidthBytesPerSecond) * 1000;
        n.queueFreeAtMs = pulledAtMs;
        n.pulling.set(image.name, { image, doneAtMs: pulledAtMs });
        kind = 'pulled';
      }
    }
    const pullWaitMs = pulledAtMs - nowMs;
    return {
      delayMs: pullWaitMs + this.model.warmStartMs + this.model.slopeMsPerStarting * startingOnNode,
      kind,
      pullWaitMs,
    };
  }

  /** Completes the pulls that end at or before `nowMs`. @returns the nodes whose images changed. */
  finishPulls(nowMs: number): string[] {
    const changed: string[] = [];
    for (const [name, n] of this.nodes) {
      let any = false;
      for (const [image, pull] of n.pulling) {
        if (pull.doneAtMs > nowMs) continue;
        n.pulling.delete(image);
        n.present.set(image, pull.image);
        any = true;
      }
      if (any) changed.push(name);
    }
    return changed;
  }

  /** The node's status.images: the maxImages largest images it holds, largest first, as kubelet reports them. */
  statusImages(node: string): { names: string[]; sizeBytes: number }[] {
    const present = [...(this.nodes.get(node)?.present.values() ?? [])];
    present.sort((a, b) => b.sizeBytes - a.sizeBytes || (a.name < b.name ? -1 : 1));
    return present
      .slice(0, this.model.maxImages)
      .map((i) => ({ names: [i.digestName, i.name], sizeBytes: i.sizeBytes }));
  }
}

/**
 * Zipf popularity over `n` items with exponent `s`: item k (1-based) has weight 1/k^s. @returns the
 * cumulative distribution, for {@link drawFrom}.
 */
export function zipfCdf(n: number, s: number): number[] {
  const weights = Array.from({ length: n }, (_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  return weights.map((w) => (acc += w / total));
}

/** The index drawn from a cumulative distribution by `u` in [0, 1). */
export function drawFrom(cdf: readonly number[], u: number): number {
  const i = cdf.findIndex((c) => u < c);
  return i < 0 ? cdf.length - 1 : i;
}
