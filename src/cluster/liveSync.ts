/**
 * Live cluster mode: two reflectors (Nodes, Pods) keep the scheduler cache in step with the API
 * server. Each object is turned into a compact record at once and dropped, so memory holds records,
 * never objects.
 *
 * Ready once both initial lists have been applied, and as long as neither list/watch has been broken
 * (failing to list or watch) for longer than `maxBrokenSeconds`: past that the cache may have missed
 * any number of changes, so the verbs refuse (pods wait) rather than decide on a stale view. A quiet
 * watch is not broken (see Reflector: health).
 */
import type { Logger } from 'pino';
import type { SchedulerCache } from '../core/schedulerCache.js';
import type { Node, Pod } from '../core/kube.js';
import { applyNode, applyPod, syncNodes, syncPods } from '../core/sync.js';
import type { Metrics } from '../observability/metrics.js';
import { Reflector, describeFailure, type ReflectorOptions, type ResourceSource, type WatchHealth } from './reflector.js';

export interface LiveSyncOptions {
  readonly pausedLabel: string;
  readonly pageSize: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** A list/watch failing for longer than this (seconds) makes the cache stale: not ready. */
  readonly maxBrokenSeconds: number;
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
    cache: SchedulerCache,
    sources: { readonly nodes: ResourceSource<Node>; readonly pods: ResourceSource<Pod> },
    private readonly options: LiveSyncOptions,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {
    const podOptions = { pausedLabel: options.pausedLabel };
    const skipped = (resource: string, errors: readonly (string | null)[]) => {
      for (const error of errors) if (error) logger.warn({ resource }, `skipped ${error}`);
    };
    this.nodes = new Reflector<Node>('nodes', sources.nodes, {
      replace: (items) => skipped('nodes', syncNodes(cache, items)),
      event: (type, node) => skipped('nodes', [applyNode(cache, type, node)]),
    }, this.reflectorOptions('nodes', options));
    this.pods = new Reflector<Pod>('pods', sources.pods, {
      replace: (items) => skipped('pods', syncPods(cache, items, podOptions).errors),
      event: (type, pod) => skipped('pods', [applyPod(cache, type, pod, podOptions).error]),
    }, this.reflectorOptions('pods', options));
    metrics.watchHealth = () => this.health();
  }

  private reflectorOptions(resource: string, options: LiveSyncOptions): ReflectorOptions {
    return {
      pageSize: options.pageSize,
      minBackoffMs: options.minBackoffMs,
      maxBackoffMs: options.maxBackoffMs,
      ...(options.now ? { now: options.now } : {}),
      onRestart: (err, attempt) => {
        this.metrics.watchRestarts.inc({ resource });
        this.logger.warn({ resource, attempt, err: describeFailure(err) }, 'list/watch failed; retrying with backoff');
      },
      onExpired: (how) => {
        this.logger.info({ resource, how }, 'watch expired (410 Gone); relisting');
      },
      onList: (items, relist) => {
        this.metrics.lists.inc({ resource, kind: relist ? 'relist' : 'initial' });
        this.metrics.cacheSynced.set({ resource }, 1);
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

  /**
   * Null while the verbs may decide; else why not (VerbDeps.notReady): the initial lists are not
   * applied yet, or a list/watch has been failing for longer than maxBrokenSeconds (the text names
   * it, how long, its last error and the age of its last event).
   */
  notReady(): string | null {
    if (!this.ready) return NOT_SYNCED;
    const limitMs = this.options.maxBrokenSeconds * 1000;
    const stale = this.health().filter((h) => h.brokenMs > limitMs);
    if (stale.length === 0) return null;
    const parts = stale.map((h) => `the ${h.resource} list/watch has been failing for ${seconds(h.brokenMs)} s (last error: ${h.lastError}; last event ${seconds(h.lastDeliveryAgeMs)} s ago)`);
    return `the scheduler cache is stale: ${parts.join('; ')}, longer than watch.maxBrokenSeconds (${this.options.maxBrokenSeconds} s)`;
  }

  /** One line per resource for the /readyz body: synced, watch open, age of the last event, failing or not. */
  describe(): string {
    return this.health()
      .map((h) => [
        `${h.resource}:`,
        h.synced ? 'synced;' : 'not synced;',
        h.watching ? 'watch open;' : 'no watch open;',
        `last event or bookmark ${seconds(h.lastDeliveryAgeMs)} s ago;`,
        h.brokenMs > 0 ? `failing for ${seconds(h.brokenMs)} s (last error: ${h.lastError})` : 'not failing',
      ].join(' '))
      .join('\n');
  }

  start(): void {
    this.metrics.cacheSynced.set({ resource: 'nodes' }, 0);
    this.metrics.cacheSynced.set({ resource: 'pods' }, 0);
    this.nodes.start();
    this.pods.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.nodes.stop(), this.pods.stop()]);
  }
}
