import {
  COLD,
  KUBELET_MAX_IMAGES,
  LocalityIndex,
  localityKey,
  MAX_IMAGE_ENTRIES_READ,
  MAX_IMAGE_NAME_LENGTH,
  MAX_IMAGES_KEY_LENGTH,
  MAX_NAMES_PER_IMAGE,
  MAX_POD_IMAGES,
  nodeImages,
  normalizedImageName,
  PARTIAL,
  podImages,
  WARM,
} from '../../../src/core/objects/templateLocality.js';
import type { Node, Pod } from '../../../src/core/objects/kubeObjects.js';

const MiB = 1024 ** 2;
const TEMPLATE_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';

function nodeWith(images: unknown): Node {
  return { metadata: { name: 'n' }, status: { images } as never };
}

function podWith(images: readonly string[], labels?: Record<string, string>, initImages: readonly string[] = []): Pod {
  return {
    metadata: { name: 'p', uid: 'u', ...(labels ? { labels } : {}) },
    spec: {
      containers: images.map((image, i) => ({ name: `c${i}`, image })) as never,
      initContainers: initImages.map((image, i) => ({ name: `i${i}`, image })) as never,
    },
  };
}

describe('nodeImages: node.status.images, bounded', () => {
  it('keeps the names and sizes, the largest first', () => {
    const images = nodeImages(
      nodeWith([
        { names: ['reg/a@sha256:aa', 'reg/a:1'], sizeBytes: 300 * MiB },
        { names: ['reg/b:2'], sizeBytes: 900 * MiB },
      ]),
      50,
    );
    expect(images).toEqual([
      { names: ['reg/b:2'], sizeBytes: 900 * MiB },
      { names: ['reg/a@sha256:aa', 'reg/a:1'], sizeBytes: 300 * MiB },
    ]);
  });

  it("the 50-image limit: of 60 images, kubelet's 50 largest are kept, whatever their order in the list", () => {
    // sizes 1..60 MiB, shuffled deterministically
    const list = Array.from({ length: 60 }, (_, i) => ({
      names: [`img-${i}:v`],
      sizeBytes: (((i * 37) % 60) + 1) * MiB,
    }));
    const kept = nodeImages(nodeWith(list), KUBELET_MAX_IMAGES);
    expect(kept).toHaveLength(50);
    expect(kept.map((k) => k.sizeBytes / MiB)).toEqual(Array.from({ length: 50 }, (_, i) => 60 - i)); // 60 down to 11
  });

  it('images without a size count as 0 bytes: kept while there is room, the first dropped when full', () => {
    const list = [
      { names: ['nosize:1'] },
      { names: ['neg:1'], sizeBytes: -5 },
      { names: ['nan:1'], sizeBytes: 'big' },
      { names: ['sized:1'], sizeBytes: 10 },
    ];
    expect(nodeImages(nodeWith(list), 10).map((i) => [i.names[0], i.sizeBytes])).toEqual([
      ['sized:1', 10],
      ['nosize:1', 0],
      ['neg:1', 0],
      ['nan:1', 0],
    ]);
    expect(nodeImages(nodeWith(list), 1).map((i) => i.names[0])).toEqual(['sized:1']);
  });

  it('entries of the wrong shape, empty or oversized names are skipped; at most 8 names per image', () => {
    const long = 'x'.repeat(MAX_IMAGE_NAME_LENGTH + 1);
    const list = [
      null,
      7,
      'img',
      { names: 'not-a-list' },
      { names: [long, '', 3] },
      { names: [long, 'ok:1'], sizeBytes: 1 },
      { names: Array.from({ length: 20 }, (_, i) => `many:${i}`), sizeBytes: 2 },
    ];
    const kept = nodeImages(nodeWith(list), 50);
    expect(kept.map((k) => k.names)).toEqual([
      Array.from({ length: MAX_NAMES_PER_IMAGE }, (_, i) => `many:${i}`),
      ['ok:1'],
    ]);
    expect(nodeImages(nodeWith('nope'), 50)).toEqual([]);
    expect(nodeImages({ metadata: { name: 'n' } }, 50)).toEqual([]);
  });

  it('a huge list costs a bounded read: only the first 1,024 entries are looked at', () => {
    // 200,000 entries; the largest images come after the first MAX_IMAGE_ENTRIES_READ (kubelet sorts the largest first, so a real list loses nothing)
    const list = Array.from({ length: 200_000 }, (_, i) => ({ names: [`img-${i}:v`], sizeBytes: i }));
    const kept = nodeImages(nodeWith(list), 50);
    expect(kept).toHaveLength(50);
    expect(kept[0]!.sizeBytes).toBe(MAX_IMAGE_ENTRIES_READ - 1);
    expect(kept.every((k) => k.sizeBytes < MAX_IMAGE_ENTRIES_READ)).toBe(true);
  });
});

