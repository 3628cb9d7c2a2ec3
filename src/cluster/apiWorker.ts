/**
 * The worker thread of cluster mode's API side (see apiThread.ts for why and for the messages): the
 * list/watch reflectors (LiveSync), the Binder, the EventRecorder and the requeue object's write, with their own client. Records
 * are posted to the main thread in batches (one message per turn of this thread's event loop, in the
 * order the changes came), and each watch's health twice a second.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CoreV1Api, KubeConfig, StorageV1Api } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { CacheUpdates } from '../core/sync.js';
import { statusOf } from './apiStatus.js';
import type { ApiWorkerData, FromWorker, ToWorker, Update } from './apiThread.js';
import { Binder } from './binder.js';
import { EventRecorder, type EventOutcome } from './events.js';
import { keepAliveConfiguration, nodeSource, podSource } from './kubeClient.js';
import { LiveSync, type SyncObserver } from './liveSync.js';
import { requeueObjectWrite } from './requeuer.js';
import { TurnBatch } from './turnBatch.js';

/** How often the watches' health is reported (ms). */
const HEALTH_EVERY_MS = 500;

const port = parentPort!;
const data = workerData as ApiWorkerData;
const post = (message: FromWorker) => port.postMessage(message);
const logger = pino({ level: data.logLevel, base: { app: 'sandbox-extender', thread: 'api' } });

/**
 * CacheUpdates that queue each call and post them together at the end of the current turn; of the
 * pods' resourceVersions only the last of the turn is sent, after the changes it covers.
 */
function postingUpdates(): CacheUpdates {
  let batch: Update[] = [];
  let podsVersion: string | null = null;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (podsVersion !== null) batch.push(['podsAppliedAt', podsVersion]);
    const ready = batch;
    batch = [];
    podsVersion = null;
    post({ t: 'updates', batch: ready });
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  const push = (update: Update) => {
    schedule();
    batch.push(update);
  };
  return {
    replaceNodes: (listing) => push(['replaceNodes', { nodes: listing.nodes, keptNodes: listing.keptNodes }]),
    replacePods: (listing) => push(['replacePods', { pods: listing.pods, keptPods: listing.keptPods }]),
    upsertNode: (record) => push(['upsertNode', record]),
    deleteNode: (name) => push(['deleteNode', name]),
    upsertPod: (record) => push(['upsertPod', record]),
    deletePod: (uid) => push(['deletePod', uid]),
    podsAppliedAt: (resourceVersion) => {
      schedule();
      podsVersion = resourceVersion;
    },
  };
}

const observer: SyncObserver = {
  started: (resource) => post({ t: 'observer', kind: 'started', resource }),
  restarted: (resource) => post({ t: 'observer', kind: 'restarted', resource }),
  listed: (resource, relist) => post({ t: 'observer', kind: 'listed', resource, relist }),
};

function start(): void {
  const kc = new KubeConfig();
  kc.loadFromString(data.kubeconfig);
  const configuration = keepAliveConfiguration(kc);
  const api = new CoreV1Api(configuration);
  const requeue = data.requeue ? requeueObjectWrite(new StorageV1Api(configuration), data.requeue.namespace, data.requeue.name) : null;
  const live = new LiveSync(postingUpdates(), { nodes: nodeSource(kc, api), pods: podSource(kc, api) }, { dims: { names: data.dims }, pausedLabel: data.pausedLabel, ...data.watch }, observer, logger);
  const binder = new Binder(api);
  const events = data.events;
  const outcomes = new TurnBatch<EventOutcome>((batch) => post({ t: 'eventOutcomes', outcomes: batch }));
  const recorder = events
    ? new EventRecorder(api, { eventsPerSecond: events.perSecond, maxQueued: events.maxQueued, dedupeWindowMs: events.dedupeWindowSeconds * 1000, now: () => Date.now(), onOutcome: (outcome) => outcomes.push(outcome) }, logger)
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
        if (!requeue) post({ t: 'requeued', id: message.id, status: null, error: 'requeue is not configured on the API worker' });
        else {
          void requeue(message.value).then(
            () => post({ t: 'requeued', id: message.id, status: null, error: null }),
            (err: unknown) => post({ t: 'requeued', id: message.id, status: statusOf(err) ?? null, error: (err as Error)?.message ?? String(err) }),
          );
        }
        break;
      case 'stop':
        clearInterval(healthTimer);
        void live.stop().then(() => post({ t: 'stopped' }));
        break;
    }
  });
  live.start();
  reportHealth();
  post({ t: 'started', server: kc.getCurrentCluster()?.server ?? '' });
}

try {
  start();
} catch (err) {
  post({ t: 'failed', error: (err as Error).message });
}
