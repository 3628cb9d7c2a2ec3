/**
 * The API worker thread (started by ApiThread, messages in workerProtocol.ts): the list/watch reflectors
 * (LiveSync), the Binder, the EventRecorder and the requeue object's write, with a client of its own.
 * Records go to the main thread in batches, in the order the changes came; each watch's health twice a second.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import { statusOf } from './apiStatus.js';
import { Binder } from './binder.js';
import { EventRecorder, type EventOutcome } from './events.js';
import { keepAliveConfiguration, nodeSource, podSource } from './kubeClient.js';
import { LiveSync } from './liveSync.js';
import { requeueMergePatchWrite, requeueObjectWrite } from './requeuer.js';
import { ApiWrites } from './apiWrites.js';
import { TurnBatch } from './turnBatch.js';
import {
  encodingObserver,
  encodingUpdates,
  onlyLastPodsVersion,
  type ApiWorkerData,
  type FromWorker,
  type ToWorker,
  type Update,
} from './workerProtocol.js';

/** How long Event outcomes (counted in a metric) are collected before they go to the main thread (ms). */
const OUTCOME_BATCH_MS = 250;

/** How often the watches' health is reported (ms). */
const HEALTH_EVERY_MS = 500;

const port = parentPort!;
const data = workerData as ApiWorkerData;
/**
 * Watch events reach the main thread at most this long after they were read (ms): every change is
 * covered meanwhile by a reservation (a pod just bound) or needs no haste (capacity freed, which
 * kube-scheduler learns no sooner), and a burst's changes then cost the main thread one message.
 */
const UPDATE_BATCH_MS = 20;
const updateBatch = new TurnBatch<Update>(
  (batch) => port.postMessage({ t: 'updates', batch: onlyLastPodsVersion(batch) } satisfies FromWorker),
  UPDATE_BATCH_MS,
);
/** Every other message goes after the updates read before it (a listing before its `listed`, changes before a health report). */
const post = (message: FromWorker) => {
  updateBatch.flush();
  port.postMessage(message);
};
const logger = pino({ level: data.logLevel, base: { app: 'sandbox-extender', thread: 'api' } });

/**
 * The watches' CacheUpdates: each call queued and posted with the others of its batch, UPDATE_BATCH_MS after
 * the first, so the main thread applies a burst's watch events in one message instead of one per turn of this
 * thread. Of the pods' resourceVersions only the last of a batch is sent, after the changes it covers.
 */
const updates = encodingUpdates((update) => updateBatch.push(update));
const observer = encodingObserver(post);

async function start(): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromString(data.kubeconfig);
  const configuration = keepAliveConfiguration(kc);
  const api = new CoreV1Api(configuration);
  // Writes (Events, Bindings, the requeue patch) through undici, unless the kubeconfig names a proxy (apiWrites.ts).
  const writes = await ApiWrites.create(kc);
  const requeue = !data.requeue
    ? null
    : writes
      ? requeueMergePatchWrite(writes, data.requeue.namespace, data.requeue.name)
      : requeueObjectWrite(new StorageV1Api(configuration), data.requeue.namespace, data.requeue.name);
  const live = new LiveSync(
    updates,
    { nodes: nodeSource(kc, api), pods: podSource(kc, api) },
    { dims: { names: data.dims }, pausedLabel: data.pausedLabel, locality: data.locality, ...data.watch },
    observer,
    logger,
  );
  const binder = new Binder(writes ?? api);
  const events = data.events;
  const outcomes = new TurnBatch<EventOutcome>(
    (batch) => post({ t: 'eventOutcomes', outcomes: batch }),
    OUTCOME_BATCH_MS,
  );
  const recorder = events
    ? new EventRecorder(
        writes ?? api,
        {
          eventsPerSecond: events.perSecond,
          maxQueued: events.maxQueued,
          dedupeWindowMs: events.dedupeWindowSeconds * 1000,
          now: () => Date.now(),
          onOutcome: (outcome) => outcomes.push(outcome),
        },
        logger,
      )
    : null;
  const reportHealth = () => post({ t: 'health', atMs: Date.now(), health: live.health() });
  const healthTimer = setInterval(reportHealth, HEALTH_EVERY_MS);
  port.on('message', (message: ToWorker) => {
    switch (message.t) {
      case 'bind':
        void binder.bind(message.request).then((outcome) => post({ t: 'bound', id: message.id, outcome }));
        break;
      case 'events':
        for (const event of message.events) recorder?.record(event);
        break;
      case 'requeue':
        if (!requeue)
          post({ t: 'requeued', id: message.id, status: null, error: 'requeue is not configured on the API worker' });
        else {
          void requeue(message.value).then(
            () => post({ t: 'requeued', id: message.id, status: null, error: null }),
            (err: unknown) =>
              post({
                t: 'requeued',
                id: message.id,
                status: statusOf(err) ?? null,
                error: (err as Error)?.message ?? String(err),
              }),
          );
        }
        break;
      case 'stop':
        clearInterval(healthTimer);
        void live
          .stop()
          .then(() => writes?.close())
          .then(() => post({ t: 'stopped' }));
        break;
    }
  });
  live.start();
  reportHealth();
  post({ t: 'started', server: kc.getCurrentCluster()?.server ?? '' });
}

start().catch((err: unknown) => post({ t: 'failed', error: (err as Error).message }));
