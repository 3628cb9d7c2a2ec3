/**
 * The extender's writes to the API server (an Event per decision, a Binding per bind, the requeue object's
 * patch) and the pod read a bind may need, through undici with one connection pool and one TLS context, the
 * authentication headers taken from the kubeconfig as client-node applies them (why: ADR 0008). Each method
 * has the signature of the client-node method it stands for, so EventRecorder, Binder and the requeue write
 * take either; a refused request throws an ApiWriteError with the HTTP status in `code`.
 */ import type { KubeConfig, V1Binding, CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { createSecureContext } from 'node:tls';
import { Pool } from 'undici';

/** How long authentication headers are reused before they are taken from the kubeconfig again (ms). */
export const HEADERS_MAX_AGE_MS = 30_000;

/** Connections kept open to the API server for writes. */
const MAX_CONNECTIONS = 16;

/** How long an idle connection is kept (ms). */
const KEEP_ALIVE_MS = 60_000;

/** A request the API server refused: `code` is the HTTP status. */
export class ApiWriteError extends Error {
  override readonly name = 'ApiWriteError';
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

type Headers = Record<string, string>;

/** A Status reply's message, else the start of the body. */
function statusMessage(text: string): string {
  try {
    const status = JSON.parse(text) as { message?: unknown };
    if (typeof status.message === 'string' && status.message) return status.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 200);
}

const segment = (s: string) => encodeURIComponent(s);

export class ApiWrites {
  private readonly pool: Pool;
  private headers: { value: Headers; atMs: number } | null = null;
  private refreshing: Promise<Headers> | null = null;

  private constructor(
    private readonly kc: KubeConfig,
    server: string,
    tls: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized?: boolean; servername?: string },
    private readonly now: () => number,
  ) {
    // One TLS context for every connection (tls.connect would otherwise parse the PEM files for each), and
    // connections kept for a minute between Events (undici's default keeps an idle one 4 s).
    const secureContext = createSecureContext({ ca: tls.ca, cert: tls.cert, key: tls.key });
    const connect = {
      secureContext,
      ...(tls.rejectUnauthorized !== undefined ? { rejectUnauthorized: tls.rejectUnauthorized } : {}),
      ...(tls.servername ? { servername: tls.servername } : {}),
    };
    this.pool = new Pool(server, {
      connections: MAX_CONNECTIONS,
      connect,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
    });
  }

  /**
   * The writer for the kubeconfig's current cluster and user. Null when the kubeconfig names a proxy
   * (the caller keeps client-node's API, which honours it).
   * @throws when the kubeconfig has no current cluster or its TLS files cannot be read.
   */
  static async create(kc: KubeConfig, now: () => number = () => Date.now()): Promise<ApiWrites | null> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('no cluster in the kubeconfig');
    if (cluster.proxyUrl) return null;
    const opts: { ca?: unknown; cert?: unknown; key?: unknown; rejectUnauthorized?: boolean; servername?: string } = {};
    await kc.applyToHTTPSOptions(opts);
    const tls = {
      ...(opts.ca ? { ca: opts.ca as Buffer } : {}),
      ...(opts.cert ? { cert: opts.cert as Buffer } : {}),
      ...(opts.key ? { key: opts.key as Buffer } : {}),
      ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
      ...(opts.servername ? { servername: opts.servername } : {}),
    };
    return new ApiWrites(kc, cluster.server, tls, now);
  }

  /** POST /api/v1/namespaces/NS/events (client-node CoreV1Api.createNamespacedEvent). */
  async createNamespacedEvent(param: { namespace: string; body: CoreV1Event }): Promise<void> {
    await this.send('POST', `/api/v1/namespaces/${segment(param.namespace)}/events`, param.body, 'application/json');
  }

  /** POST /api/v1/namespaces/NS/pods/NAME/binding (client-node CoreV1Api.createNamespacedPodBinding). */
  async createNamespacedPodBinding(param: { name: string; namespace: string; body: V1Binding }): Promise<void> {
    await this.send(
      'POST',
      `/api/v1/namespaces/${segment(param.namespace)}/pods/${segment(param.name)}/binding`,
      param.body,
      'application/json',
    );
  }

  /** GET /api/v1/namespaces/NS/pods/NAME (client-node CoreV1Api.readNamespacedPod). */
  async readNamespacedPod(param: { name: string; namespace: string }): Promise<V1Pod> {
    return JSON.parse(
      await this.send(
        'GET',
        `/api/v1/namespaces/${segment(param.namespace)}/pods/${segment(param.name)}`,
        undefined,
        undefined,
      ),
    ) as V1Pod;
  }

  /** A JSON merge patch of a CSIStorageCapacity (the requeue object; client-node StorageV1Api.patchNamespacedCSIStorageCapacity with MergePatch). */
  async mergePatchCSIStorageCapacity(param: { namespace: string; name: string; body: object }): Promise<void> {
    await this.send(
      'PATCH',
      `/apis/storage.k8s.io/v1/namespaces/${segment(param.namespace)}/csistoragecapacities/${segment(param.name)}`,
      param.body,
      'application/merge-patch+json',
    );
  }

  /** Closes the connections. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** @returns the reply's body. @throws ApiWriteError for a status ≥ 300; the connection error when there is no reply. */
  private async send(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body: unknown,
    contentType: string | undefined,
  ): Promise<string> {
    const auth = await this.authHeaders();
    const headers: Headers = { ...auth, accept: 'application/json' };
    if (contentType) headers['content-type'] = contentType;
    const res = await this.pool.request({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) {
      if (res.statusCode === 401) this.headers = null; // credentials may have rotated: take them afresh next time
      throw new ApiWriteError(`${method} ${path}: HTTP ${res.statusCode}: ${statusMessage(text)}`, res.statusCode);
    }
    return text;
  }

  /** The kubeconfig's authentication headers, taken again when older than HEADERS_MAX_AGE_MS (one refresh at a time). */
  private async authHeaders(): Promise<Headers> {
    const held = this.headers;
    if (held && this.now() - held.atMs < HEADERS_MAX_AGE_MS) return held.value;
    this.refreshing ??= this.readHeaders().finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async readHeaders(): Promise<Headers> {
    const opts: { headers?: Record<string, unknown>; auth?: string } = {};
    await this.kc.applyToHTTPSOptions(opts);
    const value: Headers = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (v !== undefined && v !== null) value[k] = String(v);
    if (opts.auth && !Object.keys(value).some((k) => k.toLowerCase() === 'authorization'))
      value.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    this.headers = { value, atMs: this.now() };
    return value;
  }
}
