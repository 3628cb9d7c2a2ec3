/**
 * The Kubernetes client side (@kubernetes/client-node 1.x): loading a kubeconfig the way Kubernetes
 * tools do, and the list/watch sources of Nodes and Pods for the reflectors.
 */
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import type { Node, Pod } from '../core/kube.js';
import type { ResourceSource } from './reflector.js';

/**
 * A KubeConfig from `path` if given, else as kubectl finds one: $KUBECONFIG, ~/.kube/config, or the
 * in-cluster service account. @throws Error when none is usable.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster()) throw new Error(`no cluster in the kubeconfig${path ? ` ${path}` : ''} (or in-cluster environment)`);
  return kc;
}

/** Server-side watch timeout: the API server closes the watch after this and the reflector resumes from the last resourceVersion. */
const WATCH_TIMEOUT_SECONDS = 300;

function watchSource<T>(kc: KubeConfig, path: string, list: ResourceSource<T>['list']): ResourceSource<T> {
  const watcher = new Watch(kc);
  return {
    list,
    async watch(resourceVersion, onEvent, onDone) {
      const controller = await watcher.watch(path, { allowWatchBookmarks: true, resourceVersion, timeoutSeconds: WATCH_TIMEOUT_SECONDS }, onEvent, onDone);
      return () => controller.abort();
    },
  };
}

/** Every Pod in every namespace. */
export function podSource(kc: KubeConfig, api = kc.makeApiClient(CoreV1Api)): ResourceSource<Pod> {
  return watchSource<Pod>(kc, '/api/v1/pods', async ({ limit, continueToken }) => {
    const page = await api.listPodForAllNamespaces({ limit, _continue: continueToken });
    return { items: page.items as unknown as Pod[], resourceVersion: page.metadata?.resourceVersion ?? '', continueToken: page.metadata?._continue };
  });
}

/** Every Node. */
export function nodeSource(kc: KubeConfig, api = kc.makeApiClient(CoreV1Api)): ResourceSource<Node> {
  return watchSource<Node>(kc, '/api/v1/nodes', async ({ limit, continueToken }) => {
    const page = await api.listNode({ limit, _continue: continueToken });
    return { items: page.items as unknown as Node[], resourceVersion: page.metadata?.resourceVersion ?? '', continueToken: page.metadata?._continue };
  });
}

/** The HTTP status of a client-node ApiException (or a watch error), if any. */
export function statusOf(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  if (typeof e?.code === 'number') return e.code;
  if (typeof e?.statusCode === 'number') return e.statusCode;
  return undefined;
}
