/**
 * Two reflectors (Nodes, Pods) that keep a scheduler cache in step with the API server, on the API
 * worker thread (apiWorker.ts): each object becomes a compact record at once and is dropped, so memory
 * holds records, never objects, and the records go to CacheUpdates (there, the poster to the main thread).
 * Also the readiness rule the main thread applies to the watches' health (staleness: docs/cluster-mode.md).
 */
import type { Logger } from 'pino';
import type { Node, Pod } from '../core/objects/kubeObjects.js';
import type { LocalityRecordOptions } from '../core/objects/templateLocality.js';
import { podKey, toNodeRecord, toPodRecord, type Dimensions } from '../core/objects/records.js';
import { ListingReader, type CacheUpdates } from '../core/cache/sync.js';
import type { Metrics } from '../observability/metrics.js';
import {
  Reflector,
  describeFailure,
  type ReflectorOptions,
  type ResourceSource,
  type WatchHealth,
} from './reflector.js';

/** What LiveSync tells its owner besides the records (e.g. to count them in the metrics). */
export interface SyncObserver {
  /** The resource's list/watch starts (not synced yet). */
  started(resource: string): void;
  /** A list/watch session failed and will be retried. */
  restarted(resource: string): void;
  /** A complete list was applied. */
  listed(resource: string, relist: boolean): void;
}

/** The SyncObserver that keeps the extender's metrics (watch restarts, lists, synced gauges). */
export function metricsObserver(metrics: Metrics): SyncObserver {
  return {
    started: (resource) => {
      metrics.cacheSynced.set({ resource }, 0);
      // Counters at 0 from the start, so that rate() and increase() see the first restart and the first relist.
      metrics.watchRestarts.inc({ resource }, 0);
      metrics.lists.inc({ resource, kind: 'relist' }, 0);
    },
    restarted: (resource) => metrics.watchRestarts.inc({ resource }),
    listed: (resource, relist) => {
      metrics.lists.inc({ resource, kind: relist ? 'relist' : 'initial' });
      metrics.cacheSynced.set({ resource }, 1);
    },
  };
}

export interface LiveSyncOptions {
  readonly dims: Dimensions;
  readonly pausedLabel: string;
  /** Locality on: records carry template keys and node images (PodRecordOptions.locality). */
  readonly locality?: LocalityRecordOptions | undefined;
  readonly pageSize: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Clock of the health figures (ms); default Date.now. */
  readonly now?: () => number;
}

/** Why the verbs refuse before both initial lists are applied (the verbs and /readyz prefix "not ready: "). */
export const NOT_SYNCED = 'the scheduler cache has not completed its initial sync';

const seconds = (ms: number) => (ms / 1000).toFixed(1);

export class LiveSync {
  private readonly nodes: Reflector<Node>;
  private readonly pods: Reflector<Pod>;

  constructor(
    updates: CacheUpdates,
    sources: { readonly nodes: ResourceSource<Node>; readonly pods: ResourceSource<Pod> },
    options: LiveSyncOptions,
    private readonly observer: SyncObserver,
    private readonly logger: Logger,
  ) {
    const podOptions = { pausedLabel: options.pausedLabel, locality: options.locality };
    const skipped = (resource: string, errors: readonly string[]) => {
      for (const error of errors) logger.warn({ resource }, `skipped ${error}`);
    };
    // Each page becomes records at once (ListingReader); the listing is applied when complete.
    const listing = <T>(
      resource: string,
      add: (reader: ListingReader, item: T) => void,
      apply: (reader: ListingReader, resourceVersion: string) => void,
    ) => {
      const reader = new ListingReader(options.dims, podOptions);
      return {
        add: (items: readonly T[]) => {
          for (const item of items) add(reader, item);
        },
        complete: (resourceVersion: string) => {
          skipped(resource, reader.errors);
          apply(reader, resourceVersion);
        },
      };
    };
    this.nodes = new Reflector<Node>(
      'nodes',
      sources.nodes,
      {
        beginListing: () =>
          listing<Node>(
            'nodes',
            (r, node) => r.addNode(node),
            (r) => updates.replaceNodes(r),
          ),
        event: (type, node) => {
          const name = node.metadata?.name;
          if (type === 'DELETED') {
            if (name) updates.deleteNode(name);
            return;
          }
          try {
            updates.upsertNode(toNodeRecord(node, options.dims, options.locality));
          } catch (err) {
            skipped('nodes', [`node ${name ?? '<unnamed>'}: ${(err as Error).message}`]);
          }
        },
      },
      this.reflectorOptions('nodes', options),
    );
    this.pods = new Reflector<Pod>(
      'pods',
      sources.pods,
      {
        beginListing: () =>
          listing<Pod>(
            'pods',
            (r, pod) => r.addPod(pod),
            (r, resourceVersion) => {
              updates.replacePods(r);
              updates.podsAppliedAt(resourceVersion);
            },
          ),
        event: (type, pod) => {
          const uid = pod.metadata?.uid;
          const resourceVersion = pod.metadata?.resourceVersion;
          if (type === 'DELETED') {
            if (uid) updates.deletePod(uid);
          } else {
            try {
              updates.upsertPod(toPodRecord(pod, options.dims, podOptions));
            } catch (err) {
              skipped('pods', [`pod ${podKey(pod)}: ${(err as Error).message}`]);
            }
          }
          if (resourceVersion) updates.podsAppliedAt(resourceVersion);
        },
      },
      this.reflectorOptions('pods', options),
    );
  }

