import { readFileSync, readdirSync } from 'node:fs';
import type { Container, Node, Pod, ResourceList } from '../../../src/core/objects/kubeObjects.js';
import {
  ASSIGNED_POD_OPTIONS,
  INCOMING_POD_OPTIONS,
  nodeAllocatable,
  podRequestOptions,
  podRequests,
  podRequestsExact,
  toSchedulerUnits,
} from '../../../src/core/objects/podRequests.js';
import { requestVector } from '../../../src/core/objects/records.js';
import { QuantityError } from '../../../src/core/objects/quantity.js';
import { thrown } from '../../fixtures/thrown.js';

const podsDir = new URL('../../fixtures/pods/', import.meta.url);
const nodesDir = new URL('../../fixtures/nodes/', import.meta.url);

function loadJson<T>(dir: URL, file: string): T {
  return JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as T;
}

function sorted(amounts: ReadonlyMap<string, number | bigint> | null): Record<string, number | bigint> | null {
  return amounts === null ? null : Object.fromEntries([...amounts].sort(([a], [b]) => a.localeCompare(b)));
}

const Ki = 1024;
const Mi = 1024 * Ki;
const Gi = 1024 * Mi;

// Effective request of each fixture pod (test/fixtures/pods; cpu in millicores, the rest in bytes/counts), worked out by hand from its containers as the comments say.
const podFixtures: ReadonlyArray<readonly [string, Record<string, number>]> = [
  // cpu 1500m; memory 3Gi
  ['pending-unschedulable.json', { cpu: 1500, memory: 3 * Gi }],
  // cpu: init 2 > 500m ledger + 50m exporter = 550m; memory: init 4Gi > 1Gi + 64Mi = 1088Mi
  ['init-larger-than-containers.json', { cpu: 2000, memory: 4 * Gi }],
  // cpu: 500m app + 100m envoy sidecar = 600m > 200m db-migrate + 100m envoy = 300m
  // memory: 1Gi db-migrate + 128Mi envoy (started before it) = 1152Mi > 512Mi app + 128Mi envoy = 640Mi
  ['sidecar-restartable-init.json', { cpu: 600, memory: 1152 * Mi }],
  // cpu: 1 + 250m overhead = 1250m; memory: 2Gi + 160Mi overhead = 2315255808
  ['overhead-kata-runtimeclass.json', { cpu: 1250, memory: 2 * Gi + 160 * Mi }],
  // requests copied from limits by SetDefaults_Pod: 500m, 1536Mi, 2G
  ['limits-only-requests-defaulted.json', { cpu: 500, memory: 1536 * Mi, 'ephemeral-storage': 2_000_000_000 }],
  // resources: {} → nothing requested
  ['besteffort.json', {}],
  // 48 cpus, 512Gi, 16 × 1Gi hugepages, 4 GPUs, 1 rdma device
  [
    'gpu-nvidia-hugepages.json',
    {
      cpu: 48_000,
      memory: 512 * Gi,
      'hugepages-1Gi': 16 * Gi,
      'nvidia.com/gpu': 4,
      'rdma/rdma_shared_device_a': 1,
    },
  ],
  // kubeadm CoreDNS: 100m / 70Mi (the 170Mi limit is not a request)
  ['running-ready-coredns.json', { cpu: 100, memory: 70 * Mi }],
  // cpu-only request
  ['static-mirror-kube-apiserver.json', { cpu: 250 }],
  // 250m, 512Mi, ephemeral 2Gi
  ['bound-pending-containercreating.json', { cpu: 250, memory: 512 * Mi, 'ephemeral-storage': 2 * Gi }],
  // terminal pod: still 500m / 1Gi here; excluding Succeeded/Failed pods is the caller's job
  ['succeeded-job.json', { cpu: 500, memory: 1 * Gi }],
  // being deleted but still running: 200m / 256Mi
  ['terminating-deletiontimestamp.json', { cpu: 200, memory: 256 * Mi }],
  // containers: cpu 500m, no memory; pod-level requests cpu 1 / memory 2Gi replace both
  ['pod-level-resources.json', { cpu: 1000, memory: 2 * Gi }],
  // cpu: 12 + 250m + 10m = 12260m; eph 1G
  // memory: 400G + 129e6 + 128m = 400129000000.128 bytes → ceil → 400129000001 (converted after summing)
  [
    'quantity-forms-decimal-exponent.json',
    { cpu: 12_260, memory: 400_129_000_001, 'ephemeral-storage': 1_000_000_000 },
  ],
];

