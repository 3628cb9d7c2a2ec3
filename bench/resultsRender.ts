/**
 * `npm run bench:render`: rewrites the results regions of README.md and docs/benchmarks.md from bench/results/*.json
 * (bench/results.ts). `--check` writes nothing and exits 1 when a region differs. Run from the checkout's root.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RENDERED_FILES, fillRegions, loadResults } from './results.js';

const root = process.cwd();
const check = process.argv.includes('--check');
const results = loadResults(root);
let stale = 0;
for (const file of RENDERED_FILES) {
  const path = join(root, file);
  const before = readFileSync(path, 'utf8');
  const after = fillRegions(before, results, file);
  if (after === before) continue;
  stale++;
  if (check) console.log(`${file}: results regions differ from bench/results/`);
  else {
    writeFileSync(path, after);
    console.log(`${file}: results regions rewritten`);
  }
}
if (check && stale > 0) process.exitCode = 1;
if (stale === 0) console.log('results regions up to date');
