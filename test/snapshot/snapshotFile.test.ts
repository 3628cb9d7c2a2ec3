/**
 * The snapshot file (src/snapshot/snapshotFile.ts): parsing kubectl Lists in JSON and YAML, the
 * polling watcher, and the `serve()` composition root reloading it (src/runtime/serve.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import request from 'supertest';
import { stringify as toYaml } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import type { Node, Pod } from '../../src/core/objects/kubeObjects.js';
import { serve, type RunningServer } from '../../src/runtime/serve.js';
import { watchFileChanges } from '../../src/fileWatch.js';
import {
  MAX_SNAPSHOT_DEPTH,
  SnapshotError,
  parseSnapshot,
  readSnapshot,
  readSnapshotRecords,
} from '../../src/snapshot/snapshotFile.js';
import { makeNode, makePod } from '../fixtures/builders.js';
import { modelState, sampleValue } from '../server/harness.js';
import { thrown } from '../fixtures/thrown.js';

const SNAPSHOT_PATH = fileURLToPath(new URL('../../examples/snapshot.json', import.meta.url));
const LISTS = fileURLToPath(new URL('../fixtures/lists/', import.meta.url));
const snapshotText = readFileSync(SNAPSHOT_PATH, 'utf8');

interface List {
  apiVersion: string;
  kind: string;
  metadata?: unknown;
  items: Record<string, unknown>[];
}
const exampleList = (): List => JSON.parse(snapshotText) as List;

const names = (objects: readonly (Node | Pod)[]) => objects.map((o) => o.metadata!.name);

// examples/snapshot.json: 3 Nodes and 22 Pods (2 + 1 Succeeded on node-16, 6 + 1 starting on
// node-64, 10 + 1 paused on node-192, 1 unbound).
const EXAMPLE_NODE_NAMES = ['sandbox-node-16', 'sandbox-node-64', 'sandbox-node-192'];
const EXAMPLE_POD_COUNT = 22;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-snapshot-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Polls `condition` every 10 ms until it holds or `timeoutMs` passes; returns whether it held. */
async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Replaces `path` atomically (write a sibling, rename over), so a poll never sees a half-written file. */
function replaceFile(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.hrtime.bigint()}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

function snapshotError(fn: () => unknown): SnapshotError {
  return thrown(SnapshotError, fn);
}

const DEEP = 1_000_000;
/**
 * Snapshot texts nested DEEP levels (the hostile-input trial's files), each otherwise a valid List of the
 * example cluster: arrays or objects at the top, inside a Node, or a YAML flow sequence.
 */
const deepSnapshots: readonly [string, string, () => string][] = [
  ['arrays at the top', 'json', () => `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`],
  ['objects at the top', 'json', () => `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`],
  [
    'arrays inside a Node of a valid List',
    'json',
    () => {
      const text = JSON.stringify(exampleList());
      const at = text.indexOf('"metadata":', text.indexOf('"kind":"Node"'));
      return `${text.slice(0, at)}"deep":${'['.repeat(DEEP)}${']'.repeat(DEEP)},${text.slice(at)}`;
    },
  ],
  [
    'a YAML flow sequence',
    'yaml',
    () => `apiVersion: v1\nkind: List\nitems:\n- ${'['.repeat(DEEP)}${']'.repeat(DEEP)}\n`,
  ],
];

/** The example List with one Node carrying a field nested so that the file nests `depth` levels in all. */
function listNested(depth: number): string {
  const list = exampleList();
  // The List (1), its items (2), the Node (3): the field's value adds the rest.
  let value: unknown = 1;
  for (let i = 3; i < depth; i++) value = [value];
  list.items[0]!['deep'] = value;
  return JSON.stringify(list);
}

