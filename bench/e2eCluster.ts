/**
 * What the cluster benchmarks (cluster.ts, startingBurst.ts) share about the e2e control plane:
 * where its scripts and state live, running one of its scripts, and reading its cluster.env.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository (this file runs from dist/bench/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const E2E_DIR = join(REPO_ROOT, 'test', 'e2e');
/** The cluster's state folder ($SANDBOX_E2E_STATE, default .e2e/), as test/e2e/lib.sh has it. */
export const STATE_DIR = process.env.SANDBOX_E2E_STATE ? resolve(process.env.SANDBOX_E2E_STATE) : join(REPO_ROOT, '.e2e');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A progress line on stderr, with the wall-clock time. */
export const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/**
 * Runs a test/e2e script; its stderr (progress) is echoed line by line, prefixed with the script's name.
 * @returns its stdout. @throws when it cannot start or exits non-zero.
 */
export function script(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((ok, bad) => {
    const child = spawn('bash', [join(E2E_DIR, name), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    let partial = '';
    child.stderr.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) process.stderr.write(`  ${name}: ${l}\n`);
    });
    child.on('error', bad);
    child.on('close', (code) => (code === 0 ? ok(stdout) : bad(new Error(`${name} ${args.join(' ')} exited with ${code}`))));
  });
}

export type ClusterEnv = Record<string, string>;

/**
 * The running cluster's cluster.env (KEY=value lines written by cluster-up.sh).
 * @throws when the file is missing (no cluster up) or lacks one of `required`.
 */
export function readClusterEnv(required: readonly string[] = ['KUBECONFIG', 'EXTENDER_URL']): ClusterEnv {
  const file = join(STATE_DIR, 'cluster.env');
  if (!existsSync(file)) throw new Error(`${file} not found: is the e2e cluster up?`);
  const env: ClusterEnv = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  for (const key of required) if (!env[key]) throw new Error(`${file} has no ${key}`);
  return env;
}
