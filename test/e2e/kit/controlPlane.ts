/**
 * The e2e control plane as the e2e tests and the cluster benchmarks drive it: where its scripts and state live,
 * starting and stopping it (test/e2e/cluster-up.sh, cluster-down.sh, component.sh), its cluster.env, the
 * extender's metrics, and the waits they share.
 *
 * The kit is three modules (import the one you need; none imports a test framework, so dist/bench/ runs them):
 *   controlPlane.ts  this one: paths, scripts, a free port, cluster.env, lifecycle, waits, the extender's
 *                    metrics and log
 *   kubectl.ts       objects through kubectl (no client library): nodes, pods, namespaces, quantities, pressure
 *   adminClient.ts   the admin client (client-node on one keep-alive agent): bursts of pods, the not-ready taint,
 *                    watches and pod changes, the schedulers' /metrics
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parsePrometheusText, sumBy, sumSamples } from '../../../bench/clusterStats.js';

// ------------------------------------------------------------------------------------------ where things are

/**
 * The repository: the nearest folder above this file that holds test/e2e/cluster-up.sh (this file runs from
 * test/e2e/kit/ under the tests, from dist/test/e2e/kit/ under the benchmarks).
 */
export const REPO_ROOT = ((): string => {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'test', 'e2e', 'cluster-up.sh'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`no test/e2e/cluster-up.sh in any folder above ${here}: is this the repository?`);
  }
})();
export const E2E_DIR = join(REPO_ROOT, 'test', 'e2e');
/** The cluster's state folder ($SANDBOX_E2E_STATE, default .e2e/), as test/e2e/lib.sh has it. */
export const STATE_DIR = process.env.SANDBOX_E2E_STATE
  ? resolve(process.env.SANDBOX_E2E_STATE)
  : join(REPO_ROOT, '.e2e');

