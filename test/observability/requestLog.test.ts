/** What is wrong with requests, logged at most once per reason a window (src/observability/requestLog.ts). */
import { pino } from 'pino';
import { RequestLog } from '../../src/observability/requestLog.js';

function capture(windowMs: number) {
  const lines: Record<string, unknown>[] = [];
  const clock = { now: 1_000 };
  const log = new RequestLog(
    pino({ level: 'warn' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }),
    windowMs,
    () => clock.now,
  );
  return { lines, clock, log };
}

const DUPLICATE = { reason: 'duplicate_candidates', message: 'NodeNames gave 1 node more than once' } as const;

describe('RequestLog', () => {
  it('logs the first of a reason at once (warn, with the client), then none of it until the window has passed; the next line counts those left out', () => {
    const { lines, clock, log } = capture(60_000);
    expect(log.note(DUPLICATE, '10.0.0.7', { verb: 'filter' })).toBe(true);
    clock.now += 59_999;
    expect(log.note(DUPLICATE, '10.0.0.8')).toBe(false);
    expect(log.note(DUPLICATE, undefined)).toBe(false);
    clock.now += 1;
    expect(log.note(DUPLICATE, '10.0.0.9')).toBe(true);
    expect(
      lines.map(({ level, reason, client, verb, suppressed, msg }) => ({
        level,
        reason,
        client,
        verb,
        suppressed,
        msg,
      })),
    ).toEqual([
      {
        level: 40,
        reason: 'duplicate_candidates',
        client: '10.0.0.7',
        verb: 'filter',
        suppressed: undefined,
        msg: 'NodeNames gave 1 node more than once',
      },
      {
        level: 40,
        reason: 'duplicate_candidates',
        client: '10.0.0.9',
        verb: undefined,
        suppressed: 2,
        msg: 'NodeNames gave 1 node more than once',
      },
    ]);
  });

  it('each reason has its own window', () => {
    const { lines, log } = capture(60_000);
    log.note(DUPLICATE, 'a');
    log.note({ reason: 'no_route', message: 'no route for GET /x' }, 'a');
    log.note(DUPLICATE, 'a');
    log.note({ reason: 'not_json', message: 'request body is not valid JSON' }, 'a');
    expect(lines.map((l) => l.reason)).toEqual(['duplicate_candidates', 'no_route', 'not_json']);
  });

  it('a window of 0 logs every one', () => {
    const { lines, log } = capture(0);
    for (let i = 0; i < 3; i++) log.note(DUPLICATE, 'c');
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => !('suppressed' in l))).toBe(true);
  });
});
