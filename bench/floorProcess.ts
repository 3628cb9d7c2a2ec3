/**
 * Starts and stops the floor extender (bench/floorExtender.ts, compiled to dist/bench/floorExtender.js: `npm run
 * build` first) as a process of its own, for the benches that run it in the extender's place: the cluster scenario
 * `--floor` and the scheduler-perf scenario's `floor` variant.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, waitUntil } from '../test/e2e/kit/controlPlane.js';

/** The compiled floor extender of this repository. */
export const FLOOR_EXTENDER_SCRIPT = join(REPO_ROOT, 'dist', 'bench', 'floorExtender.js');

/** The longest wait for the floor's /readyz (ms). */
const READY_TIMEOUT_MS = 30_000;

/** The longest wait for one /readyz answer (ms): a listener that never answers must not hold the check. */
const PROBE_TIMEOUT_MS = 2_000;

/** A running floor extender. */
export interface FloorExtender {
  /** Its process id (a process group of its own). */
  readonly pid: number;
  /** The URL it listens on, as given. */
  readonly url: string;
  /** Ends it (SIGTERM) and resolves once it has exited; a no-op when it has already. */
  stop(): Promise<void>;
}

/**
 * Starts `node dist/bench/floorExtender.js --host HOST --port PORT` with the host and port of `url` (e.g.
 * "http://127.0.0.1:8888") and waits until its GET /readyz answers 200.
 * @param options.stderr where its log goes: the bench's own stderr ('inherit', the default), nowhere ('ignore')
 *   or an open file descriptor (the caller may close it once this resolves).
 * @param options.script the compiled floor extender (default FLOOR_EXTENDER_SCRIPT).
 * @throws Error when it exits before it is ready or does not answer /readyz within 30 s; it is stopped then.
 */
export async function startFloorExtender(
  url: string,
  options: { stderr?: 'inherit' | 'ignore' | number; script?: string } = {},
): Promise<FloorExtender> {
  const { hostname, port } = new URL(url);
  const script = options.script ?? FLOOR_EXTENDER_SCRIPT;
  const child = spawn(process.execPath, [script, '--host', hostname, '--port', port], {
    stdio: ['ignore', 'ignore', options.stderr ?? 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((ok) => {
    child.once('exit', () => ok());
    child.once('error', () => ok());
  });
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    await waitUntil(
      `the floor extender to answer ${url}/readyz`,
      READY_TIMEOUT_MS,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined)
          throw new Error(
            `the floor extender (${script}) ended before it was ready (exit code ${child.exitCode}, signal ${child.signalCode})`,
          );
        return (
          (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) }).catch(() => null))?.ok ===
          true
        );
      },
      100,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: child.pid!, url, stop };
}
