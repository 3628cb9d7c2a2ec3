/**
 * The one report every bench program writes: an envelope (scenario, variant, command, times, commit, machine,
 * the program's options) around its raw runs and its tables, each table shaped as a table of
 * bench/results/NAME.json (bench/results.ts) so that `npm run bench -- --publish REPORT.json` can put it there.
 * The runner names the scenario, variant and its command line in BENCH_SCENARIO, BENCH_VARIANT and
 * BENCH_COMMAND; a program run by hand names its own scenario and its argv. A report goes to the program's
 * `--out`, else to .e2e-bench/SCENARIO-DATE.json.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SCENARIOS, resultSchema, tableSchema, type Result, type Scenario, type Table } from './results.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The project's root, from bench/ (the sources) or dist/bench/ (built). */
export const ROOT = existsSync(join(HERE, '..', 'package.json')) ? join(HERE, '..') : join(HERE, '..', '..');

export const reportSchema = z
  .strictObject({
    format: z.literal(1),
    scenario: z.enum(SCENARIOS),
    variant: z.string().min(1).nullable(),
    /** The runner's command line (`npm run bench -- …`), else the program's argv. */
    command: z.string().min(1),
    startedAt: z.iso.datetime(),
    finishedAt: z.iso.datetime(),
    commit: z
      .string()
      .regex(/^[0-9a-f]{40}$/, 'a full commit hash')
      .nullable(),
    machine: z.strictObject({
      cpus: z.int().min(1),
      cpuModel: z.string().nullable(),
      loadAverage1mAtStart: z.number().min(0),
      node: z.string().regex(/^v\d+\./, "Node's version, as process.version"),
    }),
    /** The program's parsed options. */
    options: z.record(z.string(), z.unknown()),
    /** The program's raw records, in its own shape. */
    runs: z.array(z.unknown()),
    tables: z.array(tableSchema),
  })
  .superRefine((r, ctx) => {
    const ids = r.tables.map((t) => t.id);
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: 'custom', path: ['tables'], message: 'table ids repeat' });
    // As instants: the text of two ISO times does not order them (…00Z against …00.500Z).
    if (Date.parse(r.finishedAt) < Date.parse(r.startedAt))
      ctx.addIssue({ code: 'custom', path: ['finishedAt'], message: 'finishedAt is before startedAt' });
  });
export type Report = z.infer<typeof reportSchema>;

/** A report that does not validate, cannot be read or cannot be published; the message says why in words. */
export class ReportError extends Error {}

function commitOf(root: string): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/**
 * A report begun now, with no runs and no tables yet: scenario, variant and command from the runner's
 * BENCH_SCENARIO, BENCH_VARIANT and BENCH_COMMAND in `env`, else `scenario`, null and `argv`.
 */
export function startReport(
  scenario: Scenario,
  options: object,
  env: NodeJS.ProcessEnv = process.env,
  argv: readonly string[] = process.argv,
): Report {
  const now = new Date().toISOString();
  const named = SCENARIOS.find((s) => s === env.BENCH_SCENARIO);
  return {
    format: 1,
    scenario: named ?? scenario,
    variant: named ? env.BENCH_VARIANT || null : null,
    command: (named && env.BENCH_COMMAND) || argv.join(' '),
    startedAt: now,
    finishedAt: now,
    commit: commitOf(ROOT),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      loadAverage1mAtStart: loadavg()[0]!,
      node: process.version,
    },
    options: { ...options },
    runs: [],
    tables: [],
  };
}

/** A schema's complaints in one line: `path: message` each, the first 10 (a report is named in one line). */
function issuesOf(error: z.ZodError): string {
  const issues = error.issues.map((i) => `${i.path.join('.') || '(the document)'}: ${i.message}`);
  return issues.length > 10 ? `${issues.slice(0, 10).join('; ')}; and ${issues.length - 10} more` : issues.join('; ');
}

function check(doc: unknown, where: string): Report {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !('format' in doc))
    throw new ReportError(
      `${where}: not a bench report (the JSON a bench program writes: format, scenario, runs, tables)`,
    );
  const parsed = reportSchema.safeParse(doc);
  if (!parsed.success) throw new ReportError(`${where}: not a bench report: ${issuesOf(parsed.error)}`);
  return parsed.data;
}

/**
 * The last words of a bench program (`main().catch(exitWith('bench:NAME'))`): a report that cannot be read or
 * published (ReportError) in one line and exit code 2, as the runner's --publish; anything else with its stack, 1.
 */
export function exitWith(program: string): (err: Error) => never {
  return (err) => {
    const report = err instanceof ReportError;
    process.stderr.write(`${program}: ${report ? err.message : (err.stack ?? err.message)}\n`);
    process.exit(report ? 2 : 1);
  };
}

/** Checks a report's JSON value. @throws ReportError naming `where` and each key at fault. */
export function parseReport(doc: unknown, where = 'the report'): Report {
  return check(doc, where);
}