describe('podRequests: the fixture pods (test/fixtures/pods)', () => {
  it('covers every file in test/fixtures/pods', () => {
    const files = readdirSync(podsDir)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(podFixtures.map(([file]) => file).sort()).toEqual(files);
  });

  it.each(podFixtures)('%s', (file, expected) => {
    expect(sorted(podRequests(loadJson<Pod>(podsDir, file)))).toEqual(sorted(new Map(Object.entries(expected))));
  });

  it('quantity-forms-decimal-exponent.json: exact memory keeps the 0.128-byte fraction', () => {
    const exact = podRequestsExact(loadJson<Pod>(podsDir, 'quantity-forms-decimal-exponent.json'));
    // 400G + 129e6 + 128m = 400129000000.128 bytes = 400129000000128000000 nanos
    expect(exact.get('memory')).toBe(400_129_000_000_128_000_000n);
  });
});

// Allocatable of each fixture node (test/fixtures/nodes) in scheduler units, plus the hugepages keys present in the files.
const noHugepages = { 'hugepages-1Gi': 0, 'hugepages-2Mi': 0 };
const nodeFixtures: ReadonlyArray<readonly [string, Record<string, number> | null]> = [
  // 15601432Ki × 1024 = 15975866368
  [
    'aks-standard-d4s-v3.json',
    { cpu: 3860, memory: 15_975_866_368, 'ephemeral-storage': 119_703_055_367, pods: 30, ...noHugepages },
  ],
  // 28362636Ki × 1024 = 29043339264
  [
    'cordoned-aks-standard-d8s-v3.json',
    { cpu: 7820, memory: 29_043_339_264, 'ephemeral-storage': 119_703_055_367, pods: 110, ...noHugepages },
  ],
  // 14879912Ki × 1024 = 15237029888
  [
    'eks-m5-xlarge.json',
    { cpu: 3920, memory: 15_237_029_888, 'ephemeral-storage': 76_224_326_324, pods: 58, ...noHugepages },
  ],
  // 13600196Ki × 1024 = 13926600704
  [
    'gke-e2-standard-4.json',
    { cpu: 3920, memory: 13_926_600_704, 'ephemeral-storage': 47_060_071_478, pods: 110, ...noHugepages },
  ],
  // cpu "220" = 220000m; 2025278860Ki × 1024 = 2073885552640; 64Gi hugepages; rdma "1k" = 1000
  [
    'gpu-8x-h100-hugepages.json',
    {
      cpu: 220_000,
      memory: 2_073_885_552_640,
      'ephemeral-storage': 1_698_749_216_823,
      pods: 110,
      'hugepages-1Gi': 64 * Gi,
      'hugepages-2Mi': 0,
      'nvidia.com/gpu': 8,
      'rdma/rdma_shared_device_a': 1000,
    },
  ],
  // 1575180724Ki × 1024 = 1612985061376
  [
    'huge-r7i-48xlarge-karpenter.json',
    { cpu: 191_450, memory: 1_612_985_061_376, 'ephemeral-storage': 18_181_869_946, pods: 737, ...noHugepages },
  ],
  // compact raw API JSON; 16048904Ki × 1024 = 16434077696
  [
    'k3s-server.json',
    { cpu: 8000, memory: 16_434_077_696, 'ephemeral-storage': 251_394_030_395, pods: 110, ...noHugepages },
  ],
  // 65544140Ki × 1024 = 67117199360; eph 1055762868Ki × 1024 = 1081101176832
  [
    'kind-control-plane.json',
    { cpu: 16_000, memory: 67_117_199_360, 'ephemeral-storage': 1_081_101_176_832, pods: 110, ...noHugepages },
  ],
  // 8027024Ki × 1024 = 8219672576
  [
    'notready-cni-kubeadm.json',
    { cpu: 4000, memory: 8_219_672_576, 'ephemeral-storage': 93_478_772_582, pods: 110, ...noHugepages },
  ],
  // 7220104Ki × 1024 = 7393386496
  [
    'notready-unreachable-eks.json',
    { cpu: 1930, memory: 7_393_386_496, 'ephemeral-storage': 18_181_869_946, pods: 29, ...noHugepages },
  ],
  // 14934976Ki × 1024 = 15293415424
  [
    'openshift-worker-m6i-xlarge.json',
    { cpu: 3500, memory: 15_293_415_424, 'ephemeral-storage': 114_345_831_029, pods: 250, ...noHugepages },
  ],
  // no capacity, no allocatable
  ['registered-no-status.json', null],
];

