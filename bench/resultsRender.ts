/**
 * `npm run bench:render`: rewrites the results regions of README.md and docs/benchmarks.md from bench/results/*.json
 * (bench/results.ts). `--check` writes nothing and exits 1 when a region differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { exitOnUsage } from './cliOptions.js';
import { ROOT } from './report.js';
import { RENDERED_FILES, fillRegions, loadResults } from './results.js';

const { check } = new Command('bench:render')
  .exitOverride(exitOnUsage)
  .description(`rewrites the results regions of ${RENDERED_FILES.join(' and ')} from bench/results/`)
  .option('--check', 'write nothing; exit 1 when a region differs', false)
  .parse()
  .opts<{ check: boolean }>();
const results = loadResults(ROOT);
let stale = 0;
for (const file of RENDERED_FILES) {
  const path = join(ROOT, file);
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
