/**
 * Node candidacy (src/cli/candidacy.ts) on the realistic node fixtures. Every expected outcome is
 * derived by hand from the upstream rules (Kubernetes v1.36: NodeUnschedulable.Filter,
 * TaintToleration.Filter with Toleration.ToleratesTaint, NodeAffinity.Filter with
 * RequiredNodeAffinity.Match and labels Requirement.Matches, and the node lifecycle controller's
 * Ready → taint mapping), with the deciding fact of each case in a comment.
 */
import {
  formatCandidacyFailure,
  formatTaint,
  nodeCandidacy,
  toleratesTaint,
  type CandidacyFailure,
} from '../../src/cli/candidacy.js';
import type { Node, NodeSelectorTerm, Pod, Taint, Toleration } from '../../src/core/objects/kubeObjects.js';
import { loadFixture } from '../fixtures/builders.js';

const FIXTURES = [
  'aks-standard-d4s-v3',
  'cordoned-aks-standard-d8s-v3',
  'eks-m5-xlarge',
  'gke-e2-standard-4',
  'gpu-8x-h100-hugepages',
  'huge-r7i-48xlarge-karpenter',
  'k3s-server',
  'kind-control-plane',
  'notready-cni-kubeadm',
  'notready-unreachable-eks',
  'openshift-worker-m6i-xlarge',
  'registered-no-status',
] as const;
type Fixture = (typeof FIXTURES)[number];

const node = (name: Fixture): Node => loadFixture<Node>(`nodes/${name}.json`);

/** The two tolerations the DefaultTolerationSeconds admission plugin adds to every pod. */
const DEFAULT_TOLERATIONS: Toleration[] = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

function pod(spec: NonNullable<Pod['spec']> = {}): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u' },
    spec: { containers: [], tolerations: DEFAULT_TOLERATIONS, ...spec },
  };
}

const codes = (failures: readonly CandidacyFailure[]) => failures.map((f) => f.code);

