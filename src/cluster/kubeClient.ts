/**
 * The Kubernetes client side (@kubernetes/client-node 1.x): loading a kubeconfig the way Kubernetes
 * tools do, and the list/watch sources of Nodes and Pods for the reflectors.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  CoreV1Api,
  KubeConfig,
  ServerConfiguration,
  Watch,
  createConfiguration,
  type Configuration,
} from '@kubernetes/client-node';
import type { Node, Pod } from '../core/objects/kubeObjects.js';
import { NoKubeConfigError } from './kubeConfigError.js';
import type { ResourceSource } from './reflector.js';

/**
 * A KubeConfig from `path` if given, else as kubectl finds one: $KUBECONFIG, ~/.kube/config, or the
 * in-cluster service account.
 * @throws NoKubeConfigError when there is none: client-node's `loadFromDefault` then silently falls
 *   back to `http://localhost:8080` (a cluster named `cluster`, context `loaded-context`), where a
 *   watch would retry for ever; that fallback is detected and refused.
 * @throws Error when the file cannot be read or names no cluster.
 */
export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    try {
      kc.loadFromFile(path);
    } catch (err) {
      // client-node reads a file it parses but cannot use (empty, or YAML of another shape) with a TypeError.
      const why =
        err instanceof TypeError
          ? 'not a kubeconfig (expected YAML with clusters, users and contexts)'
          : (err as Error).message;
      throw new NoKubeConfigError(`cannot read the kubeconfig ${path}: ${why}`);
    }
  } else {
    kc.loadFromDefault();
    if (isLocalhostFallback(kc)) {
      throw new NoKubeConfigError(
        'no kubeconfig found: $KUBECONFIG is not set, ~/.kube/config does not exist and this is not a pod with a service account; ' +
          'pass --kubeconfig FILE (or `kubeconfig` in the config file) for cluster mode, or --snapshot FILE for offline mode',
      );
    }
  }
  if (!kc.getCurrentCluster())
    throw new NoKubeConfigError(`no cluster in the kubeconfig${path ? ` ${path}` : ''} (or in-cluster environment)`);
  return kc;
}

type RequestContext = Parameters<KubeConfig['applySecurityAuthentication']>[0];

/** Connections kept open to the API server for Bindings, Events and reads. */
const MAX_API_SOCKETS = 16;

/**
 * A CoreV1Api whose requests share keep-alive connections. client-node authenticates every request
 * with a fresh https.Agent (a new TCP and TLS handshake per Binding or Event, on the event loop that
 * also answers kube-scheduler); here the library still applies its authentication to each request
 * (headers: bearer tokens, exec and auth providers, re-read as it does), and the connection comes
 * from one keep-alive agent made once from the kubeconfig's TLS settings (CA, client certificate,
 * server name, skip-verify). A client certificate file is therefore read once, at start-up. With a
 * proxy in the kubeconfig the library's own agent is kept.
 */
export function apiClient(kc: KubeConfig): CoreV1Api {
  return new CoreV1Api(keepAliveConfiguration(kc));
}

/** The configuration behind {@link apiClient}, for other API groups (e.g. `new StorageV1Api(...)`) sharing its connections. */
export function keepAliveConfiguration(kc: KubeConfig): Configuration {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('no cluster in the kubeconfig');
  let agent: Promise<HttpAgent | HttpsAgent> | undefined;
  const keepAliveAgent = async (): Promise<HttpAgent | HttpsAgent> => {
    const tls: { ca?: unknown; cert?: unknown; key?: unknown; rejectUnauthorized?: boolean; servername?: string } = {};
    await kc.applyToHTTPSOptions(tls);
    const common = { keepAlive: true, maxSockets: MAX_API_SOCKETS };
    if (cluster.server.startsWith('http:')) return new HttpAgent(common);
    return new HttpsAgent({
      ...common,
      ca: tls.ca as string,
      cert: tls.cert as string,
      key: tls.key as string,
      rejectUnauthorized: tls.rejectUnauthorized,
      servername: tls.servername,
    });
  };
  const auth = {
    getName: () => 'kubeconfig with keep-alive connections',
    applySecurityAuthentication: async (context: RequestContext) => {
      await kc.applySecurityAuthentication(context);
      if (!cluster.proxyUrl) context.setAgent(await (agent ??= keepAliveAgent()));
    },
  };
  return createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: auth },
  });
}

/** Exactly what `loadFromDefault` builds when it finds nothing (client-node 1.x: loadFromClusterAndUser). */
function isLocalhostFallback(kc: KubeConfig): boolean {
  const [cluster] = kc.getClusters();
  const [user] = kc.getUsers();
  return (
    kc.getCurrentContext() === 'loaded-context' &&
    kc.getClusters().length === 1 &&
    kc.getUsers().length === 1 &&
    kc.getContexts().length === 1 &&
    cluster?.name === 'cluster' &&
    cluster.server === 'http://localhost:8080' &&
    user?.name === 'user' &&
    !user.token &&
    !user.certFile &&
    !user.certData
  );
}

/**
 * list + client-node's Watch on `path` (with bookmarks, and the reflector's server-side timeout). The
 * Watch's semantics are what ResourceSource.watch documents (checked in test/cluster/watchClient.test.ts).
 */
function watchSource<T>(kc: KubeConfig, path: string, list: ResourceSource<T>['list']): ResourceSource<T> {
  const watcher = new Watch(kc);
  return {
    list,
    async watch({ resourceVersion, timeoutSeconds }, onEvent, onDone) {
      const controller = await watcher.watch(
        path,
        { allowWatchBookmarks: true, resourceVersion, timeoutSeconds },
        onEvent,
        onDone,
      );
      return () => controller.abort();
    },
  };
}

/** Every Pod in every namespace. */
export function podSource(kc: KubeConfig, api: CoreV1Api): ResourceSource<Pod> {
  return watchSource<Pod>(kc, '/api/v1/pods', async ({ limit, continueToken }) => {
    const page = await api.listPodForAllNamespaces({ limit, _continue: continueToken });
    return {
      items: page.items as unknown as Pod[],
      resourceVersion: page.metadata?.resourceVersion ?? '',
      continueToken: page.metadata?._continue,
    };
  });
}

/** Every Node. */
export function nodeSource(kc: KubeConfig, api: CoreV1Api): ResourceSource<Node> {
  return watchSource<Node>(kc, '/api/v1/nodes', async ({ limit, continueToken }) => {
    const page = await api.listNode({ limit, _continue: continueToken });
    return {
      items: page.items as unknown as Node[],
      resourceVersion: page.metadata?.resourceVersion ?? '',
      continueToken: page.metadata?._continue,
    };
  });
}
