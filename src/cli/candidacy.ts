/**
 * Node candidacy: whether kube-scheduler would consider a node for a pod at all, before any resource
 * arithmetic (`rank`: docs/cli.md). Pure rules over the Node and Pod objects, each mirroring one upstream rule
 * of Kubernetes v1.36, cited where it is written: Ready (the node lifecycle controller's NoSchedule taint),
 * NodeUnschedulable, TaintToleration and NodeAffinity (pkg/scheduler/framework/plugins). Toleration matching is
 * k8s.io/api core/v1 Toleration.ToleratesTaint with TaintTolerationComparisonOperators at its v1.36 default (off).
 */

import type {
  Node,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  Pod,
  Taint,
  Toleration,
} from '../core/objects/kubeObjects.js';

/** A taint as `key=value:effect` pieces (value and effect may be empty). */
export interface TaintText {
  readonly key: string;
  readonly value: string;
  readonly effect: string;
}

/**
 * Why a node is not a candidate for a pod, as data ({@link formatCandidacyFailure} makes the text).
 * - `NodeNotReady`: Ready is `False`, `Unknown`, or missing (`status: 'Missing'`), and the pod does
 *   not tolerate `taint` (the NoSchedule taint the node lifecycle controller adds for that status).
 * - `NodeUnschedulable`: `spec.unschedulable` (cordoned), not tolerated.
 * - `UntoleratedTaints`: the NoSchedule/NoExecute taints the pod does not tolerate, in node order.
 * - `NodeAffinityMismatch`: nodeSelector or required node affinity does not match; `details` says
 *   which pair, or per term the first requirement that failed.
 */
export type CandidacyFailure =
  | {
      readonly code: 'NodeNotReady';
      readonly status: 'False' | 'Unknown' | 'Missing';
      /** The Ready condition's reason and message ('' when absent). */
      readonly reason: string;
      readonly message: string;
      /** The NoSchedule taint the node lifecycle controller adds for this status. */
      readonly taint: TaintText;
      /** Whether the node already carries that taint (else the controller has not caught up). */
      readonly tainted: boolean;
    }
  | { readonly code: 'NodeUnschedulable' }
  | { readonly code: 'UntoleratedTaints'; readonly taints: readonly TaintText[] }
  | { readonly code: 'NodeAffinityMismatch'; readonly details: readonly string[] };

/** core/v1 TaintNodeUnschedulable, TaintNodeNotReady, TaintNodeUnreachable. */
const TAINT_NODE_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
const TAINT_NODE_NOT_READY = 'node.kubernetes.io/not-ready';
const TAINT_NODE_UNREACHABLE = 'node.kubernetes.io/unreachable';

const NO_SCHEDULE = 'NoSchedule';
const NO_EXECUTE = 'NoExecute';

/**
 * Every reason `node` is not a candidate for `pod`, in the order Ready, NodeUnschedulable,
 * TaintToleration, NodeAffinity; empty when kube-scheduler would consider the node.
 * Never throws: a malformed selector term simply matches nothing, as upstream.
 */
export function nodeCandidacy(node: Node, pod: Pod): CandidacyFailure[] {
  const failures: CandidacyFailure[] = [];
  const tolerations = pod.spec?.tolerations ?? [];
  const notReady = readyFailure(node, tolerations);
  if (notReady) failures.push(notReady);
  // pkg/scheduler/framework/plugins/nodeunschedulable: NodeUnschedulable.Filter.
  if (
    node.spec?.unschedulable &&
    !tolerationsTolerateTaint(tolerations, { key: TAINT_NODE_UNSCHEDULABLE, value: '', effect: NO_SCHEDULE })
  ) {
    failures.push({ code: 'NodeUnschedulable' });
  }
  const untolerated = untoleratedTaints(node.spec?.taints ?? [], tolerations);
  if (untolerated.length > 0) failures.push({ code: 'UntoleratedTaints', taints: untolerated });
  const affinity = nodeAffinityMismatch(node, pod);
  if (affinity) failures.push(affinity);
  return failures;
}

