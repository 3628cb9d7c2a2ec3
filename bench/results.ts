/**
 * The published benchmark figures: bench/results/SCENARIO.json holds what holds now (command, conditions, date,
 * tables). `npm run bench:render` (resultsRender.ts) renders them into the marked regions of docs/benchmarks.md and
 * README.md — `<!-- results: SCENARIO -->` (its tables but those marked namedOnly, with command, conditions and date)
 * or `<!-- results: SCENARIO/TABLE -->` (one table, one line of command, date and sampling), each closed by
 * `<!-- /results -->`; test/bench/results.test.ts fails when a region differs from its file.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

/** The scenarios, named as their npm scripts (`verbs` is `npm run bench -- verbs`). */
export const SCENARIOS = [
  'verbs',
  'memory',
  'cluster',
  'starting',
  'scheduler-perf',
  'ceiling',
  'shared',
  'failover',
  'bounds',
  'time-to-ready',
  'sampling',
  'pending',
  'locality',
  'agent-sandbox',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');
const command = z.string().regex(/^npm run /, 'an npm command');

/** One scheduler side of a comparison and how it sampled nodes: percentageOfNodesToScore, or `unset` (as shipped). */
export const samplingSchema = z.strictObject({
  side: z.string().regex(/^[a-z][\w-]*$/, 'a side is one lower-case word (stock, sandbox, floor, …)'),
  scheduler: z.string().min(1),
  percentageOfNodesToScore: z.union([z.literal('unset'), z.int().min(0).max(100), z.literal('varies')]),
  note: z.string().optional(),
});

const column = z.union([
  z.string().min(1),
  z.strictObject({ name: z.string().min(1), decimals: z.int().min(0).max(6) }),
]);
const cell = z.union([z.number(), z.string(), z.null()]);

/** One published table; a report's tables (bench/report.ts) have this shape too. */
export const tableSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9-]+$/, 'a table id is lower-case words joined by hyphens'),
    title: z.string().min(1),
    /** Set where the table's figures come from another command or day than the scenario's. */
    command: command.optional(),
    date: isoDate.optional(),
    columns: z.array(column).min(2),
    rows: z.array(z.array(cell)).min(1),
    notes: z.array(z.string().min(1)).optional(),
    /** A table shown only where a region names it (`SCENARIO/TABLE`), not in the scenario's own region. */
    namedOnly: z.boolean().optional(),
    /** Set where the table's sampling is narrower than the scenario's (one row of a per-row comparison). */
    sampling: z.array(samplingSchema).min(1).optional(),
  })
  .superRefine((t, ctx) => {
    t.rows.forEach((row, i) => {
      if (row.length !== t.columns.length) {
        ctx.addIssue({
          code: 'custom',
          path: ['rows', i],
          message: `row has ${row.length} cells for ${t.columns.length} columns`,
        });
      }
    });
  });

export const resultSchema = z
  .strictObject({
    scenario: z.enum(SCENARIOS),
    command,
    /** The day the figures were measured (where the record did not say: the day they were published). */
    date: isoDate,
    /** The first day, where the figures come from sessions on several days. */
    since: isoDate.optional(),
    commit: z
      .string()
      .regex(/^[0-9a-f]{7,40}$/)
      .optional(),
    conditions: z.strictObject({
      machine: z.string().min(1),
      nodes: z.string().min(1),
      pods: z.string().min(1),
      /** Every kube-scheduler of the comparison; empty where none runs. */
      sampling: z.array(samplingSchema),
      other: z.array(z.string().min(1)).optional(),
    }),
    tables: z.array(tableSchema).min(1),
  })
  .superRefine((r, ctx) => {
    // A ratio column names its sides ("sandbox/stock …"); each side must say how it sampled.
    r.tables.forEach((t, ti) => {
      const sides = new Set((t.sampling ?? r.conditions.sampling).map((s) => s.side));
      t.columns.forEach((c, ci) => {
        const m = /^([a-z][\w-]*)\/([a-z][\w-]*)(?![\w-])/.exec(columnName(c));
        for (const side of m ? [m[1]!, m[2]!] : []) {
          if (!sides.has(side)) {
            ctx.addIssue({
              code: 'custom',
              path: ['tables', ti, 'columns', ci],
              message: `the ratio's side "${side}" has no sampling in conditions.sampling`,
            });
          }
        }
      });
    });
    const ids = r.tables.map((t) => t.id);
    if (new Set(ids).size !== ids.length)
      ctx.addIssue({ code: 'custom', path: ['tables'], message: 'table ids repeat' });
    if (r.since !== undefined && r.since > r.date)
      ctx.addIssue({ code: 'custom', path: ['since'], message: 'since is after date' });
  });

