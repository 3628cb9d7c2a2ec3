/**
 * Live cluster mode: two reflectors (Nodes, Pods) keep the scheduler cache in step with the API
 * server. Each object is turned into a compact record at once and dropped, so memory holds records,
 * never objects. Ready once both initial lists have been applied.
 */
import type { Logger } from 'pino';
import type { SchedulerCache } from '../core/schedulerCache.js';
import type { Node, Pod } from '../core/kube.js';
import { applyNode, applyPod, syncNodes, syncPods } from '../core/sync.js';
import type { Metrics } from '../observability/metrics.js';
import { statusOf } from './kube.js';
import { Reflector, type ResourceSource } from './reflector.js';

export interface LiveSyncOptions {
  readonly pausedLabel: string;
  readonly pageSize: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
}

export class LiveSync {
  private readonly nodes: Reflector<Node>;
  private readonly pods: Reflector<Pod>;

  constructor(
    cache: SchedulerCache,
    sources: { readonly nodes: ResourceSource<Node>; readonly pods: ResourceSource<Pod> },
    options: LiveSyncOptions,
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
  }

  private reflectorOptions(resource: string, options: LiveSyncOptions) {
    return {
      pageSize: options.pageSize,
      minBackoffMs: options.minBackoffMs,
      maxBackoffMs: options.maxBackoffMs,
      onRestart: (err: unknown, attempt: number) => {
        this.metrics.watchRestarts.inc({ resource });
        const status = statusOf(err);
        this.logger.warn({ resource, attempt, err: status ? `HTTP ${status}` : ((err as Error)?.message ?? String(err)) }, 'list/watch failed; retrying with backoff');
      },
      onList: (items: number, relist: boolean) => {
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
