#!/usr/bin/env node
// Interim bridge until the extender watches the API server itself: every INTERVAL ms, runs
// `kubectl get nodes,pods -A -o json` against the e2e cluster and replaces SNAPSHOT atomically (write a
// temporary file in the same folder, then rename) when the content changed. The extender polls the file.
//
//   node test/e2e/snapshot-feeder.mjs --kubectl BIN --kubeconfig FILE --out SNAPSHOT [--interval-ms 1000] [--once]
//
// Exits on SIGTERM/SIGINT (after killing a kubectl still running). A failed kubectl run is logged and retried.
import { execFile } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    kubectl: { type: 'string', default: 'kubectl' },
    kubeconfig: { type: 'string' },
    out: { type: 'string' },
    'interval-ms': { type: 'string', default: '1000' },
    once: { type: 'boolean', default: false },
  },
});
if (!opt.kubeconfig || !opt.out) {
  process.stderr.write(
    'usage: snapshot-feeder.mjs --kubectl BIN --kubeconfig FILE --out SNAPSHOT [--interval-ms N] [--once]\n',
  );
  process.exit(2);
}
const intervalMs = Math.max(100, Number(opt['interval-ms']) || 1000);
const log = (msg) => process.stderr.write(`${new Date().toISOString()} snapshot-feeder: ${msg}\n`);

let child = null;
let stopping = false;
let last = '';
let writes = 0;
let failures = 0;

function fetchOnce() {
  return new Promise((resolve, reject) => {
    child = execFile(
      opt.kubectl,
      [
        `--kubeconfig=${opt.kubeconfig}`,
        'get',
        'nodes,pods',
        '--all-namespaces',
        '--output=json',
        '--request-timeout=10s',
      ],
      { maxBuffer: 1024 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        child = null;
        if (err) reject(new Error(`${err.message.split('\n')[0]} ${stderr.trim()}`.trim()));
        else resolve(stdout);
      },
    );
  });
}

async function tick() {
  const text = await fetchOnce();
  if (text === last) return;
  JSON.parse(text); // never publish a truncated or garbled document
  const tmp = `${opt.out}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, opt.out);
  last = text;
  writes++;
  if (writes === 1 || writes % 100 === 0) log(`wrote ${opt.out} (${writes} updates, ${text.length} bytes)`);
}

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    stopping = true;
    if (child) child.kill('SIGTERM');
    log(`stopping on ${sig} after ${writes} updates`);
    process.exit(0);
  });
}

if (opt.once) {
  try {
    await tick();
  } catch (err) {
    log(`failed: ${err.message}`);
    process.exit(1);
  }
} else {
  log(`every ${intervalMs} ms -> ${opt.out}`);
  while (!stopping) {
    const started = Date.now();
    try {
      await tick();
      failures = 0;
    } catch (err) {
      failures++;
      if (failures <= 3 || failures % 30 === 0) log(`kubectl failed (${failures} in a row): ${err.message}`);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, intervalMs - (Date.now() - started))));
  }
}
