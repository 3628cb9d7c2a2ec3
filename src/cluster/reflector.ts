/**
 * A reflector: keeps a consumer in step with one resource of the API server by list + watch, as client-go's
 * Reflector does (Kubernetes v1.36 staging/src/k8s.io/client-go/tools/cache/reflector.go: ListAndWatch, watch,
 * handleAnyWatch), without keeping the objects: each list page and watch event goes to the consumer, which
 * keeps a compact record. A 410 Gone in either form relists; any other failure is retried with capped backoff
 * from the last resourceVersion. The session, its failures and its health: docs/cluster-mode.md#one-listwatch-session.
 */ import pRetry from 'p-retry';
import { statusOf } from './apiStatus.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ListPage<T> {
  readonly items: readonly T[];
  readonly resourceVersion: string;
  /** Continue token of the next page; empty or undefined on the last page. */
  readonly continueToken?: string | undefined;
}

/** How the reflector talks to the API server (client-node in production, a script in tests). */
export interface ResourceSource<T> {
  /** One page of a list. @throws an error with the HTTP status in `code` (client-node's ApiException) when refused. */
  list(options: { limit: number; continueToken?: string | undefined }): Promise<ListPage<T>>;
  /**
   * Starts a watch from `resourceVersion` with bookmarks and the server-side `timeoutSeconds`, with
   * the semantics of client-node 1.4's Watch (dist/watch.js):
   * - `onEvent(type, object)` for each line of the stream; for ERROR the object is a Status (code
   *   410: the resourceVersion expired; the watch cache answers a watch from a resourceVersion older
   *   than its window, e.g. after the API server restarted, with HTTP 200 and such an event: Kubernetes
   *   v1.36 staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go: Watch, newErrWatcher, and
   *   watch_cache.go: getAllEventsSinceLocked). What `onEvent` throws is swallowed.
   * - `onDone(err)` exactly once: null when the server ends the stream; an error with `statusCode`
   *   when the request is answered with an HTTP error status (410: expired), called before the
   *   returned promise resolves; the connection error when the request fails or the stream breaks;
   *   an AbortError ("The user aborted a request."), synchronously inside the abort function, when
   *   the caller aborts.
   * Resolves with a function that aborts the watch (harmless once it has ended).
   */
  watch(
    options: { resourceVersion: string; timeoutSeconds: number },
    onEvent: (type: string, object: unknown) => void,
    onDone: (err: unknown) => void,
  ): Promise<() => void>;
}

/**
 * Where the pages of one listing go, as each arrives: the consumer converts them to its own compact form at once,
 * so a list of 150,000 pods never holds 150,000 API objects (about 10 KB each in the heap) while its later pages
 * are fetched. A listing that fails or is stopped half-way is dropped without `complete`.
 */
export interface ListingSink<T> {
  add(items: readonly T[]): void;
  /** Every page added: make the consumer's state exactly this listing, at `resourceVersion`. */
  complete(resourceVersion: string): void;
}

export interface ReflectorHandlers<T> {
  /** A full listing (initial or relist) begins; its pages go to the sink returned. */
  beginListing(): ListingSink<T>;
  event(type: WatchEventType, object: T): void;
}

export interface ReflectorOptions {
  readonly pageSize: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Server-side timeout of each watch (integer seconds); the reflector then watches again. Default 300. */
  readonly watchTimeoutSeconds?: number;
  /**
   * A watch the server has not ended this long after it opened is presumed dead (a half-open
   * connection) and aborted as a failure. Default: watchTimeoutSeconds + 30 s.
   */
  readonly watchDeadlineMs?: number;
  /** The clock of the health figures (ms). Default Date.now. */
  readonly now?: () => number;
  /** Called when a session fails and will be retried. */
  readonly onRestart?: (err: unknown, attempt: number) => void;
  /** Called after each completed (re)list. */
  readonly onList?: (items: number, relist: boolean) => void;
  /** Called when the watch's resourceVersion expired (410 Gone) and a relist follows; `how` says in which form it came. */
  readonly onExpired?: (how: string) => void;
}

