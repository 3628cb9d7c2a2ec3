import { ApiException } from '@kubernetes/client-node';
import { Binder, type BindApi } from '../../src/cluster/binder.js';

const REQUEST = { podName: 'sb-1', podNamespace: 'sandboxes', podUid: 'uid-1', node: 'n192' };

/** A fake of the two API calls; `pod` is what a read returns (or an HTTP status to fail with). */
function fakeApi(create: 'ok' | number, pod: { uid: string; nodeName?: string } | number) {
  const calls: unknown[] = [];
  const api: BindApi = {
    createNamespacedPodBinding: (async (param: unknown) => {
      calls.push(param);
      if (create !== 'ok') throw new ApiException(create, `HTTP ${create}`, {}, {});
      return {};
    }) as BindApi['createNamespacedPodBinding'],
    readNamespacedPod: (async () => {
      if (typeof pod === 'number') throw new ApiException(pod, `HTTP ${pod}`, {}, {});
      return { metadata: { uid: pod.uid }, spec: { nodeName: pod.nodeName, containers: [] } };
    }) as unknown as BindApi['readNamespacedPod'],
  };
  return { api, calls };
}

describe('Binder', () => {
  it('creates a Binding targeting the node, with the pod UID as precondition', async () => {
    const { api, calls } = fakeApi('ok', 404);
    expect(await new Binder(api).bind(REQUEST)).toEqual({ ok: true, alreadyBound: false });
    expect(calls).toEqual([
      {
        name: 'sb-1',
        namespace: 'sandboxes',
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: 'sb-1', namespace: 'sandboxes', uid: 'uid-1' },
          target: { apiVersion: 'v1', kind: 'Node', name: 'n192' },
        },
      },
    ]);
  });

  it.each<[string, 'ok' | number, { uid: string; nodeName?: string } | number, unknown]>([
    [
      'a retry after a timed-out bind (already bound there) is success',
      409,
      { uid: 'uid-1', nodeName: 'n192' },
      { ok: true, alreadyBound: true },
    ],
    [
      'a 500 that hid a successful bind is success too',
      500,
      { uid: 'uid-1', nodeName: 'n192' },
      { ok: true, alreadyBound: true },
    ],
    [
      'a pod bound elsewhere is an error',
      409,
      { uid: 'uid-1', nodeName: 'n16' },
      { ok: false, error: 'pod sandboxes/sb-1 is already bound to n16, not n192' },
    ],
    [
      'a stale UID (pod re-created under the same name) is an error',
      409,
      { uid: 'uid-2' },
      { ok: false, error: 'pod sandboxes/sb-1 has UID uid-2, not uid-1 (stale request)' },
    ],
    ['an unknown pod is an error', 404, 404, { ok: false, error: 'pod sandboxes/sb-1 not found' }],
    [
      'a failure that left the pod unbound reports the failure',
      500,
      { uid: 'uid-1' },
      { ok: false, error: 'binding sandboxes/sb-1 to n192 failed: HTTP 500' },
    ],
    [
      'a pod gone by the time it is read back is not found',
      409,
      404,
      { ok: false, error: 'pod sandboxes/sb-1 not found' },
    ],
  ])('%s', async (_name, create, pod, expected) => {
    expect(await new Binder(fakeApi(create, pod).api).bind(REQUEST)).toEqual(expected);
  });
});