describe('podImages and localityKey', () => {
  it("normalizes as kube-scheduler's ImageLocality: no tag or digest → :latest; a registry port is not a tag", () => {
    expect(normalizedImageName('nginx')).toBe('nginx:latest');
    expect(normalizedImageName('reg.example:5000/team/app')).toBe('reg.example:5000/team/app:latest');
    expect(normalizedImageName('reg.example:5000/team/app:1.2')).toBe('reg.example:5000/team/app:1.2');
    expect(normalizedImageName('app@sha256:abc')).toBe('app@sha256:abc');
  });

  it('containers then init containers, without repeats; oversized names left out; at most 32', () => {
    expect(podImages(podWith(['a', 'b:1', 'a:latest'], undefined, ['init:2', 'b:1']))).toEqual([
      'a:latest',
      'b:1',
      'init:2',
    ]);
    expect(podImages(podWith(['x'.repeat(MAX_IMAGE_NAME_LENGTH + 1), 'ok']))).toEqual(['ok:latest']);
    expect(podImages(podWith(Array.from({ length: 100 }, (_, i) => `i${i}:v`)))).toHaveLength(MAX_POD_IMAGES);
    expect(podImages({ metadata: { name: 'p' } })).toEqual([]);
  });

  it('the key is the template label when valid, else the sorted images, else null', () => {
    expect(localityKey(podWith(['b:1', 'a:1'], { [TEMPLATE_LABEL]: 'f00dcafe' }), TEMPLATE_LABEL)).toBe('f00dcafe');
    expect(localityKey(podWith(['b:1', 'a:1']), TEMPLATE_LABEL)).toBe('images:a:1 b:1');
    expect(localityKey(podWith([]), TEMPLATE_LABEL)).toBeNull();
  });

  it('a 10 KB label value (not a valid label value) is not a key: the pod is keyed by its images, in bounded memory', () => {
    const huge = 'a'.repeat(10 * 1024);
    const key = localityKey(podWith(['app:1'], { [TEMPLATE_LABEL]: huge }), TEMPLATE_LABEL);
    expect(key).toBe('images:app:1');
    expect(localityKey(podWith(['app:1'], { [TEMPLATE_LABEL]: 'has space' }), TEMPLATE_LABEL)).toBe('images:app:1');
    expect(localityKey(podWith(['app:1'], { [TEMPLATE_LABEL]: 'a'.repeat(63) }), TEMPLATE_LABEL)).toBe('a'.repeat(63));
  });

  it('a key of images longer than 2,048 characters is no key (each pod record would otherwise carry up to 16 KB)', () => {
    const images = Array.from(
      { length: MAX_POD_IMAGES },
      (_, i) => `${'r'.repeat(MAX_IMAGE_NAME_LENGTH - 10)}/i${i}:v`,
    );
    expect(localityKey(podWith(images), TEMPLATE_LABEL)).toBeNull();
    expect(localityKey(podWith(images.slice(0, 3)), TEMPLATE_LABEL)!.length).toBeLessThanOrEqual(MAX_IMAGES_KEY_LENGTH);
  });
});

