/**
 * Random numbers for the random strategy: a seeded xoroshiro128+ generator (pure-rand), so a run
 * can be repeated with the same seed. Lives outside src/core, which takes the source as an argument.
 */
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** Returns a function yielding uniform numbers in [0, 1); a fresh seed per call when `seed` is undefined. */
export function randomSource(seed?: number): () => number {
  const rng = xoroshiro128plus(seed ?? Date.now() ^ (process.pid << 16));
  return () => uniformFloat64(rng);
}