describe('parseSnapshot', () => {
  it('JSON List (kubectl get nodes,pods -A -o json): the example cluster, in file order', () => {
    const snapshot = parseSnapshot(snapshotText, 'snapshot.json');
    expect(names(snapshot.nodes)).toEqual(EXAMPLE_NODE_NAMES);
    expect(snapshot.pods).toHaveLength(EXAMPLE_POD_COUNT);
    expect(snapshot.pods[0]!.metadata!.name).toBe('sb-16-0');
    // The objects are passed through whole.
    expect(snapshot.nodes[2]).toEqual(
      exampleList().items.find((i) => (i['metadata'] as { name: string }).name === 'sandbox-node-192'),
    );
  });

  it('YAML List (the same file through the yaml package) gives exactly the same objects', () => {
    const yamlText = toYaml(exampleList());
    expect(yamlText.startsWith('apiVersion: v1')).toBe(true);
    expect(parseSnapshot(yamlText, 'snapshot.yaml')).toEqual(parseSnapshot(snapshotText, 'snapshot.json'));
  });

  it('YAML List starting with a document marker and comments', () => {
    const yamlText = `# kubectl get nodes,pods -A -o yaml\n---\n${toYaml(exampleList())}`;
    expect(names(parseSnapshot(yamlText, 'x.yaml').nodes)).toEqual(EXAMPLE_NODE_NAMES);
  });

  it('NodeList whose items carry no kind: every item is a Node', () => {
    const nodes = exampleList()
      .items.filter((i) => i['kind'] === 'Node')
      .map(({ kind: _kind, ...rest }) => rest);
    const snapshot = parseSnapshot(JSON.stringify({ apiVersion: 'v1', kind: 'NodeList', items: nodes }), 'nodes.json');
    expect(names(snapshot.nodes)).toEqual(EXAMPLE_NODE_NAMES);
    expect(snapshot.pods).toEqual([]);
  });

  it('a listing without any Node (say a PodList written over the file) is refused, not applied as an empty cluster', () => {
    const pods = exampleList()
      .items.filter((i) => i['kind'] === 'Pod')
      .map(({ kind: _kind, ...rest }) => rest);
    const err = snapshotError(() =>
      parseSnapshot(JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: pods }), 'pods.json'),
    );
    expect(err.message).toBe('pods.json: no Node objects (expected kubectl get nodes,pods -A -o json); not applied');
    expect(
      snapshotError(() => parseSnapshot(readFileSync(`${LISTS}kubectl-get-pods-all-namespaces.json`, 'utf8'), 'p'))
        .message,
    ).toMatch(/no Node objects/);
    expect(snapshotError(() => parseSnapshot('{"apiVersion":"v1","kind":"List","items":[]}', 'x')).message).toMatch(
      /no Node objects/,
    );
  });

  it.each([['kubectl-get-nodes.json', 12, 0]])('fixture list %s: %i nodes, %i pods', (file, nodeCount, podCount) => {
    const text = readFileSync(`${LISTS}${file}`, 'utf8');
    const list = JSON.parse(text) as List;
    const snapshot = parseSnapshot(text, file);
    expect(snapshot.nodes).toHaveLength(nodeCount);
    expect(snapshot.pods).toHaveLength(podCount);
    expect([...snapshot.nodes, ...snapshot.pods]).toEqual(list.items);
    // and the same through YAML
    expect(parseSnapshot(toYaml(list), `${file}.yaml`)).toEqual(snapshot);
  });

  it('items of other kinds in a List (Services, Events) are ignored', () => {
    const list = exampleList();
    list.items.unshift(
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' } },
      { apiVersion: 'v1', kind: 'Event', metadata: { name: 'ev' } },
    );
    const snapshot = parseSnapshot(JSON.stringify(list), 'x.json');
    expect(names(snapshot.nodes)).toEqual(EXAMPLE_NODE_NAMES);
    expect(snapshot.pods).toHaveLength(EXAMPLE_POD_COUNT);
  });

  // [scenario, text, the kind as the message quotes it]
  it.each([
    ['a single Pod', JSON.stringify(makePod('p').obj()), '"Pod"'],
    ['a single Node', JSON.stringify(makeNode('n', { cpu: '1' })), '"Node"'],
    ['a List without items', '{"apiVersion":"v1","kind":"List"}', '"List"'],
    ['items not an array', '{"kind":"List","items":{}}', '"List"'],
    ['a ConfigMapList', '{"kind":"ConfigMapList","items":[]}', '"ConfigMapList"'],
  ])('%s is rejected with a clear message', (_name, text, kind) => {
    const err = snapshotError(() => parseSnapshot(text, 'cluster.json'));
    expect(err.message).toBe(
      `cluster.json: expected a v1 List of Nodes and Pods (kubectl get nodes,pods -A -o json), got kind ${kind}`,
    );
  });

  it.each([
    ['a bare JSON array of objects', JSON.stringify(exampleList().items), 'an array'],
    ['an empty file', '', 'an empty document'],
    ['a YAML scalar', 'hello\n', 'plain text'],
  ])('%s is rejected with a clear message', (_name, text, what) => {
    const err = snapshotError(() => parseSnapshot(text, 'cluster.json'));
    expect(err.message).toBe(
      `cluster.json: expected a v1 List of Nodes and Pods (kubectl get nodes,pods -A -o json), got ${what}`,
    );
  });

  it.each([
    ['truncated JSON', snapshotText.slice(0, 500)],
    ['invalid YAML', 'kind: List\nitems: [\n'],
  ])('%s → "not valid JSON or YAML" naming the source', (_name, text) => {
    expect(snapshotError(() => parseSnapshot(text, 'cluster.json')).message).toMatch(
      /^cluster\.json: not valid JSON or YAML: /,
    );
  });

  // Regression (fixed), was in src/snapshot/snapshotFile.ts parseSnapshot, the `/^\s*[{[]/` test): a JSON snapshot that
  // starts with a UTF-8 byte-order mark (PowerShell's `Out-File -Encoding utf8`, some editors) is
  // sent to JSON.parse with the BOM still in front (`\s` matches U+FEFF, JSON.parse rejects it) and
  // fails with "not valid JSON or YAML: Unexpected token '<U+FEFF>'". Expected: the BOM is skipped.
  it('a JSON file with a UTF-8 byte-order mark is read like one without', () => {
    expect(names(parseSnapshot(`\uFEFF${snapshotText}`, 'bom.json').nodes)).toEqual(EXAMPLE_NODE_NAMES);
  });
});