describe('every fixture node against an ordinary pod (only the default NoExecute tolerations)', () => {
  const expected: Record<Fixture, CandidacyFailure[]> = {
    // Ready=True, no taints, not cordoned: a candidate.
    'aks-standard-d4s-v3': [],
    // spec.unschedulable=true (NodeUnschedulable) and the unschedulable:NoSchedule taint (TaintToleration).
    'cordoned-aks-standard-d8s-v3': [
      { code: 'NodeUnschedulable' },
      {
        code: 'UntoleratedTaints',
        taints: [{ key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' }],
      },
    ],
    'eks-m5-xlarge': [],
    'gke-e2-standard-4': [],
    // nvidia.com/gpu=present:NoSchedule; no toleration has that key.
    'gpu-8x-h100-hugepages': [
      { code: 'UntoleratedTaints', taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }] },
    ],
    'huge-r7i-48xlarge-karpenter': [],
    // k3s labels the server control-plane but does not taint it.
    'k3s-server': [],
    'kind-control-plane': [
      {
        code: 'UntoleratedTaints',
        taints: [{ key: 'node-role.kubernetes.io/control-plane', value: '', effect: 'NoSchedule' }],
      },
    ],
    // Ready=False → not-ready; the NoExecute twin is tolerated by the default toleration, the NoSchedule one is not.
    'notready-cni-kubeadm': [
      {
        code: 'NodeNotReady',
        status: 'False',
        reason: 'KubeletNotReady',
        message:
          'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
        taint: { key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' },
        tainted: true,
      },
      { code: 'UntoleratedTaints', taints: [{ key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' }] },
    ],
    // Ready=Unknown → unreachable; again only the NoSchedule taint is untolerated.
    'notready-unreachable-eks': [
      {
        code: 'NodeNotReady',
        status: 'Unknown',
        reason: 'NodeStatusUnknown',
        message: 'Kubelet stopped posting node status.',
        taint: { key: 'node.kubernetes.io/unreachable', value: '', effect: 'NoSchedule' },
        tainted: true,
      },
      {
        code: 'UntoleratedTaints',
        taints: [{ key: 'node.kubernetes.io/unreachable', value: '', effect: 'NoSchedule' }],
      },
    ],
    'openshift-worker-m6i-xlarge': [],
    // No conditions at all: counted as Ready=Unknown (NodeStatusNeverUpdated) → unreachable, which the
    // node does not carry yet; it carries TaintNodesAtCreation's not-ready:NoSchedule.
    'registered-no-status': [
      {
        code: 'NodeNotReady',
        status: 'Missing',
        reason: '',
        message: '',
        taint: { key: 'node.kubernetes.io/unreachable', value: '', effect: 'NoSchedule' },
        tainted: false,
      },
      { code: 'UntoleratedTaints', taints: [{ key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' }] },
    ],
  };

  it.each(FIXTURES)('%s', (name) => {
    expect(nodeCandidacy(node(name), pod())).toEqual(expected[name]);
  });

  it('without any toleration, the NoExecute taints of the NotReady nodes count too', () => {
    const bare = pod({ tolerations: null });
    expect(nodeCandidacy(node('notready-cni-kubeadm'), bare).at(-1)).toEqual({
      code: 'UntoleratedTaints',
      taints: [
        { key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoExecute' },
      ],
    });
    expect(nodeCandidacy(node('notready-unreachable-eks'), bare).at(-1)).toEqual({
      code: 'UntoleratedTaints',
      taints: [
        { key: 'node.kubernetes.io/unreachable', value: '', effect: 'NoSchedule' },
        { key: 'node.kubernetes.io/unreachable', value: '', effect: 'NoExecute' },
      ],
    });
  });
});

describe('pods with matching tolerations', () => {
  it('the GPU pod fixture tolerates nvidia.com/gpu (Exists, NoSchedule) and is a candidate on the GPU node only by taints', () => {
    const gpuPod = loadFixture<Pod>('pods/gpu-nvidia-hugepages.json');
    expect(nodeCandidacy(node('gpu-8x-h100-hugepages'), gpuPod)).toEqual([]);
    // ...but not on the control plane: its toleration names another key.
    expect(codes(nodeCandidacy(node('kind-control-plane'), gpuPod))).toEqual(['UntoleratedTaints']);
  });

  it('the CoreDNS fixture tolerates the control-plane taint with an operator-less toleration (Equal, empty value)', () => {
    // {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}: operator "" means Equal, "" == "".
    expect(nodeCandidacy(node('kind-control-plane'), loadFixture<Pod>('pods/running-ready-coredns.json'))).toEqual([]);
  });

  it('tolerating node.kubernetes.io/unschedulable:NoSchedule passes both NodeUnschedulable and TaintToleration on a cordoned node', () => {
    const tolerant = pod({
      tolerations: [
        ...DEFAULT_TOLERATIONS,
        { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
      ],
    });
    expect(nodeCandidacy(node('cordoned-aks-standard-d8s-v3'), tolerant)).toEqual([]);
  });

  it('a toleration of the unschedulable key with effect NoExecute tolerates neither', () => {
    const wrongEffect = pod({
      tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }],
    });
    expect(codes(nodeCandidacy(node('cordoned-aks-standard-d8s-v3'), wrongEffect))).toEqual([
      'NodeUnschedulable',
      'UntoleratedTaints',
    ]);
  });

  it('spec.unschedulable without the taint (the controller has not added it yet) fails NodeUnschedulable alone', () => {
    const n = node('cordoned-aks-standard-d8s-v3');
    const untainted: Node = { ...n, spec: { ...n.spec, taints: [] } };
    expect(nodeCandidacy(untainted, pod())).toEqual([{ code: 'NodeUnschedulable' }]);
  });

  it('a toleration of everything ({operator: Exists}) makes every Ready-or-not, tainted or cordoned node a candidate', () => {
    const everything = pod({ tolerations: [{ operator: 'Exists' }] });
    for (const name of FIXTURES) expect([name, nodeCandidacy(node(name), everything)]).toEqual([name, []]);
  });

  it('tolerating not-ready:NoSchedule keeps a NotReady node (as kube-scheduler once the taint is there); unreachable stays excluded', () => {
    const notReadyTolerant = pod({
      tolerations: [
        ...DEFAULT_TOLERATIONS,
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' },
      ],
    });
    expect(nodeCandidacy(node('notready-cni-kubeadm'), notReadyTolerant)).toEqual([]);
    expect(codes(nodeCandidacy(node('notready-unreachable-eks'), notReadyTolerant))).toEqual([
      'NodeNotReady',
      'UntoleratedTaints',
    ]);
    // The never-reported node: its not-ready taint is tolerated, but Unknown stands for unreachable.
    expect(codes(nodeCandidacy(node('registered-no-status'), notReadyTolerant))).toEqual(['NodeNotReady']);
  });

  it('a Ready=False node that the controller has not tainted yet is still excluded', () => {
    const n = node('notready-cni-kubeadm');
    const untainted: Node = { ...n, spec: { ...n.spec, taints: null } };
    expect(nodeCandidacy(untainted, pod())).toEqual([
      expect.objectContaining({ code: 'NodeNotReady', status: 'False', tainted: false }),
    ]);
  });

  it('PreferNoSchedule taints never exclude', () => {
    const n = node('eks-m5-xlarge');
    const soft: Node = {
      ...n,
      spec: { ...n.spec, taints: [{ key: 'spot', value: 'true', effect: 'PreferNoSchedule' }] },
    };
    expect(nodeCandidacy(soft, pod())).toEqual([]);
  });
});

describe('toleratesTaint (core/v1 Toleration.ToleratesTaint, comparison operators off)', () => {
  const gpu: Taint = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
  const controlPlane: Taint = { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' };
  const noExecute: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
  const numeric: Taint = { key: 'priority', value: '3', effect: 'NoSchedule' };

  it.each<[string, Toleration, Taint, boolean]>([
    ['Exists with key and effect', { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }, gpu, true],
    [
      'Equal with the value, empty effect matches every effect',
      { key: 'nvidia.com/gpu', operator: 'Equal', value: 'present' },
      gpu,
      true,
    ],
    ['empty operator is Equal', { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }, gpu, true],
    ['Equal with another value', { key: 'nvidia.com/gpu', value: 'absent' }, gpu, false],
    ['Equal without a value against a valued taint', { key: 'nvidia.com/gpu', operator: 'Equal' }, gpu, false],
    ['another effect', { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoExecute' }, gpu, false],
    ['another key', { key: 'nvidia.com/mig', operator: 'Exists' }, gpu, false],
    ['empty key with Exists matches every key', { operator: 'Exists' }, gpu, true],
    ['empty key with Exists and an effect', { operator: 'Exists', effect: 'NoSchedule' }, noExecute, false],
    [
      'Equal with no value against a taint with no value',
      { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
      controlPlane,
      true,
    ],
    // The function skips the key check for an empty key whatever the operator (validation forbids it in a pod).
    ['empty key with Equal and empty value matches a valueless taint', { operator: 'Equal' }, controlPlane, true],
    ['empty key with Equal and empty value against a valued taint', { operator: 'Equal' }, gpu, false],
    [
      'Lt is not a match while TaintTolerationComparisonOperators is off',
      { key: 'priority', operator: 'Lt', value: '5' },
      numeric,
      false,
    ],
    ['Gt is not a match either', { key: 'priority', operator: 'Gt', value: '1' }, numeric, false],
    ['an unknown operator', { key: 'nvidia.com/gpu', operator: 'In', value: 'present' }, gpu, false],
    ['null fields read as empty', { key: null, operator: 'Exists', value: null, effect: null }, noExecute, true],
  ])('%s → %s', (_name, toleration, taint, tolerates) => {
    expect(toleratesTaint(toleration, taint)).toBe(tolerates);
  });
});

describe('NodeAffinity: spec.nodeSelector', () => {
  it('the kata pod fixture (nodeSelector katacontainers.io/kata-runtime=true) matches the k3s node only', () => {
    const kata = loadFixture<Pod>('pods/overhead-kata-runtimeclass.json');
    const matching = FIXTURES.filter(
      (name) => !codes(nodeCandidacy(node(name), kata)).includes('NodeAffinityMismatch'),
    );
    expect(matching).toEqual(['k3s-server']);
    expect(nodeCandidacy(node('gke-e2-standard-4'), kata)).toEqual([
      {
        code: 'NodeAffinityMismatch',
        details: [
          'nodeSelector katacontainers.io/kata-runtime=true: the node has no label katacontainers.io/kata-runtime',
        ],
      },
    ]);
  });

  it('a label with another value', () => {
    expect(nodeCandidacy(node('gke-e2-standard-4'), pod({ nodeSelector: { 'kubernetes.io/arch': 'arm64' } }))).toEqual([
      {
        code: 'NodeAffinityMismatch',
        details: ['nodeSelector kubernetes.io/arch=arm64: the node has kubernetes.io/arch=amd64'],
      },
    ]);
    expect(
      nodeCandidacy(
        node('registered-no-status'),
        pod({ nodeSelector: { 'kubernetes.io/arch': 'arm64' }, tolerations: [{ operator: 'Exists' }] }),
      ),
    ).toEqual([]);
  });

  it('every pair must match; an empty nodeSelector selects every node', () => {
    const both = { 'kubernetes.io/arch': 'amd64', 'topology.kubernetes.io/zone': 'us-west-2a' };
    expect(nodeCandidacy(node('eks-m5-xlarge'), pod({ nodeSelector: both }))).toEqual([]);
    expect(codes(nodeCandidacy(node('huge-r7i-48xlarge-karpenter'), pod({ nodeSelector: both })))).toEqual([
      'NodeAffinityMismatch',
    ]);
    expect(nodeCandidacy(node('gke-e2-standard-4'), pod({ nodeSelector: {} }))).toEqual([]);
  });

  it('an empty label value matches a label set to "" (node-role.kubernetes.io/worker: "")', () => {
    expect(
      nodeCandidacy(
        node('openshift-worker-m6i-xlarge'),
        pod({ nodeSelector: { 'node-role.kubernetes.io/worker': '' } }),
      ),
    ).toEqual([]);
    expect(
      codes(nodeCandidacy(node('eks-m5-xlarge'), pod({ nodeSelector: { 'node-role.kubernetes.io/worker': '' } }))),
    ).toEqual(['NodeAffinityMismatch']);
  });
});

describe('NodeAffinity: requiredDuringSchedulingIgnoredDuringExecution', () => {
  const TAINT_FREE: readonly Fixture[] = [
    'aks-standard-d4s-v3',
    'eks-m5-xlarge',
    'gke-e2-standard-4',
    'huge-r7i-48xlarge-karpenter',
    'k3s-server',
    'openshift-worker-m6i-xlarge',
  ];
  const required = (...terms: NodeSelectorTerm[]) =>
    pod({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
    });
  /** Which of all fixture nodes the affinity alone lets through. */
  const matching = (p: Pod) =>
    FIXTURES.filter((name) => !codes(nodeCandidacy(node(name), p)).includes('NodeAffinityMismatch'));
  const ALL = [...FIXTURES];

  it.each<[string, NodeSelectorTerm[], Fixture[]]>([
    [
      'In: zone us-west-2a or us-west-2b',
      [
        {
          matchExpressions: [
            { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a', 'us-west-2b'] },
          ],
        },
      ],
      ['eks-m5-xlarge', 'huge-r7i-48xlarge-karpenter'],
    ],
    // NotIn also matches nodes without the label (k3s, kind, the kubeadm worker have no zone).
    [
      'NotIn: not zone "0" (AKS non-zonal) and not us-west-2a',
      [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['0', 'us-west-2a'] }] }],
      ALL.filter((n) => !['aks-standard-d4s-v3', 'cordoned-aks-standard-d8s-v3', 'eks-m5-xlarge'].includes(n)),
    ],
    [
      'Exists: nvidia.com/gpu.present',
      [{ matchExpressions: [{ key: 'nvidia.com/gpu.present', operator: 'Exists' }] }],
      ['gpu-8x-h100-hugepages'],
    ],
    [
      'DoesNotExist: node-role.kubernetes.io/control-plane (kind and k3s carry it)',
      [{ matchExpressions: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }] }],
      ALL.filter((n) => n !== 'kind-control-plane' && n !== 'k3s-server'),
    ],
    [
      'Gt: nvidia.com/gpu.count > 4 (the GPU node has 8)',
      [{ matchExpressions: [{ key: 'nvidia.com/gpu.count', operator: 'Gt', values: ['4'] }] }],
      ['gpu-8x-h100-hugepages'],
    ],
    [
      'Lt: nvidia.com/gpu.count < 8 is false for 8',
      [{ matchExpressions: [{ key: 'nvidia.com/gpu.count', operator: 'Lt', values: ['8'] }] }],
      [],
    ],
    // strconv.ParseInt reads the label "06" as 6.
    [
      'Gt with a leading-zero label: nvidia.com/cuda.driver.rev "06" > 5',
      [{ matchExpressions: [{ key: 'nvidia.com/cuda.driver.rev', operator: 'Gt', values: ['5'] }] }],
      ['gpu-8x-h100-hugepages'],
    ],
    [
      'Gt against a non-integer label (kubernetes.io/arch)',
      [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'Gt', values: ['1'] }] }],
      [],
    ],
    [
      'terms are ORed: zone europe-west1-b, or arch arm64',
      [
        { matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['europe-west1-b'] }] },
        { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
      ],
      ['gke-e2-standard-4', 'registered-no-status'],
    ],
    [
      'expressions are ANDed: us-west-2a and arm64 is no node',
      [
        {
          matchExpressions: [
            { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a'] },
            { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
          ],
        },
      ],
      [],
    ],
    [
      'matchFields metadata.name In',
      [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['kind-control-plane'] }] }],
      ['kind-control-plane'],
    ],
    [
      'matchFields metadata.name NotIn',
      [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['kind-control-plane'] }] }],
      ALL.filter((n) => n !== 'kind-control-plane'),
    ],
    [
      'matchExpressions and matchFields in one term are ANDed',
      [
        {
          matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
          matchFields: [{ key: 'metadata.name', operator: 'In', values: ['edge-node-17'] }],
        },
      ],
      [],
    ],
    // Parse errors: the term matches nothing (NewLazyErrorNodeSelector; errors ignored by the Filter).
    [
      'matchFields In with two values is invalid',
      [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['kind-control-plane', 'k3s-server-01'] }] }],
      [],
    ],
    ['matchFields with Exists is invalid', [{ matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }], []],
    [
      'In with no values is invalid',
      [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: [] }] }],
      [],
    ],
    [
      'Exists with values is invalid',
      [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'Exists', values: ['amd64'] }] }],
      [],
    ],
    [
      'Gt with a non-integer value is invalid',
      [{ matchExpressions: [{ key: 'nvidia.com/gpu.count', operator: 'Gt', values: ['four'] }] }],
      [],
    ],
    ['an invalid label key is invalid', [{ matchExpressions: [{ key: 'bad key!', operator: 'DoesNotExist' }] }], []],
    [
      'an unknown operator is invalid',
      [{ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'Matches', values: ['amd.*'] }] }],
      [],
    ],
    [
      'an invalid term next to a valid one: the valid term still matches',
      [
        { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: [] }] },
        { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }] },
      ],
      ['registered-no-status'],
    ],
    ['an empty term selects nothing', [{}], []],
    [
      'an empty term next to a valid one is left out',
      [{ matchExpressions: [] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['worker-3'] }] }],
      ['notready-cni-kubeadm'],
    ],
    ['no terms at all select nothing', [], []],
  ])('%s', (_name, terms, nodes) => {
    expect(matching(required(...terms))).toEqual(nodes);
  });

  it('nodeSelector and required affinity must both match', () => {
    const p = pod({
      nodeSelector: { 'kubernetes.io/arch': 'amd64' },
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'Exists' }] }],
          },
        },
      },
    });
    // amd64 with a zone label: aks (zone "0"), eks, gke, gpu (dc-east-...), huge, the cordoned aks, unreachable eks, openshift.
    expect(matching(p)).toEqual(
      ALL.filter(
        (n) => !['k3s-server', 'kind-control-plane', 'notready-cni-kubeadm', 'registered-no-status'].includes(n),
      ),
    );
  });

  it('a pod with affinity but no required part is not constrained', () => {
    expect(matching(pod({ affinity: { nodeAffinity: {} } }))).toEqual(ALL);
    expect(matching(pod({ affinity: {} }))).toEqual(ALL);
  });

  it('the reason names, per term, the first requirement that failed and what the node has', () => {
    const p = required(
      {
        matchExpressions: [
          { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['us-west-2a', 'us-west-2b'] },
        ],
      },
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['dgx-h100-07'] }] },
    );
    const failures = nodeCandidacy(node('gke-e2-standard-4'), p);
    expect(failures.map(formatCandidacyFailure)).toEqual([
      "didn't match Pod's node affinity/selector: required node affinity term 1: topology.kubernetes.io/zone In [us-west-2a,us-west-2b] (node: topology.kubernetes.io/zone=europe-west1-b); " +
        'required node affinity term 2: metadata.name In [dgx-h100-07] (node: metadata.name=gke-prod-cluster-default-pool-7c1d2e3f-b8kq)',
    ]);
    expect(
      nodeCandidacy(
        node('k3s-server'),
        required({ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'Exists' }] }),
      ).map(formatCandidacyFailure),
    ).toEqual([
      "didn't match Pod's node affinity/selector: required node affinity term 1: topology.kubernetes.io/zone Exists (node: no label topology.kubernetes.io/zone)",
    ]);
    expect(nodeCandidacy(node('k3s-server'), required()).map(formatCandidacyFailure)).toEqual([
      "didn't match Pod's node affinity/selector: required node affinity has no non-empty nodeSelectorTerms: it matches no node",
    ]);
    expect(
      nodeCandidacy(
        node('k3s-server'),
        required({ matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In', values: [] }] }),
      ).map(formatCandidacyFailure),
    ).toEqual([
      "didn't match Pod's node affinity/selector: required node affinity term 1: invalid matchExpressions requirement kubernetes.io/arch In: for 'in', 'notin' operators, values set can't be empty",
    ]);
  });

  it('the taint-free nodes are all candidates for a pod without constraints', () => {
    for (const name of TAINT_FREE) expect([name, nodeCandidacy(node(name), pod())]).toEqual([name, []]);
  });
});

