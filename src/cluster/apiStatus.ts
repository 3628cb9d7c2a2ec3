/**
 * The HTTP status of a failure from the API server, whichever of its shapes it arrives in
 * (@kubernetes/client-node 1.x):
 * - `code`: an ApiException (a refused request of the generated API: list, Binding, Event, patch),
 *   and the Status object of a watch ERROR event (`{"kind": "Status", "code": 410, ...}`);
 * - `statusCode`: the error the Watch reports when the watch request itself is answered with an HTTP
 *   error status (dist/watch.js).
 * Node's own errors carry a string `code` (`ECONNREFUSED`): no status.
 */

/** The HTTP status carried by `err` (see the module header), or undefined when it carries none. */
export function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}

/**
 * A failure from the API server in one line for the log: `HTTP 403: <the Status message>` when `err` carries a
 * status and a message of the API server's (an ApiWriteError: `POST /api/...: HTTP 403: pods "p" is forbidden: ...`;
 * a client-node ApiException: its `body`'s Status message), `HTTP 403` when only the status, else `err`'s message.
 */
export function describeApiError(err: unknown): string {
  const status = statusOf(err);
  if (status === undefined) return (err as Error | null)?.message ?? String(err);
  const e = err as { message?: unknown; body?: unknown };
  let detail: string | undefined;
  if (typeof e.message === 'string' && e.message.includes(`HTTP ${status}: `))
    detail = e.message.slice(e.message.indexOf(`HTTP ${status}: `) + `HTTP ${status}: `.length);
  else if (typeof e.body === 'string') {
    try {
      const message = (JSON.parse(e.body) as { message?: unknown }).message;
      if (typeof message === 'string') detail = message;
    } catch {
      // a body that is not a Status object: the status alone
    }
  }
  return detail ? `HTTP ${status}: ${detail.slice(0, 300)}` : `HTTP ${status}`;
}
