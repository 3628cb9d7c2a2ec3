/**
 * The offline CLI commands (src/cli/commands.ts), tested as functions, plus one run of the built
 * CLI (dist/src/cli/main.js), which `npm test` builds first (its pretest script; without a build these fail).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import {
  DEFAULT_REPLAY_STRATEGIES,
  formatTable,
  parseNodeCpus,
  rankCommand,
  replayCommand,
  replaySpec,
  type ReplayOptions,
} from '../../src/cli/commands.js';
import { makeNode, makePod } from '../fixtures/builders.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SNAPSHOT = join(ROOT, 'examples/snapshot.json');
const POD = join(ROOT, 'examples/pod.json');
const CLI = join(ROOT, 'dist/src/cli/main.js');
const GiB = 1024 ** 3;

/** The CLI's defaults for `replay` (src/cli/main.ts). */
const DEFAULTS: ReplayOptions = {
  nodes: '16,64,192',
  memoryPerCpu: '4Gi',
  pods: 300,
  podCpu: '2',
  podMemory: '4Gi',
  honourCapacity: false,
  strategies: DEFAULT_REPLAY_STRATEGIES,
  seed: 1,
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-cli-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Splits a formatTable block into cells (columns are separated by runs of 2+ spaces). */
function cells(table: string): string[][] {
  return table.split('\n').map((line) => line.trimEnd().split(/ {2,}/));
}

/** The rows of the replay table, keyed by strategy. */
function replayRows(
  output: string,
): Record<string, { peak: string; placed: number; unplaced: number; perNode: number[] }> {
  const lines = output.split('\n');
  const rows = cells(lines.slice(2, -1).join('\n'));
  return Object.fromEntries(
    rows.map(([strategy, peak, placed, unplaced, ...perNode]) => [
      strategy,
      { peak: peak!, placed: Number(placed), unplaced: Number(unplaced), perNode: perNode.map(Number) },
    ]),
  );
}

describe('parseNodeCpus', () => {
  it.each([
    ['16,64,192', [16, 64, 192]],
    ['2x16,64', [16, 16, 64]],
    ['3x16,1x32', [16, 16, 16, 32]],
    [' 16 , 64 ', [16, 64]],
    ['1.5,2', [1.5, 2]],
    ['5x8', [8, 8, 8, 8, 8]],
  ])('%j → %j', (list, cpus) => {
    expect(parseNodeCpus(list)).toEqual(cpus);
  });

  it('1000x32 → a thousand 32-CPU nodes', () => {
    const cpus = parseNodeCpus('1000x32');
    expect(cpus).toHaveLength(1000);
    expect(new Set(cpus)).toEqual(new Set([32]));
  });

  it.each([
    ['abc', '--nodes: "abc" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)'],
    ['16,abc', '--nodes: "abc" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)'],
    ['x16', '--nodes: "x16" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)'],
    ['2x', '--nodes: "2x" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)'],
    ['-4', '--nodes: "-4" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)'],
    ['16;64', '--nodes: "16;64" is not CPUS or COUNTxCPUS (e.g. 16,64,192 or 1000x32)'],
    ['', '--nodes: "" is not CPUS or COUNTxCPUS'],
    [',,', '--nodes: "" is not CPUS or COUNTxCPUS'],
    ['16,,64', '--nodes: "" is not CPUS or COUNTxCPUS'], // an empty entry is a typo, not nothing
    ['200000x1', '--nodes: "200000x1" is more than 100000 nodes'],
    ['0x16', '--nodes: "0x16": the count must be at least 1 and the CPUs above 0'],
  ])('bad input %j → %s', (list, message) => {
    expect(() => parseNodeCpus(list)).toThrow(message);
  });

  // Regression: a 0-CPU node used to be accepted; with no allocatable its pressure never rose above 0
  // and `replay --nodes 0,16 --pods 10` put all 10 pods there (least_loaded=0.0000).
  it('a 0-CPU node is rejected', () => {
    expect(() => parseNodeCpus('0,16')).toThrow(/--nodes/);
  });
});

describe('replaySpec', () => {
  it('builds nodes with cpu in millicores and memory in bytes, and the pod request', () => {
    const spec = replaySpec(DEFAULTS);
    expect(spec.dims.names).toEqual(['cpu', 'memory']);
    expect(spec.nodes).toEqual([
      { name: 'node-0000-16cpu', allocatable: [16000, 64 * GiB] },
      { name: 'node-0001-64cpu', allocatable: [64000, 256 * GiB] },
      { name: 'node-0002-192cpu', allocatable: [192000, 768 * GiB] },
    ]);
    expect(spec.podRequest).toEqual([2000, 4 * GiB]);
    expect(spec.podCount).toBe(300);
    expect(spec.honourCapacity).toBe(false);
  });

  it.each([
    ['memoryPerCpu', { memoryPerCpu: '4Gx' }, /invalid quantity "4Gx"/],
    ['podCpu', { podCpu: 'two' }, /invalid quantity "two"/],
    ['nodes', { nodes: 'lots' }, /--nodes: "lots"/],
  ])('an invalid %s is an error naming the value', (_name, override, message) => {
    expect(() => replaySpec({ ...DEFAULTS, ...override })).toThrow(message);
  });
});

describe('replayCommand', () => {
  it('default options (the CLI defaults): the summary line, exactly', () => {
    const output = replayCommand(DEFAULTS);
    const lines = output.split('\n');
    // round_robin: 100 pods per node → node-16 at 100 × 2000/16000 = 12.5.
    // least_loaded: 17/71/212 pods → 2.125, 71 × 2/64 = 2.21875, 212 × 2/192 = 2.2083 → peak 2.21875.
    // most_loaded: the first pod's highest projected pressure is node-16 (2/16), and every later pod
    //   follows it → 300 × 2/16 = 37.5.
    // random (seed 1): 108/96/96 → 108 × 2/16 = 13.5 (a seeded regression value, see the row check below).
    // optimum: the least P with Σ floor(P × C/2) ≥ 300: at P = 2.21875, 17 + 71 + 213 = 301 ≥ 300;
    //   at the next lower breakpoint 212/96 = 2.2083, 17 + 70 + 212 = 299 < 300 → 2.21875.
    expect(lines[lines.length - 1]).toBe(
      'peak allocation pressure: round_robin=12.5000 least_loaded=2.2188 most_loaded=37.5000 random=13.5000 optimum=2.2188',
    );
    expect(lines[0]).toMatch(/^replay: .*16\/64\/192.*300 pods of 2 CPU \/ 4Gi, capacity ignored \(overcommit\)$/);
    expect(cells(lines[1]!)[0]).toEqual([
      'STRATEGY',
      'PEAK PRESSURE',
      'PLACED',
      'UNPLACED',
      'PODS node-0000-16cpu',
      'PODS node-0001-64cpu',
      'PODS node-0002-192cpu',
    ]);
  });

  it('default options: per-strategy rows, each peak consistent with its pod counts', () => {
    const rows = replayRows(replayCommand(DEFAULTS));
    expect(rows).toEqual({
      round_robin: { peak: '12.5000', placed: 300, unplaced: 0, perNode: [100, 100, 100] },
      least_loaded: { peak: '2.2188', placed: 300, unplaced: 0, perNode: [17, 71, 212] },
      most_loaded: { peak: '37.5000', placed: 300, unplaced: 0, perNode: [300, 0, 0] },
      random: { peak: '13.5000', placed: 300, unplaced: 0, perNode: [108, 96, 96] },
    });
    const cpus = [16, 64, 192];
    for (const row of Object.values(rows)) {
      expect(row.perNode.reduce((a, b) => a + b, 0)).toBe(300);
      expect(row.peak).toBe(Math.max(...row.perNode.map((k, i) => (k * 2) / cpus[i]!)).toFixed(4));
    }
  });

  it('is deterministic for a seed; the seed only moves the random strategy', () => {
    expect(replayCommand(DEFAULTS)).toBe(replayCommand(DEFAULTS));
    const other = replayRows(replayCommand({ ...DEFAULTS, seed: 2 }));
    const base = replayRows(replayCommand(DEFAULTS));
    expect({ ...other, random: undefined }).toEqual({ ...base, random: undefined });
    expect(other.random!.placed).toBe(300);
  });

  it('honouring capacity with 100 pods: least_loaded 6/23/71 reaches the optimum 0.75', () => {
    const output = replayCommand({
      ...DEFAULTS,
      pods: 100,
      honourCapacity: true,
      strategies: ['least_loaded', 'round_robin'],
    });
    // Capacity: 16/2 = 8, 64/2 = 32, 192/2 = 96 pods. least_loaded: 6 × 2/16 = 0.75, 23 × 2/64 = 0.71875,
    // 71 × 2/192 = 0.7396. Below 0.75 at most 5 + 23 + 71 = 99 pods fit (P = 0.7396), so 0.75 is optimal.
    // round_robin fills node-16 (8) and node-64 (32) to 1.0, node-192 takes the other 60.
    expect(replayRows(output)).toEqual({
      least_loaded: { peak: '0.7500', placed: 100, unplaced: 0, perNode: [6, 23, 71] },
      round_robin: { peak: '1.0000', placed: 100, unplaced: 0, perNode: [8, 32, 60] },
    });
    expect(output.split('\n').at(-1)).toBe(
      'peak allocation pressure: least_loaded=0.7500 round_robin=1.0000 optimum=0.7500',
    );
    expect(output.split('\n')[0]).toMatch(/capacity honoured$/);
  });

  it('honouring capacity with more pods than fit: 136 placed, 164 unplaced, optimum n/a', () => {
    const output = replayCommand({ ...DEFAULTS, honourCapacity: true, strategies: ['least_loaded'] });
    // 8 + 32 + 96 = 136 pods fit in all.
    expect(replayRows(output)).toEqual({
      least_loaded: { peak: '1.0000', placed: 136, unplaced: 164, perNode: [8, 32, 96] },
    });
    expect(output.split('\n').at(-1)).toBe('peak allocation pressure: least_loaded=1.0000 optimum=n/a');
  });

  it('more than 8 nodes: no per-node columns', () => {
    const output = replayCommand({ ...DEFAULTS, nodes: '1000x32', strategies: ['least_loaded', 'most_loaded'] });
    // 300 pods over 1000 equal nodes: at most one each → 2/32 = 0.0625; most_loaded stacks 300 × 2/32 = 18.75.
    expect(cells(output.split('\n')[1]!)[0]).toEqual(['STRATEGY', 'PEAK PRESSURE', 'PLACED', 'UNPLACED']);
    expect(output.split('\n').at(-1)).toBe(
      'peak allocation pressure: least_loaded=0.0625 most_loaded=18.7500 optimum=0.0625',
    );
  });
});

describe("replay under kube-scheduler's sampling (--percentage-of-nodes-to-score, --zones)", () => {
  // 900 nodes of 16 CPUs listed before 100 of 192 (pools in blocks, as when each pool joined the running scheduler at once); 3,000 pods of 2 CPU / 4 GiB.
  const blocks: ReplayOptions = {
    ...DEFAULTS,
    nodes: '900x16,100x192',
    pods: 3000,
    honourCapacity: true,
    strategies: ['least_loaded'],
  };

  it('the spec carries the sampling, node i in zone i mod zones', () => {
    const spec = replaySpec({ ...blocks, percentageOfNodesToScore: 0, zones: 3 });
    expect(spec.sampling?.percentageOfNodesToScore).toBe(0);
    expect(spec.sampling?.zones?.slice(0, 4)).toEqual(['zone-0', 'zone-1', 'zone-2', 'zone-0']);
    expect(replaySpec(blocks).sampling).toBeUndefined();
  });

  it('--zones without a percentage is a usage error', () => {
    expect(() => replaySpec({ ...blocks, zones: 3 })).toThrow(/--zones: only with --percentage-of-nodes-to-score/);
  });

  it('names the window in the title and shows what sampling costs on pools in blocks', () => {
    const every = replayCommand(blocks).split('\n');
    const sampled = replayCommand({ ...blocks, percentageOfNodesToScore: 0 }).split('\n');
    expect(sampled[0]).toMatch(/, kube-scheduler sampling adaptive \(420 feasible nodes offered per pod, 1 zone\)$/);
    expect(every[0]).not.toMatch(/sampling/);
    // Every node offered: the optimum, 1 pod on each 16-CPU node and 21 on each 192-CPU node (42/192 = 0.21875).
    expect(every.at(-1)).toBe('peak allocation pressure: least_loaded=0.2188 optimum=0.2188');
    // Windows of 420 walk the 900 small nodes most of the time: they take a second pod (4/16 = 0.25).
    expect(sampled.at(-1)).toBe('peak allocation pressure: least_loaded=0.2500 optimum=0.2188');
  });
});

describe('formatTable', () => {
  it('left-aligns columns with two spaces between them and no padding after the last', () => {
    expect(
      formatTable([
        ['A', 'BB', 'C'],
        ['longer', 'x', 'y'],
      ]),
    ).toBe('A       BB  C\nlonger  x   y');
  });

  // Regression (new-user trial): a row whose last cells were empty (rank's REASON of a node that fits) ended with
  // the padding of the cell before them and the separator.
  it('a row ends at its last non-empty cell: no trailing whitespace', () => {
    expect(
      formatTable([
        ['A', 'BB', 'C', 'D'],
        ['longer', 'x', '', ''],
        ['', '', '', ''],
      ]),
    ).toBe('A       BB  C  D\nlonger  x\n');
  });
});

describe('rankCommand', () => {
  const config = parseConfig({});

  it('examples/snapshot.json + examples/pod.json: rows in least_loaded order with the numbers', () => {
    const output = rankCommand(config, SNAPSHOT, POD);
    const [title, ...rest] = output.split('\n');
    expect(title).toBe(
      'pod sandboxes/sandbox-new-0 requests cpu=2000m memory=4Gi; projected pressure = (allocated + paused + reserved + requested) / allocatable',
    );
    // Every node is Ready, untainted and not cordoned, and the pod has no node constraints.
    expect(rest.at(-1)).toBe('3 nodes: 3 fit');
    expect(output.split('\n').filter((line) => /\s$/.test(line))).toEqual([]); // REASON is empty: no trailing blanks
    expect(cells(rest.slice(0, -1).join('\n'))).toEqual([
      ['#', 'NODE', 'FITS', 'PRESSURE', 'CPU', 'MEMORY', 'STARTING', 'RUNNING', 'PAUSED', 'REASON'],
      // (20000 + 4000 paused + 2000)/192000 = 0.1354; memory (40 + 8 + 4)/768 Gi = 0.0677
      ['1', 'sandbox-node-192', 'yes', '0.1354', '0.1354', '0.0677', '0', '10', '1'],
      // (14000 + 2000)/64000 = 0.25; memory (28 + 4)/256 = 0.125; 1 starting (bound, not Ready)
      ['2', 'sandbox-node-64', 'yes', '0.2500', '0.2500', '0.1250', '1', '6', '0'],
      // (4000 + 2000)/16000 = 0.375; memory (8 + 4)/64 = 0.1875; the Succeeded pod counts nothing
      ['3', 'sandbox-node-16', 'yes', '0.3750', '0.3750', '0.1875', '0', '2', '0'],
    ]);
  });

  it('a 60-CPU pod (YAML file): the node that fits first, then the others with their reasons', () => {
    const podPath = join(dir, 'big-pod.yaml');
    writeFileSync(podPath, toYaml(makePod('big').req({ cpu: '60', memory: '4Gi' }).obj()));
    const lines = rankCommand(config, SNAPSHOT, podPath).split('\n');
    const table = cells(lines.slice(1, -1).join('\n'));
    expect(lines.at(-1)).toBe('3 nodes: 1 fits, 2 candidates do not fit');
    expect(table.slice(1)).toEqual([
      // (24000 + 60000)/192000 = 0.4375
      ['1', 'sandbox-node-192', 'yes', '0.4375', '0.4375', '0.0677', '0', '10', '1'],
      // (14000 + 60000)/64000 = 1.1563 (does not fit: lower pressure first among the rest)
      [
        '2',
        'sandbox-node-64',
        'no',
        '1.1563',
        '1.1563',
        '0.1250',
        '1',
        '6',
        '0',
        'Insufficient cpu: requested 60000m + in use 14000m (allocated 14000m, paused 0m, reserved 0m) > allocatable 64000m',
      ],
      // (4000 + 60000)/16000 = 4.0
      [
        '3',
        'sandbox-node-16',
        'no',
        '4.0000',
        '4.0000',
        '0.1875',
        '0',
        '2',
        '0',
        "cpu request 60000m exceeds the node's allocatable 16000m",
      ],
    ]);
  });

  it('a node without allocatable is ranked last as unknown; a bad snapshot object is reported, not fatal', () => {
    const list = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as { items: unknown[] };
    const edge = { ...makeNode('edge-no-status', null), status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    list.items.push(edge, makePod('broken').req({ cpu: '2x' }).node('sandbox-node-16').obj());
    const snapshotPath = join(dir, 'with-unknown.json');
    writeFileSync(snapshotPath, JSON.stringify(list));
    const lines = rankCommand(config, snapshotPath, POD).split('\n');
    const table = cells(lines.slice(1, -2).join('\n'));
    expect(table.map((r) => r[1])).toEqual([
      'NODE',
      'sandbox-node-192',
      'sandbox-node-64',
      'sandbox-node-16',
      'edge-no-status',
    ]);
    expect(table[4]).toEqual([
      '4',
      'edge-no-status',
      'yes',
      'unknown',
      '-',
      '-',
      '0',
      '0',
      '0',
      'capacity unknown (no allocatable): ranked last',
    ]);
    expect(lines.at(-1)).toMatch(
      /^skipped 1 snapshot object\(s\): pod sandboxes\/broken: spec\.containers\[0\]\.resources\.requests\.cpu: invalid quantity "2x"/,
    );
  });

  it('extra dimensions from the config become columns', () => {
    const output = rankCommand(parseConfig({ dimensions: ['cpu', 'memory', 'pods'] }), SNAPSHOT, POD);
    const table = cells(output.split('\n').slice(1, -1).join('\n'));
    expect(table[0]).toEqual([
      '#',
      'NODE',
      'FITS',
      'PRESSURE',
      'CPU',
      'MEMORY',
      'PODS',
      'STARTING',
      'RUNNING',
      'PAUSED',
      'REASON',
    ]);
    // pods on node-192: 10 running + 1 paused + this one = 12 of 110 → 0.1091
    expect(table[1]!.slice(1, 7)).toEqual(['sandbox-node-192', 'yes', '0.1354', '0.1354', '0.0677', '0.1091']);
    expect(output.split('\n')[0]).toContain('requests cpu=2000m memory=4Gi pods=1;');
  });

  it.each([
    ['a missing snapshot', () => [join(dir, 'nope.json'), POD], /nope\.json: cannot read: ENOENT/],
    ['a missing pod file', () => [SNAPSHOT, join(dir, 'nope-pod.json')], /ENOENT/],
    [
      'a pod file holding a Node',
      () => {
        const p = join(dir, 'node-as-pod.json');
        writeFileSync(p, JSON.stringify(makeNode('n', { cpu: '1' })));
        return [SNAPSHOT, p];
      },
      /node-as-pod\.json: expected a Pod object, got kind "Node"$/,
    ],
    [
      'a pod with an invalid quantity',
      () => {
        const p = join(dir, 'bad-quantity.json');
        writeFileSync(p, JSON.stringify(makePod('bad').req({ cpu: '-1' }).obj()));
        return [SNAPSHOT, p];
      },
      /negative quantity "-1"/,
    ],
  ])('%s → an error naming the problem', (_name, paths, message) => {
    const [snapshotPath, podPath] = paths();
    expect(() => rankCommand(config, snapshotPath!, podPath!)).toThrow(message);
  });
});

describe('the built CLI (dist/src/cli/main.js)', () => {
  if (!existsSync(CLI)) {
    // Never a silent skip: `npm test` builds first (the pretest script), so a missing build is a failure here.
    it('needs the build', () => {
      throw new Error(`${CLI} does not exist: run \`npm run build\` (\`npm test\` runs it first)`);
    });
    return;
  }
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

  it('replay with the defaults prints the summary line and exits 0', () => {
    const result = run('replay');
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(
      'peak allocation pressure: round_robin=12.5000 least_loaded=2.2188 most_loaded=37.5000 random=13.5000 optimum=2.2188',
    );
  });

  it('rank on the examples prints node-192, node-64, node-16 and exits 0', () => {
    const result = run('rank', '--snapshot', 'examples/snapshot.json', '--pod', 'examples/pod.json');
    expect(result.status).toBe(0);
    expect(cells(result.stdout.trimEnd().split('\n').slice(2, -1).join('\n')).map((r) => r[1])).toEqual([
      'sandbox-node-192',
      'sandbox-node-64',
      'sandbox-node-16',
    ]);
  });

  it('an invalid config file exits 2 with every issue on stderr', () => {
    const path = join(dir, 'bad-config.yaml');
    writeFileSync(path, 'strategy: nope\nlogLevel: loud\n');
    const result = run('rank', '--snapshot', 'examples/snapshot.json', '--pod', 'examples/pod.json', '--config', path);
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`sandbox-extender: invalid configuration (${path}):`);
    expect(result.stderr).toMatch(/- strategy: Invalid option/);
    expect(result.stderr).toMatch(/- logLevel: Invalid option/);
  });

  // Regression: a missing snapshot exited 1 although docs/cli.md (exit codes) lists a missing file named by an option under 2.
  it('a missing snapshot exits 2 (bad input)', () => {
    const result = run('rank', '--snapshot', join(dir, 'nope.json'), '--pod', 'examples/pod.json');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^sandbox-extender: .*nope\.json: cannot read: ENOENT/);
  });

  // Regression (hostile-input trial): these never returned, reading /dev/zero to the end.
  it.each([
    [
      '--config',
      ['rank', '--snapshot', 'examples/snapshot.json', '--pod', 'examples/pod.json', '--config', '/dev/zero'],
      /invalid configuration \(\/dev\/zero\):\n {2}- cannot read the file: larger than 1 MiB/,
    ],
    [
      '--pod',
      ['rank', '--snapshot', 'examples/snapshot.json', '--pod', '/dev/zero'],
      /--pod \/dev\/zero: larger than 16 MiB/,
    ],
  ])('%s /dev/zero exits 2: the file is larger than its bound', (_name, args, message) => {
    const result = run(...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  // Regression (hostile-input trial): a YAML error quotes the offending line, and a binary file's escape sequences reached the terminal raw.
  it('control characters of a quoted input line are escaped on stderr', () => {
    const path = join(dir, 'binary.yaml');
    writeFileSync(path, 'a: [\u001b[31mred\u0000\u0007\r\n  b: {');
    const result = run('rank', '--snapshot', 'examples/snapshot.json', '--pod', path);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('a: [\\u001b[31mred\\u0000\\u0007\n');
    expect([...result.stderr].filter((c) => c.charCodeAt(0) < 0x20 && c !== '\n' && c !== '\t')).toEqual([]);
  });

  // Regression (new-user trial): names from the files reached the terminal raw in rank's table (a title rewrite).
  it("rank escapes control characters of a pod's name in its table", () => {
    const pod = JSON.parse(readFileSync(join(ROOT, 'examples/pod.json'), 'utf8')) as { metadata: { name: string } };
    pod.metadata.name = 'x\u001b]0;pwned\u0007';
    const path = join(dir, 'hostile-pod.json');
    writeFileSync(path, JSON.stringify(pod));
    const result = run('rank', '--snapshot', 'examples/snapshot.json', '--pod', path);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('x\\u001b]0;pwned\\u0007');
    expect([...result.stdout].filter((c) => c.charCodeAt(0) < 0x20 && c !== '\n' && c !== '\t')).toEqual([]);
  });

  // Regression (new-user trial): `serve --snapshot <(cat FILE)` failed with "ESPIPE: invalid seek" and exit 1.
  it('serve --snapshot on a pipe exits 2 saying it needs a regular file', () => {
    const fifo = join(dir, 'snapshot-fifo');
    spawnSync('mkfifo', [fifo]);
    const result = run('serve', '--snapshot', fifo, '--port', '0');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      `sandbox-extender: cannot start: the snapshot ${fifo} could not be loaded: ${fifo}: a pipe; serve re-reads its snapshot when the file changes, so it must be a regular file`,
    );
  });

  it('a replay too large to finish exits 2 before it starts', () => {
    const result = run('replay', '--nodes', '5000x32', '--pods', '1000000');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'sandbox-extender: --pods 1000000 over 5000 nodes ranks 5000000000 nodes per strategy, more than 500,000,000 (about a minute each); use fewer pods or nodes\n',
    );
  });

  // Regression (new-user trial): `serve --host 999.1.1.1` exited 1 with "getaddrinfo ENOTFOUND 999.1.1.1".
  it.each([['999.1.1.1'], ['[::1]'], ['localhost:8888']])(
    'serve --host %s is a usage error: exit 2 before anything starts',
    (host) => {
      const result = run('serve', '--snapshot', 'examples/snapshot.json', '--port', '0', '--host', host);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe(''); // nothing logged: the snapshot was never loaded
      expect(result.stderr.split('\n')[0]).toBe(
        `error: option '--host <address>' argument '${host}' is invalid. --host ${
          host === '[::1]'
            ? 'must be written without brackets (::1), not "[::1]"'
            : `must be an IP address (127.0.0.1, 0.0.0.0, ::1, ::) or a hostname (localhost), not "${host}"`
        }`,
      );
    },
  );

  // Regression (new-user trial): `--port 1e3` listened on port 1000 and `--port 0x22b8` on 8888.
  it.each([['1e3'], ['0x22b8'], [' 8888'], ['+8888'], ['8888.0'], ['70000']])(
    'serve --port %j is a usage error: exit 2, digits only',
    (port) => {
      const result = run('serve', '--snapshot', 'examples/snapshot.json', '--port', port);
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')[0]).toBe(
        `error: option '--port <n>' argument '${port}' is invalid. --port must be an integer from 0 to 65535`,
      );
    },
  );

  it('server.host 999.1.1.1 in a config file exits 2 naming the setting', () => {
    const path = join(dir, 'bad-host.yaml');
    writeFileSync(path, 'server:\n  host: 999.1.1.1\n');
    const result = run('serve', '--snapshot', 'examples/snapshot.json', '--config', path);
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      `sandbox-extender: invalid configuration (${path}):\n  - server.host: must be an IP address (127.0.0.1, 0.0.0.0, ::1, ::) or a hostname (localhost), not "999.1.1.1"\n`,
    );
  });

  // A valid address that cannot be bound is a runtime failure (exit 1), named with the settings that chose it.
  it('serve on an address this machine does not have (192.0.2.1, TEST-NET-1) exits 1: cannot listen', () => {
    const result = run('serve', '--snapshot', 'examples/snapshot.json', '--port', '0', '--host', '192.0.2.1');
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      'sandbox-extender: cannot listen on 192.0.2.1 port 0 (server.host, server.port): listen EADDRNOTAVAIL: address not available 192.0.2.1\n',
    );
  });

  it('serve on a port already taken exits 1: cannot listen, address in use', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      // The port stays bound while this process blocks in spawnSync: the kernel holds it, not the event loop.
      const result = run('serve', '--snapshot', 'examples/snapshot.json', '--port', String(port));
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `sandbox-extender: cannot listen on 127.0.0.1 port ${port} (server.host, server.port): listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`,
      );
    } finally {
      taken.close();
    }
  });

  // Regression: invalid arguments used to exit 1 (commander's default); usage errors exit 2.
  it.each([
    ['replay', '--nodes', 'abc'],
    ['replay', '--pods', '0'],
    ['replay', '--strategies', 'fastest'],
  ])('invalid arguments exit 2: %s %s %s', (...args) => {
    const result = run(...args);
    expect(result.stderr).not.toBe('');
    expect(result.status).toBe(2);
  });
});

describe('replay quantity options must be positive (new-user findings)', () => {
  it.each([
    ['--pod-memory', { podMemory: '-1' }, /--pod-memory: "-1" must be a positive quantity/],
    ['--pod-cpu', { podCpu: '0' }, /--pod-cpu: "0" must be a positive quantity/],
    ['--memory-per-cpu', { memoryPerCpu: '0' }, /--memory-per-cpu: "0" must be a positive quantity/],
    // Regression (new-user trial): a quantity too large to count was called not positive.
    ['--pod-cpu', { podCpu: '1e400' }, /--pod-cpu: "1e400" is too large$/],
    ['--pod-memory', { podMemory: '99999999999999999999Ei' }, /--pod-memory: "99999999999999999999Ei" is too large$/],
    ['--pod-cpu garbage', { podCpu: 'two' }, /--pod-cpu: invalid quantity "two"/],
  ])('%s', (_name, override, message) => {
    expect(() => replaySpec({ ...DEFAULTS, ...override })).toThrow(message);
  });
});