describe('readSnapshot', () => {
  it('reads a file; a missing file is a SnapshotError naming the path', () => {
    expect(names(readSnapshot(SNAPSHOT_PATH).nodes)).toEqual(EXAMPLE_NODE_NAMES);
    const missing = join(dir, 'missing.json');
    expect(snapshotError(() => readSnapshot(missing)).message).toMatch(
      new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot read: ENOENT`),
    );
  });

  // Regression (hostile-input trial): a YAML flow sequence 1,000,000 deep took 12 s and 1.2 GB before its stack overflowed.
  it.each(deepSnapshots)(
    'a file nested 1,000,000 deep (%s) is refused, naming the file and the limit',
    (_what, ext, text) => {
      const path = join(dir, `deep-whole-${ext}-${text().length}.${ext}`);
      writeFileSync(path, text());
      expect(snapshotError(() => readSnapshot(path)).message).toBe(
        `${path}: nests arrays and objects deeper than 100 levels, the most a snapshot may (a Node or a Pod nests about 15); not read`,
      );
    },
  );
});

describe('readSnapshotRecords (the streaming reader serve uses)', () => {
  const DIMS = { names: ['cpu', 'memory'] };
  const OPTS = { pausedLabel: 'sandbox-extender.io/paused' };
  let n = 0;
  const file = (text: string | Buffer) => {
    const path = join(dir, `records-${n++}.json`);
    writeFileSync(path, text);
    return path;
  };
  const read = (text: string | Buffer) => readSnapshotRecords(file(text), DIMS, OPTS);
  const rejection = async (text: string | Buffer) => {
    const err = await read(text).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SnapshotError);
    return (err as Error).message;
  };

  it('reads the example snapshot into the same records as the whole-file reader', async () => {
    const reader = await readSnapshotRecords(SNAPSHOT_PATH, DIMS, OPTS);
    expect(reader.nodes.map((r) => r.name)).toEqual(EXAMPLE_NODE_NAMES);
    expect(reader.pods).toHaveLength(EXAMPLE_POD_COUNT);
    expect(reader.nodes[2]!.allocatable).toEqual([192000, 768 * 1024 ** 3]);
    expect(reader.errors).toEqual([]);
  });

  // Regression (new-user trial): a FIFO put in the snapshot's place froze serve for good (open() blocked the main
  // thread until a writer came); a symlink to /dev/zero was read to the 500 MiB bound on every reload.
  it.each([
    [
      'a FIFO',
      () => {
        const path = join(dir, `fifo-${n++}`);
        execFileSync('mkfifo', [path]);
        return path;
      },
      'a pipe',
    ],
    [
      'a device (through a symlink)',
      () => {
        const path = join(dir, `zero-${n++}.json`);
        symlinkSync('/dev/zero', path);
        return path;
      },
      'a device',
    ],
    ['a directory', () => dir, 'a directory'],
  ])('refuses %s at once, saying it needs a regular file', async (_name, make, kind) => {
    const path = make();
    const err = await readSnapshotRecords(path, DIMS, OPTS).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SnapshotError);
    expect((err as Error).message).toBe(
      `${path}: ${kind}; serve re-reads its snapshot when the file changes, so it must be a regular file (kubectl get nodes,pods -A -o json > FILE)`,
    );
  });

  it('gives items without a kind the list’s kind (NodeList, PodList), even though kind comes after the items', async () => {
    const nodes = exampleList()
      .items.filter((i) => i.kind === 'Node')
      .map(({ kind: _kind, ...rest }) => rest);
    const reader = await read(JSON.stringify({ apiVersion: 'v1', items: nodes, kind: 'NodeList', metadata: {} }));
    expect(reader.nodes.map((r) => r.name)).toEqual(EXAMPLE_NODE_NAMES);
  });

  it('reads a file with a UTF-8 byte-order mark, and YAML', async () => {
    expect(
      (await read(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(snapshotText)]))).nodes,
    ).toHaveLength(3);
    expect((await read(toYaml(exampleList()))).pods).toHaveLength(EXAMPLE_POD_COUNT);
  });

  it('reports a bad object and keeps its name for the cache to keep (one bad object loses nothing)', async () => {
    const list = exampleList();
    const bad = list.items.find((i) => i.kind === 'Node') as unknown as Node & {
      status: { allocatable: Record<string, string> };
    };
    bad.status.allocatable.cpu = 'lots';
    const reader = await read(JSON.stringify(list));
    expect(reader.errors).toEqual([expect.stringMatching(/^node sandbox-node-16: .*invalid quantity "lots"/)]);
    expect([...reader.keptNodes]).toEqual(['sandbox-node-16']);
  });

  it.each([
    ['a truncated file', () => snapshotText.slice(0, snapshotText.length / 2), /: not valid JSON: /],
    // Regression (new-user trial): an array was "got kind null" here and "got an array" in rank; an empty file "got null".
    ['an array', () => '[1, 2]', /expected a v1 List of Nodes and Pods .*, got an array$/],
    ['an empty file', () => '', /expected a v1 List of Nodes and Pods .*, got an empty document$/],
    [
      'items that are an object',
      () => JSON.stringify({ kind: 'List', items: { a: exampleList().items[0] } }),
      /expected a v1 List .*got kind "List"/,
    ],
    ['a ConfigMap', () => JSON.stringify({ kind: 'ConfigMap', data: {} }), /got kind "ConfigMap"/],
    [
      'no nodes',
      () => JSON.stringify({ kind: 'List', items: exampleList().items.filter((i) => i.kind === 'Pod') }),
      /no Node objects .*not applied$/,
    ],
    [
      'nodes none of which can be read (the model would be emptied)',
      () =>
        JSON.stringify({
          kind: 'List',
          items: [
            { kind: 'Node', metadata: { name: 'n' }, status: { allocatable: { cpu: '1e400x' } } },
            ...exampleList().items.filter((i) => i.kind === 'Pod'),
          ],
        }),
      /: no usable Node object \(node n: .*invalid quantity "1e400x".*\); not applied$/,
    ],
  ])('refuses %s with a SnapshotError naming the file', async (_what, text, message) => {
    expect(await rejection(text())).toMatch(message);
  });

  // Regression (hostile-input trial): a file nested 1,000,000 deep froze the streamed parser, and with it serve.
  it.each(deepSnapshots)(
    'a file nested 1,000,000 deep (%s) is refused at once, naming the file and the limit',
    async (_what, ext, text) => {
      const path = join(dir, `deep-records-${n++}.${ext}`);
      writeFileSync(path, text());
      const err = await readSnapshotRecords(path, DIMS, OPTS).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SnapshotError);
      expect((err as Error).message).toBe(
        `${path}: nests arrays and objects deeper than 100 levels, the most a snapshot may (a Node or a Pod nests about 15); not read`,
      );
    },
  );

  it('a file nested exactly MAX_SNAPSHOT_DEPTH deep is read (streamed and whole); one level more is refused', async () => {
    expect(MAX_SNAPSHOT_DEPTH).toBe(100);
    const atLimit = file(listNested(MAX_SNAPSHOT_DEPTH));
    expect((await readSnapshotRecords(atLimit, DIMS, OPTS)).nodes.map((r) => r.name)).toEqual(EXAMPLE_NODE_NAMES);
    expect(names(readSnapshot(atLimit).nodes)).toEqual(EXAMPLE_NODE_NAMES);
    const flowYaml = (text: string) => `# YAML in flow style\n${toYaml(JSON.parse(text), { collectionStyle: 'flow' })}`;
    expect(parseSnapshot(flowYaml(listNested(MAX_SNAPSHOT_DEPTH)), 'at-limit.yaml').nodes).toHaveLength(3);
    expect(await rejection(listNested(MAX_SNAPSHOT_DEPTH + 1))).toMatch(
      /: nests arrays and objects deeper than 100 levels/,
    );
    expect(
      snapshotError(() => parseSnapshot(flowYaml(listNested(MAX_SNAPSHOT_DEPTH + 1)), 'over.yaml')).message,
    ).toMatch(/^over\.yaml: nests arrays and objects deeper than 100 levels/);
  });

  it('brackets inside strings and YAML comments are not nesting', async () => {
    const list = exampleList();
    (list.items[0]!['metadata'] as { annotations?: Record<string, string> }).annotations = {
      note: `${'['.repeat(500)}"\\${'{'.repeat(500)}`,
    };
    expect((await read(JSON.stringify(list))).nodes).toHaveLength(3);
    expect(parseSnapshot(`# ${'['.repeat(500)}\n${toYaml(list)}`, 'comment.yaml').nodes).toHaveLength(3);
    expect(parseSnapshot(toYaml(list), 'string.yaml').nodes).toHaveLength(3);
  });

  it('a missing file is a SnapshotError naming the path', async () => {
    const missing = join(dir, 'missing-records.json');
    const err = await readSnapshotRecords(missing, DIMS, OPTS).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).toMatch(
      new RegExp(`^${missing.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: cannot read: ENOENT`),
    );
  });
});

