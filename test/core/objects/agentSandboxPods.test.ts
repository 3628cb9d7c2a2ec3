/**
 * agent-sandbox pods recognised from the pod alone (src/core/objects/agentSandboxPods.ts): the pods v0.5.6's and v1.0.1's
 * controllers make (a warm pool's, a claim's, a Sandbox's of its own), the kind in the pod record, the counts per
 * node in the scheduler cache and /debug/nodes, and bad input (owner gone, wrong shapes, a 10 KB label value).
 */
import {
  agentSandboxKind,
  agentSandboxOf,
  CLAIM_UID_LABEL,
  describeAgentSandbox,
  MAX_OWNER_REFERENCES_READ,
  ownedBySandbox,
  TEMPLATE_HASH_LABEL,
  WARM_POOL_LABEL,
} from '../../../src/core/objects/agentSandboxPods.js';
import { debugNode } from '../../../src/core/text/debugView.js';
import type { Pod } from '../../../src/core/objects/kubeObjects.js';
import { toPodRecord } from '../../../src/core/objects/records.js';
import { SchedulerCache } from '../../../src/core/cache/schedulerCache.js';
import { loadFixture, makePod, type PodBuilder } from '../../fixtures/builders.js';

const DIMS = { names: ['cpu', 'memory'] };
const OPTIONS = { pausedLabel: 'sandbox-extender.io/paused' };
const NAME_HASH_LABEL = 'agents.x-k8s.io/sandbox-name-hash';
/** FNV-1a of "python-runtime" and "python-pool", as agent-sandbox's NameHash writes them. */
const TEMPLATE = '7c7dd1d6';
const POOL = 'ed572cc4';

const sandboxOwner = (name: string, apiVersion = 'agents.x-k8s.io/v1beta1') => ({
  apiVersion,
  kind: 'Sandbox',
  name,
  uid: `sandbox-uid-${name}`,
  controller: true,
  blockOwnerDeletion: true,
});

/** A pod as agent-sandbox's Sandbox controller makes it: its Sandbox as controller owner, the name-hash label, then `labels`. */
function sandboxPod(b: PodBuilder, labels: Record<string, string> = {}, owners: unknown = undefined): Pod {
  const pod = b.label(NAME_HASH_LABEL, '65d76649').obj();
  for (const [k, v] of Object.entries(labels)) (pod.metadata!.labels as Record<string, string>)[k] = v;
  const name = pod.metadata!.name!;
  return { ...pod, metadata: { ...pod.metadata, ownerReferences: (owners ?? [sandboxOwner(name)]) as never } };
}

const poolPod = (name: string) =>
  sandboxPod(makePod(name).req({ cpu: '1', memory: '2Gi' }), {
    [WARM_POOL_LABEL]: POOL,
    [TEMPLATE_HASH_LABEL]: TEMPLATE,
  });
const claimedPod = (name: string) =>
  sandboxPod(makePod(name).req({ cpu: '1', memory: '2Gi' }), { [TEMPLATE_HASH_LABEL]: TEMPLATE });
const standalonePod = (name: string) => sandboxPod(makePod(name).req({ cpu: '4', memory: '16Gi' }));

