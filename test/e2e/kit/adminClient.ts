/**
 * The admin client of the e2e cluster, as the cluster benchmarks (and the e2e tests that make bursts) use it:
 * client-node's generated APIs on one keep-alive agent, namespaces, the not-ready taint of fresh nodes, creating
 * pods in parallel, every pod change as it arrives, and scraping /metrics (the schedulers' secure ports with the
 * admin client certificate). The control plane itself: controlPlane.ts.
 */
import https from 'node:https';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  ServerConfiguration,
  Watch,
  createConfiguration,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import pRetry from 'p-retry';
import { parsePrometheusText, sumSamples, type Sample } from '../../../bench/clusterStats.js';
import type { PodChange } from '../../../bench/overcommit.js';
import type { Pod } from '../../../src/core/objects/kubeObjects.js';
import { eventsOut, fetchText, log, metricValue, nowMs, sleep, waitUntil } from './controlPlane.js';

// ------------------------------------------------------------------------------------------ the client

/**
 * The admin client of the e2e cluster: client-node's generated APIs (core, custom objects) sharing one keep-alive
 * agent of `concurrency` sockets (client-node's own authentication makes a new agent, so a new TLS connection, per
 * request: too slow to create a burst), and client-node's Watch.
 */
export class Kube {
  readonly api: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly watch: Watch;
  readonly agent: https.Agent;
  /** The admin client certificate, for the schedulers' /metrics and /configz. */
  readonly clientCert: { cert: Buffer; key: Buffer };

  private constructor(kc: KubeConfig, tls: { ca?: Buffer; cert: Buffer; key: Buffer }, concurrency: number) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ...tls });
    const agent = this.agent;
    const server = kc.getCurrentCluster()!.server;
    const config = createConfiguration({
      baseServer: new ServerConfiguration(server, {}),
      authMethods: {
        default: { getName: () => 'e2e-admin-keepalive', applySecurityAuthentication: (ctx) => ctx.setAgent(agent) },
      },
    });
    this.api = new CoreV1Api(config);
    this.custom = new CustomObjectsApi(config);
    this.watch = new Watch(kc);
    this.clientCert = { cert: tls.cert, key: tls.key };
  }

  /** The client of `kubeconfig` (cluster.env KUBECONFIG). @throws when it has no client certificate. */
  static async connect(kubeconfig: string, concurrency: number): Promise<Kube> {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    if (!opts.cert || !opts.key) throw new Error(`${kubeconfig} has no client certificate`);
    return new Kube(
      kc,
      { ...(opts.ca ? { ca: opts.ca as Buffer } : {}), cert: opts.cert as Buffer, key: opts.key as Buffer },
      concurrency,
    );
  }

  /** Every item of a list, in pages; with the resourceVersion of the last page. */
  async listAll<T>(
    page: (
      cont: string | undefined,
    ) => Promise<{ items: T[]; metadata?: { _continue?: string; resourceVersion?: string } }>,
  ): Promise<{ items: T[]; resourceVersion: string }> {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    do {
      const p = await page(cont);
      items.push(...p.items);
      cont = p.metadata?._continue || undefined;
      resourceVersion = p.metadata?.resourceVersion ?? resourceVersion;
    } while (cont);
    return { items, resourceVersion };
  }

  /** Every Node, listed in pages of 1,000. */
  nodes(): Promise<V1Node[]> {
    return this.listAll((c) => this.api.listNode({ limit: 1000, _continue: c })).then((l) => l.items);
  }

  /** Every Pod of every namespace, listed in pages of 1,000. */
  pods(): Promise<V1Pod[]> {
    return this.listAll((c) => this.api.listPodForAllNamespaces({ limit: 1000, _continue: c })).then((l) => l.items);
  }
}