describe('watchFileChanges (the snapshot file and the TLS files)', () => {
  it('sees a rewrite of the file, and nothing after it is stopped', async () => {
    const path = join(dir, 'watched.json');
    writeFileSync(path, snapshotText);
    let changes = 0;
    const stop = watchFileChanges(path, 20, () => {
      changes++;
    });
    try {
      // Let the first poll record the initial state, then change size and content.
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(changes).toBe(0);
      writeFileSync(path, `${snapshotText}\n`);
      expect(await waitFor(() => changes >= 1)).toBe(true);
    } finally {
      stop();
    }
    const seen = changes;
    writeFileSync(path, `${snapshotText}\n\n\n`);
    await new Promise((resolve) => setTimeout(resolve, 100)); // 5 poll intervals
    expect(changes).toBe(seen);
  });

  it('sees an atomic replace (rename over the file, as editors and kubectl > tmp && mv do)', async () => {
    const path = join(dir, 'renamed.json');
    writeFileSync(path, snapshotText);
    let changes = 0;
    const stop = watchFileChanges(path, 20, () => {
      changes++;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 60));
      replaceFile(path, snapshotText); // same size and content, new inode
      expect(await waitFor(() => changes >= 1)).toBe(true);
    } finally {
      stop();
    }
  });
});

