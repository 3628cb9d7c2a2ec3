/**
 * Pure helpers of the CPU figures of the process benchmarks (procWatch.ts): reading /proc/PID/stat lines, the
 * process tree below a pid, and the CPU ticks of processes seen at several samples, by category. No I/O here.
 */

/** What is read of /proc/PID/stat: pid, command name (as the kernel keeps it, 15 characters at most), parent, utime+stime. */
export interface ProcStat {
  pid: number;
  comm: string;
  ppid: number;
  ticks: number;
}

/**
 * Parses one /proc/PID/stat line (proc(5): `pid (comm) state ppid …`, utime and stime fields 14 and 15; comm may
 * contain spaces and parentheses, so it runs to the last ')'). @throws Error when the line is not one.
 */
export function parseProcStat(stat: string): ProcStat {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) throw new Error(`not a /proc/PID/stat line: ${stat.slice(0, 80)}`);
  const rest = stat.slice(close + 2).split(' ');
  const pid = Number(stat.slice(0, open).trim());
  const ppid = Number(rest[1]);
  const ticks = Number(rest[11]) + Number(rest[12]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isFinite(ticks))
    throw new Error(`not a /proc/PID/stat line: ${stat.slice(0, 80)}`);
  return { pid, comm: stat.slice(open + 1, close), ppid, ticks };
}

/** `root` and every process below it (children, their children …), from a list of every process. */
export function processTree(all: readonly ProcStat[], root: number): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const out: ProcStat[] = [];
  const queue = all.filter((p) => p.pid === root);
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(children.get(p.pid) ?? []));
  }
  return out;
}

/**
 * CPU ticks of processes observed at samples, summed by category: per pid, the ticks of its last sample minus
 * those of its first (0 for a process first seen after the first sample, which started since), so a process
 * that exits keeps what it had used at its last sample.
 */
export class TickLedger {
  private readonly byPid = new Map<number, { category: string; comm: string; first: number; last: number }>();
  private samples = 0;

  /** One sample: every process of interest with its category (a pid keeps its first category). */
  add(procs: readonly { proc: ProcStat; category: string }[]): void {
    const isFirst = this.samples === 0;
    this.samples++;
    for (const { proc, category } of procs) {
      const seen = this.byPid.get(proc.pid);
      if (seen && seen.comm === proc.comm && proc.ticks >= seen.last) seen.last = proc.ticks;
      else if (!seen)
        this.byPid.set(proc.pid, { category, comm: proc.comm, first: isFirst ? proc.ticks : 0, last: proc.ticks });
    }
  }

  /** Ticks used since the first sample, by category. */
  totals(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.byPid.values()) out[p.category] = (out[p.category] ?? 0) + (p.last - p.first);
    return out;
  }
}
