/**
 * What the cluster benchmarks (cluster.ts, startingBurst.ts, agentSandbox.ts) share about the e2e control plane:
 * where its scripts and state live, running one of its scripts, reading its cluster.env, its admin clients, and
 * clearing the not-ready taint of fresh nodes.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import https from 'node:https';
import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, ServerConfiguration, Watch, createConfiguration, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePrometheusText } from './clusterStats.js';

/** The repository (this file runs from dist/bench/). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const E2E_DIR = join(REPO_ROOT, 'test', 'e2e');
/** The cluster's state folder ($SANDBOX_E2E_STATE, default .e2e/), as test/e2e/lib.sh has it. */
export const STATE_DIR = process.env.SANDBOX_E2E_STATE ? resolve(process.env.SANDBOX_E2E_STATE) : join(REPO_ROOT, '.e2e');

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A progress line on stderr, with the wall-clock time. */
export const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

/**
 * Runs a test/e2e script; its stderr (progress) is echoed line by line, prefixed with the script's name.
 * @returns its stdout. @throws when it cannot start or exits non-zero.
 */
/** One metric of a server's /metrics summed per value of one label ({value: sum}); series without the label are left out. */
export async function metricByLabel(url: string, name: string, label: string): Promise<Record<string, number>> {
  const samples = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name && s.labels[label] !== undefined) out[s.labels[label]!] = (out[s.labels[label]!] ?? 0) + s.value;
  return out;
}

export function script(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((ok, bad) => {
    const child = spawn('bash', [join(E2E_DIR, name), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    let partial = '';
    child.stderr.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim()) process.stderr.write(`  ${name}: ${l}\n`);
    });
    child.on('error', bad);
    child.on('close', (code) => (code === 0 ? ok(stdout) : bad(new Error(`${name} ${args.join(' ')} exited with ${code}`))));
  });
}

export type ClusterEnv = Record<string, string>;

/**
 * The running cluster's cluster.env (KEY=value lines written by cluster-up.sh).
 * @throws when the file is missing (no cluster up) or lacks one of `required`.
 */
export function readClusterEnv(required: readonly string[] = ['KUBECONFIG', 'EXTENDER_URL']): ClusterEnv {
  const file = join(STATE_DIR, 'cluster.env');
  if (!existsSync(file)) throw new Error(`${file} not found: is the e2e cluster up?`);
  const env: ClusterEnv = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!;
  }
  for (const key of required) if (!env[key]) throw new Error(`${file} has no ${key}`);
  return env;
}

export { positiveInt } from './cliOptions.js';

/**
 * Creates the namespace (if missing) and waits for its default ServiceAccount (kube-controller-manager makes it a
 * moment later; ServiceAccount admission refuses pods until then). @throws after a minute without it.
 */
export async function ensureNamespace(core: CoreV1Api, name: string): Promise<void> {
  try {
    await core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  for (let i = 0; ; i++) {
    try {
      await core.readNamespacedServiceAccount({ name: 'default', namespace: name });
      return;
    } catch {
      if (i > 240) throw new Error(`no default ServiceAccount in ${name}`);
      await sleep(250);
    }
  }
}

/** Runs `fn` over `items` with at most `width` calls in flight. */
export async function inParallel<T>(items: readonly T[], width: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
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

/** The admin clients of the e2e cluster, on one keep-alive agent. */
export interface AdminClients {
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly watch: Watch;
  readonly agent: https.Agent;
  /** The admin client certificate (the schedulers' /metrics and /configz ask for one). */
  readonly clientCert: { cert: Buffer; key: Buffer };
}

/**
 * client-node's generated APIs for the cluster's admin kubeconfig, sharing one keep-alive agent of `concurrency`
 * sockets (client-node's own authentication makes a new agent, so a new TLS connection, per request: too slow to
 * create a burst), plus client-node's Watch. @throws when the kubeconfig has no client certificate.
 */
export async function adminClients(kubeconfig: string, concurrency: number): Promise<AdminClients> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  if (!opts.cert || !opts.key) throw new Error(`${kubeconfig} has no client certificate`);
  const clientCert = { cert: opts.cert as Buffer, key: opts.key as Buffer };
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ...(opts.ca ? { ca: opts.ca as Buffer } : {}), ...clientCert });
  const config = createConfiguration({
    baseServer: new ServerConfiguration(kc.getCurrentCluster()!.server, {}),
    authMethods: { default: { getName: () => 'e2e-admin-keepalive', applySecurityAuthentication: (ctx) => ctx.setAgent(agent) } },
  });
  return { core: new CoreV1Api(config), custom: new CustomObjectsApi(config), watch: new Watch(kc), agent, clientCert };
}

const NOT_READY_TAINTS = new Set(['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']);
export const taintsToClear = (n: V1Node) => (n.spec?.taints ?? []).map((t, i) => ({ t, i })).filter(({ t }) => NOT_READY_TAINTS.has(t.key));
export const isReady = (n: V1Node) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
/** The node carries node.kubernetes.io/not-ready or .../unreachable (pods without a toleration stay off it). */
export const notReadyTainted = (n: V1Node) => taintsToClear(n).length > 0;

/** Every Node, listed in pages of 1,000. */
export async function listNodes(core: CoreV1Api): Promise<V1Node[]> {
  const nodes: V1Node[] = [];
  let cont: string | undefined;
  do {
    const page = await core.listNode({ limit: 1000, _continue: cont });
    nodes.push(...page.items);
    cont = page.metadata?._continue || undefined;
  } while (cont);
  return nodes;
}

/**
 * Waits until no node carries node.kubernetes.io/not-ready or .../unreachable. Right after cluster-up the node
 * lifecycle controller (kube-controller-manager, 20 requests/s by default) is still working through the nodes it
 * tainted at creation, for minutes at 1,000+ nodes; a node KWOK already reports Ready has the taint removed
 * here (JSON patch with a `test` of the key, so a taint changed meanwhile is left alone). Returns what it did.
 * @throws when nodes are still tainted after `timeoutMs`.
 */
export async function untaintNodes(core: CoreV1Api, timeoutMs = 600_000): Promise<{ removed: number; waitedMs: number }> {
  const start = Date.now();
  let removed = 0;
  let cleanChecks = 0;
  for (;;) {
    const nodes = await listNodes(core);
    const tainted = nodes.filter(notReadyTainted);
    if (tainted.length === 0) {
      if (++cleanChecks >= 2) return { removed, waitedMs: Date.now() - start };
      await sleep(2000); // once more: a controller pass in flight could still add one
      continue;
    }
    cleanChecks = 0;
    const ready = tainted.filter(isReady);
    log(`${tainted.length} of ${nodes.length} nodes carry a not-ready/unreachable taint; removing it from the ${ready.length} Ready ones`);
    await inParallel(ready, 16, async (n) => {
      // Highest index first, so the earlier indexes stay valid within the one patch.
      const ops = taintsToClear(n)
        .sort((a, b) => b.i - a.i)
        .flatMap(({ t, i }) => [
          { op: 'test', path: `/spec/taints/${i}/key`, value: t.key },
          { op: 'remove', path: `/spec/taints/${i}` },
        ]);
      try {
        await core.patchNode({ name: n.metadata!.name!, body: ops }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
        removed++;
      } catch {
        // changed meanwhile (the controller got there first): the next pass looks again
      }
    });
    if (Date.now() - start > timeoutMs) throw new Error(`nodes still tainted not-ready after ${timeoutMs / 1000}s`);
    await sleep(1000);
  }
}