describe('nodeAllocatable: the fixture nodes (test/fixtures/nodes)', () => {
  it('covers every file in test/fixtures/nodes', () => {
    const files = readdirSync(nodesDir)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(nodeFixtures.map(([file]) => file).sort()).toEqual(files);
  });

  it.each(nodeFixtures)('%s', (file, expected) => {
    const actual = nodeAllocatable(loadJson<Node>(nodesDir, file));
    expect(sorted(actual)).toEqual(expected === null ? null : sorted(new Map(Object.entries(expected))));
  });
});

// Builders for synthetic pods.
function c(requests?: ResourceList, restartPolicy?: string): Container {
  return {
    name: 'c',
    resources: requests === undefined ? {} : { requests },
    ...(restartPolicy ? { restartPolicy } : {}),
  };
}
const sidecar = (requests: ResourceList): Container => c(requests, 'Always');

interface SpecParts {
  containers?: Container[];
  initContainers?: Container[];
  podLevel?: ResourceList;
  overhead?: ResourceList;
  phase?: string;
}
function pod({ containers = [], initContainers, podLevel, overhead, phase = 'Pending' }: SpecParts): Pod {
  return {
    metadata: { name: 'p', namespace: 'default' },
    spec: {
      containers,
      ...(initContainers ? { initContainers } : {}),
      ...(podLevel ? { resources: { requests: podLevel } } : {}),
      ...(overhead ? { overhead } : {}),
    },
    status: { phase },
  };
}

