/**
 * The API side of cluster mode on a worker thread of its own (apiWorker.ts), so that nothing of it
 * delays a verb's reply: decoding list and watch responses into records, creating Events and Bindings
 * all run there, and the main thread — the one answering kube-scheduler — only applies ready-made
 * records to the scheduler cache (microseconds each) and forwards Events and Bindings.
 *
 * Messages (structured clones; records and listings are plain data):
 *   main → worker  bind {id, request}, events [the Events of EVENT_BATCH_MS: turnBatch.ts],
 *                  requeue {id, value} (the write of a Requeuer round: requeuer.ts), stop
 *   worker → main  updates [batch of CacheUpdates calls, in order], observer (started / restarted /
 *                  listed), health (each watch's freshness, with the time it was read), bound {id,
 *                  outcome}, requeued {id, status, error}, eventOutcomes [batched], started, failed (at start-up), stopped
 * The main thread ages the last health it got by the time since: a worker that stops reporting looks
 * like a watch that stopped delivering, and the cache goes stale (not ready) after maxBrokenSeconds.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { BindOutcome, BindRequest } from '../core/binding.js';
import type { LocalityRecordOptions } from '../core/locality.js';
import type { CacheUpdates } from '../core/sync.js';
import type { Metrics } from '../observability/metrics.js';
import type { EventOutcome, PodEvent } from './events.js';
import { NOT_SYNCED, describeHealth, metricsObserver, staleness, type SyncObserver } from './liveSync.js';
import type { WatchHealth } from './reflector.js';
import { TurnBatch } from './turnBatch.js';

/** How long the Events of a burst are collected before they go to the worker in one message (ms). */
export const EVENT_BATCH_MS = 50;

/** One CacheUpdates call: its method name and argument. */
export type Update = { [K in keyof CacheUpdates]: readonly [K, Parameters<CacheUpdates[K]>[0]] }[keyof CacheUpdates];

export type ToWorker =
  | { readonly t: 'bind'; readonly id: number; readonly request: BindRequest }
  /** Events recorded since the last message (ApiThread.recordEvent batches them for EVENT_BATCH_MS). */
  | { readonly t: 'events'; readonly events: readonly PodEvent[] }
  | { readonly t: 'requeue'; readonly id: number; readonly value: string }
  | { readonly t: 'stop' };

export type FromWorker =
  | { readonly t: 'updates'; readonly batch: readonly Update[] }
  | { readonly t: 'observer'; readonly kind: keyof SyncObserver; readonly resource: string; readonly relist?: boolean }
  | { readonly t: 'health'; readonly atMs: number; readonly health: readonly WatchHealth[] }
  | { readonly t: 'bound'; readonly id: number; readonly outcome: BindOutcome }
  /** error null: written; otherwise the failure and its HTTP status, if any. */
  | { readonly t: 'requeued'; readonly id: number; readonly status: number | null; readonly error: string | null }
  /** The outcomes of Events, batched on the worker. */
  | { readonly t: 'eventOutcomes'; readonly outcomes: readonly EventOutcome[] }
  | { readonly t: 'started'; readonly server: string }
  | { readonly t: 'failed'; readonly error: string }
  | { readonly t: 'stopped' };

/** What the worker needs to start (workerData). */
export interface ApiWorkerData {
  /** The kubeconfig the main thread loaded (KubeConfig.exportConfig()), so both see the same cluster. */
  readonly kubeconfig: string;
  readonly dims: readonly string[];
  readonly pausedLabel: string;
  /** Locality on: how records carry template keys and node images (PodRecordOptions.locality). */
  readonly locality?: LocalityRecordOptions | undefined;
  readonly watch: { readonly pageSize: number; readonly minBackoffMs: number; readonly maxBackoffMs: number; readonly maxBrokenSeconds: number };
  /** Event recording; null: no Events. */
  readonly events: { readonly perSecond: number; readonly maxQueued: number; readonly dedupeWindowSeconds: number } | null;
  /** The requeue object the worker writes for the main thread's Requeuer; null: no requeue. */
  readonly requeue: { readonly namespace: string; readonly name: string } | null;
  readonly logLevel: string;
}