/** Runs `fn` over `items` with at most `width` calls in flight. */
export async function inParallel<T>(
  items: readonly T[],
  width: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// ------------------------------------------------------------------------------------------ namespaces, nodes

/**
 * Creates the namespace (if missing) and waits for its default ServiceAccount (kube-controller-manager makes it a
 * moment later; ServiceAccount admission refuses pods until then). @throws after a minute without it.
 */
export async function ensureNamespace(kube: Kube, name: string): Promise<void> {
  try {
    await kube.api.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  for (let i = 0; ; i++) {
    try {
      await kube.api.readNamespacedServiceAccount({ name: 'default', namespace: name });
      return;
    } catch {
      if (i > 240) throw new Error(`no default ServiceAccount in ${name}`);
      await sleep(250);
    }
  }
}

const NOT_READY_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
export const taintsToClear = (n: V1Node) =>
  (n.spec?.taints ?? []).map((t, i) => ({ t, i })).filter(({ t }) => NOT_READY_TAINTS.has(t.key));
export const isReady = (n: V1Node) =>
  (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
/** The node carries node.kubernetes.io/not-ready or .../unreachable (pods without a toleration stay off it). */
export const notReadyTainted = (n: V1Node) => taintsToClear(n).length > 0;

/**
 * Waits until no node carries node.kubernetes.io/not-ready or .../unreachable. Right after cluster-up the node
 * lifecycle controller (kube-controller-manager, 20 requests/s by default) is still working through the nodes it
 * tainted at creation, for minutes at 1,000+ nodes; a node KWOK already reports Ready has the taint removed
 * here (JSON patch with a `test` of the key, so a taint changed meanwhile is left alone). Returns what it did.
 * @throws when nodes are still tainted after `timeoutMs`.
 */
export async function untaintNodes(kube: Kube, timeoutMs = 600_000): Promise<{ removed: number; waitedMs: number }> {
  const start = Date.now();
  let removed = 0;
  let cleanChecks = 0;
  for (;;) {
    const nodes = await kube.nodes();
    const tainted = nodes.filter(notReadyTainted);
    if (tainted.length === 0) {
      if (++cleanChecks >= 2) return { removed, waitedMs: Date.now() - start };
      await sleep(2000); // once more: a controller pass in flight could still add one
      continue;
    }
    cleanChecks = 0;
    const ready = tainted.filter(isReady);
    log(
      `${tainted.length} of ${nodes.length} nodes carry a not-ready/unreachable taint; removing it from the ${ready.length} Ready ones`,
    );
    await inParallel(ready, 16, async (n) => {
      // Highest index first, so the earlier indexes stay valid within the one patch.
      const ops = taintsToClear(n)
        .sort((a, b) => b.i - a.i)
        .flatMap(({ t, i }) => [
          { op: 'test', path: `/spec/taints/${i}/key`, value: t.key },
          { op: 'remove', path: `/spec/taints/${i}` },
        ]);
      try {
        await kube.api.patchNode(
          { name: n.metadata!.name!, body: ops },
          setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
        );
        removed++;
      } catch {
        // changed meanwhile (the controller got there first): the next pass looks again
      }
    });
    if (Date.now() - start > timeoutMs) throw new Error(`nodes still tainted not-ready after ${timeoutMs / 1000}s`);
    await sleep(1000);
  }
}

// ------------------------------------------------------------------------------------------ pods

export interface Creation {
  readonly ackMs: Map<string, number>;
  readonly startMs: number;
  readonly endMs: number;
  readonly retries: number;
}

/** What a benchmark's pod sets beside its name and namespace (benchPod). */
export interface BenchPodSpec {
  /** Unset: the stock default-scheduler. */
  schedulerName?: string | null;
  /** The container's requests = limits (Quantity strings, e.g. 250m, 512Mi). */
  cpu: string;
  memory: string;
  labels?: Record<string, string>;
  /** KWOK nodes run no container, so the image is never pulled there. */
  image?: string;
  nodeName?: string;
  priorityClassName?: string;
}

/** A pod of one container with requests = limits and no grace period, as the cluster benchmarks create them. */
export function benchPod(name: string, namespace: string, p: BenchPodSpec): V1Pod {
  const { cpu, memory } = p;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(p.labels ? { labels: p.labels } : {}) },
    spec: {
      ...(p.schedulerName ? { schedulerName: p.schedulerName } : {}),
      ...(p.nodeName ? { nodeName: p.nodeName } : {}),
      ...(p.priorityClassName ? { priorityClassName: p.priorityClassName } : {}),
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'sandbox',
          image: p.image ?? 'example.invalid/none',
          resources: { requests: { cpu, memory }, limits: { cpu, memory } },
        },
      ],
    },
  };
}

/**
 * One API call, tried again (p-retry: up to 20 more times, 100 ms apart) while the API server answers busy: 429 (API
 * Priority and Fairness) or a 5xx; with `idempotent`, also after an error without an answer (a keep-alive connection
 * closed under the request), which a create must not retry. `onRetry` is called before each retry.
 * @throws the first other error, or the last one once the retries are spent.
 */
export function retryBusy<T>(
  call: () => Promise<T>,
  { onRetry, idempotent = false }: { onRetry?: () => void; idempotent?: boolean } = {},
): Promise<T> {
  return pRetry(call, {
    retries: 20,
    minTimeout: 100,
    factor: 1,
    shouldRetry: ({ error }) => {
      const code = (error as { code?: unknown }).code;
      const again = code === 429 || (typeof code === 'number' ? code >= 500 : idempotent);
      if (again) onRetry?.();
      return again;
    },
  });
}