describe('serve() on a temp copy of the snapshot (port 0)', () => {
  const logger = pino({ level: 'silent' });
  let path: string;
  let running: RunningServer;

  /** 2 CPU / 4Gi sandbox pod, the one the extender places below. */
  const placed = makePod('placed-0').uid('uid-placed-0').req({ cpu: '2', memory: '4Gi' }).obj();
  const extenderArgs = (pod: Pod) => ({ Pod: pod, Nodes: null, NodeNames: EXAMPLE_NODE_NAMES });

  async function metricsText(): Promise<string> {
    return (await request(running.url).get('/metrics')).text;
  }

  beforeAll(async () => {
    path = join(dir, 'serve-snapshot.json');
    writeFileSync(path, snapshotText);
    const config = parseConfig({
      snapshot: { path, pollIntervalMs: 50 },
      server: { port: 0, host: '127.0.0.1' },
      logLevel: 'silent',
      randomSeed: 1,
      chooseInFilter: false,
    });
    running = await serve(config, logger);
  });
  afterAll(async () => {
    await running?.close();
  });

  it('listens on an ephemeral port and has loaded the snapshot', async () => {
    expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(running.url).not.toMatch(/:8888$/);
    expect((await request(running.url).get('/readyz')).text).toBe('ok');
    expect([...running.service.cache.nodeNames()]).toEqual(EXAMPLE_NODE_NAMES);
    expect(running.service.cache.size.pods).toBe(EXAMPLE_POD_COUNT);
    const text = await metricsText();
    expect(sampleValue(text, 'sandbox_extender_snapshot_loads_total', { result: 'ok' })).toBe(1);
    expect(sampleValue(text, 'sandbox_extender_snapshot_objects', { kind: 'node' })).toBe(3);
    expect(sampleValue(text, 'sandbox_extender_snapshot_objects', { kind: 'pod' })).toBe(EXAMPLE_POD_COUNT);
  });

  it('a reserved pod that appears bound in a rewritten snapshot releases its reservation (reason "bound")', async () => {
    const res = await request(running.url).post('/prioritize').send(extenderArgs(placed));
    expect(res.status).toBe(200);
    // node-192: (20000 + 4000 paused + 2000)/192000 = 0.1354, the lowest → reserved there.
    expect(res.body).toEqual([
      { Host: 'sandbox-node-16', Score: 5 },
      { Host: 'sandbox-node-64', Score: 6 },
      { Host: 'sandbox-node-192', Score: 10 },
    ]);
    expect(running.service.cache.reservation('uid-placed-0')?.nodeName).toBe('sandbox-node-192');
    expect(sampleValue(await metricsText(), 'sandbox_extender_reservations_pending')).toBe(1);

    // kube-scheduler bound it; the next snapshot shows it Running and Ready on node-192.
    const list = exampleList();
    list.items.push(
      makePod('placed-0')
        .uid('uid-placed-0')
        .req({ cpu: '2', memory: '4Gi' })
        .node('sandbox-node-192')
        .obj() as unknown as Record<string, unknown>,
    );
    replaceFile(path, JSON.stringify(list));

    expect(
      await waitFor(
        async () =>
          sampleValue(await metricsText(), 'sandbox_extender_reservations_released_total', { reason: 'bound' }) === 1,
      ),
    ).toBe(true);
    expect(running.service.cache.size.reservations).toBe(0);
    expect(sampleValue(await metricsText(), 'sandbox_extender_reservations_pending')).toBe(0);
    // Its request moved from reserved to allocated: node-192 now has 11 running, 22000m allocated.
    const totals = running.service.cache.nodeInfo('sandbox-node-192')!;
    expect({ running: totals.running, cpu: totals.allocated[0] }).toEqual({ running: 11, cpu: 22000 });
    expect(running.service.cache.nodeInfo('sandbox-node-192')?.reservedCount ?? 0).toBe(0);
  });

  it('writing an invalid file keeps the previous state; the extender keeps answering', async () => {
    const before = modelState(running.service);
    const errorsBefore =
      sampleValue(await metricsText(), 'sandbox_extender_snapshot_loads_total', { result: 'error' }) ?? 0;

    replaceFile(path, '{"apiVersion": "v1", "kind": "List", "items": [');
    expect(
      await waitFor(
        async () =>
          (sampleValue(await metricsText(), 'sandbox_extender_snapshot_loads_total', { result: 'error' }) ?? 0) >
          errorsBefore,
      ),
    ).toBe(true);
    expect(modelState(running.service)).toEqual(before);

    replaceFile(path, JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'not-a-list' } }));
    expect(
      await waitFor(
        async () =>
          (sampleValue(await metricsText(), 'sandbox_extender_snapshot_loads_total', { result: 'error' }) ?? 0) >
          errorsBefore + 1,
      ),
    ).toBe(true);
    expect(modelState(running.service)).toEqual(before);

    expect((await request(running.url).get('/readyz')).status).toBe(200);
    const res = await request(running.url)
      .post('/filter')
      .send(extenderArgs(makePod('after-bad-file').req({ cpu: '2', memory: '4Gi' }).obj()));
    expect(res.body).toEqual({
      Nodes: null,
      NodeNames: EXAMPLE_NODE_NAMES,
      FailedNodes: {},
      FailedAndUnresolvableNodes: {},
      Error: '',
    });
  });

  it('a valid file after the bad ones is loaded again (a node removed disappears from the model)', async () => {
    const list = exampleList();
    list.items = list.items.filter(
      (i) => !(i['kind'] === 'Node' && (i['metadata'] as { name: string }).name === 'sandbox-node-16'),
    );
    const okBefore = sampleValue(await metricsText(), 'sandbox_extender_snapshot_loads_total', { result: 'ok' }) ?? 0;
    replaceFile(path, JSON.stringify(list));
    expect(
      await waitFor(
        async () =>
          (sampleValue(await metricsText(), 'sandbox_extender_snapshot_loads_total', { result: 'ok' }) ?? 0) > okBefore,
      ),
    ).toBe(true);
    expect([...running.service.cache.nodeNames()]).toEqual(['sandbox-node-64', 'sandbox-node-192']);
    const res = await request(running.url)
      .post('/filter')
      .send(extenderArgs(makePod('after-node-gone').req({ cpu: '2', memory: '4Gi' }).obj()));
    expect((res.body as { FailedNodes: Record<string, string> }).FailedNodes).toEqual({
      'sandbox-node-16': "node sandbox-node-16 is not in the extender's cluster snapshot",
    });
  });
});

