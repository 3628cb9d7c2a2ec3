/**
 * `npm run bench -- SCENARIO [VARIANT]`: the one runner of the benchmarks. It validates bench/scenarios/NAME.yaml,
 * turns its parameters into the program's options, runs the program with BENCH_SCENARIO, BENCH_VARIANT and
 * BENCH_COMMAND set (bench/report.ts) and exits with its code; `--list`, `--dry-run`, `--print REPORT` and
 * `--publish REPORT`: docs/benchmarks.md.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { parse } from 'yaml';
import { z } from 'zod';
import { ROOT, ReportError, printFile, publishFile } from './report.js';

export { ROOT };
export const SCENARIO_DIR = join(ROOT, 'bench', 'scenarios');

/** The groups a scenario's parameters sit in, in the order their options are passed. */
export const GROUPS = ['nodes', 'pods', 'schedulers', 'sampling', 'runs', 'measure', 'other'] as const;

const OPTION_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const parameterName = z.string().regex(OPTION_NAME, "a parameter is the program's option name in kebab case (pod-cpu)");
const scalar = z.union([z.string(), z.number()]);
const parameterValue = z.union([scalar, z.boolean(), z.null(), z.array(scalar).min(1)]);
const parameters = z.record(parameterName, parameterValue);
export type Value = z.infer<typeof parameterValue>;

const variantSchema = z.strictObject({
  description: z.string().min(1),
  set: parameters.refine((s) => Object.keys(s).length > 0, { message: 'a variant sets at least one parameter' }),
});

export const scenarioSchema = z
  .strictObject({
    description: z
      .string()
      .min(1)
      .regex(/^[^\n]+$/, 'one line'),
    program: z.string().regex(/^bench\/[A-Za-z][\w-]*\.ts$/, 'a program of bench/, e.g. bench/cluster.ts'),
    'node-flags': z.array(z.string().regex(/^--[a-z][a-z0-9-]*(=\S+)?$/, 'a node flag, e.g. --expose-gc')).optional(),
    result: z.string().regex(/^bench\/results\/[a-z][a-z0-9-]*\.json$/, 'a result file, bench/results/NAME.json'),
    nodes: parameters.optional(),
    pods: parameters.optional(),
    schedulers: parameters.optional(),
    sampling: parameters.optional(),
    runs: parameters.optional(),
    measure: parameters.optional(),
    other: parameters.optional(),
    variants: z.record(z.string().regex(OPTION_NAME, 'a variant name is kebab case'), variantSchema).optional(),
  })
  .superRefine((s, ctx) => {
    const seen = new Map<string, string>();
    for (const group of GROUPS) {
      for (const name of Object.keys(s[group] ?? {})) {
        if (seen.has(name))
          ctx.addIssue({ code: 'custom', path: [group, name], message: `declared twice (also in ${seen.get(name)})` });
        seen.set(name, group);
      }
    }
    const declared = flatten(s);
    for (const [variant, v] of Object.entries(s.variants ?? {})) {
      for (const [name, value] of Object.entries(v.set)) {
        if (!(name in declared))
          ctx.addIssue({
            code: 'custom',
            path: ['variants', variant, 'set', name],
            message: `not a parameter of the scenario (declare it in one of ${GROUPS.join(', ')})`,
          });
        else if (value !== null && (typeof declared[name] === 'boolean') !== (typeof value === 'boolean')) {
          ctx.addIssue({
            code: 'custom',
            path: ['variants', variant, 'set', name],
            message: `${typeof declared[name] === 'boolean' ? 'a flag takes true or false' : 'takes a value, not true or false'}`,
          });
        }
      }
    }
  });
export type Scenario = z.infer<typeof scenarioSchema>;

/** A scenario file that cannot be read or does not validate; the message names the file and the key. */
export class ScenarioError extends Error {}

/** Every parameter of a scenario by name, the groups flattened. */
export function flatten(s: Pick<Scenario, (typeof GROUPS)[number]>): Record<string, Value> {
  return Object.assign({}, ...GROUPS.map((g) => s[g] ?? {})) as Record<string, Value>;
}

