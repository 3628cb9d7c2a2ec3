/**
 * `rank` on a real-looking dump: `kubectl get nodes -o json` and `kubectl get pods -A -o json` as two
 * files (test/fixtures/lists), with cordoned, tainted, NotReady and unreachable nodes; the pod's own
 * record left out; notes for another scheduler's pod and for untracked resources; exit codes, serve
 * without any kubeconfig and --version through the built CLI (dist/, `npm run build` first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseConfig } from '../../src/config/load.js';
import { mergeListings, packageVersion, rankCommand, untrackedRequests } from '../../src/cli/commands.js';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { loadFixture, makeNode, makePod } from '../fixtures/builders.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODES = join(ROOT, 'test/fixtures/lists/kubectl-get-nodes.json');
const PODS = join(ROOT, 'test/fixtures/lists/kubectl-get-pods-all-namespaces.json');
const CLI = join(ROOT, 'dist/src/cli/main.js');
const BIN = join(ROOT, 'bin/sandbox-extender.js');
const config = parseConfig({});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-rank-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function writePod(name: string, pod: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(pod));
  return path;
}

/** The output split into title, notes, table rows (cells) and the summary line. */
function parse(output: string) {
  const lines = output.split('\n');
  const header = lines.findIndex((l) => l.startsWith('#  '));
  const end = lines.findIndex((l, i) => i > header && /^\d+ nodes?: /.test(l));
  const rows = lines.slice(header + 1, end).map((l) => l.trimEnd().split(/ {2,}/));
  return { title: lines[0]!, notes: lines.slice(1, header), rows, summary: lines[end]!, after: lines.slice(end + 1) };
}

const podsList = () => loadFixture<{ items: Pod[] }>('lists/kubectl-get-pods-all-namespaces.json').items;

