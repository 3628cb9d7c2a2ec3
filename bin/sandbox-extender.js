#!/usr/bin/env node
// Entry point of the `sandbox-extender` command: runs the compiled CLI (npm run build first).
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'sandbox-extender: not built yet: run `npm run build` (or `npm start`, which builds) in the repository first\n',
  );
  process.exit(2);
}
await import(main.href);