// ------------------------------------------------------------------------------------------ time, progress

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Monotonic milliseconds (CLOCK_MONOTONIC, the clock of V8's CPU profiles in µs). */
export const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;
/** A benchmark's progress line on stderr, with the wall-clock time. */
export const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/**
 * Polls `check` every 500 ms until it returns a value (not undefined) or the deadline passes; then throws
 * `describe()`. A check that throws counts as not yet (its last error is in the message).
 */
export async function waitFor<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined>,
  describe?: () => Promise<string>,
): Promise<T> {
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
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}\n${detail}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Polls `check` every `everyMs` (monotonic clock) until it is true; a check that throws ends the wait with its error. */
export async function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => boolean | Promise<boolean>,
  everyMs = 20,
): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await check())) {
    if (nowMs() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ------------------------------------------------------------------------------------------ running programs

export interface RunResult {
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a program (cwd: the repository); rejects with its exit code, stderr and stdout tail in the message. */
export function run(
  file: string,
  args: readonly string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((ok, bad) => {
    const child = execFile(
      file,
      args,
      {
        cwd: REPO_ROOT,
        env: opts.env ?? process.env,
        maxBuffer: 512 * 1024 * 1024,
        timeout: opts.timeoutMs ?? 120_000,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err) {
          const tail = (s: string) => s.split('\n').slice(-40).join('\n');
          bad(
            new Error(
              `${file} ${args.join(' ')} failed (${err.code ?? err.signal ?? err.message})\n--- stderr\n${tail(stderr)}\n--- stdout\n${tail(stdout)}`,
            ),
          );
        } else ok({ stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/**
 * Runs a test/e2e script (cwd: the repository, `env` on top of this process's) as the benchmarks do: its stderr
 * (progress) is echoed line by line as it comes, prefixed with the script's name; no time limit.
 * @returns its stdout. @throws when it cannot start or exits non-zero.
 */
export function script(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((ok, bad) => {
    const child = spawn('bash', [join(E2E_DIR, name), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    let partial = '';
    child.stderr.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) process.stderr.write(`  ${name}: ${l}\n`);
    });
    child.on('error', bad);
    child.on('close', (code) =>
      code === 0 ? ok(stdout) : bad(new Error(`${name} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

/** A TCP port free on 127.0.0.1 just now (the kernel's pick), for a process the caller is about to start. */
export function freePort(): Promise<number> {
  return new Promise((ok, bad) => {
    const s = createServer();
    s.once('error', bad);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

// ------------------------------------------------------------------------------------------ cluster.env

/** KEY=VALUE lines of cluster.env in the state folder, written by cluster-up.sh (and component.sh). */
export type ClusterEnv = Record<string, string>;

/** The KEY=VALUE lines of a text (an env file the e2e scripts write): key → value; other lines ignored. */
export function keyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

/**
 * The running cluster's cluster.env. @throws when the file is missing (no cluster up) or lacks one of `required`.
 */
export function readClusterEnv(required: readonly string[] = ['KUBECONFIG', 'KUBECTL', 'EXTENDER_URL']): ClusterEnv {
  const file = join(STATE_DIR, 'cluster.env');
  if (!existsSync(file)) throw new Error(`${file} not found: is the e2e cluster up? (npm run cluster:up)`);
  const env: ClusterEnv = keyValues(readFileSync(file, 'utf8'));
  for (const key of required) if (!env[key]) throw new Error(`${file} has no ${key}`);
  return env;
}

// ------------------------------------------------------------------------------------------ lifecycle

/** E2E_REUSE_CLUSTER=1: the e2e tests use the cluster that is already up (npm run cluster:up, run-ci.sh) and leave it running. */
export const REUSE = process.env.E2E_REUSE_CLUSTER === '1';
/** Start-up may include a cold build of the control-plane tools. */
export const SETUP_TIMEOUT_MS = Number(process.env.E2E_SETUP_TIMEOUT_MS ?? 45 * 60_000);

/**
 * The e2e tests' cluster-up.sh / cluster-down.sh: on examples/cluster/heterogeneous.yaml (CLUSTER_NODES of the
 * caller's environment dropped), within SETUP_TIMEOUT_MS; echoes only their summary lines.
 */
export async function clusterScript(
  name: 'cluster-up.sh' | 'cluster-down.sh',
  args: string[] = [],
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<void> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, CLUSTER: 'examples/cluster/heterogeneous.yaml', ...extraEnv };
  delete childEnv.CLUSTER_NODES;
  const { stderr } = await run('bash', [join(E2E_DIR, name), ...args], { env: childEnv, timeoutMs: SETUP_TIMEOUT_MS });
  process.stderr.write(
    stderr
      .split('\n')
      .filter((l) => /cluster (up|stopped)|tools (up to date|built)/.test(l))
      .map((l) => `${l}\n`)
      .join(''),
  );
}

/** beforeAll of an e2e test file: starts a cluster of its own unless E2E_REUSE_CLUSTER=1; returns its cluster.env. */
export async function setUpCluster(): Promise<ClusterEnv> {
  if (!REUSE) await clusterScript('cluster-up.sh');
  return readClusterEnv();
}

/** afterAll of an e2e test file: stops the cluster it started (never a reused one). */
export async function tearDownCluster(): Promise<void> {
  if (!REUSE) await clusterScript('cluster-down.sh', ['--keep-logs']);
}

/**
 * test/e2e/component.sh ARGS (restart a component, bind on|off, ...) as the e2e tests run it, within 3 minutes;
 * returns the pid it prints (0 for the commands that print none: stop, kill, standby). Its progress lines go to
 * stderr prefixed with "component.sh". (The benchmarks run it with `script`, echoing its progress as it comes.)
 */
export async function component(args: readonly string[]): Promise<number> {
  const { stdout, stderr } = await run('bash', [join(E2E_DIR, 'component.sh'), ...args], { timeoutMs: 180_000 });
  process.stderr.write(
    stderr
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => `component.sh ${args.join(' ')}: ${l}\n`)
      .join(''),
  );
  if (['stop', 'kill', 'standby'].includes(args[0] ?? '')) return 0;
  const pid = Number(stdout.trim());
  if (!Number.isInteger(pid) || pid <= 0)
    throw new Error(`component.sh ${args.join(' ')} printed no pid: ${JSON.stringify(stdout)}`);
  return pid;
}

// ------------------------------------------------------------------------------------------ the extender's metrics and log

export async function fetchText(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** Sums a Prometheus counter by one label, e.g. sandbox_extender_http_requests_total by verb (no label: key ''). */
export const sumCounterBy = (metricsText: string, metric: string, label: string): Map<string, number> =>
  sumBy(parsePrometheusText(metricsText), metric, label);

/** Sum of the samples of `metric` whose labels include every `labels` pair (0 when there are none). */
export const metricValue = (metricsText: string, metric: string, labels: Record<string, string> = {}): number =>
  sumSamples(parsePrometheusText(metricsText), metric, labels);

/** Whether the extender's /metrics text shows an Event outcome for each decision (placed or no_fit). */
export function eventsOut(metricsText: string): boolean {
  const decisions =
    metricValue(metricsText, 'sandbox_extender_placements_total', { result: 'placed' }) +
    metricValue(metricsText, 'sandbox_extender_placements_total', { result: 'no_fit' });
  return metricValue(metricsText, 'sandbox_extender_events_total') >= decisions;
}

/**
 * Waits until the extender has settled: no reservation pending, and its Event queue drained (an outcome for every
 * decision), so that nothing it still sends lands in a namespace the test is about to delete.
 */
export async function waitExtenderSettled(env: ClusterEnv, timeoutMs = 60_000): Promise<string> {
  return waitFor(
    'the extender to settle (reservations_pending 0, Event queue drained)',
    timeoutMs,
    async () => {
      const m = await fetchText(`${env.EXTENDER_URL}/metrics`);
      const eventsOn = env.EXTENDER_MODE === 'cluster';
      return metricValue(m, 'sandbox_extender_reservations_pending') === 0 && (!eventsOn || eventsOut(m))
        ? m
        : undefined;
    },
    async () =>
      (await fetchText(`${env.EXTENDER_URL}/metrics`))
        .split('\n')
        .filter((l) => /^sandbox_extender_(reservations|placements|events)/.test(l))
        .join('\n'),
  );
}

/**
 * The lines of the extender's log showing the API server refusing it a request, except while kube-apiserver was
 * starting (before its RBAC was loaded): the same test as lib.sh e2e_forbidden (test/e2e/forbidden.mjs, loaded
 * from the repository, which the build does not copy to dist/).
 */
export async function forbiddenLines(): Promise<string[]> {
  const { forbiddenLinesIn } = (await import(
    pathToFileURL(join(E2E_DIR, 'forbidden.mjs')).href
  )) as typeof import('../forbidden.mjs');
  return forbiddenLinesIn(
    join(STATE_DIR, 'logs', 'sandbox-extender.log'),
    join(STATE_DIR, 'logs', 'kube-apiserver.log'),
  );
}
