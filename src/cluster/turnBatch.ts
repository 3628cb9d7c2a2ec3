/** Batching of the messages between the main thread and the API worker thread (workerProtocol.ts). */

/**
 * Items pushed during one turn of the event loop — or, with `delayMs`, during that many ms — handed to
 * `send` together: at the next setImmediate (after the current callback and its I/O writes), or when the
 * delay has passed. Order is kept. A delay suits what nobody waits for: an Event is rate-limited on the
 * worker anyway (events.perSecond), so collecting a burst's Events for 50 ms costs nothing and saves a
 * message — a structured clone on both threads — per decision.
 */
export class TurnBatch<T> {
  private items: T[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly send: (items: readonly T[]) => void,
    private readonly delayMs = 0,
  ) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length !== 1) return;
    if (this.delayMs <= 0) setImmediate(this.flush);
    else {
      this.timer = setTimeout(this.flush, this.delayMs);
      this.timer.unref(); // a pending batch never keeps the process alive: stop() flushes it
    }
  }

  /** Sends what is pending now (nothing if empty); the scheduled flush then finds nothing. */
  readonly flush = (): void => {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.send(items);
  };
}