  private reflectorOptions(resource: string, options: LiveSyncOptions): ReflectorOptions {
    return {
      pageSize: options.pageSize,
      minBackoffMs: options.minBackoffMs,
      maxBackoffMs: options.maxBackoffMs,
      ...(options.now ? { now: options.now } : {}),
      onRestart: (err, attempt) => {
        this.observer.restarted(resource);
        this.logger.warn({ resource, attempt, err: describeFailure(err) }, 'list/watch failed; retrying with backoff');
      },
      onExpired: (how) => {
        this.logger.info({ resource, how }, 'watch expired (410 Gone); relisting');
      },
      onList: (items, relist) => {
        this.observer.listed(resource, relist);
        this.logger.info({ resource, items, relist }, 'list applied');
      },
    };
  }

  /** Both initial lists applied. */
  get ready(): boolean {
    return this.nodes.synced && this.pods.synced;
  }

  /** Each reflector's freshness now. */
  health(): WatchHealth[] {
    return [this.nodes.health(), this.pods.health()];
  }

  start(): void {
    this.observer.started('nodes');
    this.observer.started('pods');
    this.nodes.start();
    this.pods.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.nodes.stop(), this.pods.stop()]);
  }
}

/**
 * Null while the verbs may decide on the cache the watches `health` describe; else why not: an
 * initial list is not applied yet, or a list/watch has been failing for longer than
 * `maxBrokenSeconds` (the text names it, how long, its last error and the age of its last event).
 */
export function staleness(health: readonly WatchHealth[], maxBrokenSeconds: number): string | null {
  if (!health.every((h) => h.synced)) return NOT_SYNCED;
  const limitMs = maxBrokenSeconds * 1000;
  const stale = health.filter((h) => h.brokenMs > limitMs);
  if (stale.length === 0) return null;
  const parts = stale.map(
    (h) =>
      `the ${h.resource} list/watch has been failing for ${seconds(h.brokenMs)} s (last error: ${h.lastError}; last event ${seconds(h.lastDeliveryAgeMs)} s ago)`,
  );
  return `the scheduler cache is stale: ${parts.join('; ')}, longer than watch.maxBrokenSeconds (${maxBrokenSeconds} s)`;
}

/** One line per resource for the /readyz body: synced, watch open, age of the last event, failing or not. */
export function describeHealth(health: readonly WatchHealth[]): string {
  return health
    .map((h) =>
      [
        `${h.resource}:`,
        h.synced ? 'synced;' : 'not synced;',
        h.watching ? 'watch open;' : 'no watch open;',
        `last event or bookmark ${seconds(h.lastDeliveryAgeMs)} s ago;`,
        h.brokenMs > 0 ? `failing for ${seconds(h.brokenMs)} s (last error: ${h.lastError})` : 'not failing',
      ].join(' '),
    )
    .join('\n');
}