/** What the reflector knows of its own freshness, for /readyz and the staleness gauges. */
export interface WatchHealth {
  readonly resource: string;
  /** The first complete list has been applied. */
  readonly synced: boolean;
  /** A watch is open now. */
  readonly watching: boolean;
  /** ms since the watch last delivered an event or bookmark, or a list completed (since start() before any). */
  readonly lastDeliveryAgeMs: number;
  /** ms the session has been failing to list or watch; 0 when it is not broken. */
  readonly brokenMs: number;
  /** The last failure while broken (null when not). */
  readonly lastError: string | null;
}

/** A watch open this long without failing proves the session healthy again (after a failure). */
export const HEALTHY_WATCH_MS = 5_000;
/**
 * A watch the server ends within this time with nothing delivered is a failure, not a normal end
 * (Kubernetes v1.36 staging/src/k8s.io/client-go/tools/cache/reflector.go: handleAnyWatch, "very short watch").
 */
const VERY_SHORT_WATCH_MS = 1_000;
const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
const WATCH_DEADLINE_GRACE_MS = 30_000;

/** Why one watch ended. */
type WatchEnd =
  | { readonly kind: 'closed'; readonly delivered: number; readonly openMs: number }
  | { readonly kind: 'expired'; readonly how: string; readonly delivered: number }
  | { readonly kind: 'failed'; readonly error: unknown }
  | { readonly kind: 'stopped' };

/**
 * A failure as one line for logs and /readyz: `HTTP 403: <the Status message>` for a refused request
 * (client-node's ApiException carries the code and the Status body; its own message spans lines),
 * else the error's message.
 */
export function describeFailure(err: unknown): string {
  const code = statusOf(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code === undefined) return message;
  let detail = message && !message.startsWith('HTTP-Code') ? message : '';
  const body = (err as { body?: unknown }).body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: unknown } | null;
    if (typeof status?.message === 'string' && status.message) detail = status.message;
  } catch {
    // a body that is not a Status: keep what the error says
  }
  return `HTTP ${code}${detail ? `: ${detail}` : ''}`;
}

/** An ERROR event's Status as text: "ERROR event with a Status of code 410 (Expired) in the stream: too old resource version". */
function describeStatus(object: unknown, where = ''): string {
  const s = object as { code?: unknown; reason?: unknown; message?: unknown } | null;
  const reason = typeof s?.reason === 'string' && s.reason ? ` (${s.reason})` : '';
  return `ERROR event with a Status of code ${String(s?.code ?? '?')}${reason}${where}${typeof s?.message === 'string' ? `: ${s.message}` : ''}`;
}

/** p-retry gives up on a TypeError (a programming error) at once; the loop must keep its backoff whatever fails. */
function retryable(err: unknown): Error {
  if (err instanceof TypeError || !(err instanceof Error))
    return Object.assign(new Error(describeFailure(err)), { cause: err });
  return err;
}

export class Reflector<T> {
  private resourceVersion: string | null = null;
  private stopped = false;
  private readonly abort = new AbortController();
  private listed = false;
  private running: Promise<void> | null = null;
  /** Aborts the open watch (as stopped). */
  private stopWatch: (() => void) | null = null;
  private readonly now: () => number;
  private startedAtMs: number | null = null;
  private lastDeliveryMs: number | null = null;
  private brokenSinceMs: number | null = null;
  private lastError: string | null = null;
  /** When the current watch opened (null: none open). */
  private openSinceMs: number | null = null;
  /** Consecutive watches that expired right after the list they started from, with nothing delivered. */
  private expiredAfterList = 0;

