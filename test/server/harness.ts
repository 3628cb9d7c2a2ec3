/**
 * In-process extender for the HTTP tests: config → buildExtender → the snapshot through the informer side → createApp,
 * with a fixed clock and a silent logger. Nothing listens on a socket (supertest drives the app).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { RequestListener } from 'node:http';
import { parseConfig } from '../../src/config/load.js';
import type { Config, ConfigInput } from '../../src/config/schema.js';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import type { PlacementService } from '../../src/core/decide/placementService.js';
import { applyListing, listingOf, type CacheUpdates } from '../../src/core/cache/sync.js';
import { createApp } from '../../src/server/app.js';
import type { VerbDeps } from '../../src/server/handlers.js';
import type { Metrics } from '../../src/observability/metrics.js';
import type { RequestLog } from '../../src/observability/requestLog.js';
import { recordOptions } from '../../src/runtime/cacheDoors.js';
import { buildExtender, type ExtenderOptions } from '../../src/runtime/extender.js';
import { readSnapshot, type Snapshot } from '../../src/snapshot/snapshotFile.js';

/** The fixed clock every decision sees (2026-11-20T09:00:00Z, the snapshot's timestamps). */
export const NOW_MS = Date.UTC(2026, 10, 20, 9, 0, 0);

export const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
export const SNAPSHOT_PATH = `${EXAMPLES}snapshot.json`;
export const WIRE_FIXTURES = fileURLToPath(new URL('../fixtures/wire/', import.meta.url));

/** The example cluster's node names, in snapshot order. */
export const NODE_16 = 'sandbox-node-16';
export const NODE_64 = 'sandbox-node-64';
export const NODE_192 = 'sandbox-node-192';
export const EXAMPLE_NODES = [NODE_16, NODE_64, NODE_192] as const;

export interface Harness {
  readonly config: Config;
  readonly app: RequestListener;
  readonly service: PlacementService;
  /** The cache's informer side, for a test to play a watch event. */
  readonly updates: CacheUpdates;
  readonly metrics: Metrics;
  /** The clock the verbs see (ms); tests may move it. */
  readonly clock: { now: number };
}

/**
 * Builds the extender on `snapshot` (default: the bundled examples/snapshot.json).
 * `config` defaults to a seeded least_loaded setup; anything given overrides it. `extra.requestLog`: where the
 * edge logs what is wrong with a request (none by default).
 */
export function makeHarness(
  config: ConfigInput = {},
  snapshot: Snapshot = readSnapshot(SNAPSHOT_PATH),
  extra: Partial<Pick<VerbDeps, 'bind' | 'onDecision' | 'notReady'>> & { readonly requestLog?: RequestLog } = {},
  options: ExtenderOptions = { clusterMode: extra.bind !== undefined, bindVerb: extra.bind !== undefined },
): Harness {
  // Two calls per pod unless a test says otherwise: most of these tests are about the full filter reply.
  const parsed = parseConfig({ randomSeed: 1, logLevel: 'silent', chooseInFilter: false, ...config });
  const { service, updates, metrics } = buildExtender(parsed, options);
  const sync = listingOf(service.cache.dims, snapshot.nodes, snapshot.pods, recordOptions(parsed));
  applyListing(updates, sync);
  if (sync.errors.length > 0) throw new Error(`test snapshot has bad objects: ${sync.errors.join('; ')}`);
  const clock = { now: NOW_MS };
  const { requestLog, ...verbExtra } = extra;
  const app = createApp(
    {
      service,
      pausedLabel: parsed.pausedLabel,
      metrics,
      logger: pino({ level: 'silent' }),
      now: () => clock.now,
      ...verbExtra,
    },
    {
      maxRequestBodyBytes: parsed.server.maxRequestBodyBytes,
      maxRequestDepth: parsed.server.maxRequestDepth,
      maxRequestElements: parsed.server.maxRequestElements,
      maxObjectMembers: parsed.server.maxObjectMembers,
      requestLog,
    },
  );
  return { config: parsed, app, service, updates, metrics, clock };
}

/** Reads examples/<relative> as JSON (a fresh copy each call). */
export function loadExample<T = unknown>(relative: string): T {
  return JSON.parse(readFileSync(`${EXAMPLES}${relative}`, 'utf8')) as T;
}

/** The example cluster's Node objects (fresh copies), in snapshot order. */
export function exampleNodes(): Node[] {
  return readSnapshot(SNAPSHOT_PATH).nodes.map((n) => structuredClone(n));
}

/**
 * A fingerprint of everything a request could change: reservations, pods and every NodeInfo.
 * Deep-copied: the cache hands out its live NodeInfo records.
 */
export function modelState(service: PlacementService): unknown {
  const cache = service.cache;
  return structuredClone({
    size: cache.size,
    reservations: [...cache.reservations()],
    nodes: [...cache.nodeInfos()].sort((a, b) => (a.name < b.name ? -1 : 1)),
  });
}

/** ExtenderArgs in nodeCacheCapable mode (NodeNames set, Nodes null), as kube-scheduler sends them. */
export function namesArgs(pod: Pod, names: readonly string[] = EXAMPLE_NODES): Record<string, unknown> {
  return { Pod: pod, Nodes: null, NodeNames: [...names] };
}

/** ExtenderArgs in full-object mode (Nodes a NodeList, NodeNames null). */
export function nodesArgs(pod: Pod, nodes: readonly Node[] = exampleNodes()): Record<string, unknown> {
  return { Pod: pod, Nodes: { metadata: {}, items: [...nodes] }, NodeNames: null };
}

/**
 * The value of one sample in a Prometheus text exposition, matched by name and exact label set
 * (label order does not matter), or undefined when there is no such sample.
 */
export function sampleValue(
  text: string,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got: [string, string][] = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map(
      (l) => [l[1]!, l[2]!],
    );
    if (JSON.stringify(got.sort()) === want) return Number(m[3]);
  }
  return undefined;
}
