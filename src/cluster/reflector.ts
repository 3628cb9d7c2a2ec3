/**
 * A reflector: keeps a consumer in step with one resource of the API server by list + watch, as
 * client-go's Reflector does, without keeping the objects (the consumer converts each one into a
 * compact record and drops it).
 *
 * Lifecycle of one session (repeated until stop()):
 *
 *   list (paginated, `limit` per page) ──► replace(all items) ──► watch from the list's resourceVersion
 *        ▲                                                          │ ADDED/MODIFIED/DELETED → event()
 *        │                                                          │ BOOKMARK → remember its resourceVersion
 *        │ 410 Gone (resourceVersion too old): relist at once       │ ERROR 410 / HTTP 410 ──┘
 *        │                                                          │ server closes the watch → watch again
 *        │                                                          │   from the last resourceVersion
 *        └─ any other error: the session fails and is retried with capped exponential backoff
 *           (p-retry); a session that got going resets the backoff.
 *
 * `replace` receives every object of a (re)list, so the consumer can delete what is gone: that is
 * how deletions missed while the watch was down (tombstones) release what those pods held.
 */
import pRetry from 'p-retry';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ListPage<T> {
  readonly items: readonly T[];
  readonly resourceVersion: string;
  /** Continue token of the next page; empty or undefined on the last page. */
  readonly continueToken?: string | undefined;
}

/** How the reflector talks to the API server (client-node in production, a script in tests). */
export interface ResourceSource<T> {
  list(options: { limit: number; continueToken?: string | undefined }): Promise<ListPage<T>>;
  /**
   * Starts a watch from `resourceVersion` with bookmarks. `onEvent` gets each event's type and
   * object (for ERROR, a Status). `onDone` is called once when the watch ends (null: closed by the
   * server; an error with `statusCode` 410: expired). Returns a function that aborts the watch.
   */
  watch(resourceVersion: string, onEvent: (type: string, object: unknown) => void, onDone: (err: unknown) => void): Promise<() => void>;
}

export interface ReflectorHandlers<T> {
  /** A full listing (initial or relist): make the consumer's state exactly this. */
  replace(items: readonly T[]): void;
  event(type: WatchEventType, object: T): void;
}

export interface ReflectorOptions {
  readonly pageSize: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Called when a session fails and will be retried. */
  readonly onRestart?: (err: unknown, attempt: number) => void;
  /** Called after each completed (re)list. */
  readonly onList?: (items: number, relist: boolean) => void;
}

class Gone extends Error {
  constructor() {
    super('resourceVersion expired (410 Gone)');
  }
}

function isGone(err: unknown): boolean {
  const e = err as { statusCode?: number; code?: number } | null;
  return e?.statusCode === 410 || e?.code === 410;
}

export class Reflector<T> {
  private resourceVersion: string | null = null;
  private stopped = false;
  private abortWatch: (() => void) | null = null;
  /** Ends the current watch's promise (on stop, whether or not the source reports the abort). */
  private endWatch: (() => void) | null = null;
  private readonly abort = new AbortController();
  private listed = false;
  private running: Promise<void> | null = null;

  constructor(
    readonly resource: string,
    private readonly source: ResourceSource<T>,
    private readonly handlers: ReflectorHandlers<T>,
    private readonly options: ReflectorOptions,
  ) {}

  /** True once the first complete list has been handed to `replace`. */
  get synced(): boolean {
    return this.listed;
  }

  /** Starts the list/watch loop in the background. */
  start(): void {
    this.running ??= this.loop();
  }

  /** Stops watching; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.abortWatch?.();
    this.endWatch?.();
    await this.running?.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await pRetry(() => this.session(), {
          retries: Number.POSITIVE_INFINITY,
          factor: 2,
          minTimeout: this.options.minBackoffMs,
          maxTimeout: this.options.maxBackoffMs,
          randomize: true,
          signal: this.abort.signal,
          shouldRetry: () => !this.stopped,
          onFailedAttempt: ({ error, attemptNumber }) => {
            if (!this.stopped) this.options.onRestart?.(error, attemptNumber); // an abort on stop() is no failure
          },
        });
      } catch (err) {
        if (this.stopped) return;
        this.options.onRestart?.(err, 0);
      }
    }
  }

  /** One list (if needed) and one watch; resolves when the watch ends normally or expires. */
  private async session(): Promise<void> {
    if (this.stopped) return;
    if (this.resourceVersion === null) await this.listAll();
    try {
      await this.watchOnce(this.resourceVersion!);
    } catch (err) {
      if (!(err instanceof Gone) && !isGone(err)) throw err;
      this.resourceVersion = null; // relist in the next session, at once
    }
  }

  private async listAll(): Promise<void> {
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = await this.source.list({ limit: this.options.pageSize, continueToken });
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
      continueToken = page.continueToken || undefined;
    } while (continueToken && !this.stopped);
    if (this.stopped) return;
    const relist = this.listed;
    this.handlers.replace(items);
    this.resourceVersion = resourceVersion;
    this.listed = true;
    this.options.onList?.(items.length, relist);
  }

  private watchOnce(fromVersion: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let finished = false;
      const finish = (err: unknown) => {
        if (finished) return;
        finished = true;
        this.abortWatch = null;
        this.endWatch = null;
        if (err) reject(err);
        else resolve();
      };
      const onEvent = (type: string, object: unknown) => {
        if (finished) return;
        try {
          this.handle(type, object);
        } catch (err) {
          abort?.();
          finish(err);
        }
      };
      let abort: (() => void) | undefined;
      this.endWatch = () => finish(null);
      this.source.watch(fromVersion, onEvent, (err) => finish(err ?? null)).then(
        (stop) => {
          abort = stop;
          if (finished || this.stopped) stop();
          else this.abortWatch = stop;
          if (this.stopped) finish(null);
        },
        (err) => finish(err),
      );
    });
  }

  private handle(type: string, object: unknown): void {
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
        if (isGone(object)) throw new Gone();
        throw Object.assign(new Error(`watch ${this.resource}: ${(object as { message?: string })?.message ?? 'error event'}`), { status: object });
      default:
        return;
    }
    if (version) this.resourceVersion = version;
  }
}
