/**
 * Requeuer (src/cluster/requeuer.ts) against a local HTTP server standing in for the API server, through
 * the real client (client-node's StorageV1Api on keepAliveConfiguration): what it writes, when, and what
 * it does with failures.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { keepAliveConfiguration } from '../../src/cluster/kubeClient.js';
import { REQUEUE_ANNOTATION, Requeuer, requeueObjectWrite, type NudgeResult } from '../../src/cluster/requeuer.js';
import type { NudgeTarget } from '../../src/core/requeue/rejections.js';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly contentType: string;
  readonly body: { metadata: { annotations: Record<string, string> } };
  readonly atMs: number;
}

let server: Server;
let api: StorageV1Api;
let received: Received[];
/** Statuses to answer, in order (then 200); a `hold` promise delays the next answer. */
let statuses: number[];
let hold: Promise<void> | null;

beforeEach(async () => {
  received = [];
  statuses = [];
  hold = null;
  server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      received.push({
        method: req.method!,
        url: req.url!,
        contentType: req.headers['content-type'] ?? '',
        body: JSON.parse(text) as Received['body'],
        atMs: Date.now(),
      });
      const status = statuses.shift() ?? 200;
      const answer = () => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            status === 200
              ? {
                  apiVersion: 'storage.k8s.io/v1',
                  kind: 'CSIStorageCapacity',
                  metadata: { name: 'sandbox-extender-requeue', namespace: 'kube-system' },
                  storageClassName: 'sandbox-extender.io-requeue',
                }
              : { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: status, message: `status ${status}` },
          ),
        );
      };
      if (hold) void hold.then(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    // client-node refuses plain HTTP unless TLS verification is off.
    clusters: [
      { name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  api = new StorageV1Api(keepAliveConfiguration(kc));
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const target = (n: number): NudgeTarget => ({ uid: `uid-${n}`, key: `sandboxes/w${n}`, nodeName: 'n1' });

function requeuer(options: { perSecond?: number; take?: () => readonly NudgeTarget[] } = {}) {
  const nudged: [NudgeResult, number][] = [];
  const failed: NudgeTarget[][] = [];
  const warnings: string[] = [];
  let taken = 0;
  let next = 0;
  const logger = pino(
    { level: 'warn' },
    { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) },
  );
  const r = new Requeuer(
    requeueObjectWrite(api, 'kube-system', 'sandbox-extender-requeue'),
    {
      namespace: 'kube-system',
      name: 'sandbox-extender-requeue',
      perSecond: options.perSecond ?? 100,
      minBackoffMs: 1,
      maxBackoffMs: 5,
      take: () => {
        taken++;
        return options.take ? options.take() : [target(next++)];
      },
      failed: (t) => failed.push([...t]),
      now: () => Date.parse('2026-01-02T03:04:05.678Z'),
      onNudged: (result, pods) => nudged.push([result, pods]),
    },
    logger,
  );
  return { r, nudged, failed, warnings, taken: () => taken };
}

describe('Requeuer', () => {
  it('wake() calls nothing at once; the round merge-patches the requeue annotation of the CSIStorageCapacity', async () => {
    const t = requeuer({ take: () => [target(1), target(2)] });
    t.r.wake();
    expect(t.taken()).toBe(0); // no selection, no API call on the caller's path
    await t.r.idle();
    expect(received).toEqual([
      {
        method: 'PATCH',
        url: '/apis/storage.k8s.io/v1/namespaces/kube-system/csistoragecapacities/sandbox-extender-requeue',
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { [REQUEUE_ANNOTATION]: '2026-01-02T03:04:05.678Z #1' } } },
        atMs: expect.any(Number) as number,
      },
    ]);
    expect(t.nudged).toEqual([['requeued', 2]]);
  });

  it('nothing to nudge: no write', async () => {
    const t = requeuer({ take: () => [] });
    t.r.wake();
    await t.r.idle();
    expect([t.taken(), received.length, t.nudged.length]).toEqual([1, 0, 0]);
  });

  it('wakes while a round is in flight coalesce into one more round; every write is a different annotation value', async () => {
    let release: () => void = () => undefined;
    hold = new Promise<void>((r) => (release = r));
    const t = requeuer();
    t.r.wake();
    for (let i = 0; i < 2000 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 1));
    expect(received).toHaveLength(1); // the first write, its answer held
    for (let i = 0; i < 10; i++) t.r.wake();
    hold = null;
    release();
    await t.r.idle();
    expect(t.taken()).toBe(2);
    expect(received.map((r) => r.body.metadata.annotations[REQUEUE_ANNOTATION])).toEqual([
      '2026-01-02T03:04:05.678Z #1',
      '2026-01-02T03:04:05.678Z #2',
    ]);
  });

  it('at most perSecond writes per second: the second round waits for the next second', async () => {
    const t = requeuer({ perSecond: 1 });
    t.r.wake();
    await t.r.idle();
    t.r.wake();
    await t.r.idle();
    expect(received).toHaveLength(2);
    expect(received[1]!.atMs - received[0]!.atMs).toBeGreaterThanOrEqual(950);
  });

  it('a failed write is retried with backoff; success counts the pods as requeued', async () => {
    statuses = [500, 503];
    const t = requeuer({ take: () => [target(1)] });
    t.r.wake();
    await t.r.idle();
    expect(received).toHaveLength(3);
    expect(t.nudged).toEqual([['requeued', 1]]);
    expect(t.failed).toEqual([]);
  });

  it.each([
    [404, /the requeue object CSIStorageCapacity kube-system\/sandbox-extender-requeue does not exist/],
    [403, /the extender may not patch CSIStorageCapacity kube-system\/sandbox-extender-requeue \(RBAC\)/],
  ])(
    'HTTP %i is not retried: the pods are counted failed and handed back, with a warning that says why',
    async (status, why) => {
      statuses = [status];
      const t = requeuer({ take: () => [target(1), target(2)] });
      t.r.wake();
      await t.r.idle();
      expect(received).toHaveLength(1);
      expect(t.nudged).toEqual([['failed', 2]]);
      expect(t.failed).toEqual([[target(1), target(2)]]);
      expect(t.warnings.join('\n')).toMatch(why);
    },
  );

  it('retries give up after `retries`: the pods are counted failed and handed back', async () => {
    statuses = [500, 500, 500, 500];
    const t = requeuer({ take: () => [target(7)] });
    t.r.wake();
    await t.r.idle();
    expect(received).toHaveLength(4); // the first attempt and 3 retries
    expect(t.nudged).toEqual([['failed', 1]]);
    expect(t.failed).toEqual([[target(7)]]);
  });

  it('after stop() a wake does nothing', async () => {
    const t = requeuer();
    await t.r.stop();
    t.r.wake();
    await t.r.idle();
    expect([t.taken(), received.length]).toEqual([0, 0]);
  });
});