/** A requeue write that failed on the worker; `code` is its HTTP status (read by statusOf), if it had one. */
export class RequeueWriteError extends Error {
  override readonly name = 'RequeueWriteError';
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

/** Applies one message's updates to `updates`, in order. */
export function applyUpdates(updates: CacheUpdates, batch: readonly Update[]): void {
  for (const [method, argument] of batch) (updates[method] as (a: typeof argument) => void)(argument);
}

/**
 * `batch` with its `podsAppliedAt` entries reduced to the last, moved to the end: the main thread then
 * records one resourceVersion per batch, which covers every pod change before it. Returns `batch` itself
 * when it holds at most one, already last.
 */
export function onlyLastPodsVersion(batch: readonly Update[]): readonly Update[] {
  let last = -1;
  let count = 0;
  for (let i = 0; i < batch.length; i++) {
    if (batch[i]![0] === 'podsAppliedAt') {
      last = i;
      count++;
    }
  }
  if (count === 0 || (count === 1 && last === batch.length - 1)) return batch;
  return [...batch.filter((u) => u[0] !== 'podsAppliedAt'), batch[last]!];
}

/** `health` as it is at `nowMs`, read at `atMs`: every age and failing time grown by the time since. */
export function agedHealth(health: readonly WatchHealth[], atMs: number, nowMs: number): WatchHealth[] {
  const since = Math.max(0, nowMs - atMs);
  return health.map((h) => ({ ...h, lastDeliveryAgeMs: h.lastDeliveryAgeMs + since, brokenMs: h.brokenMs > 0 ? h.brokenMs + since : 0 }));
}

export class ApiThread {
  private readonly worker: Worker;
  private readonly observer: SyncObserver;
  private readonly pendingBinds = new Map<number, (outcome: BindOutcome) => void>();
  private nextBindId = 0;
  private readonly pendingRequeues = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  /** Events go to the worker in batches of up to EVENT_BATCH_MS (they are rate-limited there anyway). */
  private readonly events = new TurnBatch<PodEvent>((events) => this.post({ t: 'events', events }), EVENT_BATCH_MS);
  private nextRequeueId = 0;
  private health: { atMs: number; health: readonly WatchHealth[] } | null = null;
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private resolveStopped: (() => void) | null = null;
  private startedOrFailed: { resolve: (server: string) => void; reject: (err: Error) => void } | null = null;

  /**
   * Starts the worker (src/cluster/apiWorker.js, next to this module).
   * @param updates the scheduler cache's informer side, where the worker's batches of records go.
   * @param onFatal called if the worker dies while it should be running (the cache would freeze).
   */
  constructor(
    private readonly updates: CacheUpdates,
    data: ApiWorkerData,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    private readonly maxBrokenSeconds: number,
    private readonly onFatal: (err: Error) => void,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.observer = metricsObserver(metrics);
    this.worker = new Worker(new URL('./apiWorker.js', import.meta.url), { workerData: data });
    this.worker.on('message', (message: FromWorker) => this.receive(message));
    this.worker.on('error', (err) => this.died(err));
    this.worker.on('exit', (code) => this.died(new Error(`the API worker thread exited (code ${code})`)));
    metrics.watchHealth = () => this.watchHealth();
  }

  /** Resolves with the API server's URL once the worker has its client; rejects when it could not start. */
  started(): Promise<string> {
    return new Promise((resolve, reject) => (this.startedOrFailed = { resolve, reject }));
  }

