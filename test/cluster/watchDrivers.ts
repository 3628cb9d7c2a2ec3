/**
 * Two ways to play the API server's side of one resource's list + watch for the reflector tests, behind one
 * interface, so the same scenario runs on both:
 *
 * - `scriptedDriver`: an in-memory ResourceSource that behaves exactly as @kubernetes/client-node 1.4's Watch
 *   (dist/watch.js, over node-fetch 2) does, checked by watchClient.test.ts against the real client:
 *     · an HTTP error status on the watch request: `done(err)` with `err.statusCode`, called before `watch()`
 *       resolves (watch() does not reject);
 *     · each line of the stream: `callback(type, object)`; whatever the callback throws is swallowed;
 *     · the server ends the stream: `done(null)`;
 *     · the connection breaks mid-stream: `done(Error 'Premature close')`;
 *     · the caller aborts: `done(AbortError 'The user aborted a request.')`, synchronously inside abort();
 *     · `done` is called once, whatever happens after.
 * - `endpointDriver`: a real HTTP server on 127.0.0.1 speaking the API server's wire format for /api/v1/nodes
 *   (NodeList pages, `?watch=true` streams of JSON lines), read by the production source (kube.ts nodeSource:
 *   apiClient's CoreV1Api + client-node's Watch).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AbortError, ApiException, KubeConfig } from '@kubernetes/client-node';
import { apiClient, nodeSource } from '../../src/cluster/kubeClient.js';
import type { ListPage, ResourceSource } from '../../src/cluster/reflector.js';

export interface Obj {
  metadata: { name: string; resourceVersion?: string };
}

export const obj = (name: string, resourceVersion?: string): Obj => ({
  metadata: { name, ...(resourceVersion ? { resourceVersion } : {}) },
});

/** A Status as the API server sends it in an ERROR event or as the body of a refused request. */
export const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  code,
  reason,
  message,
});
export const EXPIRED = status(410, 'Expired', 'too old resource version: 5 (90)');

/** One watch request as the server sees it. */
export interface WatchHandle {
  readonly fromVersion: string;
  /** The `timeoutSeconds` the client asked for (undefined when none). */
  readonly timeoutSeconds: number | undefined;
  /** One event line. */
  send(type: string, object: unknown): void;
  /** The server ends the stream (its timeoutSeconds, or a graceful shutdown). */
  close(): void;
  /** The connection breaks mid-stream (the server was killed, a reset). */
  breakConnection(): void;
  /** True once the client has aborted the request. */
  readonly aborted: boolean;
}

export type ListAnswer<T = Obj> = ListPage<T> | { readonly status: number };

export interface WatchDriver<T = Obj> {
  readonly name: string;
  readonly source: ResourceSource<T>;
  readonly listCalls: { limit: number; continueToken?: string | undefined }[];
  /** Watch requests in order, including refused ones (those are never open). */
  readonly watches: WatchHandle[];
  /** Answers of the next list calls, in order: a page, or an HTTP status to refuse with. A list call with no
   *  answer queued waits for one. */
  queueLists(...answers: ListAnswer<T>[]): void;
  /** The next watch request is refused with this HTTP status (a Status body), not answered with a stream. */
  refuseNextWatch(code: number): void;
  close(): Promise<void>;
}

/** List answers queued by the test; a call finding none waits for the next one queued. */
class ListQueue<T> {
  private readonly answers: ListAnswer<T>[] = [];
  private readonly waiting: ((answer: ListAnswer<T>) => void)[] = [];
  push(...answers: ListAnswer<T>[]): void {
    for (const answer of answers) {
      const waiter = this.waiting.shift();
      if (waiter) waiter(answer);
      else this.answers.push(answer);
    }
  }
  next(): Promise<ListAnswer<T>> {
    const answer = this.answers.shift();
    return answer ? Promise.resolve(answer) : new Promise((resolve) => this.waiting.push(resolve));
  }
}

