/**
 * The CPU a benchmark's processes take and what the rest of the machine takes meanwhile (Linux /proc), so a
 * figure can be published with the machine's other load next to it: every `everyMs`, /proc/stat (the machine)
 * and the /proc/PID/stat of every process, of which `select` keeps the ones of interest, each with a category.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseProcStat, TickLedger, type ProcStat } from './procStats.js';

/** Cores (1.00 = one core busy the whole time) over the watched window. */
export interface CpuReport {
  seconds: number;
  /** By category of `select`. */
  cores: Record<string, number>;
  /** The whole machine (busy = all but idle and iowait). */
  machineCores: number;
  /** The machine less every selected process: other jobs on the machine. */
  otherCores: number;
  cpus: number;
  /** 1-minute load average when the watch started and when it stopped. */
  loadavg: [number, number];
}

export type Select = (all: readonly ProcStat[]) => { proc: ProcStat; category: string }[];

/** The kernel's clock ticks per second (getconf CLK_TCK), the unit of /proc/PID/stat's utime and stime; 100 if unknown. */
export function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/**
 * Busy ticks of the whole machine from the "cpu" line of /proc/stat (proc(5): user nice system idle iowait irq
 * softirq steal guest guest_nice): user + nice + system + irq + softirq. Not idle or iowait; not steal (time the
 * hypervisor gave another machine); not guest, which user already includes.
 */
function machineTicks(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [0, 1, 2, 5, 6].reduce((sum, i) => sum + (f[i] ?? 0), 0);
}

/** Every process's /proc/PID/stat that could be read (processes exit while the folder is read). */
export function readAllProcs(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      out.push(parseProcStat(readFileSync(`/proc/${entry}/stat`, 'utf8')));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export class ProcWatch {
  private readonly ledger = new TickLedger();
  private timer: NodeJS.Timeout | undefined;
  private startMs = 0;
  private startMachine = 0;
  private startLoad = 0;
  private readonly clkTck = clockTicksPerSecond();

  constructor(
    private readonly select: Select,
    private readonly everyMs = 500,
  ) {}

  start(): void {
    this.startMs = performance.now();
    this.startMachine = machineTicks();
    this.startLoad = loadavg()[0]!;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
  }

  sample(): void {
    this.ledger.add(this.select(readAllProcs()));
  }

  /** Takes a last sample and stops. */
  stop(): CpuReport {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const seconds = (performance.now() - this.startMs) / 1000;
    const perSecond = (ticks: number) => (seconds > 0 ? ticks / this.clkTck / seconds : 0);
    const cores: Record<string, number> = {};
    for (const [k, v] of Object.entries(this.ledger.totals())) cores[k] = perSecond(v);
    const machineCores = perSecond(machineTicks() - this.startMachine);
    const ours = Object.values(cores).reduce((a, b) => a + b, 0);
    return {
      seconds,
      cores,
      machineCores,
      otherCores: Math.max(0, machineCores - ours),
      cpus: cpus().length,
      loadavg: [this.startLoad, loadavg()[0]!],
    };
  }
}