describe('podRequests: synthetic pods', () => {
  it.each<readonly [string, Pod, Record<string, number>]>([
    [
      // cpu: max(200m app + 500m sidecar = 700m, 1000m migrate) = 1000m (sidecar starts after, so not added)
      // memory: max(128Mi + 256Mi = 384Mi, 1Gi) = 1Gi
      'sidecar started after a plain init container does not add to it',
      pod({
        initContainers: [c({ cpu: '1', memory: '1Gi' }), sidecar({ cpu: '500m', memory: '256Mi' })],
        containers: [c({ cpu: '200m', memory: '128Mi' })],
      }),
      { cpu: 1000, memory: 1 * Gi },
    ],
    [
      // cpu: max(300m + 100m + 200m = 600m, 1000m migrate + 300m sidecars = 1300m) = 1300m
      // memory: max(256Mi + 64Mi + 128Mi = 448Mi, 512Mi + 192Mi = 704Mi) = 704Mi
      'two sidecars both add to a later init container',
      pod({
        initContainers: [
          sidecar({ cpu: '100m', memory: '64Mi' }),
          sidecar({ cpu: '200m', memory: '128Mi' }),
          c({ cpu: '1', memory: '512Mi' }),
        ],
        containers: [c({ cpu: '300m', memory: '256Mi' })],
      }),
      { cpu: 1300, memory: 704 * Mi },
    ],
    [
      // init A uses 500m + 100m = 600m; init B uses 400m + 100m + 200m = 700m; containers 100m + 300m = 400m
      'init containers only see sidecars started before them',
      pod({
        initContainers: [sidecar({ cpu: '100m' }), c({ cpu: '500m' }), sidecar({ cpu: '200m' }), c({ cpu: '400m' })],
        containers: [c({ cpu: '100m' })],
      }),
      { cpu: 700 },
    ],
    [
      // cpu replaced by pod-level 2; memory 1Gi + 512Mi and ephemeral 1Gi keep the container sum
      'pod-level request overrides only cpu',
      pod({
        containers: [
          c({ cpu: '500m', memory: '1Gi' }),
          c({ cpu: '250m', memory: '512Mi', 'ephemeral-storage': '1Gi' }),
        ],
        podLevel: { cpu: '2' },
      }),
      { cpu: 2000, memory: 1536 * Mi, 'ephemeral-storage': 1 * Gi },
    ],
    [
      // pod-level 1 / 2Gi, then + overhead 250m / 160Mi
      'overhead is added on top of pod-level requests',
      pod({
        containers: [c({ cpu: '100m', memory: '100Mi' })],
        podLevel: { cpu: '1', memory: '2Gi' },
        overhead: { cpu: '250m', memory: '160Mi' },
      }),
      { cpu: 1250, memory: 2 * Gi + 160 * Mi },
    ],
    [
      // hugepages-2Mi replaced by pod-level 200Mi; pod-level ephemeral-storage and GPU are not supported → container values
      'hugepages are overridden at pod level, other resources are not',
      pod({
        containers: [c({ cpu: '1', 'hugepages-2Mi': '100Mi', 'ephemeral-storage': '1Gi', 'nvidia.com/gpu': '1' })],
        podLevel: { 'hugepages-2Mi': '200Mi', 'ephemeral-storage': '5Gi', 'nvidia.com/gpu': '2' },
      }),
      { cpu: 1000, 'hugepages-2Mi': 200 * Mi, 'ephemeral-storage': 1 * Gi, 'nvidia.com/gpu': 1 },
    ],
    [
      // pod-level key not set by any container is still added (Go assigns reqs[name] = quantity)
      'pod-level memory applies even when no container requests memory',
      pod({ containers: [c({ cpu: '100m' })], podLevel: { memory: '1Gi' } }),
      { cpu: 100, memory: 1 * Gi },
    ],
    [
      // 1500u + 1500u = 3m exactly; converting per container would give 2m + 2m = 4m
      'aggregation is exact and converted once at the end',
      pod({ containers: [c({ cpu: '1500u', memory: '500m' }), c({ cpu: '1500u', memory: '500m' })] }),
      { cpu: 3, memory: 1 },
    ],
    [
      // 0.5 (JSON/YAML number) + "250m" = 750m
      'JSON numbers and padded strings are accepted like UnmarshalJSON',
      pod({ containers: [c({ cpu: 0.5 }), c({ cpu: ' 250m ' })] }),
      { cpu: 750 },
    ],
    [
      // an explicit zero keeps its key, as in Go's addResourceList
      'zero requests keep their key',
      pod({ containers: [c({ cpu: '0', 'example.com/foo': '0' })] }),
      { cpu: 0, 'example.com/foo': 0 },
    ],
    [
      // limits are never read: the API server copies limits into missing requests before we see the pod
      'limits are ignored',
      pod({ containers: [{ name: 'x', resources: { limits: { cpu: '4', memory: '4Gi' } } }] }),
      {},
    ],
    [
      "a terminal pod is not this module's concern (still computed)",
      pod({ containers: [c({ cpu: '500m', memory: '1Gi' })], phase: 'Succeeded' }),
      { cpu: 500, memory: 1 * Gi },
    ],
    ['missing containers list is empty', { metadata: { name: 'p' }, spec: {} }, {}],
    ['missing spec is empty', { metadata: { name: 'p' } }, {}],
    [
      'null resources and requests are empty',
      pod({
        containers: [
          { name: 'a', resources: null },
          { name: 'b', resources: { requests: null } },
        ],
      }),
      {},
    ],
  ])('%s', (_name, input, expected) => {
    expect(sorted(podRequests(input))).toEqual(sorted(new Map(Object.entries(expected))));
  });
});

function quantityError(run: () => unknown): QuantityError {
  return thrown(QuantityError, run);
}