/** Creates the pods, `concurrency` in flight, each create retried while the API server is busy (retryBusy). */
export async function createPods(
  kube: Kube,
  namespace: string,
  pods: readonly V1Pod[],
  concurrency: number,
): Promise<Creation> {
  const ackMs = new Map<string, number>();
  let retries = 0;
  const startMs = nowMs();
  await inParallel(pods, concurrency, async (body) => {
    await retryBusy(() => kube.api.createNamespacedPod({ namespace, body }), { onRetry: () => retries++ });
    ackMs.set(body.metadata!.name!, nowMs());
  });
  return { ackMs, startMs, endMs: nowMs(), retries };
}

/** The kinds of watch event that carry an object (not BOOKMARK or ERROR). */
export type PodEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** What a watch delivers: an object with a name and a resourceVersion. */
type Watched = { metadata?: { name?: string; resourceVersion?: string } };

/**
 * A watch of the objects at `path` (e.g. /api/v1/pods) from `resourceVersion` (empty: the objects that exist now as
 * ADDED, then every change), with bookmarks. The API server closes the watch of a reader that falls behind (a burst
 * is thousands of changes in seconds): it is opened again from the last resourceVersion seen, so no change is lost
 * and the order is kept. `onEvent` gets each ADDED, MODIFIED and DELETED object that has a name; an ERROR event is
 * logged.
 */
export class ObjectWatch<T extends Watched> {
  /** Times the watch was opened again. */
  reopens = 0;
  private controller: AbortController | undefined;
  private stopped = false;

  constructor(
    private readonly kube: Kube,
    private readonly path: string,
    private readonly onEvent: (type: PodEventType, object: T) => void,
    private resourceVersion = '',
    private readonly labelSelector?: string,
  ) {}

