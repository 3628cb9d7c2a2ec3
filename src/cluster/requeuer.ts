/**
 * Makes kube-scheduler retry the pods this extender rejected for capacity once capacity frees where it
 * cannot see it, by a merge patch of an annotation on a CSIStorageCapacity object (the "requeue object"):
 * any update of one moves every pod an extender rejected out of the unschedulable pool (Kubernetes v1.36
 * pkg/scheduler/eventhandlers.go: addAllEventHandlers, buildEvtResHandler → MoveAllToActiveOrBackoffQueue).
 * Why and what was measured: docs/adr/0006-requeue-nudge.md; which pods: core/requeue/rejections.ts.
 */ import { PatchStrategy, setHeaderOptions, type StorageV1Api } from '@kubernetes/client-node';
import pRetry, { AbortError } from 'p-retry';
import pThrottle from 'p-throttle';
import type { Logger } from 'pino';
import type { NudgeTarget } from '../core/requeue/rejections.js';
import { describeApiError, statusOf } from './apiStatus.js';
import type { ApiWrites } from './apiWrites.js';

/** The annotation the nudge writes: when, and which round (unique, so every nudge is an update). */
export const REQUEUE_ANNOTATION = 'sandbox-extender.io/requeued-at';

export type RequeueApi = Pick<StorageV1Api, 'patchNamespacedCSIStorageCapacity'>;

/**
 * The write of one round: sets the requeue annotation of the requeue object to `value`. Rejects with
 * the API's error (its HTTP status readable by statusOf) when the write failed.
 */
export type RequeueWrite = (value: string) => Promise<void>;

/** The merge patch of one round. */
const requeuePatch = (value: string) => ({ metadata: { annotations: { [REQUEUE_ANNOTATION]: value } } });

/** The write through a client (on whichever thread has it): a merge patch of the annotation. */
export function requeueObjectWrite(api: RequeueApi, namespace: string, name: string): RequeueWrite {
  return async (value) => {
    await api.patchNamespacedCSIStorageCapacity(
      { namespace, name, body: requeuePatch(value) },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
}

/** The same write through ApiWrites (apiWrites.ts). */
export function requeueMergePatchWrite(
  writes: Pick<ApiWrites, 'mergePatchCSIStorageCapacity'>,
  namespace: string,
  name: string,
): RequeueWrite {
  return async (value) => {
    await writes.mergePatchCSIStorageCapacity({ namespace, name, body: requeuePatch(value) });
  };
}

/** What became of the pods of a round: `requeued` (the write went through) or `failed`. */
export type NudgeResult = 'requeued' | 'failed';

export interface RequeuerOptions {
  /** The requeue object: a CSIStorageCapacity in `namespace` named `name` (for the log), written by `write`. */
  readonly namespace: string;
  readonly name: string;
  /** Rounds (writes) per second at most. */
  readonly perSecond: number;
  /** Retries of a failed write (default 3), with backoff from `minBackoffMs` (default 250) to `maxBackoffMs` (default 2000). */
  readonly retries?: number;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** The pods to nudge now (RejectedPods.takeNudges). */
  readonly take: () => readonly NudgeTarget[];
  /** The write for these pods failed for good (RejectedPods.nudgeFailed). */
  readonly failed: (targets: readonly NudgeTarget[]) => void;
  readonly now: () => number;
  /** Counts the pods of each round by result. */
  readonly onNudged?: (result: NudgeResult, pods: number) => void;
}

/**
 * The requeue's rounds, never on a verb's path: wake() only marks work; a round runs on a later turn of the
 * event loop, at most `perSecond` a second (p-throttle), one at a time, each taking every nudge due by then.
 * A failed write is retried with capped backoff (p-retry), except 403 and 404 (RBAC or the requeue object
 * missing: logged as such); the pods of a round that failed for good are handed back (`failed`), so that a
 * later freed capacity nudges them again. RBAC: `patch` on the one requeue object (resourceNames).
 */
export class Requeuer {
  private dirty = false;
  private pumping: Promise<void> | null = null;
  private stopped = false;
  private rounds = 0;
  private readonly throttledRound: () => Promise<void>;

  constructor(
    private readonly write: RequeueWrite,
    private readonly options: RequeuerOptions,
    private readonly logger: Logger,
  ) {
    const throttle = pThrottle({ limit: Math.max(1, Math.round(options.perSecond)), interval: 1000 });
    this.throttledRound = throttle(() => this.round());
  }

  /** Capacity freed: a round will run soon. Cheap and synchronous (no API call, no selection). */
  wake(): void {
    if (this.stopped) return;
    this.dirty = true;
    this.pumping ??= new Promise<void>((resolve) => setTimeout(resolve, 0)).then(() => this.pump());
  }

  /** Resolves when no round is due or running (for tests and shutdown). */
  async idle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** No new rounds; resolves when the running one has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async pump(): Promise<void> {
    try {
      while (this.dirty && !this.stopped) {
        this.dirty = false;
        await this.throttledRound();
      }
    } finally {
      this.pumping = null;
    }
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const targets = this.options.take();
    if (targets.length === 0) return;
    const round = ++this.rounds;
    const { namespace, name } = this.options;
    try {
      await pRetry(() => this.attempt(round), {
        retries: this.options.retries ?? 3,
        minTimeout: this.options.minBackoffMs ?? 250,
        maxTimeout: this.options.maxBackoffMs ?? 2000,
        factor: 2,
        shouldRetry: () => !this.stopped,
      });
      this.options.onNudged?.('requeued', targets.length);
      this.logger.info(
        { pods: targets.length, first: targets[0]!.key, node: targets[0]!.nodeName, round },
        'capacity freed: asked kube-scheduler to retry the pods rejected for capacity',
      );
    } catch (err) {
      this.options.onNudged?.('failed', targets.length);
      this.options.failed(targets);
      const status = statusOf(err);
      const hint =
        status === 404
          ? `: the requeue object CSIStorageCapacity ${namespace}/${name} does not exist (the chart and manifests create it)`
          : status === 403
            ? `: the extender may not patch CSIStorageCapacity ${namespace}/${name} (RBAC)`
            : '';
      this.logger.warn(
        { pods: targets.length, err: describeApiError(err) },
        `requeue failed${hint}; the pods wait for kube-scheduler's own retry`,
      );
    }
  }

  private async attempt(round: number): Promise<void> {
    try {
      await this.write(`${new Date(this.options.now()).toISOString()} #${round}`);
    } catch (err) {
      const status = statusOf(err);
      if (status === 403 || status === 404) throw new AbortError(err as Error);
      throw err;
    }
  }
}