describe('reasons as text', () => {
  it('formatTaint follows Taint.ToString', () => {
    expect(formatTaint({ key: 'k', value: 'v', effect: 'NoSchedule' })).toBe('k=v:NoSchedule');
    expect(formatTaint({ key: 'k', value: '', effect: 'NoExecute' })).toBe('k:NoExecute');
    expect(formatTaint({ key: 'k', value: 'v', effect: '' })).toBe('k=v:');
    expect(formatTaint({ key: 'k', value: '', effect: '' })).toBe('k');
  });

  it('each fixture failure reads as the operator would say it', () => {
    const text = (name: Fixture) => nodeCandidacy(node(name), pod()).map(formatCandidacyFailure);
    expect(text('cordoned-aks-standard-d8s-v3')).toEqual([
      'node is cordoned (spec.unschedulable)',
      'untolerated taint node.kubernetes.io/unschedulable:NoSchedule',
    ]);
    expect(text('notready-unreachable-eks')).toEqual([
      'node not ready: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.)',
      'untolerated taint node.kubernetes.io/unreachable:NoSchedule',
    ]);
    expect(text('registered-no-status')).toEqual([
      'node not ready: no Ready condition (the kubelet never posted status) (counted as taint node.kubernetes.io/unreachable:NoSchedule, not yet added by the node lifecycle controller)',
      'untolerated taint node.kubernetes.io/not-ready:NoSchedule',
    ]);
    expect(nodeCandidacy(node('notready-cni-kubeadm'), pod({ tolerations: [] })).map(formatCandidacyFailure)[1]).toBe(
      'untolerated taints node.kubernetes.io/not-ready:NoSchedule, node.kubernetes.io/not-ready:NoExecute',
    );
  });
});