export type Result = z.infer<typeof resultSchema>;
export type Table = Result['tables'][number];
type Column = Table['columns'][number];

function columnName(c: Column): string {
  return typeof c === 'string' ? c : c.name;
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** 2026-12-04 → "4 December 2026"; with a first day, "3–4 December 2026". */
export function formatDate(date: string, since?: string): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const last = `${d} ${MONTHS[m - 1]} ${y}`;
  if (since === undefined || since === date) return last;
  const [sy, sm, sd] = since.split('-').map(Number) as [number, number, number];
  if (sy === y && sm === m) return `${sd}–${last}`;
  return `${formatDate(since)} – ${last}`;
}

type Sampling = Result['conditions']['sampling'][number];

function formatSampling(s: Sampling): string {
  const how =
    s.percentageOfNodesToScore === 'unset'
      ? 'as shipped (percentageOfNodesToScore unset)'
      : s.percentageOfNodesToScore === 'varies'
        ? 'percentageOfNodesToScore varies'
        : `percentageOfNodesToScore ${s.percentageOfNodesToScore}`;
  return `${s.side} = ${s.scheduler}, ${how}${s.note ? ` (${s.note})` : ''}`;
}

function formatCell(value: Table['rows'][number][number], c: Column): string {
  if (value === null) return '–';
  if (typeof value === 'number') return typeof c === 'string' ? String(value) : value.toFixed(c.decimals);
  return value.replace(/\|/g, '\\|');
}

/** The Markdown of one table: its rows, then its notes. */
export function renderTable(t: Table): string {
  const head = `| ${t.columns.map(columnName).join(' | ')} |`;
  const rule = `|${t.columns.map(() => '---').join('|')}|`;
  const rows = t.rows.map((row) => `| ${row.map((v, i) => formatCell(v, t.columns[i]!)).join(' | ')} |`);
  const notes = t.notes && t.notes.length > 0 ? ['', ...t.notes.map((n) => `${n}`)] : [];
  return [head, rule, ...rows, ...notes].join('\n');
}

function conditionsLine(r: Result): string {
  const c = r.conditions;
  const parts = [`**Machine:** ${c.machine}.`, `**Nodes:** ${c.nodes}.`, `**Pods:** ${c.pods}.`];
  if (c.sampling.length > 0) parts.push(`**Sampling:** ${c.sampling.map(formatSampling).join('; ')}.`);
  for (const o of c.other ?? []) parts.push(`${o}.`);
  return parts.join(' ');
}

/** A whole scenario: command, date, conditions, then each table under its title. */
export function renderResult(r: Result): string {
  const out = [
    `**Command:** \`${r.command}\` · **date:** ${formatDate(r.date, r.since)}${r.commit ? ` · **commit:** ${r.commit}` : ''}. ${conditionsLine(r)}`,
  ];
  for (const t of r.tables.filter((x) => x.namedOnly !== true)) {
    const own = [
      t.command ? `\`${t.command}\`` : '',
      t.date ? formatDate(t.date) : '',
      t.sampling ? `sampling: ${t.sampling.map(formatSampling).join('; ')}` : '',
    ]
      .filter((s) => s !== '')
      .join(', ');
    // GitHub's renderer lets a table follow its title line directly.
    out.push('', `**${t.title}**${own ? ` (${own})` : ''}`, renderTable(t));
  }
  return out.join('\n');
}