/** The scenarios' names: the files of `dir`, sorted. */
export function scenarioNames(dir = SCENARIO_DIR): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => f.slice(0, -'.yaml'.length))
    .sort();
}

/** Parses and validates one scenario file's text. @throws ScenarioError naming `file` and the key at fault. */
export function parseScenario(text: string, file: string): Scenario {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ScenarioError(`${file}: not YAML: ${(err as Error).message}`);
  }
  const parsed = scenarioSchema.safeParse(doc);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => {
    // a record's key at fault: zod reports the key's own issue beneath
    const message = i.code === 'invalid_key' && i.issues[0] ? `${i.issues[0].message} (the key)` : i.message;
    return `${file}: ${i.path.length ? i.path.join('.') : '(top level)'}: ${message}`;
  });
  throw new ScenarioError(issues.join('\n'));
}

/** Reads bench/scenarios/NAME.yaml. @throws ScenarioError when it does not validate. */
export function loadScenario(name: string, dir = SCENARIO_DIR): Scenario {
  const file = join(dir, `${name}.yaml`);
  const scenario = parseScenario(readFileSync(file, 'utf8'), `bench/scenarios/${name}.yaml`);
  if (!existsSync(join(ROOT, scenario.program)))
    throw new ScenarioError(`bench/scenarios/${name}.yaml: its program ${scenario.program} does not exist`);
  return scenario;
}

/** What the runner runs: node flags, the built program and its options. */
export interface Invocation {
  nodeFlags: string[];
  script: string;
  args: string[];
}

/** One `--set NAME=VALUE`, typed as the scenario declares NAME. @throws ScenarioError for an unknown NAME or a bad flag value. */
function applySet(params: Record<string, Value>, set: string, scenario: string): void {
  const eq = set.indexOf('=');
  if (eq < 1) throw new ScenarioError(`--set ${set}: expected NAME=VALUE`);
  const name = set.slice(0, eq);
  const text = set.slice(eq + 1);
  if (!(name in params))
    throw new ScenarioError(
      `--set ${set}: ${scenario} has no parameter ${name} (its parameters: ${Object.keys(params).join(', ')})`,
    );
  const declared = params[name];
  if (typeof declared === 'boolean') {
    if (text !== 'true' && text !== 'false') throw new ScenarioError(`--set ${set}: ${name} is a flag, true or false`);
    params[name] = text === 'true';
  } else params[name] = text === '' ? null : text;
}

const text = (v: string | number | (string | number)[]): string => (Array.isArray(v) ? v.join(',') : String(v));

/**
 * The command a scenario (and variant, and `--set`s) runs. @throws ScenarioError for an unknown variant or a bad
 * `--set`.
 */
export function resolve(
  name: string,
  s: Scenario,
  variant: string | undefined,
  sets: readonly string[] = [],
  extra: readonly string[] = [],
): Invocation {
  const params = flatten(s);
  if (variant !== undefined) {
    const v = s.variants?.[variant];
    if (!v)
      throw new ScenarioError(
        `${name} has no variant ${variant} (${Object.keys(s.variants ?? {}).join(', ') || 'it has none'})`,
      );
    Object.assign(params, v.set);
  }
  for (const set of sets) applySet(params, set, name);
  const args: string[] = [];
  for (const [key, value] of Object.entries(params)) {
    if (value === null || value === false) continue;
    if (value === true) args.push(`--${key}`);
    else args.push(`--${key}`, text(value));
  }
  return {
    nodeFlags: s['node-flags'] ?? [],
    script: s.program.replace(/^bench\//, 'dist/bench/').replace(/\.ts$/, '.js'),
    args: [...args, ...extra],
  };
}

const quote = (a: string): string => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);

/** The invocation as one shell line. */
export function commandLine(inv: Invocation): string {
  return ['node', ...inv.nodeFlags, inv.script, ...inv.args.map(quote)].join(' ');
}