describe('LocalityIndex', () => {
  const TTL = 60_000;
  const index = (maxEntries = 1000) => new LocalityIndex({ ttlMs: TTL, maxEntries });

  it('signal: warm when every image is on the node, partial when some are, cold when none or unknown', () => {
    const idx = index();
    idx.setNodeImages(1, [
      { names: ['a:1', 'a@sha256:aa'], sizeBytes: 10 },
      { names: ['b:1'], sizeBytes: 10 },
    ]);
    idx.setNodeImages(2, [{ names: ['a:1'], sizeBytes: 10 }]);
    const q = idx.query({ localityKey: 'images:a:1 b:1', images: ['a:1', 'b:1'] }, 0);
    expect([idx.signal(q, 1), idx.signal(q, 2), idx.signal(q, 3)]).toEqual([WARM, PARTIAL, COLD]);
    // by digest too
    expect(idx.signal(idx.query({ images: ['a@sha256:aa'] }, 0), 1)).toBe(WARM);
    // an image no node reports: cold everywhere, and the query says so (the ranking can skip asking)
    const unknown = idx.query({ localityKey: 'images:zzz:1', images: ['zzz:1'] }, 0);
    expect(unknown.anyKnown).toBe(false);
    expect([idx.signal(unknown, 1), idx.signal(unknown, 2)]).toEqual([COLD, COLD]);
    // a pod without images or key
    expect(idx.signal(idx.query({}, 0), 1)).toBe(COLD);
  });

  it('the template memory makes a node warm until the TTL runs out', () => {
    const idx = index();
    idx.touch('tmpl', 5, 1_000);
    expect(idx.signal(idx.query({ localityKey: 'tmpl' }, 1_000 + TTL - 1), 5)).toBe(WARM);
    expect(idx.signal(idx.query({ localityKey: 'tmpl' }, 1_000 + TTL), 5)).toBe(COLD);
    expect(idx.signal(idx.query({ localityKey: 'tmpl' }, 1_000), 6)).toBe(COLD);
    // touched again: warm from then on
    idx.touch('tmpl', 5, 1_000 + TTL);
    expect(idx.signal(idx.query({ localityKey: 'tmpl' }, 1_000 + 2 * TTL - 1), 5)).toBe(WARM);
  });

  it('expired entries leave the memory as later touches sweep the front', () => {
    const idx = index();
    for (let n = 0; n < 10; n++) idx.touch('old', n, 0);
    expect(idx.memorySize).toBe(10);
    idx.touch('new', 99, TTL);
    expect(idx.memorySize).toBe(1);
  });

  it('at most maxEntries (template, node) pairs: the least recently touched go first', () => {
    const idx = index(3);
    idx.touch('t', 1, 0);
    idx.touch('t', 2, 1);
    idx.touch('t', 3, 2);
    idx.touch('t', 1, 3); // 1 is now the most recent
    idx.touch('t', 4, 4); // evicts 2
    expect(idx.memorySize).toBe(3);
    const q = idx.query({ localityKey: 't' }, 5);
    expect([1, 2, 3, 4].map((n) => idx.signal(q, n))).toEqual([WARM, COLD, WARM, WARM]);
  });

  it('hostile churn: a million distinct keys keep the memory at its bound', () => {
    const idx = index(1000);
    for (let i = 0; i < 1_000_000; i++) idx.touch(`key-${i}`, i % 5000, i);
    expect(idx.memorySize).toBe(1000);
  });

  it('replacing a node’s images takes the old ones out; names no node reports are dropped; the debug view shows both sources', () => {
    const idx = index();
    idx.setNodeImages(1, [{ names: ['a:1'], sizeBytes: 5 }]);
    idx.setNodeImages(2, [{ names: ['a:1'], sizeBytes: 5 }]);
    idx.setNodeImages(1, [{ names: ['b:1'], sizeBytes: 7 }]);
    expect(idx.signal(idx.query({ images: ['a:1'] }, 0), 1)).toBe(COLD);
    expect(idx.signal(idx.query({ images: ['a:1'] }, 0), 2)).toBe(WARM);
    expect(idx.imageNames).toBe(2);
    idx.clearNodeImages(2);
    expect(idx.imageNames).toBe(1);
    idx.touch('t1', 1, 100);
    idx.touch('t2', 1, 200);
    idx.touch('t3', 2, 200);
    const view = idx.nodesLocality(new Set([1]), 300, 1).get(1)!;
    expect(view).toEqual({
      images: [{ names: ['b:1'], sizeBytes: 7 }],
      recentTemplates: [{ key: 't2', ageSeconds: 0.1 }],
      recentTemplateCount: 2,
    });
  });

  it('refuses a non-positive TTL or size bound', () => {
    expect(() => new LocalityIndex({ ttlMs: 0, maxEntries: 1 })).toThrow(RangeError);
    expect(() => new LocalityIndex({ ttlMs: 1, maxEntries: 0 })).toThrow(RangeError);
  });
});
