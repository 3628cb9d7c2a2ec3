/**
 * The benchmark scenarios (bench/scenarios/*.yaml) and their runner (bench/run.ts): every file validates, names
 * a program of bench/ and the result file it feeds, and every command the runner makes from it (each variant
 * too) is one its program accepts: checked against the program's own commander definition by running the built
 * program (dist/, which `npm test` builds first) with the options and --help, so each option value goes through
 * the program's parser and each option name must be one its help lists (the runner's own check of --dry-run,
 * programRefusals).
 */
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCENARIOS } from '../../bench/results.js';
import {
  ROOT,
  ScenarioError,
  programRefusals as refusals,
  commandLine,
  flatten,
  loadScenario,
  parseScenario,
  resolve,
  scenarioNames,
} from '../../bench/run.js';
import { startReport, writeReport } from '../../bench/report.js';

const names = scenarioNames();
const source = (program: string) => readFileSync(join(ROOT, program), 'utf8');

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: readonly string[], o: { cwd?: string; env?: Record<string, string> } = {}): Promise<Ran> {
  const options = { cwd: o.cwd ?? ROOT, env: { ...process.env, ...o.env }, timeout: 50_000 };
  return new Promise((done) => {
    execFile(process.execPath, args, options, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('the scenario files', () => {
  it('are the published scenarios, one file each', () => {
    expect(names).toEqual([...SCENARIOS].sort());
  });

  // Regression (new-user trial): a scenario naming a program that does not exist failed with a stack when run.
  it('refuses a scenario whose program does not exist, naming both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scenarios-'));
    try {
      writeFileSync(
        join(dir, 'zz.yaml'),
        source('bench/scenarios/verbs.yaml').replace('program: bench/bench.ts', 'program: bench/nope.ts'),
      );
      expect(() => loadScenario('zz', dir)).toThrow(
        new ScenarioError('bench/scenarios/zz.yaml: its program bench/nope.ts does not exist'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(names)('%s validates, names a program of bench/ and feeds its own result file', (name) => {
    const s = loadScenario(name);
    expect(existsSync(join(ROOT, s.program))).toBe(true);
    expect(s.result).toBe(`bench/results/${name}.json`);
    expect((JSON.parse(readFileSync(join(ROOT, s.result), 'utf8')) as { scenario: string }).scenario).toBe(name);
    expect(Object.keys(flatten(s)).length).toBeGreaterThan(0);
  });

  it.each(names)('%s: the command of the scenario and of each variant is one its program accepts', async (name) => {
    const s = loadScenario(name);
    const invocations = [undefined, ...Object.keys(s.variants ?? {})].map((v) => resolve(name, s, v));
    expect(existsSync(join(ROOT, invocations[0]!.script))).toBe(true);
    const found = await Promise.all(
      invocations.map(async (inv) => ({ command: commandLine(inv), wrong: await refusals(inv) })),
    );
    expect(found.filter((f) => f.wrong.length > 0)).toEqual([]);
  });

  it('the check above fails for an option the program lacks, a bad value and a flag given a value', async () => {
    const s = loadScenario('cluster');
    const inv = resolve('cluster', s, undefined);
    expect(await refusals({ ...inv, args: [...inv.args, '--no-such-option', '1'] })).toEqual([
      '--no-such-option: not an option of the program',
    ]);
    expect(await refusals(resolve('cluster', s, undefined, ['pods=zero']))).toEqual([
      "error: option '--pods <n>' argument 'zero' is invalid. expected an integer ≥ 1",
    ]);
    expect(await refusals({ ...inv, args: ['--floor', 'yes'] })).toEqual(['--floor: is a flag']);
    // values the program used to check only once it ran (a dry run passed them): each is now its option's parser's
    for (const [option, value, expected] of [
      ['--first <scheduler>', 'bogus', 'expected one of sandbox, stock'],
      ['--modes <list>', 'drain,bogus', 'expected one of drain, burst'],
      ['--nodes <counts>', 'abc', 'expected an integer ≥ 1'],
      ['--node-shape <cpu/memory>', 'abc', 'expected CPUS/MEMORY, e.g. 32/128Gi'],
      ['--node-shape <cpu/memory>', '32/1.2.3Gi', 'expected CPUS/MEMORY, e.g. 32/128Gi'],
      ['--node-shape <cpu/memory>', '32/0Gi', 'expected CPUS/MEMORY, e.g. 32/128Gi'],
      ['--sandbox-percentage <n>', '101', 'expected an integer 0–100'],
      ['--extender-config <file>', '/nonexistent.yaml', 'no such file: /nonexistent.yaml'],
    ]) {
      const name = option!.slice(2, option!.indexOf(' '));
      expect(await refusals(resolve('cluster', s, undefined, [`${name}=${value}`]))).toEqual([
        `error: option '${option}' argument '${value}' is invalid. ${expected}`,
      ]);
    }
  });

  // Regression (new-user trial): plain-string options passed the dry run; `starting --set per-core=abc` then wrote
  // perCore: NaN into the extender's config and brought a control plane up.
  it('refuses, in a dry run, the values of the other programs that their option parsers now check', async () => {
    for (const [scenario, option, value, expected] of [
      ['starting', '--per-core <x>', 'abc', 'expected a number > 0'],
      ['starting', '--ready-delay <d>', 'soon', 'expected a Go duration, e.g. 5s or 1m30s'],
      ['cluster', '--pod-cpu <quantity>', 'lots', 'expected a Kubernetes quantity, e.g. 250m or 512Mi'],
      ['shared', '--pod-cpu <q>', '-1', 'expected a quantity above 0'],
      ['failover', '--nodes <shape>', 'banana', 'entry 1 "banana": expected [COUNTx]CPUS[/MEMORY], e.g. 1000x32/128Gi'],
      ['pending', '--hopeless-memory <q>', 'lots', 'expected a Kubernetes quantity, e.g. 250m or 512Mi'],
      ['locality', '--band <x>', 'abc', 'expected a number 0–1'],
      ['memory', '--extender-config <file>', '/nope.yaml', 'no such file: /nope.yaml'],
      ['ceiling', '--nodes <counts>', 'x', 'expected an integer ≥ 1'],
    ]) {
      const name = option!.slice(2, option!.indexOf(' '));
      const inv = resolve(scenario!, loadScenario(scenario!), undefined, [], [`--${name}`, value!]);
      expect({ scenario, wrong: await refusals(inv) }).toEqual({
        scenario,
        wrong: [`error: option '${option}' argument '${value}' is invalid. ${expected}`],
      });
    }
  });
});

describe('the commands the published figures name', () => {
  const commands = SCENARIOS.flatMap((name) => {
    const r = JSON.parse(readFileSync(join(ROOT, 'bench/results', `${name}.json`), 'utf8')) as {
      command: string;
      tables: { command?: string }[];
    };
    return [r.command, ...r.tables.flatMap((t) => (t.command ? [t.command] : []))].map(
      (command) => [name, command] as const,
    );
  });

  it.each(commands)('%s: %s is a scenario, a variant of it and parameters it has', (_, command) => {
    const m = /^npm run bench -- ([a-z][\w-]*)(?: ([a-z][\w-]*))?((?: --set \S+)*)$/.exec(command);
    expect(m).not.toBeNull();
    const [, name, variant, sets] = m!;
    expect(names).toContain(name);
    const inv = resolve(name!, loadScenario(name!), variant, sets!.split(' --set ').filter(Boolean));
    expect(inv.script).toMatch(/^dist\/bench\/\w+\.js$/);
  });

  it('the documentation names no per-program bench script and only scenarios that exist', () => {
    const docs = [
      'README.md',
      'docs/benchmarks.md',
      'docs/development.md',
      'docs/cluster-mode.md',
      'docs/agent-sandbox.md',
      'docs/configuration.md',
    ]
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    expect(docs.match(/npm run bench:(?!render)[a-z-]+/g)).toBeNull();
    const named = [...docs.matchAll(/npm run bench -- ([a-z][\w-]*)/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((n) => !names.includes(n))).toEqual([]);
  });
});

const minimal = `description: a scenario
program: bench/cluster.ts
result: bench/results/cluster.json
nodes:
  nodes: 1000
schedulers:
  floor: true
variants:
  big:
    description: more nodes
    set: { nodes: 5000 }
`;

describe('a scenario file that does not validate', () => {
  const error = (text: string): string => {
    try {
      parseScenario(text, 'bench/scenarios/x.yaml');
    } catch (err) {
      expect(err).toBeInstanceOf(ScenarioError);
      return (err as Error).message;
    }
    throw new Error('parsed');
  };

  it('is refused with the file and the key: an unknown key, a missing one, a bad parameter name', () => {
    expect(() => parseScenario(minimal, 'x.yaml')).not.toThrow();
    expect(error(`${minimal}runz: 2\n`)).toBe('bench/scenarios/x.yaml: (top level): Unrecognized key: "runz"');
    expect(error(minimal.replace('program: bench/cluster.ts\n', ''))).toMatch(/^bench\/scenarios\/x\.yaml: program: /);
    expect(error(minimal.replace('nodes: 1000', 'Nodes: 1000'))).toMatch(
      /^bench\/scenarios\/x\.yaml: nodes\.Nodes: a parameter is the program's option name/,
    );
    // Environment variables are no longer parameters: the programs take options only.
    expect(error(minimal.replace('nodes: 1000', 'BENCH_NODES: 1000'))).toMatch(
      /^bench\/scenarios\/x\.yaml: nodes\.BENCH_NODES: a parameter is the program's option name in kebab case/,
    );
    expect(error(minimal.replace('  floor: true', '  floor: true\n  extra: { a: 1 }'))).toMatch(
      /^bench\/scenarios\/x\.yaml: schedulers\.extra: /,
    );
  });

  it('is refused for a parameter declared twice, a variant setting an undeclared one or a flag given a value', () => {
    expect(error(minimal.replace('  floor: true', '  floor: true\n  nodes: 5'))).toBe(
      'bench/scenarios/x.yaml: schedulers.nodes: declared twice (also in nodes)',
    );
    expect(error(minimal.replace('{ nodes: 5000 }', '{ node: 5000 }'))).toMatch(
      /^bench\/scenarios\/x\.yaml: variants\.big\.set\.node: not a parameter of the scenario/,
    );
    expect(error(minimal.replace('{ nodes: 5000 }', '{ floor: 1 }'))).toBe(
      'bench/scenarios/x.yaml: variants.big.set.floor: a flag takes true or false',
    );
  });

  it('is refused when it is not YAML', () => {
    expect(error('description: [unclosed\n')).toMatch(/^bench\/scenarios\/x\.yaml: not YAML: /);
  });
});

describe('the command of a scenario', () => {
  const s = parseScenario(minimal, 'x.yaml');

  it('passes values as options, true as a flag, a variant and --set over the scenario, an empty --set leaving the option out', () => {
    expect(resolve('x', s, undefined).args).toEqual(['--nodes', '1000', '--floor']);
    expect(resolve('x', s, 'big').args).toEqual(['--nodes', '5000', '--floor']);
    expect(resolve('x', s, 'big', ['nodes=7', 'floor=false']).args).toEqual(['--nodes', '7']);
    expect(resolve('x', s, undefined, ['nodes='], ['--print', 'f.json']).args).toEqual([
      '--floor',
      '--print',
      'f.json',
    ]);
    expect(resolve('x', s, undefined).script).toBe('dist/bench/cluster.js');
  });

  it('refuses an unknown variant, an undeclared --set and a flag set to a value', () => {
    expect(() => resolve('x', s, 'small')).toThrow('x has no variant small (big)');
    expect(() => resolve('x', s, undefined, ['pods=1'])).toThrow(
      '--set pods=1: x has no parameter pods (its parameters: nodes, floor)',
    );
    expect(() => resolve('x', s, undefined, ['floor=yes'])).toThrow('--set floor=yes: floor is a flag, true or false');
    expect(() => resolve('x', s, undefined, ['floor'])).toThrow('--set floor: expected NAME=VALUE');
  });

  it('passes a list as one comma-separated option value, and leaves a false flag out', () => {
    const inv = resolve('verbs', loadScenario('verbs'), 'http');
    expect(commandLine(inv)).toBe(
      'node --expose-gc dist/bench/bench.js --sizes 1000,5000 --iterations 200 --parts http',
    );
  });
});

// Regression (new-user trial): a program refused a bad option with exit 1, where the runner refuses one with 2.
describe('each program with options', () => {
  const programs = [...new Set(names.map((n) => loadScenario(n).program))];

  it.each(programs)('%s exits 2 for an option it does not have, as the runner does', async (program) => {
    const r = await run([join(ROOT, 'dist', program.replace(/\.ts$/, '.js')), '--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--no-such-option'");
  });

  // Regression (new-user trial): the floor, a helper process of the cluster programs, exited 1 on a usage error.
  it('the floor extender exits 2 for an option it does not have', async () => {
    const r = await run([join(ROOT, 'dist/bench/floorExtender.js'), '--port', '1', '--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown option '--no-such-option'");
    // Regression (new-user trial): given only an unknown option, it named the missing --port instead.
    const alone = await run([join(ROOT, 'dist/bench/floorExtender.js'), '--no-such-option']);
    expect([alone.code, alone.stderr]).toEqual([2, "error: unknown option '--no-such-option'\n"]);
    const none = await run([join(ROOT, 'dist/bench/floorExtender.js')]);
    expect([none.code, none.stderr]).toEqual([2, "error: required option '--port <port>' not specified\n"]);
  });
});

describe('the runner (dist/bench/run.js)', () => {
  const runner = join(ROOT, 'dist/bench/run.js');

  it('prints the command of --dry-run and runs nothing', async () => {
    const r = await run([runner, 'cluster', 'pin', '--set', 'nodes=100', '--dry-run', '--', '--reuse']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^node dist\/bench\/cluster\.js --nodes 100 .* --pin .* --reuse$/);
  });

  // Regression (new-user trial): --dry-run printed a command whose values its program refuses, and exited 0.
  it('--dry-run exits 2 for a value the program’s option parser refuses, with the program’s message', async () => {
    const r = await run([runner, 'cluster', '--set', 'pods=zero', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const [first, second] = r.stderr.split('\n');
    expect(first).toMatch(
      /^bench: cluster: dist\/bench\/cluster\.js refuses the command node dist\/bench\/cluster\.js .*--pods zero .*:$/,
    );
    expect(second).toBe("error: option '--pods <n>' argument 'zero' is invalid. expected an integer ≥ 1");
  });

  it('--dry-run checks the options after -- too', async () => {
    const r = await run([runner, 'cluster', '--dry-run', '--', '--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[1]).toBe('--no-such-option: not an option of the program');
  });

  // The verbs program's cycles and writes parts were retired: naming one (or a typo) must not run the rest silently.
  // Regression (new-user trial): the verbs and bounds programs' settings (then environment variables such as
  // BENCH_SIZES=abc or BENCH_ITERATIONS=0) ended in a stack trace, or ran.
  it('the verbs and bounds programs exit 2 in one line for a value their parsers refuse', async () => {
    const verbs = join(ROOT, 'dist/bench/bench.js');
    for (const [args, expected] of [
      [
        ['--parts', 'verbs,writes'],
        "'--parts <list>' argument 'verbs,writes' is invalid. expected one of verbs, ranking, http, model",
      ],
      [['--sizes', 'abc'], "'--sizes <counts>' argument 'abc' is invalid. expected an integer ≥ 1"],
      [
        ['--sizes', ''],
        "'--sizes <counts>' argument '' is invalid. expected a comma-separated list of at least one item",
      ],
      [['--iterations', '0'], "'--iterations <n>' argument '0' is invalid. expected an integer ≥ 1"],
    ] as const) {
      const r = await run([verbs, ...args]);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: `error: option ${expected}\n`,
      });
    }
    const bounds = await run([join(ROOT, 'dist/bench/requestBounds.js'), '--nodes', '1e3']);
    expect([bounds.code, bounds.stderr]).toEqual([
      2,
      "error: option '--nodes <n>' argument '1e3' is invalid. expected an integer ≥ 1\n",
    ]);
  });

  it('--dry-run checks the values of the verbs program, and lets --help through', async () => {
    const bad = await run([runner, 'verbs', '--set', 'sizes=abc', '--dry-run']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: option '--sizes <counts>' argument 'abc' is invalid. expected an integer ≥ 1");
    expect((await run([runner, 'verbs', '--dry-run', '--', '--help'])).code).toBe(0);
  });

  // Regression (new-user trial): `cluster --dry-run -- --out` started the benchmark: the option took the `--help` the
  // dry run adds as its value. (Shown here with sampling, a model that needs no cluster, should it ever run again.)
  it('--dry-run refuses an option left without its value, before the program is started with it', async () => {
    const r = await run([
      runner,
      'sampling',
      '--set',
      'nodes=3',
      '--set',
      'percentages=100',
      '--dry-run',
      '--',
      '--sets',
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('--sets: takes a value');
    expect(r.stderr).not.toContain('ReportError');
  });

  // Regression (new-user trial): values checked only once the program ran (sampling) or never (ceiling's factor ≤ 1
  // stopped the search at its start rate) got past a dry run.
  it('--dry-run refuses the sampling and ceiling values their parsers now check', async () => {
    for (const [scenario, set, message] of [
      ['sampling', 'percentages=5,101', 'expected an integer 0–100'],
      ['sampling', 'fill=2', 'expected a number in (0, 1]'],
      ['sampling', 'nodes=2', 'expected an integer ≥ 3'],
      ['sampling', 'sets=nosuch', 'no node set\'s name contains "nosuch"'],
      ['ceiling', 'factor=1', 'expected a number in (1, 100]'],
      ['ceiling', 'precision=5', 'expected a number in (0, 1]'],
      ['ceiling', 'max-steps=2.5', 'expected an integer ≥ 1'],
      ['cluster', 'modes=,', 'expected a comma-separated list of at least one item'],
      // Regression (new-user trial): a band or seed share above 1 and an unknown kind passed the dry run; the band
      // reached the extender's config (0–1) only once a 1,000-node cluster was up.
      ['locality', 'band=5', 'expected a number 0–1'],
      ['locality', 'seed-share=2', 'expected a number 0–1'],
      ['time-to-ready', 'band=1.5', 'expected a number 0–1'],
      ['agent-sandbox', 'kinds=bogus', 'expected one of pool, claims'],
    ] as const) {
      const r = await run([runner, scenario, '--set', set, '--dry-run']);
      expect({ set, code: r.code, refused: r.stderr.includes(message) }).toEqual({ set, code: 2, refused: true });
    }
  });

  // Regression (new-user trial): --kill-at at or above --pods ended in a stack trace, exit 1; a smallest image larger
  // than the largest was taken; the render program ran (and could rewrite the docs) on --help or a bogus option.
  it('the programs refuse values that contradict each other in one line, exit 2, and render takes options', async () => {
    const failover = await run([join(ROOT, 'dist/bench/failover.js'), '--pods', '10', '--kill-at', '10']);
    expect([failover.code, failover.stderr]).toEqual([2, 'error: --kill-at must be below --pods\n']);
    const locality = await run([join(ROOT, 'dist/bench/locality.js'), '--image-min-gib', '5', '--image-max-gib', '1']);
    expect([locality.code, locality.stderr]).toEqual([2, 'error: --image-min-gib must not exceed --image-max-gib\n']);
    // An EXTENDER_CONFIG naming no file ended in a stack trace, exit 1.
    const config = await run([join(ROOT, 'dist/bench/cluster.js')], { env: { EXTENDER_CONFIG: '/no/such.yaml' } });
    expect([config.code, config.stderr]).toEqual([2, 'error: EXTENDER_CONFIG: no such file: /no/such.yaml\n']);
    const render = join(ROOT, 'dist/bench/resultsRender.js');
    const help = await run([render, '--help']);
    expect([help.code, help.stdout.startsWith('Usage: bench:render')]).toEqual([0, true]);
    const bogus = await run([render, '--bogus']);
    expect([bogus.code, bogus.stdout, bogus.stderr]).toEqual([2, '', "error: unknown option '--bogus'\n"]);
    // It read README.md and docs/ from the working directory: from another one, a stack trace.
    const elsewhere = await run([render, '--check'], { cwd: tmpdir() });
    expect([elsewhere.code, elsewhere.stdout]).toEqual([0, 'results regions up to date\n']);
  });

  it('--dry-run of the verbs program prints the command and does not start it', async () => {
    const r = await run([runner, 'verbs', '--set', 'sizes=1000', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      'node --expose-gc dist/bench/bench.js --sizes 1000 --iterations 40 --parts verbs,ranking,http,model\n',
    );
  });

  // Regression (new-user trial): a mistyped scenario printed the whole listing, 27 lines, after its error.
  it('exits 2 naming the scenarios in one line for an unknown one, lists them with --list or none', async () => {
    const unknown = await run([runner, 'clustr']);
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 2,
      stderr: `bench: no scenario clustr; the scenarios: ${names.join(', ')} (--list describes them)\n`,
    });
    const none = await run([runner]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^cluster +sandbox-scheduler against/m);
    const list = await run([runner, '--list']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').filter((l) => /^\S/.test(l))).toHaveLength(names.length);
    // Regression (new-user trial): a variant name of 15 characters or more pushed its description out of line.
    const starts = new Set(
      list.stdout
        .trimEnd()
        .split('\n')
        .map((l) => /^ *\S+ +/.exec(l)![0].length),
    );
    expect([...starts]).toHaveLength(1);
  });

  it('exits 2 for a bad --set and passes the program’s exit code through', async () => {
    const bad = await run([runner, 'cluster', '--set', 'nodez=1', '--dry-run']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('cluster has no parameter nodez');
    const refused = await run([runner, 'sampling', '--set', 'fill=', '--', '--no-such-option']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("unknown option '--no-such-option'");
  });

  // Regression (new-user trial): `cluster --publish R --dry-run` published (wrote the result file) all the same.
  it('refuses --publish or --print beside a scenario, --set, --dry-run or each other, writing nothing', async () => {
    for (const args of [
      ['cluster', '--publish', 'r.json'],
      ['--publish', 'r.json', '--dry-run'],
      ['--publish', 'r.json', '--set', 'pods=1'],
      ['cluster', '--print', 'r.json'],
      ['--print', 'r.json', '--publish', 'r.json'],
    ]) {
      const r = await run([runner, ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        'bench: --print REPORT and --publish REPORT take no scenario, --set, --dry-run or each other: the report names its scenario\n',
      );
    }
  });

  // Regression (new-user trial): a program's --print of a report that cannot be read exited 1, where --publish of it
  // exits 2; a report with no runs printed empty tables. The runner's --print holds to both.
  it('--print exits 2 in one line for a report that cannot be read or has no tables', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'print-'));
    try {
      const missing = await run([runner, '--print', join(dir, 'none.json')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr.trim().split('\n')).toHaveLength(1);
      const empty = join(dir, 'empty.json');
      writeReport({ ...startReport('cluster', {}), runs: [] }, empty, () => {});
      const r = await run([runner, '--print', empty]);
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr: `bench: ${empty}: a report with no tables (its program ended before one)\n`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--print prints a published report's tables", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'print-'));
    try {
      const file = join(dir, 'r.json');
      const report = startReport('cluster', {});
      writeReport(
        { ...report, runs: [{}], tables: [{ id: 't', title: 'T', columns: ['a', 'b'], rows: [['x', 1]] }] },
        file,
        () => {},
      );
      const r = await run([runner, '--print', file]);
      expect({ code: r.code, stdout: r.stdout }).toEqual({
        code: 0,
        stdout: `${report.command} (${report.startedAt})\n\nT\na  b\nx  1\n`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