/**
 * The runner's `--print REPORT`: the report's command and start, then each of its tables as text (textTable).
 * @throws ReportError as readReport does, and for a report without tables (its program ended before one).
 */
export function printFile(path: string): string {
  const report = readReport(path);
  if (report.tables.length === 0)
    throw new ReportError(`${path}: a report with no tables (its program ended before one)`);
  return [`${report.command} (${report.startedAt})`, ...report.tables.map(textTable)].join('\n\n');
}

/** Where a report goes without --out: .e2e-bench/SCENARIO-STARTED.json under `root`. */
export function defaultReportPath(report: Pick<Report, 'scenario' | 'startedAt'>, root = ROOT): string {
  return join(root, '.e2e-bench', `${report.scenario}-${report.startedAt.replace(/[:.]/g, '-')}.json`);
}

/**
 * Stamps finishedAt, validates and writes the report to `outPath` (else its default path; the same file each
 * time, so a program may write after every run) and prints the path. Returns the path.
 * @throws ReportError when the report does not validate (nothing is written).
 */
export function writeReport(report: Report, outPath?: string, say: (s: string) => void = console.log): string {
  report.finishedAt = new Date().toISOString();
  const valid = check(report, `the ${report.scenario} report`);
  const path = outPath ?? defaultReportPath(valid);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(valid, null, 2)}\n`);
  say(`report: ${relative(process.cwd(), path) || path}`);
  return path;
}

/** Reads and validates a report file. @throws ReportError when it cannot be read, is not JSON or does not validate. */
export function readReport(path: string): Report {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ReportError(`${path}: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}`);
  }
  return check(doc, path);
}

/** A table of the program's own from printed rows, the header first. */
export function tableOf(
  id: string,
  title: string,
  rows: readonly (readonly (string | null)[])[],
  notes?: string[],
): Table {
  const columns = rows[0]!.map((c) => c ?? '');
  return { id, title, columns, rows: rows.slice(1).map((r) => [...r]), ...(notes ? { notes } : {}) };
}

/** A table as text for a terminal: its title, columns padded (the first left, the others right), notes below. */
export function textTable(t: Table): string {
  const name = (c: Table['columns'][number]) => (typeof c === 'string' ? c : c.name);
  const cell = (v: Table['rows'][number][number], c: Table['columns'][number]) =>
    v === null ? '–' : typeof v === 'number' && typeof c !== 'string' ? v.toFixed(c.decimals) : String(v);
  const rows = [t.columns.map(name), ...t.rows.map((r) => r.map((v, i) => cell(v, t.columns[i]!)))];
  const widths = t.columns.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) =>
    r
      .map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  return [t.title, ...lines, ...(t.notes ?? [])].join('\n');
}

const scalar = (x: unknown): boolean => x === null || typeof x !== 'object';

/** JSON as the result files are laid out: a list of scalars, or a short one of flat objects, on one line. */
export function jsonText(v: unknown, indent = ''): string {
  const inner = `${indent}  `;
  if (Array.isArray(v)) {
    if (v.every(scalar)) return `[${v.map((x) => JSON.stringify(x)).join(', ')}]`;
    const one = `[${v.map((x) => jsonText(x, inner)).join(', ')}]`;
    if (!one.includes('\n') && indent.length + 20 + one.length <= 120) return one;
    return `[\n${v.map((x) => inner + jsonText(x, inner)).join(',\n')}\n${indent}]`;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    const one = `{ ${entries.map(([k, x]) => `${JSON.stringify(k)}: ${JSON.stringify(x)}`).join(', ')} }`;
    if (entries.every(([, x]) => scalar(x)) && indent.length + one.length <= 120) return one;
    return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${jsonText(x, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(v);
}

const columnsText = (t: Pick<Table, 'columns'>): string => JSON.stringify(t.columns);

const RUNNER_COMMAND = /^npm run bench -- [a-z][\w-]*(?: [a-z][\w-]*)?(?: --set \S+)*$/;

/** What publishing a report did to a result: its new value, the tables replaced and the report's others. */
export interface Published {
  result: Result;
  replaced: string[];
  /** Tables of the report with no table of that id in the result (the program's own). */
  skipped: string[];
}

/**
 * The result with each table the report carries replaced: its rows, and its command and date (the report's
 * command and the day it started). When the report replaces every table, the scenario's command, date and
 * commit are the report's and the tables' own are dropped; otherwise a table keeps its own only where they
 * differ from the scenario's. Title and sampling stay as published; so do the notes, unless the report's table has
 * notes of its own (figures of the run the program writes, e.g. pending's), which replace them.
 * @throws ReportError for a command not the runner's (`npm run bench -- …`), another scenario, a variant other than
 * the command's, a start in the future, a table whose columns differ from the published one's, a report with no
 * table of the result, or a result that would not validate.
 */
export function publish(result: Result, report: Report): Published {
  if (!RUNNER_COMMAND.test(report.command))
    throw new ReportError(
      `the report's command "${report.command}" is not the runner's (npm run bench -- SCENARIO [VARIANT] [--set NAME=VALUE]…), which a published table names: run the scenario through the runner, with no options after --`,
    );
  if (report.scenario !== result.scenario)
    throw new ReportError(`the report is of ${report.scenario}, the result file of ${result.scenario}`);
  // npm run bench -- SCENARIO [VARIANT] [--set …]: RUNNER_COMMAND has checked the shape.
  const [, , , , scenario, variantWord] = report.command.split(' ');
  if (scenario !== report.scenario)
    throw new ReportError(
      `the report's command "${report.command}" runs another scenario than its own, ${report.scenario}`,
    );
  const commandVariant = variantWord === undefined || variantWord.startsWith('--') ? null : variantWord;
  if (commandVariant !== report.variant)
    throw new ReportError(
      `the report's command "${report.command}" runs ${commandVariant ? `variant ${commandVariant}` : 'no variant'}, its variant field says ${report.variant ?? 'none'}`,
    );
  if (Date.parse(report.startedAt) > Date.now())
    throw new ReportError(`the report starts in the future (${report.startedAt})`);
  if (report.runs.length === 0) throw new ReportError('the report has no runs: its tables are not of a measurement');
  const byId = new Map(report.tables.map((t) => [t.id, t]));
  const replaced = result.tables.filter((t) => byId.has(t.id)).map((t) => t.id);
  const skipped = report.tables.filter((t) => !result.tables.some((p) => p.id === t.id)).map((t) => t.id);
  if (replaced.length === 0)
    throw new ReportError(
      `the report has no table of bench/results/${result.scenario}.json (its tables: ${report.tables.map((t) => t.id).join(', ') || 'none'}; published: ${result.tables.map((t) => t.id).join(', ')})`,
    );
  for (const t of result.tables) {
    const mine = byId.get(t.id);
    if (mine && columnsText(mine) !== columnsText(t))
      throw new ReportError(
        `table ${t.id}: the report's columns ${columnsText(mine)} differ from the published ${columnsText(t)}`,
      );
  }
  const day = report.startedAt.slice(0, 10);
  const all = replaced.length === result.tables.length;
  const command = all ? report.command : result.command;
  const date = all ? day : result.date;
  const tables = result.tables.map((t): Table => {
    const mine = byId.get(t.id);
    if (!mine) return t;
    const { command: _c, date: _d, ...rest } = t;
    return {
      ...rest,
      rows: mine.rows,
      ...(mine.notes ? { notes: mine.notes } : {}),
      ...(report.command !== command ? { command: report.command } : {}),
      ...(day !== date ? { date: day } : {}),
    };
  });
  const { since: _s, commit: _k, ...head } = result;
  const next: Result = all
    ? { ...head, command, date, ...(report.commit ? { commit: report.commit } : {}), tables }
    : { ...result, tables };
  const parsed = resultSchema.safeParse(next);
  if (!parsed.success)
    throw new ReportError(
      `bench/results/${result.scenario}.json would not validate with the report's tables: ${issuesOf(parsed.error)}`,
    );
  return { result: parsed.data, replaced, skipped };
}

