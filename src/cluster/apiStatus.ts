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
