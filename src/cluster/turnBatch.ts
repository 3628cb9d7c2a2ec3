/** Batching of thread messages per turn of the event loop (the API worker thread's Events and their outcomes). */
/**
 * Items pushed during one turn of the event loop, handed to `send` together at the next setImmediate
 * (after the current callback and its I/O writes). Order is kept.
 */
export class TurnBatch<T> {
  private items: T[] = [];

  constructor(private readonly send: (items: readonly T[]) => void) {}

  push(item: T): void {
    this.items.push(item);
    if (this.items.length === 1) setImmediate(this.flush);
  }

  /** Sends what is pending now (nothing if empty); the scheduled flush then finds nothing. */
  readonly flush = (): void => {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.send(items);
  };
}