/** The runner's command line for a scenario, as a published figure names it: `npm run bench -- NAME [VARIANT] --set …`. */
export function runnerCommand(
  name: string,
  variant: string | undefined,
  sets: readonly string[],
  extra: readonly string[],
): string {
  const own = [name, ...(variant ? [variant] : []), ...sets.flatMap((s) => ['--set', s])];
  return ['npm run bench --', ...[...own, ...(extra.length > 0 ? ['--', ...extra] : [])].map(quote)].join(' ');
}

/** The scenarios and their variants, one a line, for --list: the descriptions in one column, however long a name. */
export function listing(dir = SCENARIO_DIR): string {
  const rows: [string, string][] = [];
  for (const name of scenarioNames(dir)) {
    try {
      const s = loadScenario(name, dir);
      rows.push([name, s.description]);
      for (const [v, d] of Object.entries(s.variants ?? {})) rows.push([`  ${v}`, d.description]);
    } catch (err) {
      rows.push([name, `(invalid: ${(err as Error).message.split('\n')[0]})`]);
    }
  }
  const width = Math.max(0, ...rows.map(([label]) => label.length)) + 1;
  const lines = rows.map(([label, text]) => `${label.padEnd(width)}${text}`);
  return lines.join('\n');
}

/** The long options a commander help text lists, each with whether it takes a value. */
export function helpOptions(help: string): Map<string, boolean> {
  const options = new Map<string, boolean>();
  for (const m of help.matchAll(/^ {2}(?:-\w, )?(--[a-z0-9-]+)( [<[])?/gm)) options.set(m[1]!, m[2] !== undefined);
  return options;
}

/**
 * What the program refuses of the invocation's options, without running it ([] when nothing). The program's `--help`
 * alone lists its options: each option name must be one of them, a flag given no value and an option taking one given
 * one. Only then is it started with them and `--help`, so that each value goes through its own option parser
 * (commander calls an option's parser as it reads the option, before it answers --help: its message is the one item
 * then); it prints its help and exits, having run nothing (an option left without its value would have taken
 * `--help` as the value and run the program: the first check refuses it). A check the program makes when it runs (a
 * list parsed in its action) is not made here.
 * @throws Error when the built program is missing (npm run bench builds it first).
 */
export async function programRefusals(inv: Invocation): Promise<string[]> {
  const script = join(ROOT, inv.script);
  if (!existsSync(script)) throw new Error(`${inv.script} does not exist: run npm run build`);
  const start = (args: readonly string[]) =>
    new Promise<{ code: number | string | null; stdout: string; stderr: string }>((done) => {
      execFile(process.execPath, [script, ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
        done({ code: err ? (err.code ?? err.signal ?? 1) : 0, stdout, stderr }),
      );
    });
  const refusal = (r: { code: number | string | null; stderr: string }) => [r.stderr.trim() || `exit ${r.code}`];
  const bare = await start(['--help']);
  if (bare.code !== 0) return refusal(bare);
  const known = helpOptions(bare.stdout);
  const wrong: string[] = [];
  for (let i = 0; i < inv.args.length; i++) {
    const arg = inv.args[i]!;
    if (!arg.startsWith('--')) continue;
    const eq = arg.indexOf('=');
    const option = eq < 0 ? arg : arg.slice(0, eq);
    const next = inv.args[i + 1];
    const valued = eq >= 0 || (next !== undefined && !next.startsWith('--'));
    if (!known.has(option)) wrong.push(`${option}: not an option of the program`);
    else if (known.get(option) !== valued)
      wrong.push(`${option}: ${known.get(option) ? 'takes a value' : 'is a flag'}`);
  }
  if (wrong.length > 0) return wrong;
  const parsed = await start([...inv.args, '--help']);
  return parsed.code === 0 ? [] : refusal(parsed);
}

interface RunnerOptions {
  set: string[];
  dryRun: boolean;
  list: boolean;
  print?: string;
  publish?: string;
}

/** The runner's command line (`argv` without node and the script); returns the exit code, or runs the program. */
export async function main(argv: readonly string[]): Promise<number> {
  const cut = argv.indexOf('--');
  const own = cut < 0 ? [...argv] : argv.slice(0, cut);
  const extra = cut < 0 ? [] : argv.slice(cut + 1);
  const program = new Command('bench')
    .description(
      'runs a benchmark scenario, bench/scenarios/SCENARIO.yaml (its parameters, its program, its result file)',
    )
    .argument('[scenario]', 'the scenario (--list for them)')
    .argument('[variant]', "one of the scenario's variants")
    .option(
      '--set <name=value>',
      'change one parameter of the scenario (repeatable); an empty value leaves the option out',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option('--dry-run', "print the command, checked by the program's option parser; run nothing", false)
    .option('--list', 'list the scenarios and their variants', false)
    .option('--print <report>', "print an earlier report's tables (any scenario's); runs nothing")
    .option('--publish <report>', "put a report's tables into its scenario's result file (bench/results/)")
    .addHelpText('after', '\nOptions after -- go to the program as they are: npm run bench -- cluster -- --reuse')
    .exitOverride()
    .parse(own, { from: 'user' });
  const o = program.opts<RunnerOptions>();
  const [name, variant] = program.args as [string | undefined, string | undefined];
  if (o.list) {
    console.log(listing());
    return 0;
  }
  if (o.publish !== undefined || o.print !== undefined) {
    if (name !== undefined || o.dryRun || o.set.length > 0 || (o.publish !== undefined && o.print !== undefined)) {
      process.stderr.write(
        'bench: --print REPORT and --publish REPORT take no scenario, --set, --dry-run or each other: the report names its scenario\n',
      );
      return 2;
    }
    try {
      console.log(o.publish !== undefined ? publishFile(o.publish).join('\n') : printFile(o.print!));
      return 0;
    } catch (err) {
      if (!(err instanceof ReportError)) throw err;
      process.stderr.write(`bench: ${err.message}\n`);
      return 2;
    }
  }
  const names = scenarioNames();
  if (!name) {
    process.stderr.write(`bench: which scenario? The scenarios (bench/scenarios/):\n${listing()}\n`);
    return 2;
  }
  if (!names.includes(name)) {
    process.stderr.write(`bench: no scenario ${name}; the scenarios: ${names.join(', ')} (--list describes them)\n`);
    return 2;
  }
  let inv: Invocation;
  try {
    inv = resolve(name, loadScenario(name), variant, o.set, extra);
  } catch (err) {
    if (!(err instanceof ScenarioError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    return 2;
  }
  if (!existsSync(join(ROOT, inv.script))) {
    process.stderr.write(`bench: ${inv.script} does not exist: run npm run build\n`);
    return 2;
  }
  if (o.dryRun) {
    // The same checks as a run: the scenario (above) and the program's own option parser, which a run meets first.
    const refusals = await programRefusals(inv);
    if (refusals.length > 0) {
      process.stderr.write(
        `bench: ${name}: ${inv.script} refuses the command ${commandLine(inv)}:\n${refusals.join('\n')}\n`,
      );
      return 2;
    }
    console.log(commandLine(inv));
    return 0;
  }
  process.stderr.write(`bench: ${name}${variant ? ` ${variant}` : ''}: ${commandLine(inv)}\n`);
  const child = spawn(process.execPath, [...inv.nodeFlags, join(ROOT, inv.script), ...inv.args], {
    cwd: ROOT,
    stdio: 'inherit',
    env: {
      ...process.env,
      BENCH_SCENARIO: name,
      BENCH_VARIANT: variant ?? '',
      BENCH_COMMAND: runnerCommand(name, variant, o.set, extra),
    },
  });
  // A terminal's Ctrl-C reaches the program itself (one process group); the runner waits for its exit.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  return new Promise((done) => {
    child.on('error', (err) => {
      process.stderr.write(`bench: ${err.message}\n`);
      done(1);
    });
    child.on('exit', (code, signal) => done(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1)));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: Error & { exitCode?: number; code?: string }) => {
      // commander's own exits (--help, a parse error it has already printed) carry their code
      if (typeof err.code === 'string' && err.code.startsWith('commander.'))
        process.exitCode = err.exitCode === 0 ? 0 : 2;
      else {
        process.stderr.write(`bench: ${err.stack ?? err.message}\n`);
        process.exitCode = 1;
      }
    },
  );
}
