/**
 * What the cluster benchmarks share about talking to the e2e cluster's API server: an admin client with one
 * keep-alive agent, a bounded-concurrency pool, waiting for a condition, and clearing the not-ready taint the
 * node lifecycle controller keeps on many nodes for minutes after a 1,000-node cluster-up.
 */
import https from 'node:https';
import { CoreV1Api, KubeConfig, PatchStrategy, ServerConfiguration, Watch, createConfiguration, setHeaderOptions, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { log, sleep } from './e2eCluster.js';

const NOT_READY_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);

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

export const taintsToClear = (n: V1Node) => (n.spec?.taints ?? []).map((t, i) => ({ t, i })).filter(({ t }) => NOT_READY_TAINTS.has(t.key));
const isReady = (n: V1Node) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Runs `fn` over `items` with at most `width` in flight. */
export async function pool<T>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
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

/**
 * Waits until no node carries node.kubernetes.io/not-ready or .../unreachable. Right after cluster-up the node
 * lifecycle controller (kube-controller-manager, 20 requests/s by default) is still working through the nodes it
 * tainted at creation, for minutes at 1,000+ nodes; a node KWOK already reports Ready has the taint removed
 * here (JSON patch with a `test` of the key, so a taint changed meanwhile is left alone). Returns what it did.
 */
export async function untaintNodes(kube: Kube, timeoutMs = 600_000): Promise<{ removed: number; waitedMs: number }> {
  const start = nowMs();
  let removed = 0;
  let cleanChecks = 0;
  for (;;) {
    const nodes = await kube.nodes();
    const tainted = nodes.filter((n) => taintsToClear(n).length > 0);
    if (tainted.length === 0) {
      if (++cleanChecks >= 2) return { removed, waitedMs: nowMs() - start };
      await sleep(2000); // once more: a controller pass in flight could still add one
      continue;
    }
    cleanChecks = 0;
    const ready = tainted.filter(isReady);
    log(`${tainted.length} of ${nodes.length} nodes carry a not-ready/unreachable taint; removing it from the ${ready.length} Ready ones`);
    await pool(ready, 16, async (n) => {
      // Highest index first, so the earlier indexes stay valid within the one patch.
      const ops = taintsToClear(n)
        .sort((a, b) => b.i - a.i)
        .flatMap(({ t, i }) => [
          { op: 'test', path: `/spec/taints/${i}/key`, value: t.key },
          { op: 'remove', path: `/spec/taints/${i}` },
        ]);
      try {
        await kube.api.patchNode({ name: n.metadata!.name!, body: ops }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
        removed++;
      } catch {
        // changed meanwhile (the controller got there first): the next pass looks again
      }
    });
    if (nowMs() - start > timeoutMs) throw new Error(`nodes still tainted not-ready after ${timeoutMs / 1000}s`);
    await sleep(1000);
  }
}

export async function waitUntil(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>, everyMs = 20): Promise<void> {
  const deadline = nowMs() + timeoutMs;
  while (!(await check())) {
    if (nowMs() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s waiting for ${what}`);
    await sleep(everyMs);
  }
}