  private receive(message: FromWorker): void {
    switch (message.t) {
      case 'updates':
        applyUpdates(this.updates, message.batch);
        break;
      case 'observer':
        if (message.kind === 'listed') this.observer.listed(message.resource, message.relist ?? false);
        else this.observer[message.kind](message.resource);
        break;
      case 'health':
        this.health = { atMs: message.atMs, health: message.health };
        break;
      case 'bound':
        this.pendingBinds.get(message.id)?.(message.outcome);
        this.pendingBinds.delete(message.id);
        break;
      case 'requeued': {
        const pending = this.pendingRequeues.get(message.id);
        this.pendingRequeues.delete(message.id);
        if (message.error === null) pending?.resolve();
        else pending?.reject(new RequeueWriteError(message.error, message.status ?? undefined));
        break;
      }
      case 'eventOutcomes':
        for (const outcome of message.outcomes) this.metrics.events.inc({ outcome });
        break;
      case 'started':
        this.startedOrFailed?.resolve(message.server);
        break;
      case 'failed':
        this.startedOrFailed?.reject(new Error(message.error));
        break;
      case 'stopped':
        this.resolveStopped?.();
        break;
    }
  }

  private died(err: Error): void {
    if (this.stopping) {
      this.resolveStopped?.();
      return;
    }
    this.stopping = true;
    for (const settle of this.pendingBinds.values()) settle({ ok: false, error: 'the API worker thread stopped' });
    this.pendingBinds.clear();
    for (const pending of this.pendingRequeues.values()) pending.reject(new RequeueWriteError('the API worker thread stopped', undefined));
    this.pendingRequeues.clear();
    this.startedOrFailed?.reject(err);
    this.logger.fatal({ err: err.message }, 'the API worker thread died; the scheduler cache would no longer follow the cluster');
    this.onFatal(err);
  }

  /** Each watch's freshness now (aged since the worker last reported it); empty before its first report. */
  watchHealth(): WatchHealth[] {
    return this.health ? agedHealth(this.health.health, this.health.atMs, this.now()) : [];
  }

  /** As LiveSync.notReady, from the worker's reports. */
  notReady(): string | null {
    const health = this.watchHealth();
    return health.length === 0 ? NOT_SYNCED : staleness(health, this.maxBrokenSeconds);
  }

  /** As LiveSync.describe. */
  describe(): string {
    return describeHealth(this.watchHealth());
  }

  /** Creates the Binding on the worker. Never rejects. */
  bind(request: BindRequest): Promise<BindOutcome> {
    if (this.stopping) return Promise.resolve({ ok: false, error: 'the extender is stopping' });
    const id = this.nextBindId++;
    return new Promise((resolve) => {
      this.pendingBinds.set(id, resolve);
      this.post({ t: 'bind', id, request });
    });
  }

  /** The write of a Requeuer round, on the worker (requeuer.ts RequeueWrite). Rejects with a RequeueWriteError. */
  requeue(value: string): Promise<void> {
    if (this.stopping) return Promise.reject(new RequeueWriteError('the extender is stopping', undefined));
    const id = this.nextRequeueId++;
    return new Promise((resolve, reject) => {
      this.pendingRequeues.set(id, { resolve, reject });
      this.post({ t: 'requeue', id, value });
    });
  }

  /**
   * Queues an Event on the worker (rate-limited and deduplicated there). Events are posted in one
   * message per EVENT_BATCH_MS, after the verb that made them has written its reply: a decision's reply
   * never waits for the message to the worker, and a burst posts one message for many decisions.
   */
  recordEvent(event: PodEvent): void {
    if (!this.stopping) this.events.push(event);
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  /** Stops the watches and the worker; resolves when it has ended. */
  stop(): Promise<void> {
    if (this.stopped) return this.stopped;
    this.events.flush(); // Events recorded before the stop reach the worker ahead of it, as each did unbatched
    this.stopping = true;
    this.stopped = new Promise<void>((resolve) => {
      this.resolveStopped = resolve;
      this.post({ t: 'stop' });
    }).then(() => this.worker.terminate().then(() => undefined));
    return this.stopped;
  }
}
