/**
 * Cluster mode's API side on a worker thread of its own (apiWorker.ts), so that none of it delays a
 * verb's reply: the worker decodes lists and watch events into records and creates Events and Bindings;
 * this thread, the one answering kube-scheduler, applies its ready-made records to the scheduler cache
 * and forwards Events, Bindings and requeue writes (messages: workerProtocol.ts). Why: docs/cluster-mode.md.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { BindOutcome, BindRequest } from '../core/objects/binding.js';
import type { CacheUpdates } from '../core/cache/sync.js';
import type { Metrics } from '../observability/metrics.js';
import type { PodEvent } from './events.js';
import { NOT_SYNCED, describeHealth, metricsObserver, staleness, type SyncObserver } from './liveSync.js';
import type { WatchHealth } from './reflector.js';
import { TurnBatch } from './turnBatch.js';
import {
  agedHealth,
  applyObserved,
  applyUpdates,
  type ApiWorkerData,
  type FromWorker,
  type ToWorker,
} from './workerProtocol.js';

/** How long the Events of a burst are collected before they go to the worker in one message (ms). */
export const EVENT_BATCH_MS = 50;

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
        applyObserved(this.observer, message);
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
    for (const pending of this.pendingRequeues.values())
      pending.reject(new RequeueWriteError('the API worker thread stopped', undefined));
    this.pendingRequeues.clear();
    this.startedOrFailed?.reject(err);
    this.logger.fatal(
      { err: err.message },
      'the API worker thread died; the scheduler cache would no longer follow the cluster',
    );
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
