/**
 * The benchmarks feed the scheduler cache the way production does: the informer side of cluster mode
 * (src/cluster/liveSync.ts: a reflector per resource lists and watches, each object becomes a compact
 * record at once, and the records go to the cache through its CacheUpdates), with an in-memory
 * ResourceSource in place of the API server. Each source answers the list with `listed` objects (in
 * pages, as the reflector asks for them) and then delivers `watched` objects as ADDED events on the
 * open watch, one at a time. Objects are made when they are delivered (`object(i)`) and dropped
 * once converted, as a watch stream would: a benchmark holds no more objects than production does.
 */
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { LiveSync, type SyncObserver } from '../src/cluster/liveSync.js';
import type { ListPage, ResourceSource } from '../src/cluster/reflector.js';
import type { Node, Pod } from '../src/core/objects/kubeObjects.js';
import type { LocalityRecordOptions } from '../src/core/objects/templateLocality.js';
import type { Dimensions } from '../src/core/objects/records.js';
import type { CacheUpdates } from '../src/core/cache/sync.js';

/** What one resource's in-memory API server holds: `count` objects made by `object(i)`. */
export interface Objects<T> {
  readonly count: number;
  readonly object: (i: number) => T;
}

export const NONE: Objects<never> = {
  count: 0,
  object: () => {
    throw new Error('no objects');
  },
};

/** The watch defaults of the configuration (config/schema.ts watch.*). */
const WATCH = { pageSize: 500, minBackoffMs: 500, maxBackoffMs: 30_000 };

const QUIET: SyncObserver = { started: () => undefined, restarted: () => undefined, listed: () => undefined };

/** A source that lists `listed` in pages and delivers `watched` on its first watch; `delivered` resolves after the last event. */
function memorySource<T>(
  listed: Objects<T>,
  watched: Objects<T>,
): { source: ResourceSource<T>; delivered: Promise<void> } {
  let done!: () => void;
  const delivered = new Promise<void>((resolve) => (done = resolve));
  let watches = 0;
  const source: ResourceSource<T> = {
    async list({ limit, continueToken }) {
      const from = continueToken ? Number(continueToken) : 0;
      const to = Math.min(listed.count, from + limit);
      const items: T[] = [];
      for (let i = from; i < to; i++) items.push(listed.object(i));
      const page: ListPage<T> = {
        items,
        resourceVersion: '1',
        continueToken: to < listed.count ? String(to) : undefined,
      };
      return page;
    },
    async watch(_options, onEvent, onDone) {
      if (watches++ === 0) {
        for (let i = 0; i < watched.count; i++) onEvent('ADDED', watched.object(i));
        done();
      }
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        onDone(Object.assign(new Error('The user aborted a request.'), { name: 'AbortError' }));
      };
    },
  };
  return { source, delivered };
}

/**
 * Runs production's informer side (LiveSync) over in-memory objects into `updates` until every
 * listed and watched object has been applied, then stops it; with `locality`, records carry template
 * keys and node images (PodRecordOptions.locality).
 * @returns the milliseconds from the start of the lists to the last watch event applied.
 */
export async function feedThroughInformer(
  updates: CacheUpdates,
  dims: Dimensions,
  pausedLabel: string,
  nodes: { readonly listed?: Objects<Node>; readonly watched?: Objects<Node> },
  pods: { readonly listed?: Objects<Pod>; readonly watched?: Objects<Pod> },
  locality?: LocalityRecordOptions,
): Promise<number> {
  const nodeSource = memorySource(nodes.listed ?? NONE, nodes.watched ?? NONE);
  const podSource = memorySource(pods.listed ?? NONE, pods.watched ?? NONE);
  const live = new LiveSync(
    updates,
    { nodes: nodeSource.source, pods: podSource.source },
    { dims, pausedLabel, locality, ...WATCH },
    QUIET,
    pino({ level: 'silent' }),
  );
  const start = performance.now();
  live.start();
  await Promise.all([nodeSource.delivered, podSource.delivered]);
  const ms = performance.now() - start;
  if (!live.ready) throw new Error('the informer side did not sync');
  await live.stop();
  return ms;
}
