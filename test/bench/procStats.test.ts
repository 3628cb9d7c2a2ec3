import { parseProcStat, processTree, TickLedger, type ProcStat } from '../../bench/procStats.js';

// proc(5): pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime …
const stat = (pid: number, comm: string, ppid: number, utime: number, stime: number) =>
  `${pid} (${comm}) S ${ppid} 1 1 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 8 0 12345 0 0`;

describe('parseProcStat', () => {
  it('reads pid, comm, ppid and utime + stime', () => {
    expect(parseProcStat(stat(4242, 'scheduler-perf.', 17, 250, 50))).toEqual({
      pid: 4242,
      comm: 'scheduler-perf.',
      ppid: 17,
      ticks: 300,
    });
  });
  it('takes a comm with spaces and parentheses up to the last parenthesis', () => {
    expect(parseProcStat(stat(7, 'a (b) c', 1, 1, 2))).toEqual({ pid: 7, comm: 'a (b) c', ppid: 1, ticks: 3 });
  });
  it.each(['', 'cpu  1 2 3', '12 (x) S'])('refuses %j', (line) => {
    expect(() => parseProcStat(line)).toThrow('not a /proc/PID/stat line');
  });
});

describe('processTree', () => {
  const p = (pid: number, ppid: number): ProcStat => ({ pid, ppid, comm: `p${pid}`, ticks: 0 });
  const all = [p(1, 0), p(10, 1), p(11, 10), p(12, 10), p(13, 11), p(20, 1), p(21, 20)];
  it('is the root and every descendant', () => {
    expect(
      processTree(all, 10)
        .map((x) => x.pid)
        .sort((a, b) => a - b),
    ).toEqual([10, 11, 12, 13]);
  });
  it('is empty when the root is gone', () => {
    expect(processTree(all, 99)).toEqual([]);
  });
});

describe('TickLedger', () => {
  const p = (pid: number, comm: string, ticks: number): ProcStat => ({ pid, comm, ppid: 1, ticks });
  it('counts from the first sample, a later process from zero, an exited one up to its last sample', () => {
    const l = new TickLedger();
    l.add([{ proc: p(1, 'harness', 1000), category: 'harness' }]);
    l.add([
      { proc: p(1, 'harness', 1300), category: 'harness' },
      { proc: p(2, 'etcd', 40), category: 'etcd' },
      { proc: p(3, 'node', 5), category: 'extender' },
    ]);
    l.add([
      { proc: p(1, 'harness', 1500), category: 'harness' },
      { proc: p(2, 'etcd', 90), category: 'etcd' },
    ]); // 3 exited
    expect(l.totals()).toEqual({ harness: 500, etcd: 90, extender: 5 });
  });
  it('sums the processes of one category', () => {
    const l = new TickLedger();
    l.add([]);
    l.add([{ proc: p(5, 'loadgen', 10), category: 'loadgen' }]);
    l.add([{ proc: p(6, 'loadgen', 7), category: 'loadgen' }]);
    expect(l.totals()).toEqual({ loadgen: 17 });
  });
  it('ignores a reused pid (another command) and never goes backwards', () => {
    const l = new TickLedger();
    l.add([{ proc: p(8, 'node', 100), category: 'extender' }]);
    l.add([{ proc: p(8, 'node', 160), category: 'extender' }]);
    l.add([{ proc: p(8, 'bash', 3), category: 'extender' }]);
    l.add([{ proc: p(8, 'node', 150), category: 'extender' }]);
    expect(l.totals()).toEqual({ extender: 60 });
  });
});