const STATUS_TEXT: Record<number, string> = {
  403: 'Forbidden',
  410: 'Gone',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function scriptedDriver<T = Obj>(): WatchDriver<T> {
  const lists = new ListQueue<T>();
  const refusals: number[] = [];
  const listCalls: WatchDriver['listCalls'] = [];
  const watches: WatchHandle[] = [];
  const source: ResourceSource<T> = {
    async list(options) {
      listCalls.push(options);
      const next = await lists.next();
      // CoreV1Api's refusal: an ApiException with the code and the Status body as text
      if ('status' in next)
        throw new ApiException(
          next.status,
          'Unknown API Status Code!',
          JSON.stringify(status(next.status, STATUS_TEXT[next.status] ?? 'Error', 'scripted refusal')),
          {},
        );
      return next;
    },
    async watch(options, onEvent, onDone) {
      let done = false;
      const doneOnce = (err: unknown) => {
        if (done) return;
        done = true;
        onDone(err);
      };
      let aborted = false;
      const handle: WatchHandle = {
        fromVersion: options.resourceVersion,
        timeoutSeconds: options.timeoutSeconds,
        send(type, object) {
          if (done) return;
          try {
            onEvent(type, object);
          } catch {
            // client-node ignores what its callback throws (its "ignore parse errors" catch)
          }
        },
        close: () => doneOnce(null),
        breakConnection: () =>
          doneOnce(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })),
        get aborted() {
          return aborted;
        },
      };
      watches.push(handle);
      const refusal = refusals.shift();
      if (refusal !== undefined) {
        aborted = true; // nothing stays open
        doneOnce(Object.assign(new Error(STATUS_TEXT[refusal] ?? 'Error'), { statusCode: refusal }));
      }
      return () => {
        aborted = true;
        doneOnce(new AbortError('The user aborted a request.')); // node-fetch emits the abort on the body at once: done runs inside abort()
      };
    },
  };
  return {
    name: 'scripted source (client-node semantics)',
    source,
    listCalls,
    watches,
    queueLists: (...answers) => lists.push(...answers),
    refuseNextWatch: (code) => void refusals.push(code),
    close: async () => undefined,
  };
}

/** A real HTTP endpoint for /api/v1/nodes, read through kube.ts's nodeSource (CoreV1Api and client-node's Watch). */
export async function endpointDriver(): Promise<WatchDriver> {
  const lists = new ListQueue<Obj>();
  const refusals: number[] = [];
  const listCalls: WatchDriver['listCalls'] = [];
  const watches: WatchHandle[] = [];
  const json = (res: ServerResponse, code: number, body: unknown) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/api/v1/nodes') return json(res, 404, status(404, 'NotFound', `no route ${url.pathname}`));
    if (url.searchParams.get('watch') !== 'true') {
      const continueToken = url.searchParams.get('continue') ?? undefined;
      listCalls.push({ limit: Number(url.searchParams.get('limit')), continueToken });
      const next = await lists.next();
      if ('status' in next)
        return json(res, next.status, status(next.status, STATUS_TEXT[next.status] ?? 'Error', 'scripted refusal'));
      return json(res, 200, {
        kind: 'NodeList',
        apiVersion: 'v1',
        metadata: {
          resourceVersion: next.resourceVersion,
          ...(next.continueToken ? { continue: next.continueToken } : {}),
        },
        items: next.items,
      });
    }
    const timeout = url.searchParams.get('timeoutSeconds');
    let aborted = false;
    const handle: WatchHandle = {
      fromVersion: url.searchParams.get('resourceVersion') ?? '',
      timeoutSeconds: timeout === null ? undefined : Number(timeout),
      send: (type, object) => void res.write(`${JSON.stringify({ type, object })}\n`),
      close: () => void res.end(),
      breakConnection: () => res.socket?.destroy(),
      get aborted() {
        return aborted;
      },
    };
    watches.push(handle);
    const refusal = refusals.shift();
    if (refusal !== undefined) {
      aborted = true;
      return json(res, refusal, status(refusal, STATUS_TEXT[refusal] ?? 'Error', 'scripted refusal'));
    }
    res.on('close', () => {
      if (!res.writableFinished) aborted = true; // closed by the client before the server ended it
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
  };
  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'scripted', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'anonymous' }],
    contexts: [{ name: 'scripted', cluster: 'scripted', user: 'anonymous' }],
    currentContext: 'scripted',
  });
  return {
    name: 'HTTP endpoint read by client-node (kube.ts nodeSource)',
    source: nodeSource(kc, apiClient(kc)) as unknown as ResourceSource<Obj>,
    listCalls,
    watches,
    queueLists: (...answers) => lists.push(...answers),
    refuseNextWatch: (code) => void refusals.push(code),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