describe('agent-sandbox pods, recognised from the pod alone', () => {
  it('a warm pool’s pod (both labels), a claim’s (the template hash only) and a Sandbox’s of its own (neither)', () => {
    expect(agentSandboxOf(poolPod('python-pool-x7k2p'))).toEqual({
      kind: 'warm-pool',
      templateHash: TEMPLATE,
      templateHashUnreadable: false,
    });
    expect(agentSandboxOf(claimedPod('claim-0042'))).toEqual({
      kind: 'claimed',
      templateHash: TEMPLATE,
      templateHashUnreadable: false,
    });
    expect(agentSandboxOf(standalonePod('notebook-ada'))).toEqual({
      kind: 'standalone',
      templateHash: null,
      templateHashUnreadable: false,
    });
  });

  it('the example pod file (a pool pod as v0.5.6 and v1.0.1 create it: the same labels) is a warm pool’s pod of template 7c7dd1d6', () => {
    const pod = loadFixture<Pod>('../../examples/agent-sandbox/pool-pod.json');
    expect(agentSandboxOf(pod)).toEqual({ kind: 'warm-pool', templateHash: TEMPLATE, templateHashUnreadable: false });
  });

  it('a pod whose Sandbox is gone still carries the ownerReference: recognised all the same (nothing is looked up)', () => {
    const orphan = { ...makePod('orphan').req({ cpu: '1' }).obj() };
    const pod: Pod = {
      ...orphan,
      metadata: { ...orphan.metadata, ownerReferences: [sandboxOwner('deleted-long-ago')] },
    };
    expect(agentSandboxKind(pod)).toBe('standalone');
  });

  it('any version of the agents.x-k8s.io group counts (v1alpha1 too), and any position among the owners read', () => {
    expect(ownedBySandbox(sandboxPod(makePod('a'), {}, [sandboxOwner('a', 'agents.x-k8s.io/v1alpha1')]))).toBe(true);
    expect(
      ownedBySandbox(
        sandboxPod(makePod('b'), {}, [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' }, sandboxOwner('b')]),
      ),
    ).toBe(true);
  });

  it.each([
    ['no ownerReferences', undefined],
    ['a ReplicaSet owner', [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', controller: true }]],
    [
      'a Sandbox of another group (the extensions group has no Sandbox kind)',
      [{ apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'Sandbox', name: 'x' }],
    ],
    ['a group that only begins like it', [{ apiVersion: 'agents.x-k8s.io.example/v1', kind: 'Sandbox', name: 'x' }]],
    [
      'a SandboxClaim owner (a pod is never owned by a claim)',
      [{ apiVersion: 'extensions.agents.x-k8s.io/v1beta1', kind: 'SandboxClaim', name: 'c' }],
    ],
    ['the kind in another case', [{ apiVersion: 'agents.x-k8s.io/v1beta1', kind: 'sandbox', name: 'x' }]],
  ])('%s: not an agent-sandbox pod, whatever its labels', (_name, owners) => {
    const b = makePod('p').label(WARM_POOL_LABEL, POOL).label(TEMPLATE_HASH_LABEL, TEMPLATE);
    const pod = b.obj();
    const withOwners: Pod =
      owners === undefined ? pod : { ...pod, metadata: { ...pod.metadata, ownerReferences: owners } };
    expect(agentSandboxOf(withOwners)).toBeNull();
  });

  it.each([
    ['a string', 'Sandbox'],
    ['an object', { kind: 'Sandbox', apiVersion: 'agents.x-k8s.io/v1beta1' }],
    [
      'entries of the wrong shape',
      [
        null,
        7,
        'Sandbox',
        ['Sandbox'],
        { kind: 'Sandbox', apiVersion: 42 },
        { kind: ['Sandbox'], apiVersion: 'agents.x-k8s.io/v1beta1' },
      ],
    ],
    ['null', null],
  ])('ownerReferences as %s: read without a throw, and not an agent-sandbox pod', (_name, owners) => {
    const pod = makePod('p').label(TEMPLATE_HASH_LABEL, TEMPLATE).obj();
    expect(agentSandboxOf({ ...pod, metadata: { ...pod.metadata, ownerReferences: owners as never } })).toBeNull();
  });

  it(`reads at most ${MAX_OWNER_REFERENCES_READ} ownerReferences: a Sandbox beyond them is not seen (bounded work per pod)`, () => {
    const others = Array.from({ length: MAX_OWNER_REFERENCES_READ }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: `cm-${i}`,
    }));
    expect(ownedBySandbox(sandboxPod(makePod('last'), {}, [...others.slice(1), sandboxOwner('last')]))).toBe(true); // the 16th
    expect(ownedBySandbox(sandboxPod(makePod('beyond'), {}, [...others, sandboxOwner('beyond')]))).toBe(false); // the 17th
  });

  it('empty labels count as absent (agent-sandbox never sets an empty one)', () => {
    expect(agentSandboxOf(sandboxPod(makePod('p'), { [WARM_POOL_LABEL]: '', [TEMPLATE_HASH_LABEL]: '' }))).toEqual({
      kind: 'standalone',
      templateHash: null,
      templateHashUnreadable: false,
    });
    expect(agentSandboxKind(sandboxPod(makePod('q'), { [WARM_POOL_LABEL]: '', [TEMPLATE_HASH_LABEL]: TEMPLATE }))).toBe(
      'claimed',
    );
  });

  it('a 10 KB template hash label: the kind still read, the value not kept, and the description bounded and without it', () => {
    const huge = 'x'.repeat(10_240);
    const a = agentSandboxOf(sandboxPod(makePod('p'), { [WARM_POOL_LABEL]: POOL, [TEMPLATE_HASH_LABEL]: huge }))!;
    expect(a).toEqual({ kind: 'warm-pool', templateHash: null, templateHashUnreadable: true });
    const text = describeAgentSandbox(a);
    expect(text).toBe(
      'agent-sandbox pod of an unreadable template (its agents.x-k8s.io/sandbox-template-ref-hash label is not a label value), warm pool',
    );
    // a value that is not a label value for another reason (a character a label cannot hold)
    expect(agentSandboxOf(sandboxPod(makePod('q'), { [TEMPLATE_HASH_LABEL]: 'ab/cd' }))).toEqual({
      kind: 'claimed',
      templateHash: null,
      templateHashUnreadable: true,
    });
  });

  it('labels of the wrong shape (no wire check in snapshot files): read without a throw', () => {
    const pod = sandboxPod(makePod('p'));
    expect(
      agentSandboxOf({
        ...pod,
        metadata: {
          ...pod.metadata,
          labels: { [WARM_POOL_LABEL]: 7, [TEMPLATE_HASH_LABEL]: { v: TEMPLATE } } as never,
        },
      }),
    ).toEqual({ kind: 'standalone', templateHash: null, templateHashUnreadable: false });
    expect(agentSandboxKind({ ...pod, metadata: { ...pod.metadata, labels: 'x' as never } })).toBe('standalone');
  });

  it('describes each kind in one clause', () => {
    expect(describeAgentSandbox(agentSandboxOf(poolPod('p'))!)).toBe(
      'agent-sandbox pod of template 7c7dd1d6, warm pool',
    );
    expect(describeAgentSandbox(agentSandboxOf(claimedPod('c'))!)).toBe(
      'agent-sandbox pod of template 7c7dd1d6, claimed',
    );
    expect(describeAgentSandbox(agentSandboxOf(standalonePod('s'))!)).toBe(
      'agent-sandbox pod, a Sandbox of its own (no claim, no warm pool)',
    );
  });
});

/**
 * A pod exactly as agent-sandbox v1.0.1's Sandbox controller creates it for the Sandbox `name` (controllers/
 * sandbox_controller.go): the template's labels other than `agents.x-k8s.io/` ones (`app` here), the name hash of
 * the Sandbox, then computeExtensionPodLabels (the claim UID only under a SandboxClaim, the pool hash only under a
 * SandboxWarmPool, the template hash under either) and the normalised `created-by` of the Sandbox.
 */
function v1Pod(name: string, labels: Record<string, string>): Pod {
  const base = makePod(name).req({ cpu: '1', memory: '2Gi' }).obj();
  return {
    ...base,
    metadata: {
      ...base.metadata,
      namespace: 'agents',
      labels: { app: 'python-sandbox', ...labels },
      ownerReferences: [sandboxOwner(name)] as never,
    },
  };
}
/** FNV-1a of the Sandboxes' names, as NameHash writes them: python-pool-x7k2p, python-pool-b7r5k, claim-0042. */
const NAME_HASH = { pool: '65d76649', adopted: 'b13149ea', cold: '62d90fdc' };
const CLAIM_UID = '4f7a2c1e-0000-4000-8000-000000000042';

describe("agent-sandbox v1.0.1 pods (one more label on a claim's pod: agents.x-k8s.io/claim-uid)", () => {
  // A warm pool's Sandbox (buildSandboxCR): pool hash, template hash and created-by=controller; no claim UID.
  const pool = v1Pod('python-pool-x7k2p', {
    [NAME_HASH_LABEL]: NAME_HASH.pool,
    [WARM_POOL_LABEL]: POOL,
    [TEMPLATE_HASH_LABEL]: TEMPLATE,
    'agents.x-k8s.io/created-by': 'controller',
  });
  // A cold claim's new Sandbox: the claim UID and the template hash (created-by only when the claim carries one).
  const cold = v1Pod('claim-0042', {
    [NAME_HASH_LABEL]: NAME_HASH.cold,
    [TEMPLATE_HASH_LABEL]: TEMPLATE,
    [CLAIM_UID_LABEL]: CLAIM_UID,
  });
  // A pool's Sandbox after a warm claim adopted it: the pool label and created-by removed, the claim UID added.
  const adopted = v1Pod('python-pool-b7r5k', {
    [NAME_HASH_LABEL]: NAME_HASH.adopted,
    [TEMPLATE_HASH_LABEL]: TEMPLATE,
    [CLAIM_UID_LABEL]: CLAIM_UID,
  });

  it("a pool pod is a warm pool's; a cold claim's and an adopted pod (the claim UID beside the template hash) are claimed", () => {
    expect(agentSandboxOf(pool)).toEqual({ kind: 'warm-pool', templateHash: TEMPLATE, templateHashUnreadable: false });
    expect(agentSandboxOf(cold)).toEqual({ kind: 'claimed', templateHash: TEMPLATE, templateHashUnreadable: false });
    expect(agentSandboxOf(adopted)).toEqual({ kind: 'claimed', templateHash: TEMPLATE, templateHashUnreadable: false });
    expect(describeAgentSandbox(agentSandboxOf(cold)!)).toBe('agent-sandbox pod of template 7c7dd1d6, claimed');
  });

  it('the claim UID alone says claimed (it is written only under a SandboxClaim); empty, it counts as absent', () => {
    const noHash = v1Pod('claim-7', { [NAME_HASH_LABEL]: NAME_HASH.cold, [CLAIM_UID_LABEL]: CLAIM_UID });
    expect(agentSandboxOf(noHash)).toEqual({ kind: 'claimed', templateHash: null, templateHashUnreadable: false });
    expect(describeAgentSandbox(agentSandboxOf(noHash)!)).toBe('agent-sandbox pod, claimed');
    expect(agentSandboxKind(v1Pod('claim-8', { [NAME_HASH_LABEL]: NAME_HASH.cold, [CLAIM_UID_LABEL]: '' }))).toBe(
      'standalone',
    );
  });

  it('the pool label wins over a claim UID (no controller writes both: adoption swaps them in one update)', () => {
    expect(
      agentSandboxKind(
        v1Pod('both', { [WARM_POOL_LABEL]: POOL, [TEMPLATE_HASH_LABEL]: TEMPLATE, [CLAIM_UID_LABEL]: CLAIM_UID }),
      ),
    ).toBe('warm-pool');
  });

  it('a claim UID on a pod no Sandbox owns: an ordinary pod', () => {
    expect(
      agentSandboxOf(makePod('plain').label(CLAIM_UID_LABEL, CLAIM_UID).label(TEMPLATE_HASH_LABEL, TEMPLATE).obj()),
    ).toBeNull();
  });

  it("the cache: a warm claim's adoption moves the pod from warm pool to claimed on the same node", () => {
    const c = new SchedulerCache(DIMS, { ttlMs: 600_000 });
    c.upsertNode({ name: 'n64', allocatable: [64_000, 256 * 1024 ** 3] });
    const before = withNode(
      v1Pod('python-pool-b7r5k', {
        [NAME_HASH_LABEL]: NAME_HASH.adopted,
        [WARM_POOL_LABEL]: POOL,
        [TEMPLATE_HASH_LABEL]: TEMPLATE,
        'agents.x-k8s.io/created-by': 'controller',
      }),
      'n64',
    );
    c.upsertPod(toPodRecord(before, DIMS, OPTIONS));
    c.upsertPod(toPodRecord(withNode(cold, 'n64', false), DIMS, OPTIONS));
    expect(debugNode(c, 'n64', 0)!.agentSandboxes).toEqual({ warmPool: 1, claimed: 1, standalone: 0 });
    c.upsertPod(
      toPodRecord(
        { ...withNode(adopted, 'n64'), metadata: { ...adopted.metadata, uid: before.metadata!.uid } },
        DIMS,
        OPTIONS,
      ),
    );
    expect(debugNode(c, 'n64', 0)!.agentSandboxes).toEqual({ warmPool: 0, claimed: 2, standalone: 0 });
  });
});

describe('the pod record carries the kind; the cache counts it per node', () => {
  const record = (pod: Pod) => toPodRecord(pod, DIMS, OPTIONS);

  it('toPodRecord: the kind for an agent-sandbox pod, null for any other (with or without locality)', () => {
    expect(record(poolPod('p')).agentSandbox).toBe('warm-pool');
    expect(record(claimedPod('c')).agentSandbox).toBe('claimed');
    expect(record(standalonePod('s')).agentSandbox).toBe('standalone');
    expect(record(makePod('plain').label(TEMPLATE_HASH_LABEL, TEMPLATE).obj()).agentSandbox).toBeNull();
    const locality = { ...OPTIONS, locality: { templateLabel: TEMPLATE_HASH_LABEL, maxImagesPerNode: 50 } };
    expect(toPodRecord(poolPod('p'), DIMS, locality).agentSandbox).toBe('warm-pool');
    expect(toPodRecord(poolPod('p'), DIMS, { ...locality, withImages: true }).agentSandbox).toBe('warm-pool');
  });

  function cache(locality = false): SchedulerCache {
    const c = new SchedulerCache(DIMS, {
      ttlMs: 600_000,
      ...(locality ? { locality: { ttlMs: 3_600_000, maxEntries: 100, now: () => 0 } } : {}),
    });
    c.upsertNode({ name: 'n64', allocatable: [64_000, 256 * 1024 ** 3] });
    return c;
  }
  const counts = (c: SchedulerCache) => debugNode(c, 'n64', 0)!.agentSandboxes;

  it('counts the starting, running and paused agent-sandbox pods bound to a node; not the unbound, finished or other pods', () => {
    const c = cache();
    for (const name of ['p1', 'p2', 'p3']) c.upsertPod(record(withNode(poolPod(name), 'n64')));
    c.upsertPod(record(withNode(claimedPod('c1'), 'n64', false))); // starting
    c.upsertPod(record(withNode(standalonePod('s1'), 'n64')));
    const paused = sandboxPod(makePod('paused').req({ cpu: '1', memory: '2Gi' }).paused(), {
      [WARM_POOL_LABEL]: POOL,
      [TEMPLATE_HASH_LABEL]: TEMPLATE,
    });
    c.upsertPod(record(withPhase(withNode(paused, 'n64'), 'Succeeded'))); // paused: counts whatever its phase
    c.upsertPod(record(poolPod('pending'))); // unbound: counts nowhere
    c.upsertPod(record(withPhase(withNode(claimedPod('done'), 'n64'), 'Succeeded'))); // finished: counts nothing
    c.upsertPod(record(withNode(makePod('plain').req({ cpu: '1' }).label(TEMPLATE_HASH_LABEL, TEMPLATE).obj(), 'n64'))); // not a Sandbox's
    expect(counts(c)).toEqual({ warmPool: 4, claimed: 1, standalone: 1 });
    expect(debugNode(c, 'n64', 0)!.sandboxes).toMatchObject({ starting: 1, running: 5, paused: 1 }); // the plain pod runs too
  });

  it('a claim adopting a pool pod (the pool label dropped in an update) moves it from warm pool to claimed; deletion removes it', () => {
    for (const locality of [false, true]) {
      const c = cache(locality);
      const pod = withNode(poolPod('python-pool-b7r5k'), 'n64');
      c.upsertPod(record(pod));
      expect(counts(c)).toEqual({ warmPool: 1, claimed: 0, standalone: 0 });
      const adopted: Pod = {
        ...pod,
        metadata: { ...pod.metadata, labels: { [NAME_HASH_LABEL]: '65d76649', [TEMPLATE_HASH_LABEL]: TEMPLATE } },
      };
      c.upsertPod(
        locality
          ? toPodRecord(adopted, DIMS, {
              ...OPTIONS,
              locality: { templateLabel: TEMPLATE_HASH_LABEL, maxImagesPerNode: 50 },
            })
          : record(adopted),
      );
      expect(counts(c)).toEqual({ warmPool: 0, claimed: 1, standalone: 0 });
      c.deletePod(pod.metadata!.uid!);
      expect(counts(c)).toEqual({ warmPool: 0, claimed: 0, standalone: 0 });
    }
  });

  it('a suspend (the pod deleted) and a resume (a new pod, new UID) of a claimed sandbox: counted once at every step', () => {
    const c = cache();
    const first = withNode(claimedPod('claim-0042'), 'n64');
    c.upsertPod(record(first));
    c.deletePod(first.metadata!.uid!);
    expect(counts(c)).toEqual({ warmPool: 0, claimed: 0, standalone: 0 });
    const resumed = withNode(
      {
        ...claimedPod('claim-0042'),
        metadata: { ...claimedPod('claim-0042').metadata, uid: 'uid-claim-0042-resumed' },
      },
      'n64',
      false,
    );
    c.upsertPod(record(resumed));
    expect(counts(c)).toEqual({ warmPool: 0, claimed: 1, standalone: 0 });
  });

  it('a node with none shows zeros', () => {
    expect(counts(cache())).toEqual({ warmPool: 0, claimed: 0, standalone: 0 });
  });
});

/** The pod bound to `node`, Running and Ready (or starting when `ready` is false). */
function withNode(pod: Pod, node: string, ready = true): Pod {
  return {
    ...pod,
    spec: { ...pod.spec, nodeName: node },
    status: { phase: ready ? 'Running' : 'Pending', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

function withPhase(pod: Pod, phase: string): Pod {
  return { ...pod, status: { ...pod.status, phase } };
}
