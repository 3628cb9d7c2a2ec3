/**
 * The bind verb's API call: create the pod's Binding (POST pods/NAME/binding; RBAC `create` on
 * `pods/binding`), with the pod UID as precondition, so a pod deleted and re-created under the same
 * name is never bound by a stale request.
 *
 * Idempotent, as kube-scheduler needs after a timed-out bind: when the API refuses the binding (409
 * Conflict, or any error but 404) the pod is read back, and a pod already bound to the requested node
 * with the same UID counts as success. Outcomes are decided by HTTP status and the pod's state, never
 * by matching error text.
 */
import type { V1Binding, V1Pod } from '@kubernetes/client-node';
import type { BindOutcome, BindRequest } from '../core/objects/binding.js';
import { describeApiError, statusOf } from './apiStatus.js';

/** What creates a Binding and reads a pod back: client-node's CoreV1Api, or ApiWrites (apiWrites.ts). */
export interface BindApi {
  createNamespacedPodBinding(param: { name: string; namespace: string; body: V1Binding }): Promise<unknown>;
  readNamespacedPod(param: { name: string; namespace: string }): Promise<V1Pod>;
}

export class Binder {
  constructor(private readonly api: BindApi) {}

  /** Binds the pod; never throws (errors are returned as readable text). */
  async bind(req: BindRequest): Promise<BindOutcome> {
    const pod = `${req.podNamespace}/${req.podName}`;
    try {
      await this.api.createNamespacedPodBinding({
        name: req.podName,
        namespace: req.podNamespace,
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: req.podName, namespace: req.podNamespace, uid: req.podUid },
          target: { apiVersion: 'v1', kind: 'Node', name: req.node },
        },
      });
      return { ok: true, alreadyBound: false };
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) return { ok: false, error: `pod ${pod} not found` };
      // 409 (already assigned, or the UID precondition failed) and any other failure, which may hide
      // a bind that did happen: read the pod back and decide from what it is now.
      const failure = `binding ${pod} to ${req.node} failed: ${describeApiError(err)}`;
      return this.checkExisting(req, pod, failure);
    }
  }

  private async checkExisting(req: BindRequest, pod: string, failure: string): Promise<BindOutcome> {
    try {
      const current = await this.api.readNamespacedPod({ name: req.podName, namespace: req.podNamespace });
      if (current.metadata?.uid !== req.podUid)
        return { ok: false, error: `pod ${pod} has UID ${current.metadata?.uid}, not ${req.podUid} (stale request)` };
      if (current.spec?.nodeName === req.node) return { ok: true, alreadyBound: true };
      if (current.spec?.nodeName)
        return { ok: false, error: `pod ${pod} is already bound to ${current.spec.nodeName}, not ${req.node}` };
      return { ok: false, error: failure };
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) return { ok: false, error: `pod ${pod} not found` };
      return { ok: false, error: `${failure}; reading it back failed: ${describeApiError(err)}` };
    }
  }
}