/**
 * Ready: kube-scheduler has no Ready filter; the node lifecycle controller turns the condition into a NoSchedule
 * taint (pkg/controller/nodelifecycle: doNoScheduleTaintingPass, nodeConditionToTaintKeyStatusMap: `False` →
 * not-ready, `Unknown` → unreachable; a node without the condition counts as `Unknown`, as tryUpdateNodeHealth
 * sets it, reason NodeStatusNeverUpdated) and TaintToleration filters on it. Applied whether or not the
 * controller has added the taint yet, so a NotReady node is never offered, and a pod that tolerates the taint
 * still sees the node.
 */
function readyFailure(node: Node, tolerations: readonly Toleration[]): CandidacyFailure | null {
  // pkg/util/node IsNodeReady: the first condition of type Ready decides.
  const ready = (node.status?.conditions ?? []).find((c) => c?.type === 'Ready');
  if (ready?.status === 'True') return null;
  const status = ready?.status === 'False' ? 'False' : ready ? 'Unknown' : 'Missing';
  const taint: TaintText = {
    key: status === 'False' ? TAINT_NODE_NOT_READY : TAINT_NODE_UNREACHABLE,
    value: '',
    effect: NO_SCHEDULE,
  };
  if (tolerationsTolerateTaint(tolerations, taint)) return null;
  const tainted = (node.spec?.taints ?? []).some(
    (t) => (t.key ?? '') === taint.key && (t.effect ?? '') === NO_SCHEDULE,
  );
  return { code: 'NodeNotReady', status, reason: ready?.reason ?? '', message: ready?.message ?? '', taint, tainted };
}

function taintText(taint: Taint): TaintText {
  return { key: taint.key ?? '', value: taint.value ?? '', effect: taint.effect ?? '' };
}

/**
 * pkg/scheduler/framework/plugins/tainttoleration: TaintToleration.Filter — the NoSchedule/NoExecute taints
 * (plugins/helper: DoNotScheduleTaintsFilterFunc) of `taints` that no toleration tolerates (component-helpers
 * scheduling/corev1: FindMatchingUntoleratedTaint). Upstream stops at the first; all are listed here (the outcome
 * is the same).
 */
function untoleratedTaints(taints: readonly Taint[], tolerations: readonly Toleration[]): TaintText[] {
  return taints
    .map(taintText)
    .filter((t) => (t.effect === NO_SCHEDULE || t.effect === NO_EXECUTE) && !tolerationsTolerateTaint(tolerations, t));
}

/** component-helpers scheduling/corev1: TolerationsTolerateTaint — whether any toleration tolerates `taint`. */
function tolerationsTolerateTaint(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => toleratesTaint(t, taint));
}

/**
 * k8s.io/api core/v1: Toleration.ToleratesTaint (TaintTolerationComparisonOperators off):
 * an empty effect matches every effect, else the effects must be equal; an empty key matches every
 * key (with operator Exists), else the keys must be equal; operator `Exists` matches any value,
 * `Equal` or empty compares values; any other operator (including `Lt`/`Gt`) does not tolerate.
 */
export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  const effect = toleration.effect ?? '';
  if (effect.length > 0 && effect !== (taint.effect ?? '')) return false;
  const key = toleration.key ?? '';
  if (key.length > 0 && key !== (taint.key ?? '')) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/**
 * pkg/scheduler/framework/plugins/nodeaffinity: NodeAffinity.Filter, with component-helpers
 * scheduling/corev1/nodeaffinity: GetRequiredNodeAffinity, RequiredNodeAffinity.Match — `spec.nodeSelector`
 * (every pair equal) and the required node affinity (terms ORed; within a term matchExpressions and matchFields
 * ANDed) against the node's labels and `metadata.name`. Null when the node matches (or the pod has neither).
 * A scheduler profile's `addedAffinity` is not known offline and is not applied.
 */
