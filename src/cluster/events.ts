/**
 * Events on pods, so `kubectl describe pod` shows why a pod went where it did. One event per
 * placement decision (never per filter call), deduplicated (the same pod, reason and message within
 * `dedupeWindowMs` is recorded once) and rate-limited (p-throttle); when the queue is full, events
 * are dropped and counted rather than delaying a verb. Recording never blocks or fails a verb.
 */
import { hostname } from 'node:os';
import type { CoreV1Event } from '@kubernetes/client-node';
import pThrottle from 'p-throttle';
import type { Logger } from 'pino';
import { describeApiError } from './apiStatus.js';

/** The reasons of the Events the extender records: a placement decision, or none possible (runtime/sources.ts noticeEvent). */
export type EventReason = 'ProjectedPlacement' | 'ProjectedPlacementFailed';

export interface PodEvent {
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly type: 'Normal' | 'Warning';
  readonly reason: EventReason;
  readonly message: string;
}

/** What became of an Event. */
export type EventOutcome = 'recorded' | 'deduplicated' | 'dropped' | 'failed';

export interface EventRecorderOptions {
  readonly eventsPerSecond: number;
  readonly maxQueued: number;
  readonly dedupeWindowMs: number;
  readonly now: () => number;
  /** Called with `recorded`, `deduplicated`, `dropped` or `failed` for each event. */
  readonly onOutcome?: (outcome: EventOutcome) => void;
}

/** What creates an Event: client-node's CoreV1Api, or ApiWrites (apiWrites.ts). */
export interface CreateEventApi {
  createNamespacedEvent(param: { namespace: string; body: CoreV1Event }): Promise<unknown>;
}

const COMPONENT = 'sandbox-extender';
const MAX_DEDUPE_KEYS = 10_000;

export class EventRecorder {
  private readonly recent = new Map<string, number>();
  private queued = 0;
  private readonly send: (event: PodEvent) => Promise<void>;
  private readonly instance = hostname();

  constructor(
    api: CreateEventApi,
    private readonly options: EventRecorderOptions,
    private readonly logger: Logger,
  ) {
    const throttle = pThrottle({ limit: Math.max(1, Math.round(options.eventsPerSecond)), interval: 1000 });
    this.send = throttle((event: PodEvent) => this.create(api, event));
  }

  /** Queues `event` unless it repeats a recent one or the queue is full. Never throws. */
  record(event: PodEvent): void {
    const now = this.options.now();
    const key = `${event.pod.uid}\u0000${event.reason}\u0000${event.message}`;
    const last = this.recent.get(key);
    if (last !== undefined && now - last < this.options.dedupeWindowMs) {
      this.options.onOutcome?.('deduplicated');
      return;
    }
    if (this.queued >= this.options.maxQueued) {
      this.options.onOutcome?.('dropped');
      return;
    }
    if (this.recent.size >= MAX_DEDUPE_KEYS) this.recent.clear();
    this.recent.set(key, now);
    this.queued++;
    this.send(event)
      .then(() => this.options.onOutcome?.('recorded'))
      .catch((err: unknown) => {
        this.options.onOutcome?.('failed');
        this.logger.warn(
          { pod: `${event.pod.namespace}/${event.pod.name}`, reason: event.reason, err: describeApiError(err) },
          'event not recorded',
        );
      })
      .finally(() => this.queued--);
  }

  private async create(api: CreateEventApi, event: PodEvent): Promise<void> {
    const time = new Date(this.options.now());
    await api.createNamespacedEvent({
      namespace: event.pod.namespace,
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${event.pod.name}.`, namespace: event.pod.namespace },
        involvedObject: {
          apiVersion: 'v1',
          kind: 'Pod',
          namespace: event.pod.namespace,
          name: event.pod.name,
          uid: event.pod.uid,
        },
        reason: event.reason,
        message: event.message.slice(0, 1024),
        type: event.type,
        source: { component: COMPONENT },
        reportingComponent: COMPONENT,
        reportingInstance: this.instance,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      },
    });
  }
}