describe('serve() sweeps reservations past their deadline even when no verb comes', () => {
  it('a reservation of a 0.2 s TTL is released as expired with no request after it', async () => {
    const path = join(dir, 'sweep-snapshot.json');
    writeFileSync(path, snapshotText);
    const config = parseConfig({
      snapshot: { path },
      server: { port: 0 },
      logLevel: 'silent',
      placementReservationTtlSeconds: 0.2,
    });
    const running = await serve(config, pino({ level: 'silent' }));
    try {
      const pod = makePod('swept').req({ cpu: '2', memory: '4Gi' }).obj();
      await request(running.url)
        .post('/filter')
        .send({ Pod: pod, Nodes: null, NodeNames: EXAMPLE_NODE_NAMES })
        .expect(200);
      expect(running.service.cache.size.reservations).toBe(1);
      // No verb from now on: only the sweep (every 100 ms here, half the TTL) can release it.
      expect(await waitFor(() => running.service.cache.size.reservations === 0)).toBe(true);
      const text = (await request(running.url).get('/metrics')).text;
      expect(sampleValue(text, 'sandbox_extender_reservations_released_total', { reason: 'expired' })).toBe(1);
    } finally {
      await running.close();
    }
  });
});

describe('serve() start-up failures', () => {
  const logger = pino({ level: 'silent' });

  it('without a snapshot path it runs in cluster mode, and refuses to start without a usable kubeconfig', async () => {
    const missing = join(dir, 'no-such-kubeconfig');
    await expect(serve(parseConfig({ server: { port: 0 }, kubeconfig: missing }), logger)).rejects.toThrow(
      /no-such-kubeconfig/,
    );
  });

  it.each([
    ['a missing file', () => join(dir, 'nope.json')],
    [
      'an invalid file',
      () => {
        const p = join(dir, 'invalid-at-start.json');
        writeFileSync(p, '{"kind": "Pod"}');
        return p;
      },
    ],
  ])('with %s it refuses to start', async (_name, makePath) => {
    const path = makePath();
    await expect(serve(parseConfig({ snapshot: { path }, server: { port: 0 } }), logger)).rejects.toThrow(
      `cannot start: the snapshot ${path} could not be loaded`,
    );
  });
});