describe('podRequests: errors name the JSON path', () => {
  it.each<readonly [string, Pod, RegExp]>([
    [
      'invalid container quantity',
      pod({ containers: [c({ cpu: '1' }), c({ cpu: '1', memory: '1.5.5' })] }),
      /^spec\.containers\[1\]\.resources\.requests\.memory: invalid quantity "1\.5\.5" \(ErrFormatWrong/,
    ],
    [
      'invalid init container quantity',
      pod({ initContainers: [c({ cpu: '1K' })] }),
      /^spec\.initContainers\[0\]\.resources\.requests\.cpu: invalid quantity "1K" \(ErrSuffix/,
    ],
    [
      'invalid extended resource key is bracket-quoted',
      pod({ containers: [c({ 'nvidia.com/gpu': 'one' })] }),
      /^spec\.containers\[0\]\.resources\.requests\["nvidia\.com\/gpu"\]: invalid quantity "one"/,
    ],
    [
      'invalid pod-level quantity',
      pod({ podLevel: { memory: '2 Gi' } }),
      /^spec\.resources\.requests\.memory: invalid quantity "2 Gi"/,
    ],
    ['invalid overhead quantity', pod({ overhead: { cpu: 'abc' } }), /^spec\.overhead\.cpu: invalid quantity "abc"/],
    [
      'null quantity',
      pod({ containers: [c({ cpu: null })] }),
      /^spec\.containers\[0\]\.resources\.requests\.cpu: .*got null/,
    ],
    [
      'negative container request',
      pod({ containers: [c({ cpu: '-1' })] }),
      /^spec\.containers\[0\]\.resources\.requests\.cpu: negative quantity "-1"/,
    ],
    ['negative overhead', pod({ overhead: { memory: '-1Mi' } }), /^spec\.overhead\.memory: negative quantity "-1Mi"/],
    [
      'negative JSON number',
      pod({ containers: [c({ cpu: -0.5 })] }),
      /^spec\.containers\[0\]\.resources\.requests\.cpu: negative quantity -0\.5/,
    ],
    [
      'requests is not an object',
      pod({ containers: [{ resources: { requests: ['1'] as unknown as ResourceList } }] }),
      /^spec\.containers\[0\]\.resources\.requests: expected a resource list object/,
    ],
    [
      'containers is not an array',
      { spec: { containers: {} as unknown as Container[] } },
      /^spec\.containers: expected an array/,
    ],
    [
      'a container is null',
      { spec: { containers: [null as unknown as Container] } },
      /^spec\.containers\[0\]: expected a container object/,
    ],
  ])('%s', (_name, input, message) => {
    expect(quantityError(() => podRequestsExact(input)).message).toMatch(message);
  });

  it('keeps the raw value and the parser error as cause', () => {
    const err = quantityError(() => podRequests(pod({ containers: [c({ memory: '1.5.5' })] })));
    expect(err.input).toBe('1.5.5');
    expect(err.cause).toBeInstanceOf(QuantityError);
  });

  it('a total beyond Number.MAX_SAFE_INTEGER is rejected in scheduler units, not exactly', () => {
    // 8Ei is clamped to 2^63 - 1 bytes: exact in BigInt, not a safe JS number
    const p = pod({ containers: [c({ memory: '8Ei' })] });
    expect(podRequestsExact(p).get('memory')).toBe(9_223_372_036_854_775_807_000_000_000n);
    expect(() => podRequests(p)).toThrow(
      /pod request memory \(units\): 9223372036854775807 is outside the safe integer range/,
    );
  });
});

describe('nodeAllocatable: synthetic nodes', () => {
  it.each<readonly [string, Node, Record<string, number> | null]>([
    ['no status', { metadata: { name: 'n' } }, null],
    ['null allocatable', { status: { allocatable: null } }, null],
    [
      'capacity only is still null (allocatable is what the scheduler uses)',
      { status: { capacity: { cpu: '4' } } },
      null,
    ],
    ['empty allocatable', { status: { allocatable: {} } }, {}],
    [
      'rounds up: 3920.5m cpu → 3921, 1.5 bytes → 2',
      { status: { allocatable: { cpu: '3920500u', memory: '1.5' } } },
      { cpu: 3921, memory: 2 },
    ],
  ])('%s', (_name, node, expected) => {
    const actual = nodeAllocatable(node);
    expect(sorted(actual)).toEqual(expected === null ? null : sorted(new Map(Object.entries(expected))));
  });

  it.each<readonly [string, Node, RegExp]>([
    [
      'invalid quantity',
      { status: { allocatable: { cpu: '4 cores' } } },
      /^status\.allocatable\.cpu: invalid quantity "4 cores"/,
    ],
    [
      'negative quantity',
      { status: { allocatable: { pods: '-1' } } },
      /^status\.allocatable\.pods: negative quantity "-1"/,
    ],
    [
      'unsafe integer',
      { status: { allocatable: { memory: '7Ei' } } },
      /^status\.allocatable\.memory \(units\): 8070450532247928832 is outside/,
    ],
    [
      'not an object',
      { status: { allocatable: '4' as unknown as ResourceList } },
      /^status\.allocatable: expected a resource list object/,
    ],
  ])('%s is rejected with its path', (_name, node, message) => {
    expect(quantityError(() => nodeAllocatable(node)).message).toMatch(message);
  });
});

describe('toSchedulerUnits', () => {
  it.each<readonly [string, bigint, number]>([
    ['cpu', 1n, 1],
    ['cpu', 3_920_000_000n, 3920],
    ['memory', 1n, 1],
    ['memory', 400_129_000_000_128_000_000n, 400_129_000_001],
    ['nvidia.com/gpu', 4_000_000_000n, 4],
    ['hugepages-1Gi', 0n, 0],
  ])('%s: %s nanos → %s', (resource, nanos, expected) => {
    expect(toSchedulerUnits(resource, nanos)).toBe(expected);
  });

  it('throws naming the resource when the result is not a safe integer', () => {
    expect(() => toSchedulerUnits('memory', 10n ** 30n)).toThrow(
      /^memory \(units\): 1000000000000000000000 is outside the safe integer range/,
    );
    expect(() => toSchedulerUnits('cpu', 10n ** 25n)).toThrow(/^cpu \(millicores\)/);
  });
});

describe('in-place resize: status resources count as kube-scheduler counts them (UseStatusResources)', () => {
  /** A running pod whose container `app` asks 1 cpu / 1Gi in spec, with the given status. */
  function resized(
    status: { actuated?: Record<string, string>; allocated?: Record<string, string>; noResources?: boolean },
    conditions: unknown[] = [],
  ): Pod {
    return {
      metadata: { name: 'p', uid: 'u' },
      spec: { nodeName: 'n1', containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '1Gi' } } }] },
      status: {
        phase: 'Running',
        conditions: conditions as never,
        containerStatuses: [
          {
            name: 'app',
            ...(status.noResources ? {} : { resources: { requests: status.actuated ?? {} } }),
            ...(status.allocated ? { allocatedResources: status.allocated } : {}),
          },
        ],
      },
    } as Pod;
  }

  it.each<[string, Pod, Record<string, number>]>([
    // max(spec 1000m, actuated 2000m, allocated 2000m) = 2000m: an upsize the kubelet applied
    [
      'resized up',
      resized({ actuated: { cpu: '2', memory: '1Gi' }, allocated: { cpu: '2', memory: '1Gi' } }),
      { cpu: 2000, memory: 1073741824 },
    ],
    // spec lowered to 1 cpu, still running with 3: max(1000, 3000, 3000) = 3000m until the kubelet actuates it
    [
      'resize down pending',
      resized({ actuated: { cpu: '3', memory: '1Gi' }, allocated: { cpu: '3', memory: '1Gi' } }),
      { cpu: 3000, memory: 1073741824 },
    ],
    // admitted (allocated) 4Gi, not yet actuated: max(1Gi, 1Gi, 4Gi) = 4Gi
    [
      'allocated ahead of actuated',
      resized({ actuated: { cpu: '1', memory: '1Gi' }, allocated: { cpu: '1', memory: '4Gi' } }),
      { cpu: 1000, memory: 4294967296 },
    ],
    // Infeasible: spec (1 cpu) is ignored; max(actuated 500m, allocated 500m) = 500m
    [
      'infeasible resize: spec left out',
      resized({ actuated: { cpu: '500m', memory: '1Gi' }, allocated: { cpu: '500m', memory: '1Gi' } }, [
        { type: 'PodResizePending', status: 'True', reason: 'Infeasible' },
      ]),
      { cpu: 500, memory: 1073741824 },
    ],
    // Deferred is not Infeasible: spec counts again
    [
      'deferred resize: spec still counts',
      resized({ actuated: { cpu: '500m', memory: '1Gi' }, allocated: { cpu: '500m', memory: '1Gi' } }, [
        { type: 'PodResizePending', status: 'True', reason: 'Deferred' },
      ]),
      { cpu: 1000, memory: 1073741824 },
    ],
    // a status without `resources` (older kubelet): the spec alone
    [
      'status without resources',
      resized({ noResources: true, allocated: { cpu: '8' } }),
      { cpu: 1000, memory: 1073741824 },
    ],
  ])('%s', (_name, pod, expected) => {
    expect(Object.fromEntries(podRequests(pod))).toEqual(expected);
  });

  it('a sidecar counts its status resources, a plain init container only its spec', () => {
    const pod = {
      metadata: { name: 'p', uid: 'u' },
      spec: {
        containers: [{ name: 'app', resources: { requests: { cpu: '100m' } } }],
        initContainers: [
          { name: 'proxy', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
          { name: 'setup', resources: { requests: { cpu: '100m' } } },
        ],
      },
      status: {
        containerStatuses: [{ name: 'app', resources: { requests: { cpu: '100m' } } }],
        initContainerStatuses: [
          { name: 'proxy', resources: { requests: { cpu: '400m' } } },
          { name: 'setup', resources: { requests: { cpu: '5' } } },
        ],
      },
    } as Pod;
    // containers: app 100m + proxy max(100m, 400m) = 500m; setup uses spec 100m + proxy 400m = 500m → max 500m
    expect(podRequests(pod).get('cpu')).toBe(500);
  });

  it('the realistic CoreDNS pod reports allocated = spec, so nothing changes', () => {
    expect(Object.fromEntries(podRequests(loadJson<Pod>(podsDir, 'running-ready-coredns.json')))).toMatchObject({
      cpu: 100,
      memory: 73400320,
    });
  });
});