  constructor(
    readonly resource: string,
    private readonly source: ResourceSource<T>,
    private readonly handlers: ReflectorHandlers<T>,
    private readonly options: ReflectorOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** True once the first complete list has been handed to `replace`. */
  get synced(): boolean {
    return this.listed;
  }

  /** Starts the list/watch loop in the background. */
  start(): void {
    this.startedAtMs ??= this.now();
    this.running ??= this.loop();
  }

  /** Stops watching; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.stopWatch?.();
    await this.running?.catch(() => undefined);
  }

  /** The reflector's freshness now (see WatchHealth). */
  health(): WatchHealth {
    const now = this.now();
    const healthy = this.brokenSinceMs === null || this.openedLongEnough(now);
    return {
      resource: this.resource,
      synced: this.listed,
      watching: this.openSinceMs !== null,
      lastDeliveryAgeMs: Math.max(0, now - (this.lastDeliveryMs ?? this.startedAtMs ?? now)),
      brokenMs: healthy ? 0 : Math.max(0, now - this.brokenSinceMs!),
      lastError: healthy ? null : this.lastError,
    };
  }

  private openedLongEnough(now: number): boolean {
    return this.openSinceMs !== null && now - this.openSinceMs >= HEALTHY_WATCH_MS;
  }

  private delivered(): void {
    this.lastDeliveryMs = this.now();
    this.brokenSinceMs = null;
    this.lastError = null;
  }

  private failed(err: unknown): void {
    this.brokenSinceMs ??= this.now();
    this.lastError = describeFailure(err);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await pRetry(() => this.session().catch((err: unknown) => Promise.reject(retryable(err))), {
          retries: Number.POSITIVE_INFINITY,
          factor: 2,
          minTimeout: this.options.minBackoffMs,
          maxTimeout: this.options.maxBackoffMs,
          randomize: true,
          signal: this.abort.signal,
          shouldRetry: () => !this.stopped,
          onFailedAttempt: ({ error, attemptNumber }) => {
            if (this.stopped) return; // an abort on stop() is no failure
            this.failed(error);
            this.options.onRestart?.(error, attemptNumber);
          },
        });
      } catch (err) {
        if (this.stopped) return;
        this.failed(err);
        this.options.onRestart?.(err, 0);
      }
    }
  }

  /** One list (if needed) and one watch; resolves when the watch ends normally or expires, throws on a failure. */
  private async session(): Promise<void> {
    if (this.stopped) return;
    const fresh = this.resourceVersion === null;
    if (fresh) await this.listAll();
    if (this.stopped) return;
    const end = await this.watchOnce(this.resourceVersion!);
    switch (end.kind) {
      case 'stopped':
        return;
      case 'closed':
        if (end.delivered === 0 && end.openMs < VERY_SHORT_WATCH_MS)
          throw new Error(
            `watch ${this.resource}: the API server ended the watch within 1 s without an event (a very short watch)`,
          );
        return; // watch again at once from the last resourceVersion
      case 'expired': {
        this.resourceVersion = null; // relist
        this.options.onExpired?.(end.how);
        this.expiredAfterList = fresh && end.delivered === 0 ? this.expiredAfterList + 1 : 0;
        // The list's own resourceVersion refused twice in a row: relist after a backoff, not in a tight loop.
        if (this.expiredAfterList >= 2)
          throw new Error(
            `watch ${this.resource}: 410 Gone again for the resourceVersion of a list just made (${end.how})`,
          );
        return;
      }
      case 'failed':
        throw end.error;
    }
  }

  private async listAll(): Promise<void> {
    const sink = this.handlers.beginListing();
    let count = 0;
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.unlessStopped(this.source.list({ limit: this.options.pageSize, continueToken }));
      sink.add(page.items);
      count += page.items.length;
      resourceVersion = page.resourceVersion;
      continueToken = page.continueToken || undefined;
    } while (continueToken && !this.stopped);
    if (this.stopped) return;
    const relist = this.listed;
    sink.complete(resourceVersion);
    this.resourceVersion = resourceVersion;
    this.listed = true;
    this.delivered();
    this.options.onList?.(count, relist);
  }

  /** `work`, or a rejection as soon as stop() is called (a list in flight must not hold stop() up). */
  private unlessStopped<R>(work: Promise<R>): Promise<R> {
    const signal = this.abort.signal;
    if (signal.aborted) return Promise.reject(new Error('stopped'));
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => reject(new Error('stopped'));
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** One watch from `fromVersion`; resolves (never rejects) with why it ended. */
  private watchOnce(fromVersion: string): Promise<WatchEnd> {
    const timeoutSeconds = this.options.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    const deadlineMs = this.options.watchDeadlineMs ?? timeoutSeconds * 1000 + WATCH_DEADLINE_GRACE_MS;
    return new Promise<WatchEnd>((resolve) => {
      let ended = false;
      let delivered = 0;
      let abortRequest: (() => void) | null = null;
      let deadline: ReturnType<typeof setTimeout> | undefined;
      const end = (result: WatchEnd) => {
        if (ended) return;
        ended = true;
        clearTimeout(deadline);
        const now = this.now();
        // A watch that stayed open long enough was a healthy session, whatever ends it now.
        if (this.openedLongEnough(now)) {
          this.brokenSinceMs = null;
          this.lastError = null;
        }
        this.openSinceMs = null;
        this.stopWatch = null;
        resolve(result);
      };
      // The outcome is settled first: the source reports this abort to onDone (an AbortError, from
      // inside abortRequest()), and that report must not replace the real reason.
      const abortFor = (result: WatchEnd) => {
        end(result);
        abortRequest?.();
      };
      const openedAt = this.now();
      const onDone = (err: unknown) => {
        if (ended) return;
        if (err === null || err === undefined) end({ kind: 'closed', delivered, openMs: this.now() - openedAt });
        else if (statusOf(err) === 410) end({ kind: 'expired', how: 'HTTP 410 on the watch request', delivered });
        else end({ kind: 'failed', error: err });
      };
      const onEvent = (type: string, object: unknown) => {
        if (ended) return;
        try {
          const stop = this.handle(type, object);
          if (stop) abortFor(stop.kind === 'expired' ? { ...stop, delivered } : stop);
          else delivered++;
        } catch (err) {
          abortFor({ kind: 'failed', error: err });
        }
      };
      this.stopWatch = () => abortFor({ kind: 'stopped' });
      this.source.watch({ resourceVersion: fromVersion, timeoutSeconds }, onEvent, onDone).then(
        (abort) => {
          abortRequest = abort;
          if (ended) {
            abort(); // ended before the source handed over its abort (refused, or stop()): release the request
            return;
          }
          this.openSinceMs = this.now();
          deadline = setTimeout(() => {
            const seconds = Number((deadlineMs / 1000).toFixed(3));
            abortFor({
              kind: 'failed',
              error: new Error(
                `watch ${this.resource}: not ended by the API server ${seconds} s after it opened (timeoutSeconds ${timeoutSeconds}): the connection is presumed dead`,
              ),
            });
          }, deadlineMs);
          deadline.unref?.();
        },
        (err: unknown) => end({ kind: 'failed', error: err }),
      );
    });
  }

  /** Applies one watch event; returns how the watch ends when the event ends it. */
  private handle(type: string, object: unknown): WatchEnd | null {
    const version = (object as { metadata?: { resourceVersion?: string } } | null)?.metadata?.resourceVersion;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED':
        this.handlers.event(type, object as T);
        break;
      case 'BOOKMARK':
        break;
      case 'ERROR':
        if (statusOf(object) === 410)
          return { kind: 'expired', how: describeStatus(object, ' in the stream'), delivered: 0 };
        return {
          kind: 'failed',
          error: Object.assign(new Error(`watch ${this.resource}: ${describeStatus(object)}`), { status: object }),
        };
      default:
        return null;
    }
    if (version) this.resourceVersion = version;
    this.delivered();
    return null;
  }
}
