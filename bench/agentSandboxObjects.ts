/**
 * The agent-sandbox objects (sigs.k8s.io/agent-sandbox v1beta1: extensions.agents.x-k8s.io SandboxTemplate,
 * SandboxWarmPool, SandboxClaim) that the e2e scenarios (test/e2e/agentSandbox.e2e.test.ts) and
 * `npm run bench -- agent-sandbox` (bench/agentSandbox.ts) create, as plain manifests.
 */

export const EXTENSIONS_API_VERSION = 'extensions.agents.x-k8s.io/v1beta1';

/** The pod annotation the e2e cluster's KWOK pod-ready stage reads: the pod becomes Ready this long (a Go duration) after it is bound. */
export const READY_DELAY_ANNOTATION = 'e2e.sandbox-extender.io/ready-delay';

export interface TemplateOptions {
  readonly name: string;
  readonly namespace: string;
  /** The pods' spec.schedulerName; omitted: default-scheduler. */
  readonly schedulerName?: string;
  /** Requests (= limits) of the one container, as Kubernetes quantities. */
  readonly cpu: string;
  readonly memory: string;
  /** Labels of the pods. */
  readonly labels?: Readonly<Record<string, string>>;
  /** A Go duration for READY_DELAY_ANNOTATION; omitted: the cluster's default. */
  readonly readyDelay?: string;
}

/**
 * A SandboxTemplate whose pod template has one container (never run: KWOK nodes run nothing) with the given
 * requests. It lets claims set env (`envVarsInjectionPolicy: Allowed`): such a claim is always cold-started.
 */
export function sandboxTemplate(o: TemplateOptions): object {
  const resources = { cpu: o.cpu, memory: o.memory };
  return {
    apiVersion: EXTENSIONS_API_VERSION,
    kind: 'SandboxTemplate',
    metadata: { name: o.name, namespace: o.namespace },
    spec: {
      envVarsInjectionPolicy: 'Allowed',
      podTemplate: {
        metadata: {
          labels: { ...(o.labels ?? {}) },
          annotations: o.readyDelay ? { [READY_DELAY_ANNOTATION]: o.readyDelay } : {},
        },
        spec: {
          ...(o.schedulerName ? { schedulerName: o.schedulerName } : {}),
          terminationGracePeriodSeconds: 0,
          containers: [
            {
              name: 'sandbox',
              image: 'registry.invalid/agent-sandbox/sandbox:1',
              resources: { requests: resources, limits: resources },
            },
          ],
        },
      },
    },
  };
}

/** A SandboxWarmPool of `replicas` sandboxes of `template`. */
export function sandboxWarmPool(name: string, namespace: string, template: string, replicas: number): object {
  return {
    apiVersion: EXTENSIONS_API_VERSION,
    kind: 'SandboxWarmPool',
    metadata: { name, namespace },
    spec: { replicas, sandboxTemplateRef: { name: template } },
  };
}

/** A SandboxClaim on `pool`; with `env` (name -> value) it is always cold: a new Sandbox from the pool's template. */
export function sandboxClaim(
  name: string,
  namespace: string,
  pool: string,
  env?: Readonly<Record<string, string>>,
): object {
  return {
    apiVersion: EXTENSIONS_API_VERSION,
    kind: 'SandboxClaim',
    metadata: { name, namespace },
    spec: {
      warmPoolRef: { name: pool },
      ...(env ? { env: Object.entries(env).map(([n, value]) => ({ name: n, value })) } : {}),
    },
  };
}