function shortSampling(s: Sampling): string {
  if (s.percentageOfNodesToScore === 'unset') return 'as shipped (percentageOfNodesToScore unset)';
  return s.percentageOfNodesToScore === 'varies' ? 'varies' : `at ${s.percentageOfNodesToScore} %`;
}

/** One table of a scenario with a single line of its command, date and sampling (where a page has little room). */
export function renderOneTable(r: Result, id: string): string {
  const t = r.tables.find((x) => x.id === id);
  if (!t) throw new Error(`bench/results/${r.scenario}.json has no table "${id}"`);
  const sampling = (t.sampling ?? r.conditions.sampling).map((s: Sampling) => `${s.side} ${shortSampling(s)}`);
  const line = [`\`${t.command ?? r.command}\``, formatDate(t.date ?? r.date, t.date ? undefined : r.since)];
  if (sampling.length > 0) line.push(`sampling: ${sampling.join(', ')}`);
  return [renderTable(t), '', `${line.join(' · ')}.`].join('\n');
}

/** Reads and checks every result file of a checkout; a file that does not match the schema throws with its path. */
export function loadResults(root: string): Map<Scenario, Result> {
  const dir = join(root, 'bench', 'results');
  const out = new Map<Scenario, Result>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const parsed = resultSchema.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')));
    if (!parsed.success) throw new Error(`bench/results/${file}: ${z.prettifyError(parsed.error)}`);
    if (`${parsed.data.scenario}.json` !== file)
      throw new Error(
        `bench/results/${file}: its scenario is "${parsed.data.scenario}"; the file must be named after it`,
      );
    out.set(parsed.data.scenario, parsed.data);
  }
  return out;
}

export interface Region {
  /** "cluster" or "cluster/readme". */
  name: string;
  /** Line (1-based) of the opening marker. */
  line: number;
  /** Line (1-based) of the closing marker. */
  end: number;
  /** The text between the markers, without the newlines next to them. */
  body: string;
}

const OPEN = /^<!-- results: ([a-z0-9-]+(?:\/[a-z0-9-]+)?) -->$/;
const CLOSE = '<!-- /results -->';

/** The marked regions of a Markdown text. */
export function regionsOf(markdown: string, where: string): Region[] {
  const lines = markdown.split('\n');
  const out: Region[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = OPEN.exec(lines[i]!);
    if (!m) {
      if (lines[i] === CLOSE) throw new Error(`${where}:${i + 1}: ${CLOSE} without an opening marker`);
      continue;
    }
    const end = lines.indexOf(CLOSE, i + 1);
    const nextOpen = lines.findIndex((l, j) => j > i && OPEN.test(l));
    if (end < 0 || (nextOpen >= 0 && nextOpen < end))
      throw new Error(`${where}:${i + 1}: results region "${m[1]}" has no ${CLOSE}`);
    out.push({ name: m[1]!, line: i + 1, end: end + 1, body: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return out;
}

/** What a region must hold. */
export function renderRegion(name: string, results: Map<Scenario, Result>): string {
  const [scenario, id] = name.split('/') as [string, string | undefined];
  const r = results.get(scenario as Scenario);
  if (!r) throw new Error(`no result file bench/results/${scenario}.json`);
  return id === undefined ? renderResult(r) : renderOneTable(r, id);
}

/** The text with every region filled from the results. */
export function fillRegions(markdown: string, results: Map<Scenario, Result>, where: string): string {
  const lines = markdown.split('\n');
  for (const region of regionsOf(markdown, where).reverse()) {
    lines.splice(region.line, region.end - region.line - 1, ...renderRegion(region.name, results).split('\n'));
  }
  return lines.join('\n');
}

/** The Markdown files whose regions are rendered, relative to the checkout. */
export const RENDERED_FILES = ['README.md', 'docs/benchmarks.md'];
