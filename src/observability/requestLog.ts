/**
 * Warnings about requests (a refusal at the door, a node named twice), at most one line per reason in a window
 * (server.requestLogWindowSeconds): a misconfigured or hostile client repeats the same bad request many times a
 * second, and a line per reason per window, with its address and what was wrong, finds it without flooding the log.
 * The next line of a reason says how many of that reason were left out since its previous line (`suppressed`).
 * Reasons come from a fixed set (RequestProblemReason), so what is remembered per reason is bounded.
 */
import type { Logger } from 'pino';

/** Something wrong with a request, named by a reason from a fixed set (a log line per reason, never per value). */
export interface RequestProblem {
  readonly reason: RequestProblemReason;
  readonly message: string;
}

/**
 * Why a request was refused at the door, or what was wrong with one answered anyway (`duplicate_candidates`).
 * The edge's (server/verbEdge.ts, listen.ts, app.ts) and the verbs' (handlers.ts) in one list.
 */
export type RequestProblemReason =
  | 'no_route'
  | 'method'
  | 'content_type'
  | 'content_encoding'
  | 'too_large'
  | 'too_deep'
  | 'too_many_elements'
  | 'too_many_members'
  | 'length_mismatch'
  | 'unreadable'
  | 'not_json'
  | 'shape'
  | 'invalid_http'
  | 'headers_too_large'
  | 'timeout'
  | 'duplicate_candidates';

export class RequestLog {
  private readonly last = new Map<RequestProblemReason, { atMs: number; suppressed: number }>();

  /**
   * @param windowMs a reason logged is not logged again for this long (0: every one is logged).
   * @param now the clock (ms).
   */
  constructor(
    private readonly logger: Logger,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Logs `problem` (level warn) with the client's address and `fields`, unless a problem of its reason was logged
   * within the window; then it is only counted, for the next line of that reason.
   * @returns whether a line was written.
   */
  note(problem: RequestProblem, client: string | undefined, fields: Readonly<Record<string, unknown>> = {}): boolean {
    const at = this.now();
    const last = this.last.get(problem.reason);
    if (last && at - last.atMs < this.windowMs) {
      last.suppressed++;
      return false;
    }
    const suppressed = last?.suppressed ?? 0;
    this.logger.warn(
      { reason: problem.reason, client: client ?? 'unknown', ...fields, ...(suppressed > 0 ? { suppressed } : {}) },
      problem.message,
    );
    this.last.set(problem.reason, { atMs: at, suppressed: 0 });
    return true;
  }
}
