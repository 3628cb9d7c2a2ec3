/**
 * The admin client of the e2e cluster and the pod and node helpers the cluster benchmarks share (cluster.ts,
 * sharedNodes.ts, failover.ts, pendingQueue.ts): keep-alive API access, scraping /metrics (the schedulers' secure
 * ports with the admin client certificate), the not-ready taint, creating pods in parallel, waiting.
 */
import https from 'node:https';
import { CoreV1Api, KubeConfig, ServerConfiguration, Watch, createConfiguration, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type { Pod } from '../src/core/objects/kubeObjects.js';
import { parsePrometheusText, type Sample } from './clusterStats.js';
import { ensureNamespace as ensureNamespaceOf, inParallel, log, sleep, untaintNodes as untaintNodesOf } from './e2eCluster.js';
import type { PodChange } from './overcommit.js';


/** Monotonic milliseconds (CLOCK_MONOTONIC, the clock of V8's CPU profiles in µs). */
export const nowMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;


/**
 * The admin client of the e2e cluster: client-node's generated API for lists, patches and deletes, with
 * one shared keep-alive agent (client-node's own authentication makes a new agent, so a new TLS connection,
 * per request: too slow to create a burst), and client-node's Watch.
 */
export class Kube {
  readonly api: CoreV1Api;
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
      authMethods: { default: { getName: () => 'e2e-admin-keepalive', applySecurityAuthentication: (ctx) => ctx.setAgent(agent) } },
    });
    this.api = new CoreV1Api(config);
    this.watch = new Watch(kc);
    this.clientCert = { cert: tls.cert, key: tls.key };
  }

  static async connect(kubeconfig: string, concurrency: number): Promise<Kube> {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const opts: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    if (!opts.cert || !opts.key) throw new Error(`${kubeconfig} has no client certificate`);
    return new Kube(kc, { ...(opts.ca ? { ca: opts.ca as Buffer } : {}), cert: opts.cert as Buffer, key: opts.key as Buffer }, concurrency);
  }

  async listAll<T>(page: (cont: string | undefined) => Promise<{ items: T[]; metadata?: { _continue?: string; resourceVersion?: string } }>): Promise<{ items: T[]; resourceVersion: string }> {
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

  nodes(): Promise<V1Node[]> {
    return this.listAll((c) => this.api.listNode({ limit: 1000, _continue: c })).then((l) => l.items);
  }

  pods(): Promise<V1Pod[]> {
    return this.listAll((c) => this.api.listPodForAllNamespaces({ limit: 1000, _continue: c })).then((l) => l.items);
  }
}

/** GET over TLS with the admin client certificate (the schedulers serve a self-signed certificate). */
export function httpsGet(url: string, cert: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((ok, bad) => {
    const req = https.get(url, { ...cert, rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? ok(body) : bad(new Error(`GET ${url}: HTTP ${res.statusCode}: ${body.slice(0, 200)}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timeout`)));
    req.on('error', bad);
  });
}

export async function getText(url: string): Promise<string> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return res.text();
}

/** Samples of one /metrics endpoint; [] when it does not answer (a stopped scheduler). */
export async function scrape(url: string, kube: Kube): Promise<Sample[]> {
  try {
    return parsePrometheusText(url.startsWith('https:') ? await httpsGet(`${url}/metrics`, kube.clientCert) : await getText(`${url}/metrics`));
  } catch {
    return [];
  }
}

export { isReady, taintsToClear } from './e2eCluster.js';

/** Runs `fn` over `items` with at most `width` in flight (e2eCluster.ts inParallel). */
export const pool = inParallel;

/** e2eCluster.ts untaintNodes with this admin client: the not-ready/unreachable taints removed from Ready nodes, waiting until none is left. */
export function untaintNodes(kube: Kube, timeoutMs = 600_000): Promise<{ removed: number; waitedMs: number }> {
  return untaintNodesOf(kube.api, timeoutMs);
}

export async function waitUntil(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>, everyMs = 20): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await check())) {
    if (nowMs() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}`);
    await sleep(everyMs);
  }
}

export interface Creation {
  readonly ackMs: Map<string, number>;
  readonly startMs: number;
  readonly endMs: number;
  readonly retries: number;
}

/** Creates the pods, `concurrency` in flight; a 429/5xx answer is retried after 100 ms. */
export async function createPods(kube: Kube, namespace: string, pods: readonly V1Pod[], concurrency: number): Promise<Creation> {
  const ackMs = new Map<string, number>();
  let retries = 0;
  const startMs = nowMs();
  await pool(pods, concurrency, async (body) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await kube.api.createNamespacedPod({ namespace, body });
        ackMs.set(body.metadata!.name!, nowMs());
        return;
      } catch (err) {
        const code = (err as { code?: number }).code;
        if (attempt < 20 && (code === 429 || (code !== undefined && code >= 500))) {
          retries++;
          await sleep(100);
          continue;
        }
        throw err;
      }
    }
  });
  return { ackMs, startMs, endMs: nowMs(), retries };
}

/** e2eCluster.ts ensureNamespace with this admin client: the namespace and its default ServiceAccount. */
export function ensureNamespace(kube: Kube, namespace: string): Promise<void> {
  return ensureNamespaceOf(kube.api, namespace);
}

/**
 * Every pod change of the cluster (all namespaces, or one), from a list, in the order the API server made them,
 * each with the time it arrived (monotonic ms): what bench/overcommit.ts replays, and the bind times of a run.
 */
export class PodChangeLog {
  readonly changes: (PodChange & { readonly atMs: number })[] = [];
  private controller: AbortController | undefined;
  private stopped = false;
  private resourceVersion = '';

  constructor(
    private readonly kube: Kube,
    private readonly namespace?: string,
  ) {}

  async start(): Promise<void> {
    const namespace = this.namespace;
    const list = await this.kube.listAll((c) => (namespace ? this.kube.api.listNamespacedPod({ namespace, limit: 1000, _continue: c }) : this.kube.api.listPodForAllNamespaces({ limit: 1000, _continue: c })));
    for (const p of list.items) this.keep('ADDED', p);
    this.resourceVersion = list.resourceVersion;
    await this.open();
  }

  private async open(): Promise<void> {
    this.controller = await this.kube.watch.watch(
      this.namespace ? `/api/v1/namespaces/${this.namespace}/pods` : '/api/v1/pods',
      { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 3600 },
      (type, obj: V1Pod) => {
        if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.keep(type, obj);
      },
      (err: unknown) => {
        if (this.stopped) return;
        log(`pod watch ended (${err instanceof Error ? err.message : String(err ?? 'closed')}); reopening from ${this.resourceVersion}`);
        void this.open().catch((e: Error) => log(`cannot reopen the pod watch: ${e.message}`));
      },
    );
  }

  /** Keeps what the replay reads. */
  private keep(type: PodChange['type'], p: V1Pod): void {
    const pod: Pod = {
      metadata: { name: p.metadata?.name ?? '', namespace: p.metadata?.namespace ?? '', resourceVersion: p.metadata?.resourceVersion ?? '' },
      spec: { schedulerName: p.spec?.schedulerName ?? '', nodeName: p.spec?.nodeName ?? '', containers: (p.spec?.containers ?? []).map((c) => ({ name: c.name, resources: { requests: c.resources?.requests ?? {} } })) } as Pod['spec'],
      status: { phase: p.status?.phase ?? '' },
    };
    this.changes.push({ type, pod, atMs: nowMs() });
  }

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
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
