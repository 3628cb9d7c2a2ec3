/**
 * Paths and readers of the chart, the plain manifests and the Dockerfile, for the test/chart tests
 * (none of them runs helm: the helm proofs are test/e2e/helm-check.sh and helm.e2e.test.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { Metrics } from '../../src/observability/metrics.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const CHART = `${REPO}charts/sandbox-extender/`;
export const MANIFESTS = `${REPO}manifests/`;

export function readText(path: string): string {
  return readFileSync(path, 'utf8');
}

export function readYaml<T = unknown>(path: string): T {
  return parseYaml(readText(path)) as T;
}

/** Every document of a multi-document YAML file, failing on any parse error. */
export function readYamlDocuments<T = Record<string, unknown>>(path: string): T[] {
  return parseAllDocuments(readText(path))
    .map((doc, i) => {
      if (doc.errors.length) throw new Error(`${path} document ${i}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as T;
    })
    .filter((o) => o !== null && o !== undefined);
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
}

export interface ExtenderBlock {
  urlPrefix: string;
  filterVerb?: string;
  prioritizeVerb?: string;
  bindVerb?: string;
  weight: number;
  nodeCacheCapable: boolean;
  httpTimeout?: string;
  ignorable?: boolean;
  enableHTTPS?: boolean;
  tlsConfig?: { caFile?: string; caData?: string; certFile?: string; keyFile?: string; serverName?: string };
}

export interface KubeSchedulerConfiguration {
  apiVersion: string;
  kind: string;
  clientConnection?: { kubeconfig?: string };
  leaderElection?: { leaderElect?: boolean; resourceName?: string; resourceNamespace?: string; resourceLock?: string };
  percentageOfNodesToScore?: number;
  profiles: { schedulerName: string; plugins?: { score?: { disabled?: { name: string }[] } } }[];
  extenders: ExtenderBlock[];
}

/** Sample names the extender's registry exposes (what a dashboard or alert may query): histograms as _bucket, _sum and _count. */
export async function exposedNames(): Promise<Set<string>> {
  const metrics = new Metrics(() => 0, { defaultMetrics: false });
  const names = new Set<string>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    // The runtime value is the string 'histogram', whatever the typings say.
    if (String(m.type) === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
    else names.add(m.name);
  }
  return names;
}
