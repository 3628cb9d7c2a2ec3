/**
 * Pods of kubernetes-sigs/agent-sandbox (v1.0.1, and v0.5.6 before it), recognised from the pod alone (no
 * agent-sandbox object is ever read): a controller ownerReference to a Sandbox of `agents.x-k8s.io` marks one,
 * and the labels its controller writes (controllers/sandbox_controller.go: computeExtensionPodLabels) tell its
 * kind: warm-pool, claimed or standalone (docs/agent-sandbox.md#what-the-extender-does-with-each-agent-sandbox-object).
 * Shown, never ranked on. Bounded on hostile input: at most {@link MAX_OWNER_REFERENCES_READ} entries read, entries
 * of the wrong shape skipped, a template hash kept only when a valid label value (≤ 63 characters). Never throws.
 */
import { isRecord, type Pod } from './kubeObjects.js';
import { isLabelValue } from './templateLocality.js';

/** The API group of agent-sandbox's Sandbox (the extensions live in `extensions.agents.x-k8s.io`). */
export const AGENT_SANDBOX_GROUP = 'agents.x-k8s.io';
export const SANDBOX_KIND = 'Sandbox';
/** On the pods of a SandboxWarmPool's Sandboxes (value: the hash of the pool's name); removed when a claim adopts the Sandbox. */
export const WARM_POOL_LABEL = 'agents.x-k8s.io/warm-pool-sandbox';
/** On the pods of Sandboxes made from a SandboxTemplate by a pool or a claim (value: FNV-1a hash of the template's name, 8 hex digits). */
export const TEMPLATE_HASH_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
/** On the pods of a SandboxClaim's Sandbox in agent-sandbox v1.0.1 (value: the claim's UID; v0.5.6 left it off the pod); never on a pool's. */
export const CLAIM_UID_LABEL = 'agents.x-k8s.io/claim-uid';
/** ownerReferences read per pod, at most (a pod has one controller; agent-sandbox sets exactly one reference). */
export const MAX_OWNER_REFERENCES_READ = 16;

/**
 * Which kind of Sandbox a pod belongs to:
 * - `warm-pool`: a SandboxWarmPool's sandbox, not claimed yet;
 * - `claimed`: a SandboxClaim's sandbox (a cold claim's, or a warm one adopted from a pool);
 * - `standalone`: a Sandbox created directly.
 */
export type AgentSandboxKind = 'warm-pool' | 'claimed' | 'standalone';

/** What the extender reads of an agent-sandbox pod. */
export interface AgentSandboxPod {
  readonly kind: AgentSandboxKind;
  /** The template hash label's value when it is a valid label value; else null (absent, or not a label value). */
  readonly templateHash: string | null;
  /** The template hash label is there but is not a label value (only a request no API server sent can carry one). */
  readonly templateHashUnreadable: boolean;
}

const API_VERSION_PREFIX = `${AGENT_SANDBOX_GROUP}/`;

/** Whether one of the first MAX_OWNER_REFERENCES_READ ownerReferences of `pod` is a Sandbox of agents.x-k8s.io (any version). */
export function ownedBySandbox(pod: Pod): boolean {
  const refs: unknown = pod.metadata?.ownerReferences;
  if (!Array.isArray(refs)) return false;
  const n = Math.min(refs.length, MAX_OWNER_REFERENCES_READ);
  for (let i = 0; i < n; i++) {
    const ref: unknown = refs[i];
    if (!isRecord(ref) || ref.kind !== SANDBOX_KIND) continue;
    const apiVersion = ref.apiVersion;
    if (typeof apiVersion === 'string' && apiVersion.startsWith(API_VERSION_PREFIX)) return true;
  }
  return false;
}

/** A label that is set: a non-empty string (agent-sandbox never sets an empty one). */
function isSet(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

/** The kind of agent-sandbox pod `pod` is (see the module header), or null for a pod of any other origin. O(1). */
export function agentSandboxKind(pod: Pod): AgentSandboxKind | null {
  if (!ownedBySandbox(pod)) return null;
  const labels: unknown = pod.metadata?.labels;
  if (!isRecord(labels)) return 'standalone';
  if (isSet(labels[WARM_POOL_LABEL])) return 'warm-pool';
  return isSet(labels[CLAIM_UID_LABEL]) || isSet(labels[TEMPLATE_HASH_LABEL]) ? 'claimed' : 'standalone';
}

/** What the extender reads of `pod` as an agent-sandbox pod (kind and template), or null for a pod of any other origin. O(1). */
export function agentSandboxOf(pod: Pod): AgentSandboxPod | null {
  const kind = agentSandboxKind(pod);
  if (kind === null) return null;
  const value: unknown = (pod.metadata?.labels as Readonly<Record<string, unknown>> | null | undefined)?.[
    TEMPLATE_HASH_LABEL
  ];
  const templateHash = isLabelValue(value) ? value : null;
  return { kind, templateHash, templateHashUnreadable: templateHash === null && isSet(value) };
}

const KIND_TEXT: Readonly<Record<AgentSandboxKind, string>> = {
  'warm-pool': 'warm pool',
  claimed: 'claimed',
  standalone: 'a Sandbox of its own (no claim, no warm pool)',
};

/**
 * One clause for an operator: `agent-sandbox pod of template 9f8e7d6c, warm pool`,
 * `agent-sandbox pod of template 9f8e7d6c, claimed`, `agent-sandbox pod, a Sandbox of its own (no
 * claim, no warm pool)`; a template hash that is not a label value is named as unreadable, never quoted.
 */
export function describeAgentSandbox(a: AgentSandboxPod): string {
  const template =
    a.templateHash !== null
      ? ` of template ${a.templateHash}`
      : a.templateHashUnreadable
        ? ` of an unreadable template (its ${TEMPLATE_HASH_LABEL} label is not a label value)`
        : '';
  return `agent-sandbox pod${template}, ${KIND_TEXT[a.kind]}`;
}