function nodeAffinityMismatch(node: Node, pod: Pod): CandidacyFailure | null {
  const labels = node.metadata?.labels ?? {};
  const selector = pod.spec?.nodeSelector ?? {};
  for (const key of Object.keys(selector).sort()) {
    const want = selector[key]!;
    if (!Object.hasOwn(labels, key))
      return { code: 'NodeAffinityMismatch', details: [`nodeSelector ${key}=${want}: the node has no label ${key}`] };
    if (labels[key] !== want)
      return {
        code: 'NodeAffinityMismatch',
        details: [`nodeSelector ${key}=${want}: the node has ${key}=${labels[key]}`],
      };
  }
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  if (!required) return null;
  const name = node.metadata?.name ?? '';
  const details: string[] = [];
  const terms = required.nodeSelectorTerms ?? [];
  for (let i = 0; i < terms.length; i++) {
    const term = terms[i] ?? {};
    // NewLazyErrorNodeSelector: an empty term selects nothing and is left out.
    if ((term.matchExpressions ?? []).length === 0 && (term.matchFields ?? []).length === 0) continue;
    const miss = termMismatch(term, labels, name);
    if (miss === null) return null;
    details.push(`required node affinity term ${i + 1}: ${miss}`);
  }
  if (details.length === 0)
    details.push('required node affinity has no non-empty nodeSelectorTerms: it matches no node');
  return { code: 'NodeAffinityMismatch', details };
}

/**
 * nodeSelectorTerm.match: null when the term matches, else the first requirement that does not
 * (or the first parse error: an invalid term matches nothing).
 */
function termMismatch(
  term: NodeSelectorTerm,
  labels: Readonly<Record<string, string>>,
  nodeName: string,
): string | null {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  // Parse errors first, as newNodeSelectorTerm does: a term with any invalid requirement never matches.
  for (const r of expressions) {
    const error = labelRequirementError(r);
    if (error) return `invalid matchExpressions requirement ${describe(r)}: ${error}`;
  }
  for (const r of fields) {
    const error = fieldRequirementError(r);
    if (error) return `invalid matchFields requirement ${describe(r)}: ${error}`;
  }
  for (const r of expressions) {
    if (!labelRequirementMatches(r, labels)) {
      const key = r.key ?? '';
      return `${describe(r)} (node: ${Object.hasOwn(labels, key) ? `${key}=${labels[key]}` : `no label ${key}`})`;
    }
  }
  // nodeSelectorTerm.match ignores matchFields when the node has no fields (no name).
  if (nodeName.length > 0) {
    for (const r of fields) {
      const value = r.key === 'metadata.name' ? nodeName : '';
      const equal = value === r.values![0];
      if (r.operator === 'In' ? !equal : equal) return `${describe(r)} (node: ${r.key}=${value})`;
    }
  }
  return null;
}

function describe(r: NodeSelectorRequirement): string {
  const values = r.values ?? [];
  return `${r.key ?? ''} ${r.operator ?? ''}${values.length > 0 ? ` [${values.join(',')}]` : ''}`;
}

/**
 * Why labels.NewRequirement (via nodeSelectorRequirementsAsSelector) would reject `r`, or null:
 * an unsupported operator, a wrong number of values, a non-integer Gt/Lt value, an invalid label
 * key or value (apimachinery api/validate/content: IsLabelKey, IsLabelValue).
 */
function labelRequirementError(r: NodeSelectorRequirement): string | null {
  const values = r.values ?? [];
  const keyError = labelKeyError(r.key ?? '');
  if (keyError) return keyError;
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) return "for 'in', 'notin' operators, values set can't be empty";
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length !== 0) return 'values set must be empty for exists and does not exist';
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) return "for 'Gt', 'Lt' operators, exactly one value is required";
      if (parseInt64(values[0]!) === null) return "for 'Gt', 'Lt' operators, the value must be an integer";
      break;
    default:
      return `unsupported operator ${JSON.stringify(r.operator ?? '')}: In, NotIn, Exists, DoesNotExist, Gt or Lt`;
  }
  for (const v of values) if (!isLabelValue(v)) return `invalid label value ${JSON.stringify(v)}`;
  return null;
}