// Expected values are what k8s.io/component-helpers v0.36.3 PodRequests returns with kube-scheduler v1.36's
// options, printed by test/e2e/tools/accounting (cpu MilliValue, memory Value).
describe('pod-level in-place resize (InPlacePodLevelResourcesVerticalScaling, beta and on in 1.36)', () => {
  /** A bound pod: one container asking 500m, pod-level requests `podLevel`, pod-level status as given. */
  function podLevel(
    requests: Record<string, string>,
    status: { actuated?: Record<string, string> | null; allocated?: Record<string, string>; infeasible?: boolean },
  ): Pod {
    return {
      metadata: { name: 'p', uid: 'u' },
      spec: {
        nodeName: 'n1',
        containers: [{ name: 'app', resources: { requests: { cpu: '500m' } } }],
        resources: { requests },
      },
      status: {
        phase: 'Running',
        ...(status.actuated === undefined
          ? {}
          : { resources: status.actuated === null ? {} : { requests: status.actuated } }),
        ...(status.allocated ? { allocatedResources: status.allocated } : {}),
        ...(status.infeasible
          ? { conditions: [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible' }] }
          : {}),
      },
    } as Pod;
  }

  it.each<[string, Pod, Record<string, number>, Record<string, number>]>([
    // resized up and actuated: max(spec 1, actuated 2, allocated 2) = 2 cpu for the bound pod
    [
      'resized up',
      podLevel(
        { cpu: '1', memory: '1Gi' },
        { actuated: { cpu: '2', memory: '1Gi' }, allocated: { cpu: '2', memory: '1Gi' } },
      ),
      { cpu: 2000, memory: 1073741824 },
      { cpu: 1000, memory: 1073741824 },
    ],
    // admitted 3Gi, not yet actuated: max(1Gi, 1Gi, 3Gi)
    [
      'allocated ahead of actuated',
      podLevel(
        { cpu: '1', memory: '1Gi' },
        { actuated: { cpu: '1', memory: '1Gi' }, allocated: { cpu: '1', memory: '3Gi' } },
      ),
      { cpu: 1000, memory: 3221225472 },
      { cpu: 1000, memory: 1073741824 },
    ],
    // Infeasible: spec left out, max(actuated, allocated) per spec key; memory is in neither, so Go's map
    // lookup of the missing key yields a zero Quantity: the bound pod is charged 0 bytes of memory
    [
      'infeasible, a resource missing from status',
      podLevel(
        { cpu: '4', memory: '1Gi' },
        { actuated: { cpu: '1500m' }, allocated: { cpu: '1500m' }, infeasible: true },
      ),
      { cpu: 1500, memory: 0 },
      { cpu: 4000, memory: 1073741824 },
    ],
    // status.resources absent: allocatedResources alone does not count (Go checks pod.Status.Resources != nil)
    [
      'allocated without status resources',
      podLevel({ cpu: '1', memory: '1Gi' }, { allocated: { cpu: '8' } }),
      { cpu: 1000, memory: 1073741824 },
      { cpu: 1000, memory: 1073741824 },
    ],
    // status.resources {} (non-nil, no requests): max(spec, {}, {}) = spec
    [
      'empty status resources',
      podLevel({ cpu: '1', memory: '1Gi' }, { actuated: null }),
      { cpu: 1000, memory: 1073741824 },
      { cpu: 1000, memory: 1073741824 },
    ],
  ])('%s', (_name, pod, assigned, incoming) => {
    expect(Object.fromEntries(podRequests(pod, ASSIGNED_POD_OPTIONS))).toEqual(assigned);
    expect(Object.fromEntries(podRequests(pod, INCOMING_POD_OPTIONS))).toEqual(incoming);
  });
});

describe("assigned and incoming pods get kube-scheduler's respective options", () => {
  // Container `app` asks 1 cpu / 1Gi; its status says the kubelet resized it to 2 cpu.
  const statusResized = {
    containerStatuses: [
      {
        name: 'app',
        resources: { requests: { cpu: '2', memory: '1Gi' } },
        allocatedResources: { cpu: '2', memory: '1Gi' },
      },
    ],
  };
  const spec = { containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '1Gi' } } }] };
  const dims = { names: ['cpu', 'memory'] };

  it('an incoming pod (no nodeName) ignores status resources, as fit.go computePodResourceRequest does', () => {
    const pod = { metadata: { name: 'p', uid: 'u' }, spec, status: statusResized } as Pod;
    expect(podRequestOptions(pod)).toBe(INCOMING_POD_OPTIONS);
    expect(requestVector(pod, dims)).toEqual([1000, 1073741824]);
  });

  it('an assigned pod counts them, as NodeInfo.AddPod (PodInfo.CalculateResource) does', () => {
    const pod = { metadata: { name: 'p', uid: 'u' }, spec: { ...spec, nodeName: 'n1' }, status: statusResized } as Pod;
    expect(podRequestOptions(pod)).toBe(ASSIGNED_POD_OPTIONS);
    expect(requestVector(pod, dims)).toEqual([2000, 1073741824]);
  });

  it('an assigned pod with a pod-level resize in progress: the request vector follows the status', () => {
    const pod = {
      metadata: { name: 'p', uid: 'u' },
      spec: { nodeName: 'n1', containers: [{ name: 'app' }], resources: { requests: { cpu: '4', memory: '1Gi' } } },
      status: {
        resources: { requests: { cpu: '1500m' } },
        allocatedResources: { cpu: '1500m' },
        conditions: [{ type: 'PodResizePending', reason: 'Infeasible' }],
      },
    } as Pod;
    expect(requestVector(pod, dims)).toEqual([1500, 0]);
  });
});