  async start(): Promise<void> {
    this.controller = await this.kube.watch.watch(
      this.path,
      {
        allowWatchBookmarks: true,
        timeoutSeconds: 3600,
        ...(this.labelSelector ? { labelSelector: this.labelSelector } : {}),
        ...(this.resourceVersion ? { resourceVersion: this.resourceVersion } : {}),
      },
      (type: string, object: T) => {
        if (object.metadata?.resourceVersion) this.resourceVersion = object.metadata.resourceVersion;
        if (type === 'ERROR') log(`watch of ${this.path}: ERROR event ${JSON.stringify(object).slice(0, 300)}`);
        if ((type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') && object.metadata?.name)
          this.onEvent(type, object);
      },
      (err: unknown) => {
        if (this.stopped) return;
        this.reopens++;
        log(
          `watch of ${this.path} ended (${err instanceof Error ? err.message : String(err ?? 'closed')}); reopening from resourceVersion ${this.resourceVersion}`,
        );
        void this.start().catch((e: Error) => log(`cannot reopen the watch of ${this.path}: ${e.message}`));
      },
    );
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }
}

/** An ObjectWatch of the pods of `namespace` (or of all namespaces). */
export class PodWatch extends ObjectWatch<V1Pod> {
  constructor(
    kube: Kube,
    namespace: string | undefined,
    onEvent: (type: PodEventType, pod: V1Pod) => void,
    resourceVersion = '',
    labelSelector?: string,
  ) {
    super(
      kube,
      namespace ? `/api/v1/namespaces/${namespace}/pods` : '/api/v1/pods',
      onEvent,
      resourceVersion,
      labelSelector,
    );
  }
}

/**
 * Every pod change of the cluster (all namespaces, or one), from a list, in the order the API server made them,
 * each with the time it arrived (monotonic ms): what bench/overcommit.ts replays, and the bind times of a run.
 */
export class PodChangeLog {
  readonly changes: (PodChange & { readonly atMs: number })[] = [];
  private watch: PodWatch | undefined;

  constructor(
    private readonly kube: Kube,
    private readonly namespace?: string,
  ) {}

  async start(): Promise<void> {
    const namespace = this.namespace;
    const list = await this.kube.listAll((c) =>
      namespace
        ? this.kube.api.listNamespacedPod({ namespace, limit: 1000, _continue: c })
        : this.kube.api.listPodForAllNamespaces({ limit: 1000, _continue: c }),
    );
    for (const p of list.items) this.keep('ADDED', p);
    this.watch = new PodWatch(this.kube, namespace, (type, p) => this.keep(type, p), list.resourceVersion);
    await this.watch.start();
  }

  /** Keeps what the replay reads. */
  private keep(type: PodChange['type'], p: V1Pod): void {
    const pod: Pod = {
      metadata: {
        name: p.metadata?.name ?? '',
        namespace: p.metadata?.namespace ?? '',
        resourceVersion: p.metadata?.resourceVersion ?? '',
      },
      spec: {
        schedulerName: p.spec?.schedulerName ?? '',
        nodeName: p.spec?.nodeName ?? '',
        containers: (p.spec?.containers ?? []).map((c) => ({
          name: c.name,
          resources: { requests: c.resources?.requests ?? {} },
        })),
      } as Pod['spec'],
      status: { phase: p.status?.phase ?? '' },
    };
    this.changes.push({ type, pod, atMs: nowMs() });
  }

  stop(): void {
    this.watch?.stop();
  }

  /** When each pod (namespace/name) was first seen bound, of those `which` selects. */
  boundAt(which: (pod: Pod) => boolean = () => true): Map<string, number> {
    const at = new Map<string, number>();
    for (const c of this.changes) {
      if (!c.pod.spec?.nodeName || c.type === 'DELETED' || !which(c.pod)) continue;
      const key = `${c.pod.metadata?.namespace}/${c.pod.metadata?.name}`;
      if (!at.has(key)) at.set(key, c.atMs);
    }
    return at;
  }
}

// ------------------------------------------------------------------------------------------ /metrics

/** GET over TLS with the admin client certificate (the schedulers serve a self-signed certificate). */
export function httpsGet(url: string, cert: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((ok, bad) => {
    const req = https.get(url, { ...cert, rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () =>
        res.statusCode === 200 ? ok(body) : bad(new Error(`GET ${url}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', bad);
  });
}

/** Samples of one /metrics endpoint (https: with the admin client certificate); [] when it does not answer (a stopped scheduler). */
export async function scrape(url: string, kube: Kube): Promise<Sample[]> {
  try {
    return parsePrometheusText(
      url.startsWith('https:') ? await httpsGet(`${url}/metrics`, kube.clientCert) : await fetchText(`${url}/metrics`),
    );
  } catch {
    return [];
  }
}

/** Sum of the samples of `name` at `url`/metrics that carry every label pair of `match`. @throws on an HTTP error status. */
export async function metricSum(url: string, name: string, match: Record<string, string> = {}): Promise<number> {
  return metricValue(await fetchText(`${url}/metrics`), name, match);
}

/**
 * Waits until the extender at `url` has sent an Event outcome for each decision (they are rate-limited, after the
 * decisions), at most 10 min; then returns either way.
 */
export async function waitEventsOut(url: string): Promise<void> {
  for (let i = 0; i < 1200 && !eventsOut(await fetchText(`${url}/metrics`)); i++) await sleep(500);
}

/**
 * Deletes every pod of `namespace` (and, with `events`, its Events) and waits until the API server lists none and
 * the extender at `extenderUrl` holds neither one of them nor a reservation: a clean start for the next run.
 * @throws when they are not gone within 5 min (the extender: 2 min).
 */
export async function deleteAllPods(
  kube: Kube,
  namespace: string,
  extenderUrl: string,
  { graceSeconds = 0, events = false }: { graceSeconds?: number; events?: boolean } = {},
): Promise<void> {
  await deleteBurst(kube, namespace, { graceSeconds, timeoutMs: 300_000, everyMs: 500 });
  if (events) await kube.api.deleteCollectionNamespacedEvent({ namespace });
  await waitUntil(
    'the extender to drop them',
    120_000,
    async () => {
      const m = parsePrometheusText(await (await fetch(`${extenderUrl}/metrics`)).text());
      return (
        sumSamples(m, 'sandbox_extender_reservations_pending') === 0 &&
        sumSamples(m, 'sandbox_extender_snapshot_objects', { kind: 'pod' }) === 0
      );
    },
    500,
  );
}

/**
 * Deletes every pod of `namespace` (grace period `graceSeconds`, default 0; a namespace that does not exist has
 * none) and waits, asking every `everyMs` for one pod, until the API server lists none. @throws when some are left
 * after `timeoutMs`.
 */
export async function deleteBurst(
  kube: Kube,
  namespace: string,
  { timeoutMs, everyMs, graceSeconds = 0 }: { timeoutMs: number; everyMs: number; graceSeconds?: number },
): Promise<void> {
  try {
    await kube.api.deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: graceSeconds });
  } catch (err) {
    if ((err as { code?: number }).code !== 404) throw err; // no namespace yet: no pods
  }
  await waitUntil(
    `the pods of ${namespace} to be gone`,
    timeoutMs,
    async () => (await kube.api.listNamespacedPod({ namespace, limit: 1 })).items.length === 0,
    everyMs,
  );
}
