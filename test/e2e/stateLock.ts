/**
 * One run at a time per state folder, for the test files that start a cluster of their own (a second run, e.g. CI
 * and a developer in one checkout, would stop the first one's cluster). The lock is a folder `<state>.lock` holding
 * "pid starttime" of the process that holds it; a lock whose process is gone is stale and taken over.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Start time of a process (field 22 of /proc/PID/stat), to tell it from a later process with the same pid. */
function procStart(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock of STATE for this process. @returns true. @throws Error naming WHO's other run and the variable
 * (ENV_VAR) that moves the state folder, when a live process holds it.
 */
export function takeStateLock(state: string, who: string, envVar: string): true {
  const lock = `${state}.lock`;
  mkdirSync(dirname(state), { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'owner'), `${process.pid} ${procStart(process.pid)}\n`);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const [pid, start] = (existsSync(join(lock, 'owner')) ? readFileSync(join(lock, 'owner'), 'utf8') : '')
        .trim()
        .split(' ');
      if (pid && start && procStart(Number(pid)) === start) {
        throw new Error(
          `another run of ${who} (pid ${pid}) is using ${state}; wait for it, or set ${envVar} to another folder`,
        );
      }
      rmSync(lock, { recursive: true, force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not take the lock ${lock}`);
}

export function releaseStateLock(state: string): void {
  rmSync(`${state}.lock`, { recursive: true, force: true });
}
