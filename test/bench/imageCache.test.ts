import { SimulatedImageCache, drawFrom, zipfCdf, type ImageSpec } from '../../bench/imageCache.js';

const MiB = 1024 ** 2;
const model = { bandwidthBytesPerSecond: 100 * MiB, warmStartMs: 1000, slopeMsPerStarting: 250, maxImages: 2 };
const image = (name: string, mib: number): ImageSpec => ({
  name: `reg/${name}:v1`,
  digestName: `reg/${name}@sha256:${name}`,
  sizeBytes: mib * MiB,
});

describe('the simulated kubelet image cache', () => {
  it('warm: the image is on the node; the start is warm + slope × sandboxes already starting', () => {
    const cache = new SimulatedImageCache(model);
    cache.seed('n1', image('a', 500));
    expect(cache.bind('n1', image('a', 500), 10_000, 3)).toEqual({
      delayMs: 1000 + 3 * 250,
      kind: 'warm',
      pullWaitMs: 0,
    });
  });

  it('cold: a pull of size / bandwidth, one at a time per node (serializeImagePulls); the same image in flight is joined', () => {
    const cache = new SimulatedImageCache(model);
    // 500 MiB at 100 MiB/s = 5 s
    expect(cache.bind('n1', image('a', 500), 0, 0)).toEqual({ delayMs: 5000 + 1000, kind: 'pulled', pullWaitMs: 5000 });
    // another image queues behind it: 200 MiB → 2 s after 5 s
    expect(cache.bind('n1', image('b', 200), 1000, 1)).toEqual({
      delayMs: 6000 + 1000 + 250,
      kind: 'pulled',
      pullWaitMs: 6000,
    });
    // a pod of the first image joins its pull
    expect(cache.bind('n1', image('a', 500), 2000, 2)).toEqual({
      delayMs: 3000 + 1000 + 500,
      kind: 'joined',
      pullWaitMs: 3000,
    });
    // another node pulls on its own
    expect(cache.bind('n2', image('b', 200), 2000, 0).pullWaitMs).toBe(2000);
  });

  it('a finished pull puts the image on the node; status.images keeps the largest maxImages, largest first', () => {
    const cache = new SimulatedImageCache(model);
    cache.seed('n1', image('small', 100));
    cache.bind('n1', image('big', 900), 0, 0);
    expect(cache.finishPulls(8999)).toEqual([]);
    expect(cache.has('n1', 'reg/big:v1')).toBe(false);
    expect(cache.finishPulls(9000)).toEqual(['n1']);
    expect(cache.has('n1', 'reg/big:v1')).toBe(true);
    cache.seed('n1', image('mid', 300));
    expect(cache.statusImages('n1')).toEqual([
      { names: ['reg/big@sha256:big', 'reg/big:v1'], sizeBytes: 900 * MiB },
      { names: ['reg/mid@sha256:mid', 'reg/mid:v1'], sizeBytes: 300 * MiB },
    ]);
    expect(cache.bind('n1', image('big', 900), 9000, 0).kind).toBe('warm');
  });

  it('Zipf popularity: weights 1/k^s, drawn by the cumulative distribution', () => {
    const cdf = zipfCdf(3, 1); // weights 1, 1/2, 1/3 → total 11/6
    expect(cdf.map((c) => Number(c.toFixed(4)))).toEqual([0.5455, 0.8182, 1]);
    expect([drawFrom(cdf, 0), drawFrom(cdf, 0.6), drawFrom(cdf, 0.99), drawFrom(cdf, 0.9999999)]).toEqual([0, 1, 2, 2]);
  });
});