describe('rank on the merged dump (nodes and pods in two files)', () => {
  it('a sandbox pod (1 cpu, 1Gi): the six candidates that fit by projected pressure, then the six nodes that are not candidates', () => {
    const path = writePod('burst.json', makePod('burst-0').req({ cpu: '1', memory: '1Gi' }).obj());
    const { title, notes, rows, summary } = parse(rankCommand(config, [NODES, PODS], path));
    expect(title).toBe(
      'pod sandboxes/burst-0 requests cpu=1000m memory=1Gi; projected pressure = (allocated + paused + reserved + requested) / allocatable',
    );
    expect(notes).toEqual([]);
    // Candidates (Ready, untainted, not cordoned), projected cpu or memory pressure worked out from the fixtures:
    //   huge r7i: memory (400129000001 + 1Gi) / 1612985061376 = 0.2487 (cpu 13260/191450 = 0.0693)
    //   k3s: cpu (1250 + 1000) / 8000 = 0.28125 (the kata pod with its 250m overhead; debug-shell requests nothing)
    //   openshift: cpu 1000 / 3500 = 0.2857 (no pods)
    //   aks d4s: cpu (250 starting + 500 + 1000) / 3860 = 0.4534
    //   eks: cpu (600 sidecar pod + 200 starting + 1000) / 3920 = 0.4592
    //   gke: cpu (2000 init-dominated + 1000) / 3920 = 0.7653 (the Succeeded job counts nothing)
    // Not candidates, in the same pressure order:
    //   cordoned aks d8s 1000/7820 = 0.1279; kind (1000 + 100 + 250 + 1000)/16000 = 0.1469; worker-3 1000/4000 = 0.25;
    //   dgx memory (512Gi + 1Gi) / 2073885552640 = 0.2656; the unreachable m5.large 1000/1930 = 0.5181; edge-node-17 unknown.
    expect(rows.map((r) => [r[1], r[2], r[3]])).toEqual([
      ['ip-10-0-77-5.us-west-2.compute.internal', 'yes', '0.2487'],
      ['k3s-server-01', 'yes', '0.2813'],
      ['ip-10-0-150-22.us-east-2.compute.internal', 'yes', '0.2857'],
      ['aks-nodepool1-31415926-vmss000002', 'yes', '0.4534'],
      ['ip-10-0-12-34.us-west-2.compute.internal', 'yes', '0.4592'],
      ['gke-prod-cluster-default-pool-7c1d2e3f-b8kq', 'yes', '0.7653'],
      ['aks-nodepool1-31415926-vmss000005', 'no', '0.1279'],
      ['kind-control-plane', 'no', '0.1469'],
      ['worker-3', 'no', '0.2500'],
      ['dgx-h100-07', 'no', '0.2656'],
      ['ip-10-0-44-201.us-west-2.compute.internal', 'no', '0.5181'],
      ['edge-node-17', 'no', 'unknown'],
    ]);
    const reason = (node: string) => rows.find((r) => r[1] === node)!.at(-1);
    expect(reason('aks-nodepool1-31415926-vmss000005')).toBe(
      'node is cordoned (spec.unschedulable); untolerated taint node.kubernetes.io/unschedulable:NoSchedule',
    );
    expect(reason('kind-control-plane')).toBe('untolerated taint node-role.kubernetes.io/control-plane:NoSchedule');
    expect(reason('dgx-h100-07')).toBe('untolerated taint nvidia.com/gpu=present:NoSchedule');
    // The builder's pod has no tolerations at all, so the NoExecute taints count too.
    expect(reason('ip-10-0-44-201.us-west-2.compute.internal')).toBe(
      'node not ready: Ready=Unknown (NodeStatusUnknown: Kubelet stopped posting node status.); untolerated taints node.kubernetes.io/unreachable:NoSchedule, node.kubernetes.io/unreachable:NoExecute',
    );
    expect(reason('edge-node-17')).toMatch(
      /^node not ready: no Ready condition .*; untolerated taint node\.kubernetes\.io\/not-ready:NoSchedule; capacity unknown \(no allocatable\): ranked last$/,
    );
    expect(summary).toBe(
      '12 nodes: 6 fit, 6 are not candidates (3 not ready, 1 cordoned, 6 untolerated taints); merged 2 files',
    );
  });

  // Regression: with the candidacy rules missing, the cordoned node came first for 9 of the 14 pods.
  it.each(podsList().map((p) => [`${p.metadata!.namespace}/${p.metadata!.name}`, p] as const))(
    '%s: no excluded node is offered, the cordoned one never fits',
    (_key, pod) => {
      const { rows } = parse(rankCommand(config, [NODES, PODS], writePod('from-dump.json', pod)));
      const offered = rows.filter((r) => r[2] === 'yes').map((r) => r[1]);
      // A pod of this dump tolerates none of the NoSchedule taints except its own (CoreDNS and the
      // analytics worker: control-plane; the GPU worker: nvidia.com/gpu; the static pod: NoExecute only).
      for (const name of [
        'aks-nodepool1-31415926-vmss000005',
        'worker-3',
        'ip-10-0-44-201.us-west-2.compute.internal',
        'edge-node-17',
      ])
        expect(offered).not.toContain(name);
      expect(rows.find((r) => r[1] === 'aks-nodepool1-31415926-vmss000005')![2]).toBe('no');
      if (rows[0]![2] === 'yes')
        expect([
          'aks-nodepool1-31415926-vmss000005',
          'worker-3',
          'ip-10-0-44-201.us-west-2.compute.internal',
        ]).not.toContain(rows[0]![1]);
    },
  );

  it('a pod already in the dump is not counted against itself: its own record is left out (by uid)', () => {
    const payments = podsList().find((p) => p.metadata!.name!.startsWith('payments-api'))!;
    const { notes, rows } = parse(rankCommand(config, [NODES, PODS], writePod('payments.json', payments)));
    expect(notes[0]).toBe(
      "note: the pod's own record in the snapshot (bound to ip-10-0-12-34.us-west-2.compute.internal) is left out; the pod is ranked as if it were pending",
    );
    // On its own node only web-frontend remains (200m, starting): (200 + 600) / 3920 = 0.2041, 1 starting and 0 running.
    // Counted twice it would have been (800 + 600) / 3920 = 0.3571 with 1 running.
    const own = rows.find((r) => r[1] === 'ip-10-0-12-34.us-west-2.compute.internal')!;
    expect([own[2], own[3], own[6], own[7]]).toEqual(['yes', '0.2041', '1', '0']);
  });

  it('without a uid in the pod file, the record of the same namespace/name is left out', () => {
    const payments = podsList().find((p) => p.metadata!.name!.startsWith('payments-api'))!;
    const noUid = { ...payments, metadata: { ...payments.metadata, uid: undefined } };
    const { rows } = parse(rankCommand(config, [NODES, PODS], writePod('payments-no-uid.json', noUid)));
    expect(rows.find((r) => r[1] === 'ip-10-0-12-34.us-west-2.compute.internal')![3]).toBe('0.2041');
  });

  it('a pod with the same name but another uid is another pod: the record stays', () => {
    const payments = podsList().find((p) => p.metadata!.name!.startsWith('payments-api'))!;
    const other = { ...payments, metadata: { ...payments.metadata, uid: 'another-uid' } };
    const { notes, rows } = parse(rankCommand(config, [NODES, PODS], writePod('payments-other.json', other)));
    expect(notes.filter((n) => n.includes('own record'))).toEqual([]);
    expect(notes).toContain(
      'note: the pod file is bound to ip-10-0-12-34.us-west-2.compute.internal (spec.nodeName); ranked as if it were pending',
    );
    // (600 + 200 + 600) / 3920 = 0.3571, with the recorded pod running there.
    const row = rows.find((r) => r[1] === 'ip-10-0-12-34.us-west-2.compute.internal')!;
    expect([row[3], row[7]]).toEqual(['0.3571', '1']);
  });

  it('says so when the pod belongs to another scheduler (the extender would pass it through)', () => {
    const pending = podsList().find((p) => p.metadata!.name!.startsWith('checkout'))!;
    const { notes } = parse(rankCommand(config, [NODES, PODS], writePod('checkout.json', pending)));
    expect(notes).toContain(
      "note: the pod's schedulerName is default-scheduler, not sandbox-scheduler: kube-scheduler's default-scheduler places it and the extender passes it through " +
        '(filter keeps every node, prioritize scores 0); the table is what the extender would answer for a sandbox-scheduler pod',
    );
    // A pod without spec.schedulerName is default-scheduler's too.
    const unnamed = makePod('plain').req({ cpu: '1' }).obj();
    const bare = { ...unnamed, spec: { ...unnamed.spec, schedulerName: undefined } };
    expect(parse(rankCommand(config, [NODES, PODS], writePod('plain.json', bare))).notes[0]).toMatch(
      /^note: the pod's schedulerName is default-scheduler, not sandbox-scheduler/,
    );
  });

  it('says so when the pod is ranked as zero requests: no containers, or none that requests cpu or memory', () => {
    const empty = parse(rankCommand(config, [NODES, PODS], writePod('empty.json', makePod('empty').obj())));
    expect(empty.title).toBe(
      'pod sandboxes/empty requests cpu=0m memory=0; projected pressure = (allocated + paused + reserved + requested) / allocatable',
    );
    expect(empty.notes).toEqual([
      'note: the pod has no containers: ranked as zero requests (the API server refuses a pod without containers)',
    ]);
    const bestEffort = makePod('best-effort').obj();
    (bestEffort.spec!.containers as unknown[]).push({ name: 'c', image: 'busybox' });
    const noRequests = parse(rankCommand(config, [NODES, PODS], writePod('best-effort.json', bestEffort)));
    expect(noRequests.notes).toEqual(['note: the pod requests no cpu or memory: ranked as zero requests']);
    // Nothing requested: all six candidates fit, the one at 1.0204 with a 2 CPU pod (2000m in use of 3920m) too.
    expect(noRequests.summary).toBe(
      '12 nodes: 6 fit, 6 are not candidates (3 not ready, 1 cordoned, 6 untolerated taints); merged 2 files',
    );
    // A pod that requests anything of a dimension gets no such note.
    expect(
      parse(rankCommand(config, [NODES, PODS], writePod('tiny.json', makePod('tiny').req({ cpu: '1m' }).obj()))).notes,
    ).toEqual([]);
  });

  it('warns about requests outside the configured dimensions and holds them against allocatable (a GPU pod)', () => {
    const gpu = loadFixture<Pod>('pods/gpu-nvidia-hugepages.json');
    const { notes, rows } = parse(rankCommand(config, [NODES, PODS], writePod('gpu.json', gpu)));
    expect(notes).toContain(
      "warning: the pod requests hugepages-1Gi=16Gi, nvidia.com/gpu=4, rdma/rdma_shared_device_a=1, outside the configured dimensions (cpu, memory): checked only against each node's allocatable " +
        '(what other pods use of them is not counted) and not in the pressure; add them to `dimensions` to count them',
    );
    // Only the 8-GPU node has nvidia.com/gpu and hugepages-1Gi; the 192-CPU node fits cpu and memory but has none.
    expect(rows.filter((r) => r[2] === 'yes').map((r) => r[1])).toEqual(['dgx-h100-07']);
    expect(rows.find((r) => r[1] === 'ip-10-0-77-5.us-west-2.compute.internal')!.at(-1)).toBe(
      "hugepages-1Gi request 16Gi exceeds the node's allocatable 0; nvidia.com/gpu request 4 exceeds the node's allocatable 0; rdma/rdma_shared_device_a request 1 exceeds the node's allocatable 0",
    );
    // With them as dimensions there is no warning.
    const withGpu = parseConfig({
      dimensions: ['cpu', 'memory', 'nvidia.com/gpu', 'hugepages-1Gi', 'rdma/rdma_shared_device_a'],
    });
    expect(
      parse(rankCommand(withGpu, [NODES, PODS], writePod('gpu.json', gpu))).notes.filter((n) =>
        n.startsWith('warning'),
      ),
    ).toEqual([]);
  });

  // Regression: the reason mixed `512Gi` with `65544140Ki`.
  it('prints requests and allocatable in the same units (kind: 65544140Ki → ~62.51Gi)', () => {
    const big = writePod('big-memory.json', makePod('big').req({ cpu: '1', memory: '512Gi' }).obj());
    const { rows } = parse(rankCommand(config, [NODES, PODS], big));
    expect(rows.find((r) => r[1] === 'kind-control-plane')!.at(-1)).toBe(
      "untolerated taint node-role.kubernetes.io/control-plane:NoSchedule; memory request 512Gi exceeds the node's allocatable ~62.51Gi",
    );
  });

  it('one file holding both kinds gives the same table as the two files', () => {
    const both = join(dir, 'both.json');
    const list = loadFixture<{ items: unknown[] }>('lists/kubectl-get-nodes.json');
    list.items.push(...podsList());
    writeFileSync(both, JSON.stringify(list));
    const path = writePod('burst.json', makePod('burst-0').req({ cpu: '1', memory: '1Gi' }).obj());
    expect(parse(rankCommand(config, both, path)).rows).toEqual(parse(rankCommand(config, [NODES, PODS], path)).rows);
  });
});

