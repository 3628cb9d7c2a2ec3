/**
 * The messages between the main thread (ApiThread) and the API worker thread (apiWorker.ts), and their
 * encoding. Every message is a structured clone of plain data; the worker starts from ApiWorkerData.
 *   main → worker  bind, events (a batch), requeue, stop
 *   worker → main  updates (CacheUpdates calls in order), observer, health, bound, requeued,
 *                  eventOutcomes (a batch), started or failed (once, at start-up), stopped
 * bind and requeue carry an id that their answer (bound, requeued) repeats.
 */
import type { BindOutcome, BindRequest } from '../core/objects/binding.js';
import type { LocalityRecordOptions } from '../core/objects/templateLocality.js';
import type { CacheUpdates } from '../core/cache/sync.js';
import type { EventOutcome, PodEvent } from './events.js';
import type { SyncObserver } from './liveSync.js';
import type { WatchHealth } from './reflector.js';

/** One CacheUpdates call: its method name and argument. */
export type Update = { [K in keyof CacheUpdates]: readonly [K, Parameters<CacheUpdates[K]>[0]] }[keyof CacheUpdates];

export type ToWorker =
  | { readonly t: 'bind'; readonly id: number; readonly request: BindRequest }
  /** Events recorded since the last message (ApiThread.recordEvent batches them). */
  | { readonly t: 'events'; readonly events: readonly PodEvent[] }
  /** The write of a Requeuer round: the requeue annotation's new value (requeuer.ts). */
  | { readonly t: 'requeue'; readonly id: number; readonly value: string }
  | { readonly t: 'stop' };

export type FromWorker =
  | { readonly t: 'updates'; readonly batch: readonly Update[] }
  | { readonly t: 'observer'; readonly kind: keyof SyncObserver; readonly resource: string; readonly relist?: boolean }
  /** Each watch's freshness as it was at `atMs` (the worker's clock, ms since the epoch): see agedHealth. */
  | { readonly t: 'health'; readonly atMs: number; readonly health: readonly WatchHealth[] }
  | { readonly t: 'bound'; readonly id: number; readonly outcome: BindOutcome }
  /** error null: written; otherwise the failure and its HTTP status, if any. */
  | { readonly t: 'requeued'; readonly id: number; readonly status: number | null; readonly error: string | null }
  | { readonly t: 'eventOutcomes'; readonly outcomes: readonly EventOutcome[] }
  /** The worker has its client and watches; `server` is the API server's URL. */
  | { readonly t: 'started'; readonly server: string }
  /** The worker could not start (e.g. an unusable kubeconfig). */
  | { readonly t: 'failed'; readonly error: string }
  | { readonly t: 'stopped' };

/** What the worker needs to start (its workerData). */
export interface ApiWorkerData {
  /** The kubeconfig the main thread loaded (KubeConfig.exportConfig()), so both see the same cluster. */
  readonly kubeconfig: string;
  readonly dims: readonly string[];
  readonly pausedLabel: string;
  /** Locality on: how records carry template keys and node images (PodRecordOptions.locality). */
  readonly locality?: LocalityRecordOptions | undefined;
  readonly watch: { readonly pageSize: number; readonly minBackoffMs: number; readonly maxBackoffMs: number };
  /** Event recording; null: no Events. */
  readonly events: {
    readonly perSecond: number;
    readonly maxQueued: number;
    readonly dedupeWindowSeconds: number;
  } | null;
  /** The requeue object the worker writes for the main thread's Requeuer; null: no requeue. */
  readonly requeue: { readonly namespace: string; readonly name: string } | null;
  readonly logLevel: string;
}

/**
 * The worker's side of `updates`: CacheUpdates that encode each call as an Update and hand it to `push`.
 * A listing is sent as its records and kept sets only (not the reader that made it).
 */
export function encodingUpdates(push: (update: Update) => void): CacheUpdates {
  return {
    replaceNodes: (listing) => push(['replaceNodes', { nodes: listing.nodes, keptNodes: listing.keptNodes }]),
    replacePods: (listing) => push(['replacePods', { pods: listing.pods, keptPods: listing.keptPods }]),
    upsertNode: (record) => push(['upsertNode', record]),
    deleteNode: (name) => push(['deleteNode', name]),
    upsertPod: (record) => push(['upsertPod', record]),
    deletePod: (uid) => push(['deletePod', uid]),
    podsAppliedAt: (resourceVersion) => push(['podsAppliedAt', resourceVersion]),
  };
}

/** The main thread's side: applies one message's updates to `updates`, in order. */
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

/** The worker's side of the SyncObserver: each call as an `observer` message through `post`. */
export function encodingObserver(post: (message: FromWorker & { readonly t: 'observer' }) => void): SyncObserver {
  return {
    started: (resource) => post({ t: 'observer', kind: 'started', resource }),
    restarted: (resource) => post({ t: 'observer', kind: 'restarted', resource }),
    listed: (resource, relist) => post({ t: 'observer', kind: 'listed', resource, relist }),
  };
}

/** The main thread's side: the call an `observer` message stands for, made on `observer`. */
export function applyObserved(observer: SyncObserver, message: FromWorker & { readonly t: 'observer' }): void {
  if (message.kind === 'listed') observer.listed(message.resource, message.relist ?? false);
  else observer[message.kind](message.resource);
}

/**
 * A health report read at `atMs`, as it is at `nowMs`: every age and failing time grown by the time since,
 * so a worker that stops reporting looks like watches that stopped delivering (and goes stale).
 */
export function agedHealth(health: readonly WatchHealth[], atMs: number, nowMs: number): WatchHealth[] {
  const since = Math.max(0, nowMs - atMs);
  return health.map((h) => ({
    ...h,
    lastDeliveryAgeMs: h.lastDeliveryAgeMs + since,
    brokenMs: h.brokenMs > 0 ? h.brokenMs + since : 0,
  }));
}