/** nodeSelectorRequirementsAsFieldSelector: only In and NotIn, with exactly one value. */
function fieldRequirementError(r: NodeSelectorRequirement): string | null {
  if (r.operator !== 'In' && r.operator !== 'NotIn')
    return `unsupported operator ${JSON.stringify(r.operator ?? '')}: In or NotIn`;
  if ((r.values ?? []).length !== 1) return 'must have one element';
  return null;
}

/** apimachinery labels: Requirement.Matches for a requirement that passed {@link labelRequirementError}. */
function labelRequirementMatches(r: NodeSelectorRequirement, labels: Readonly<Record<string, string>>): boolean {
  const key = r.key ?? '';
  const has = Object.hasOwn(labels, key);
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return has && values.includes(labels[key]!);
    case 'NotIn':
      return !has || !values.includes(labels[key]!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has) return false;
      const label = parseInt64(labels[key]!);
      if (label === null) return false;
      const bound = parseInt64(values[0]!)!;
      return r.operator === 'Gt' ? label > bound : label < bound;
    }
    default:
      return false;
  }
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go strconv.ParseInt(s, 10, 64): an optional sign and decimal digits, within int64; else null. */
function parseInt64(s: string): bigint | null {
  if (!/^[+-]?[0-9]+$/.test(s)) return null;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? null : n;
}

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** apimachinery api/validate/content: IsLabelKey — `[prefix/]name`, prefix a DNS-1123 subdomain (≤ 253), name ≤ 63. */
function labelKeyError(key: string): string | null {
  const parts = key.split('/');
  if (parts.length > 2) return `invalid label key ${JSON.stringify(key)}`;
  const name = parts.at(-1)!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))
      return `invalid label key ${JSON.stringify(key)}: bad prefix`;
  }
  if (name.length === 0 || name.length > 63 || !LABEL_NAME.test(name))
    return `invalid label key ${JSON.stringify(key)}`;
  return null;
}

/** apimachinery api/validate/content: IsLabelValue — empty, or ≤ 63 characters of the label-name form. */
function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && LABEL_NAME.test(value));
}

/** Taint.ToString: `key=value:effect`, `key:effect`, `key=value:` or `key`. */
export function formatTaint(t: TaintText): string {
  if (t.effect.length === 0) return t.value.length === 0 ? t.key : `${t.key}=${t.value}:`;
  return t.value.length === 0 ? `${t.key}:${t.effect}` : `${t.key}=${t.value}:${t.effect}`;
}

/** The human-readable reason for one candidacy failure. */
export function formatCandidacyFailure(failure: CandidacyFailure): string {
  switch (failure.code) {
    case 'NodeNotReady': {
      const why = [failure.reason, failure.message].filter((s) => s.length > 0).join(': ');
      const condition =
        failure.status === 'Missing'
          ? 'no Ready condition (the kubelet never posted status)'
          : `Ready=${failure.status}${why ? ` (${why})` : ''}`;
      // When the node carries the taint, UntoleratedTaints names it; otherwise say what stands in for it.
      return `node not ready: ${condition}${failure.tainted ? '' : ` (counted as taint ${formatTaint(failure.taint)}, not yet added by the node lifecycle controller)`}`;
    }
    case 'NodeUnschedulable':
      return 'node is cordoned (spec.unschedulable)';
    case 'UntoleratedTaints':
      return `untolerated taint${failure.taints.length > 1 ? 's' : ''} ${failure.taints.map(formatTaint).join(', ')}`;
    case 'NodeAffinityMismatch':
      return `didn't match Pod's node affinity/selector: ${failure.details.join('; ')}`;
  }
}
