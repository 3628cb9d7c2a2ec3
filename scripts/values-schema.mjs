#!/usr/bin/env node
// Writes the `extender.config` part of charts/sandbox-extender/values.schema.json from the extender's own config
// schema (configJsonSchema() of the built code), so bad extender settings fail at `helm install` exactly as they
// would fail at start-up. The rest of the file is edited by hand.
//
//   npm run build && node scripts/values-schema.mjs            rewrite the file
//   npm run build && node scripts/values-schema.mjs --check    exit 1 when the file is out of date
// (npm test checks the same against the TypeScript source: test/chart/valuesSchema.test.ts.)
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { VALUES_SCHEMA_PATH, formatSchema, withConfigSchema } from './lib/chart-values-schema.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const loadJs = join(root, 'dist/src/config/load.js');
if (!existsSync(loadJs)) {
  process.stderr.write(`values-schema: ${loadJs} not found: run npm run build first\n`);
  process.exit(2);
}
const { configJsonSchema } = await import(pathToFileURL(loadJs).href);
const file = join(root, VALUES_SCHEMA_PATH);
const current = readFileSync(file, 'utf8');
const next = formatSchema(withConfigSchema(JSON.parse(current), configJsonSchema()));
if (check) {
  if (current !== next) {
    process.stderr.write(
      `values-schema: ${VALUES_SCHEMA_PATH} is out of date with src/config/schema.ts: run npm run build && node scripts/values-schema.mjs\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`values-schema: ${VALUES_SCHEMA_PATH} is in sync with the extender's config schema\n`);
} else if (current === next) {
  process.stdout.write(`values-schema: ${VALUES_SCHEMA_PATH} unchanged\n`);
} else {
  writeFileSync(file, next);
  process.stdout.write(`values-schema: wrote ${VALUES_SCHEMA_PATH}\n`);
}