/** A result file read for publishing. @throws ReportError naming it (`where`) when it is not JSON or not a result file. */
function readResultFile(file: string, where: string): Result {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ReportError(`${where}: ${(err as Error).message}`);
  }
  const parsed = resultSchema.safeParse(doc);
  if (!parsed.success) throw new ReportError(`${where}: not a result file: ${issuesOf(parsed.error)}`);
  return parsed.data;
}

/**
 * `npm run bench -- --publish REPORT.json`: validates the report and rewrites bench/results/SCENARIO.json under
 * `root` (see publish), in the files' layout. Returns the lines to print. @throws ReportError as readReport and publish do, and when
 * the scenario has no result file.
 */
export function publishFile(reportPath: string, root = ROOT): string[] {
  const report = readReport(reportPath);
  const file = join(root, 'bench', 'results', `${report.scenario}.json`);
  if (!existsSync(file)) throw new ReportError(`${reportPath}: no result file bench/results/${report.scenario}.json`);
  const current = readResultFile(file, `bench/results/${report.scenario}.json`);
  let published: Published;
  try {
    published = publish(current, report);
  } catch (err) {
    if (err instanceof ReportError) throw new ReportError(`${reportPath}: ${err.message}`);
    throw err;
  }
  const { result, replaced, skipped } = published;
  writeFileSync(file, `${jsonText(result)}\n`);
  return [
    `bench/results/${report.scenario}.json: replaced ${replaced.join(', ')}`,
    ...(skipped.length > 0 ? [`not published (no such table there): ${skipped.join(', ')}`] : []),
    'check its conditions by hand, then run: npm run bench:render',
  ];
}
