/**
 * Small helpers for the e2e tests: run the cluster scripts and kubectl (child_process, no client library),
 * read the extender's Prometheus counters, and wait for conditions.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(process.cwd());
export const E2E_DIR = join(REPO_ROOT, 'test', 'e2e');
export const STATE_DIR = process.env.SANDBOX_E2E_STATE ? resolve(process.env.SANDBOX_E2E_STATE) : join(REPO_ROOT, '.e2e');

if (!existsSync(join(E2E_DIR, 'cluster-up.sh'))) {
  throw new Error(`run the e2e tests from the repository root (no test/e2e/cluster-up.sh under ${REPO_ROOT})`);
}

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program; rejects with its exit code, stderr and stdout tail in the message. */
export function run(file: string, args: readonly string[], opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((ok, bad) => {
    const child = execFile(
      file,
      args,
      { cwd: REPO_ROOT, env: opts.env ?? process.env, maxBuffer: 512 * 1024 * 1024, timeout: opts.timeoutMs ?? 120_000, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const tail = (s: string) => s.split('\n').slice(-40).join('\n');
          bad(new Error(`${file} ${args.join(' ')} failed (${err.code ?? err.signal ?? err.message})\n--- stderr\n${tail(stderr)}\n--- stdout\n${tail(stdout)}`));
        } else ok({ stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** KEY=VALUE lines of .e2e/cluster.env, written by cluster-up.sh. */
export type ClusterEnv = Record<string, string>;

export function readClusterEnv(): ClusterEnv {
  const file = join(STATE_DIR, 'cluster.env');
  if (!existsSync(file)) throw new Error(`${file} not found: is the e2e cluster up? (npm run cluster:up)`);
  const env: ClusterEnv = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  for (const key of ['KUBECONFIG', 'KUBECTL', 'EXTENDER_URL']) {
    if (!env[key]) throw new Error(`${file} has no ${key}`);
  }
  return env;
}

export class Kubectl {
  constructor(private readonly env: ClusterEnv) {}

  async run(args: readonly string[], input?: string): Promise<string> {
    const { stdout } = await run(this.env.KUBECTL!, [`--kubeconfig=${this.env.KUBECONFIG}`, ...args], input === undefined ? {} : { input });
    return stdout;
  }

  async json<T>(args: readonly string[]): Promise<T> {
    return JSON.parse(await this.run([...args, '-o', 'json'])) as T;
  }

  async apply(objects: readonly object[]): Promise<void> {
    await this.run(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  }
}

/** Sums a Prometheus counter by one label, e.g. sandbox_extender_http_requests_total by verb. */
export function sumCounterBy(metricsText: string, metric: string, label: string): Map<string, number> {
  const sums = new Map<string, number>();
  const line = new RegExp(`^${metric}(?:\\{([^}]*)\\})?\\s+([^\\s]+)`);
  for (const l of metricsText.split('\n')) {
    const m = line.exec(l);
    if (!m) continue;
    const labels = m[1] ?? '';
    const lv = new RegExp(`(?:^|,)${label}="([^"]*)"`).exec(labels)?.[1] ?? '';
    sums.set(lv, (sums.get(lv) ?? 0) + Number(m[2]));
  }
  return sums;
}

export async function fetchText(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** Polls `check` until it returns a value (not undefined) or the deadline passes; then throws `describe()`. */
export async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>, describe?: () => Promise<string>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const detail = describe ? await describe().catch((e: Error) => `(could not describe: ${e.message})`) : '';
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}\n${detail}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** CPU quantity ("2", "500m", "1.5") in millicores. */
export function milliCpu(q: string): number {
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Math.round(Number(q) * 1000);
}