// Regression (hostile-input trial): names were printed raw, so a node name holding a newline forged a row of the table.
describe('rank with control characters in names', () => {
  it('escapes them JSON-style (\\n, \\t, \\u001b, \\u0085; a backslash as \\\\) wherever a name is printed; every row stays one line', () => {
    const snapshot = join(dir, 'hostile.json');
    const evil = 'evil\n2    forged-node  yes';
    const ready = (node: Node): Node => ({
      ...node,
      status: { ...node.status, conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const nodes = [
      makeNode('plain', { cpu: '4', memory: '8Gi', pods: '110' }),
      makeNode(evil, { cpu: '8', memory: '16Gi', pods: '110' }),
      makeNode('tab\there\u001b[31m\u0085\\x', { cpu: '2', memory: '4Gi', pods: '110' }),
    ].map(ready);
    writeFileSync(snapshot, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes }));
    const built = makePod('p\tq').req({ cpu: '1', memory: '1Gi' }).obj();
    const pod = { ...built, spec: { ...built.spec, nodeName: 'bound\rthere' } };
    const output = rankCommand(config, snapshot, writePod('hostile-pod.json', pod));
    expect(output.split('\n')).toEqual([
      'pod sandboxes/p\\tq requests cpu=1000m memory=1Gi; projected pressure = (allocated + paused + reserved + requested) / allocatable',
      'note: the pod file is bound to bound\\rthere (spec.nodeName); ranked as if it were pending',
      '#  NODE                          FITS  PRESSURE  CPU     MEMORY  STARTING  RUNNING  PAUSED  REASON',
      '1  evil\\n2    forged-node  yes   yes   0.1250    0.1250  0.0625  0         0        0',
      '2  plain                         yes   0.2500    0.2500  0.1250  0         0        0',
      '3  tab\\there\\u001b[31m\\u0085\\\\x  yes   0.5000    0.5000  0.2500  0         0        0',
      '3 nodes: 3 fit',
    ]);
  });
});

describe('rank of an agent-sandbox pod (examples/agent-sandbox)', () => {
  const SNAPSHOT = join(ROOT, 'examples/agent-sandbox/snapshot.json');
  const POOL_POD = join(ROOT, 'examples/agent-sandbox/pool-pod.json');

  it('a line names it (template and kind); the table is the one of the same pod without its Sandbox', () => {
    const ranked = parse(rankCommand(config, SNAPSHOT, POOL_POD));
    expect(ranked.notes).toEqual([
      'note: agent-sandbox pod of template 7c7dd1d6, warm pool; ranked like any other pod',
    ]);
    // agent-node-64: (3 pool + 2 claimed + 4 standalone + 1) / 64 = 0.1563; agent-node-32: (2 pool + 4 CI job + 1) / 32 = 0.2188
    expect(ranked.rows.map((r) => [r[1], r[3]])).toEqual([
      ['agent-node-64', '0.1563'],
      ['agent-node-32', '0.2188'],
    ]);
    const pod = loadFixture<Pod>('../../examples/agent-sandbox/pool-pod.json');
    const plain = parse(
      rankCommand(
        config,
        SNAPSHOT,
        writePod('no-sandbox.json', { ...pod, metadata: { ...pod.metadata, ownerReferences: [] } }),
      ),
    );
    expect(plain.notes).toEqual([]);
    expect(plain.rows).toEqual(ranked.rows);
  });

  it('a Sandbox pod without requests: a line says it is ranked as zero requests, and where to set them', () => {
    const pod = loadFixture<Pod>('../../examples/agent-sandbox/pool-pod.json');
    const bare = {
      ...pod,
      spec: { ...pod.spec, containers: [{ name: 'python-runtime', image: 'registry.example/python-runtime:3.12' }] },
    };
    expect(parse(rankCommand(config, SNAPSHOT, writePod('no-requests.json', bare))).notes).toEqual([
      'note: agent-sandbox pod of template 7c7dd1d6, warm pool; ranked like any other pod',
      'note: the pod requests no cpu or memory: ranked as zero requests (set requests in its SandboxTemplate)',
    ]);
  });
});

describe('mergeListings', () => {
  const node = (name: string, cpu: string) => ({ kind: 'Node', metadata: { name }, status: { allocatable: { cpu } } });
  it('merges nodes by name and pods by uid (namespace/name without one), the later copy winning', () => {
    const a = {
      nodes: [node('n1', '1'), node('n2', '2')],
      pods: [{ metadata: { name: 'p', namespace: 'x', uid: 'u1' } }, { metadata: { name: 'q', namespace: 'x' } }],
    };
    const b = {
      nodes: [node('n2', '4')],
      pods: [
        { metadata: { name: 'p', namespace: 'x', uid: 'u1' }, spec: { nodeName: 'n2' } },
        { metadata: { name: 'q', namespace: 'x' }, spec: { nodeName: 'n1' } },
        { metadata: { name: 'p', namespace: 'x', uid: 'u2' } },
      ],
    };
    const merged = mergeListings([a, b]);
    expect(merged.nodes).toEqual([node('n1', '1'), node('n2', '4')]);
    expect(merged.pods).toEqual([b.pods[0], b.pods[1], b.pods[2]]);
    expect(merged.duplicates).toBe(3);
  });
});

describe('untrackedRequests', () => {
  it('lists non-zero requests outside the dimensions, sorted, in scheduler units', () => {
    const pod = makePod('p')
      .req({ cpu: '1', memory: '1Gi', 'nvidia.com/gpu': '2', 'ephemeral-storage': '1G', 'example.com/zero': '0' })
      .obj();
    expect([...untrackedRequests(pod, ['cpu', 'memory'])]).toEqual([
      ['ephemeral-storage', 1e9],
      ['nvidia.com/gpu', 2],
    ]);
    expect([...untrackedRequests(pod, ['cpu', 'memory', 'nvidia.com/gpu', 'ephemeral-storage'])]).toEqual([]);
  });
});

describe('packageVersion', () => {
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  it('finds package.json above the sources and above dist/', () => {
    expect(packageVersion(pathToFileURL(join(ROOT, 'src/cli/commands.ts')).href)).toBe(version);
    expect(packageVersion(pathToFileURL(join(ROOT, 'dist/src/cli/commands.js')).href)).toBe(version);
  });
  it('skips a package.json of another package and fails above every one', () => {
    const nested = join(dir, 'pkg', 'node_modules', 'other');
    mkdirSync(join(nested, 'lib'), { recursive: true });
    writeFileSync(join(nested, 'package.json'), JSON.stringify({ name: 'other', version: '9.9.9' }));
    writeFileSync(join(dir, 'pkg', 'package.json'), JSON.stringify({ name: 'sandbox-extender', version: '1.2.3' }));
    expect(packageVersion(pathToFileURL(join(nested, 'lib', 'x.js')).href)).toBe('1.2.3');
    expect(() => packageVersion(pathToFileURL(join(tmpdir(), 'nowhere', 'x.js')).href)).toThrow(
      /no package\.json of sandbox-extender above/,
    );
  });
});

describe('the built CLI: rank input errors, serve without a cluster, --version', () => {
  if (!existsSync(CLI)) {
    // Never a silent skip: `npm test` builds first (the pretest script), so a missing build is a failure here.
    it('needs the build', () => {
      throw new Error(`${CLI} does not exist: run \`npm run build\` (\`npm test\` runs it first)`);
    });
    return;
  }
  const run = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
    spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env });
  const pod = () => writePod('cli-pod.json', makePod('cli').req({ cpu: '1', memory: '1Gi' }).obj());

  it('two --snapshot files are merged; exit 0', () => {
    const result = run(['rank', '--snapshot', NODES, '--snapshot', PODS, '--pod', pod()]);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(parse(result.stdout.trimEnd()).summary).toBe(
      '12 nodes: 6 fit, 6 are not candidates (3 not ready, 1 cordoned, 6 untolerated taints); merged 2 files',
    );
  });

  it.each<[string, () => string[], RegExp]>([
    [
      'a missing --snapshot file',
      () => ['--snapshot', join(dir, 'missing.json')],
      /^sandbox-extender: .*missing\.json: cannot read: ENOENT/,
    ],
    [
      'a snapshot without nodes (pods only)',
      () => ['--snapshot', PODS],
      /^sandbox-extender: .*kubectl-get-pods-all-namespaces\.json: no Node objects/,
    ],
    [
      'a second snapshot file missing',
      () => ['--snapshot', NODES, '--snapshot', join(dir, 'missing-2.json')],
      /missing-2\.json: cannot read: ENOENT/,
    ],
    [
      'a snapshot that is not a List',
      () => ['--snapshot', writePod('not-a-list.json', { kind: 'Pod' })],
      /expected a v1 List of Nodes and Pods/,
    ],
    [
      'a snapshot whose Nodes cannot be read',
      () => ['--snapshot', writePod('unusable-nodes.json', { kind: 'List', items: [null, 5, { kind: 'Node' }] })],
      /unusable-nodes\.json: no usable Node object \(node <unnamed>: /,
    ],
  ])('%s exits 2', (_name, snapshotArgs, message) => {
    const result = run(['rank', ...snapshotArgs(), '--pod', pod()]);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.status).toBe(2);
  });

  it.each<[string, () => string, RegExp]>([
    ['a missing pod file', () => join(dir, 'no-pod.json'), /--pod .*no-pod\.json: ENOENT/],
    [
      'a pod file that is not JSON or YAML',
      () => {
        const p = join(dir, 'garbage.json');
        writeFileSync(p, '{"kind": "Pod",');
        return p;
      },
      /--pod .*garbage\.json: /,
    ],
    ['a pod file holding a list', () => writePod('list-as-pod.json', []), /expected a Pod object, got an array\n$/],
    [
      'a pod with an invalid quantity',
      () => writePod('bad-q.json', makePod('q').req({ cpu: 'lots' }).obj()),
      /^sandbox-extender: --pod .*bad-q\.json: .*invalid quantity "lots"/,
    ],
    [
      'a pod without a name',
      () => writePod('no-name.json', { kind: 'Pod', metadata: { namespace: 'x' }, spec: { containers: [] } }),
      /^sandbox-extender: --pod .*no-name\.json: .*pod has no metadata\.name/,
    ],
  ])('%s exits 2', (_name, podPath, message) => {
    const result = run(['rank', '--snapshot', NODES, '--snapshot', PODS, '--pod', podPath()]);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.status).toBe(2);
  });

  // Regression (new-user trial): the second --pod silently took the first one's place.
  it('rank with --pod twice exits 2 naming both files', () => {
    const first = pod();
    const second = writePod('cli-pod-2.json', makePod('cli-2').req({ cpu: '1' }).obj());
    const result = run(['rank', '--snapshot', NODES, '--pod', first, '--pod', second]);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `--pod is given twice (${first}, ${second}); rank takes one pod: run it once for each`,
    );
    expect(result.status).toBe(2);
  });

  // Regression (new-user trial): --kubeconfig was silently ignored in offline mode.
  it('serve with --kubeconfig and --snapshot exits 2: the two modes exclude each other', () => {
    const result = run(['serve', '--snapshot', NODES, '--kubeconfig', join(dir, 'kubeconfig'), '--port', '0']);
    expect(result.error).toBeUndefined();
    expect(result.stderr).toContain("option '--kubeconfig <file>' cannot be used with option '--snapshot <file>'");
    expect(result.status).toBe(2);
  });

  // Regression (new-user trial): a second --snapshot silently took the first one's place.
  it('serve with --snapshot twice exits 2: it serves one file', () => {
    const result = run(['serve', '--snapshot', NODES, '--snapshot', PODS, '--port', '0']);
    expect(result.stderr).toContain(`--snapshot is given twice (${NODES}, ${PODS}); serve reads one snapshot file`);
    expect(result.status).toBe(2);
  });

  // Regression (new-user trial): a config file's snapshot.path silently won over --kubeconfig.
  it('serve --kubeconfig with a config file that sets snapshot.path exits 2 naming both', () => {
    const config = join(dir, 'snapshot-mode.yaml');
    writeFileSync(config, `snapshot: {path: ${NODES}}\n`);
    const result = run(['serve', '--config', config, '--kubeconfig', join(dir, 'kubeconfig'), '--port', '0']);
    expect(result.stderr).toContain(
      'kubeconfig: kubeconfig (cluster mode) and snapshot.path (snapshot mode) pick different modes: set one',
    );
    expect(result.status).toBe(2);
  });

  // Regression (new-user trial): an empty kubeconfig gave "Cannot read properties of undefined (reading 'clusters')".
  it('serve --kubeconfig naming an empty file exits 2: not a kubeconfig', () => {
    const empty = join(dir, 'empty-kubeconfig');
    writeFileSync(empty, '');
    const result = run(['serve', '--kubeconfig', empty, '--port', '0']);
    expect(result.stderr).toBe(
      `sandbox-extender: cannot read the kubeconfig ${empty}: not a kubeconfig (expected YAML with clusters, users and contexts)\n`,
    );
    expect(result.status).toBe(2);
  });

  it('serve --snapshot with a file without nodes exits 2 at once', () => {
    const result = run(['serve', '--snapshot', PODS, '--port', '0']);
    expect(result.stderr).toContain(`sandbox-extender: cannot start: the snapshot ${PODS} could not be loaded`);
    expect(result.status).toBe(2);
    // Regression (new-user trial): the log said "keeping the previous state" where there was none yet.
    expect(`${result.stdout}${result.stderr}`).toContain('"msg":"snapshot not loaded; not starting"');
    expect(`${result.stdout}${result.stderr}`).not.toContain('keeping the previous state');
  });

  it('serve --snapshot with a missing file exits 2 at once', () => {
    const result = run(['serve', '--snapshot', join(dir, 'gone.json'), '--port', '0']);
    expect(result.stderr).toMatch(/^sandbox-extender: .*gone\.json: cannot read: ENOENT/);
    expect(result.status).toBe(2);
  });

  // Regression: with no kubeconfig anywhere, client-node fell back to http://localhost:8080 and the
  // watches retried for ever. (Skipped inside a pod, where the service account is a kubeconfig.)
  const inCluster = existsSync('/var/run/secrets/kubernetes.io/serviceaccount/token');
  (inCluster ? it.skip : it)('serve with no --snapshot and no kubeconfig exits 2 at once with what to do', () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env.KUBECONFIG;
    const result = run(['serve', '--port', '0'], env);
    expect(result.error).toBeUndefined(); // not killed by the timeout
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'sandbox-extender: no kubeconfig found: $KUBECONFIG is not set, ~/.kube/config does not exist and this is not a pod with a service account; ' +
        'pass --kubeconfig FILE (or `kubeconfig` in the config file) for cluster mode, or --snapshot FILE for offline mode\n',
    );
  });

  it('serve --kubeconfig naming a missing file exits 2 with the path', () => {
    const missing = join(dir, 'no-kubeconfig');
    const result = run(['serve', '--port', '0', '--kubeconfig', missing]);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^sandbox-extender: cannot read the kubeconfig ${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ENOENT`,
      ),
    );
  });

  it('rank loads only what it uses: not the HTTP edge, the Kubernetes client, the metrics, the logger or the streaming JSON parser', () => {
    // A module resolve hook writes every package the command resolves.
    const hooks = join(dir, 'hooks.mjs');
    const loaded = join(dir, 'loaded.txt');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  const m = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(r.url);
  if (m) appendFileSync(${JSON.stringify(loaded)}, m[1] + '\\n');
  return r;
}
`,
    );
    const register = join(dir, 'register.mjs');
    writeFileSync(
      register,
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const result = spawnSync(
      process.execPath,
      ['--import', pathToFileURL(register).href, CLI, 'rank', '--snapshot', NODES, '--snapshot', PODS, '--pod', pod()],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.status).toBe(0);
    const packages = new Set(readFileSync(loaded, 'utf8').trim().split('\n'));
    expect(packages.has('commander') && packages.has('zod')).toBe(true); // the hook saw the command's own packages
    for (const unused of [
      'express',
      '@kubernetes/client-node',
      'prom-client',
      'pino',
      '@streamparser/json-node',
      'p-retry',
      'p-throttle',
    ])
      expect({ unused, loaded: packages.has(unused) }).toEqual({ unused, loaded: false });
  });

  it('--version prints the package version from dist/ and from the bin entry point', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const fromDist = run(['--version']);
    expect([fromDist.status, fromDist.stdout]).toEqual([0, `${version}\n`]);
    const fromBin = spawnSync(process.execPath, [BIN, '--version'], {
      cwd: tmpdir(),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect([fromBin.status, fromBin.stdout]).toEqual([0, `${version}\n`]);
  });
});
