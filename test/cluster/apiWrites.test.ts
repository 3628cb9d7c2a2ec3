/**
 * ApiWrites (src/cluster/apiWrites.ts): the extender's writes over undici against a local HTTP server
 * standing in for the API server — paths, methods, bodies, content types, the kubeconfig's
 * authentication header (reused for HEADERS_MAX_AGE_MS, taken afresh after a 401), refusals as
 * ApiWriteError with the HTTP status and the Status message, and no writer when a proxy is configured.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { statusOf } from '../../src/cluster/apiStatus.js';
import { ApiWrites, ApiWriteError, HEADERS_MAX_AGE_MS } from '../../src/cluster/apiWrites.js';
import { Binder } from '../../src/cluster/binder.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let seen: Seen[];
let reply: (req: Seen) => { status: number; body: unknown };

beforeEach(async () => {
  seen = [];
  reply = () => ({ status: 201, body: { kind: 'Event' } });
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body };
      seen.push(request);
      const { status, body: out } = reply(request);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function kubeconfig(token: string, extra: { proxyUrl?: string } = {}): KubeConfig {
  const kc = new KubeConfig();
  const { port } = server.address() as AddressInfo;
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true, ...extra }], // client-node takes plain HTTP only with skipTLSVerify
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const event = {
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { generateName: 'p.', namespace: 'ns 1' },
  involvedObject: { kind: 'Pod', name: 'p', namespace: 'ns 1', uid: 'u' },
  reason: 'ProjectedPlacement',
  message: 'm',
  type: 'Normal',
};

describe('ApiWrites', () => {
  it('POSTs an Event as JSON to its namespace, with the kubeconfig bearer token', async () => {
    const writes = (await ApiWrites.create(kubeconfig('tok-1')))!;
    await writes.createNamespacedEvent({ namespace: 'ns 1', body: event });
    await writes.close();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('POST');
    expect(seen[0]!.url).toBe('/api/v1/namespaces/ns%201/events');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
    expect(seen[0]!.headers.authorization).toBe('Bearer tok-1');
    expect(JSON.parse(seen[0]!.body)).toEqual(event);
  });

  it('creates a Binding, reads a pod back and merge-patches the requeue object on their paths', async () => {
    reply = (req) =>
      req.method === 'GET'
        ? { status: 200, body: { metadata: { name: 'p', uid: 'u1' }, spec: { nodeName: 'n1' } } }
        : { status: 201, body: {} };
    const writes = (await ApiWrites.create(kubeconfig('t')))!;
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'p', namespace: 'ns', uid: 'u1' },
      target: { apiVersion: 'v1', kind: 'Node', name: 'n1' },
    };
    await writes.createNamespacedPodBinding({ name: 'p', namespace: 'ns', body: binding });
    const pod = await writes.readNamespacedPod({ name: 'p', namespace: 'ns' });
    await writes.mergePatchCSIStorageCapacity({
      namespace: 'kube-system',
      name: 'q',
      body: { metadata: { annotations: { a: 'b' } } },
    });
    await writes.close();
    expect(seen.map((s) => `${s.method} ${s.url} ${s.headers['content-type'] ?? '-'}`)).toEqual([
      'POST /api/v1/namespaces/ns/pods/p/binding application/json',
      'GET /api/v1/namespaces/ns/pods/p -',
      'PATCH /apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities/q application/merge-patch+json',
    ]);
    expect(JSON.parse(seen[0]!.body)).toEqual(binding);
    expect(pod.spec?.nodeName).toBe('n1');
  });

  it('a refusal is an ApiWriteError with the HTTP status (statusOf reads it) and the Status message', async () => {
    reply = () => ({
      status: 409,
      body: { kind: 'Status', code: 409, message: 'pod p is already assigned to node n2' },
    });
    const writes = (await ApiWrites.create(kubeconfig('t')))!;
    const err = await writes
      .createNamespacedPodBinding({ name: 'p', namespace: 'ns', body: {} as never })
      .catch((e: unknown) => e);
    await writes.close();
    expect(err).toBeInstanceOf(ApiWriteError);
    expect(statusOf(err)).toBe(409);
    expect((err as Error).message).toBe(
      'POST /api/v1/namespaces/ns/pods/p/binding: HTTP 409: pod p is already assigned to node n2',
    );
  });

  it('the Binder decides from the status ApiWrites reports: a 409 for the same node is success', async () => {
    reply = (req) =>
      req.method === 'GET'
        ? { status: 200, body: { metadata: { name: 'p', uid: 'u1' }, spec: { nodeName: 'n1' } } }
        : { status: 409, body: { message: 'already assigned' } };
    const writes = (await ApiWrites.create(kubeconfig('t')))!;
    const outcome = await new Binder(writes).bind({ podName: 'p', podNamespace: 'ns', podUid: 'u1', node: 'n1' });
    await writes.close();
    expect(outcome).toEqual({ ok: true, alreadyBound: true });
  });

  it('reuses the authentication headers for HEADERS_MAX_AGE_MS, takes them afresh after that and after a 401', async () => {
    const kc = kubeconfig('old');
    let now = 1_000_000;
    const writes = (await ApiWrites.create(kc, () => now))!;
    await writes.createNamespacedEvent({ namespace: 'ns', body: event });
    (kc.getCurrentUser() as { token: string }).token = 'new'; // rotated (e.g. a projected service-account token re-read)
    now += HEADERS_MAX_AGE_MS - 1;
    await writes.createNamespacedEvent({ namespace: 'ns', body: event });
    now += 1;
    await writes.createNamespacedEvent({ namespace: 'ns', body: event });
    (kc.getCurrentUser() as { token: string }).token = 'newer';
    reply = () => ({ status: 401, body: { message: 'Unauthorized' } });
    await expect(writes.createNamespacedEvent({ namespace: 'ns', body: event })).rejects.toThrow(
      'HTTP 401: Unauthorized',
    );
    reply = () => ({ status: 201, body: {} });
    await writes.createNamespacedEvent({ namespace: 'ns', body: event });
    await writes.close();
    expect(seen.map((s) => s.headers.authorization)).toEqual([
      'Bearer old',
      'Bearer old',
      'Bearer new',
      'Bearer new',
      'Bearer newer',
    ]);
  });

  it('gives no writer for a kubeconfig with a proxy (client-node, which honours it, stays in charge)', async () => {
    expect(await ApiWrites.create(kubeconfig('t', { proxyUrl: 'http://proxy.invalid:3128' }))).toBeNull();
    expect(seen).toHaveLength(0);
  });
});
