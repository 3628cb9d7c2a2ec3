/**
 * The one report format of the bench programs (bench/report.ts): its schema, writing and reading it, and
 * publishing its tables into a result file.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadResults, resultSchema, type Result } from '../../bench/results.js';
import {
  ReportError,
  defaultReportPath,
  jsonText,
  parseReport,
  publish,
  publishFile,
  readReport,
  printFile,
  startReport,
  writeReport,
  type Report,
} from '../../bench/report.js';
import { runnerCommand } from '../../bench/run.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const good = (): Report => ({
  format: 1,
  scenario: 'ceiling',
  variant: null,
  command: 'npm run bench -- ceiling',
  startedAt: '2026-12-03T10:00:00.000Z',
  finishedAt: '2026-12-03T10:30:00.000Z',
  commit: '0123456789abcdef0123456789abcdef01234567',
  machine: { cpus: 2, cpuModel: 'AMD EPYC', loadAverage1mAtStart: 0.4, node: 'v22.1.0' },
  options: { nodes: [1000] },
  runs: [{ anything: 1 }],
  tables: [{ id: 'mine', title: 'Mine', columns: ['a', 'b'], rows: [['x', 1]] }],
});

const result = (): Result => ({
  scenario: 'ceiling',
  command: 'npm run bench -- ceiling',
  date: '2026-12-01',
  since: '2026-11-30',
  conditions: { machine: '2 cores', nodes: '1,000', pods: 'one per call', sampling: [] },
  tables: [
    { id: 'one', title: 'One', columns: ['figure', { name: 'value', decimals: 1 }], rows: [['a', 1]], notes: ['n'] },
    { id: 'two', title: 'Two', columns: ['figure', 'value'], rows: [['b', '2']], date: '2026-11-30' },
  ],
});

describe('the report schema', () => {
  it('accepts a good report', () => {
    expect(parseReport(good())).toEqual(good());
  });

  it('rejects a bad one with a message that names the key', () => {
    const noFormat = { ...good(), format: 2 };
    expect(() => parseReport(noFormat, 'r.json')).toThrow(ReportError);
    expect(() => parseReport(noFormat, 'r.json')).toThrow(/^r\.json: not a bench report: format: [^\n]+$/);
    expect(() => parseReport({ ...good(), scenario: 'nope' })).toThrow(/: scenario: Invalid option/);
    expect(() => parseReport({ ...good(), startedAt: '5 December' })).toThrow(/: startedAt: /);
    const wide = good();
    wide.tables[0]!.rows = [['x', 1, 2]];
    expect(() => parseReport(wide)).toThrow('row has 3 cells for 2 columns');
    const twice = good();
    twice.tables.push(twice.tables[0]!);
    expect(() => parseReport(twice)).toThrow('table ids repeat');
    expect(() => parseReport({ ...good(), extra: 1 })).toThrow(/extra/);
  });

  // Regression (new-user trial): finishedAt was compared with startedAt as text, so …00Z came after …00.500Z.
  it('orders startedAt and finishedAt as instants', () => {
    const r = { ...good(), startedAt: '2026-12-10T00:00:00Z', finishedAt: '2026-12-10T00:00:00.500Z' };
    expect(parseReport(r).finishedAt).toBe('2026-12-10T00:00:00.500Z');
    expect(() => parseReport({ ...r, finishedAt: '2026-12-09T23:59:59.999Z' })).toThrow(
      'finishedAt is before startedAt',
    );
  });

  it('startReport names the runner’s scenario, variant and command, else the program’s own and its argv', () => {
    const env = { BENCH_SCENARIO: 'cluster', BENCH_VARIANT: 'pin', BENCH_COMMAND: 'npm run bench -- cluster pin' };
    const r = startReport('memory', { a: 1 }, env, ['node', 'x.js']);
    expect([r.scenario, r.variant, r.command, r.options]).toEqual([
      'cluster',
      'pin',
      'npm run bench -- cluster pin',
      { a: 1 },
    ]);
    const own = startReport('memory', {}, {}, ['node', 'dist/bench/memory.js', '--nodes', '5']);
    expect([own.scenario, own.variant, own.command]).toEqual(['memory', null, 'node dist/bench/memory.js --nodes 5']);
    expect(() => parseReport(own)).not.toThrow();
  });

  it('the runner’s command is the canonical npm command', () => {
    expect(runnerCommand('cluster', 'pin', ['nodes=5000'], [])).toBe('npm run bench -- cluster pin --set nodes=5000');
    expect(runnerCommand('cluster', undefined, [], ['--out', 'a b.json'])).toBe(
      "npm run bench -- cluster -- --out 'a b.json'",
    );
  });
});

describe('writing and reading a report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'report-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a valid report where asked, stamps finishedAt, reads it back', () => {
    const said: string[] = [];
    const path = writeReport(good(), join(dir, 'sub', 'r.json'), (s) => said.push(s));
    expect(said).toEqual([expect.stringMatching(/^report: .*r\.json$/)]);
    const back = readReport(path);
    expect(back.finishedAt >= good().finishedAt).toBe(true);
    expect({ ...back, finishedAt: '' }).toEqual({ ...good(), finishedAt: '' });
  });

  it('refuses to write an invalid report and to read one that is not', () => {
    expect(() => writeReport({ ...good(), tables: [{ id: 'A B' } as never] }, join(dir, 'bad.json'), () => {})).toThrow(
      ReportError,
    );
    expect(() => readReport(join(dir, 'bad.json'))).toThrow(/bad\.json: ENOENT/);
    writeFileSync(join(dir, 'text.json'), 'not json{\n}\n');
    expect(() => readReport(join(dir, 'text.json'))).toThrow(/text\.json: Unexpected token .* is not valid JSON$/);
    // JSON that is not a report at all: one line, not zod's list of every key it lacks
    writeFileSync(join(dir, 'array.json'), '[1, 2]');
    expect(() => readReport(join(dir, 'array.json'))).toThrow(
      new ReportError(
        `${join(dir, 'array.json')}: not a bench report (the JSON a bench program writes: format, scenario, runs, tables)`,
      ),
    );
  });

  it("prints a report's command and tables; refuses one without tables in one line", () => {
    const path = writeReport(good(), join(dir, 'ceiling.json'), () => {});
    expect(printFile(path)).toBe('npm run bench -- ceiling (2026-12-03T10:00:00.000Z)\n\nMine\na  b\nx  1');
    // Regression (new-user trial): a report with no runs printed empty tables.
    const empty = writeReport({ ...good(), runs: [], tables: [] }, join(dir, 'empty.json'), () => {});
    expect(() => printFile(empty)).toThrow(
      new ReportError(`${empty}: a report with no tables (its program ended before one)`),
    );
  });

  it('goes to .e2e-bench/SCENARIO-DATE.json by default', () => {
    expect(defaultReportPath(good(), '/r')).toBe('/r/.e2e-bench/ceiling-2026-12-03T10-00-00-000Z.json');
  });
});

describe('publishing a report', () => {
  const mine = (id: string, rows: Report['tables'][number]['rows'], columns?: Report['tables'][number]['columns']) => ({
    id,
    title: 'from the program',
    columns: columns ?? result().tables.find((t) => t.id === id)!.columns,
    rows,
  });

  it('replaces exactly the named tables’ rows and dates them; title and notes stay; its own tables are skipped', () => {
    const r = { ...good(), command: 'npm run bench -- ceiling --set nodes=5000', tables: [mine('one', [['z', 9]])] };
    r.tables.push({ id: 'mine', title: 'Mine', columns: ['a', 'b'], rows: [['x', 1]] });
    const { result: next, replaced, skipped } = publish(result(), r);
    expect([replaced, skipped]).toEqual([['one'], ['mine']]);
    expect(next.tables[0]).toEqual({
      ...result().tables[0],
      rows: [['z', 9]],
      command: 'npm run bench -- ceiling --set nodes=5000',
      date: '2026-12-03',
    });
    expect(next.tables[1]).toEqual(result().tables[1]);
    expect([next.command, next.date, next.since]).toEqual(['npm run bench -- ceiling', '2026-12-01', '2026-11-30']);
  });

  it('notes the report’s table writes (figures of its run) replace the published notes', () => {
    const withNotes = { ...mine('one', [['z', 9]]), notes: ['from this run'] };
    const { result: next } = publish(result(), { ...good(), tables: [withNotes] });
    expect(next.tables[0]!.notes).toEqual(['from this run']);
  });

  it('a report of every table is the scenario’s command, date and commit', () => {
    const r = { ...good(), tables: [mine('one', [['z', 9]]), mine('two', [['y', '3']])] };
    const { result: next } = publish(result(), r);
    expect([next.command, next.date, next.since, next.commit]).toEqual([
      'npm run bench -- ceiling',
      '2026-12-03',
      undefined,
      good().commit,
    ]);
    expect(next.tables.map((t) => [t.command, t.date])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(resultSchema.safeParse(next).success).toBe(true);
  });

  it('refuses columns that differ, another scenario, no table of the file, a command run by hand', () => {
    const cols = { ...good(), tables: [mine('two', [['y', 1]], ['figure', 'value ms'])] };
    expect(() => publish(result(), cols)).toThrow(
      'table two: the report\'s columns ["figure","value ms"] differ from the published ["figure","value"]',
    );
    const decimals = { ...good(), tables: [mine('one', [['y', 1]], ['figure', 'value'])] };
    expect(() => publish(result(), decimals)).toThrow(/table one: the report's columns/);
    expect(() => publish(result(), { ...good(), scenario: 'memory' })).toThrow(
      'the report is of memory, the result file of ceiling',
    );
    expect(() => publish(result(), good())).toThrow(/the report has no table of bench\/results\/ceiling\.json/);
    const byHand = { ...good(), command: 'node dist/bench/ceiling.js', tables: [mine('two', [['y', '1']])] };
    expect(() => publish(result(), byHand)).toThrow(/is not the runner's/);
    const otherScenario = { ...good(), command: 'npm run bench -- verbs http', tables: [mine('two', [['y', '1']])] };
    expect(() => publish(result(), otherScenario)).toThrow(
      new ReportError(
        'the report\'s command "npm run bench -- verbs http" runs another scenario than its own, ceiling',
      ),
    );
    // Regression (new-user trial): a variant other than the command's, or a start in 2999, was published.
    const table = [mine('two', [['y', '1']])];
    expect(() => publish(result(), { ...good(), command: 'npm run bench -- ceiling pin', tables: table })).toThrow(
      new ReportError(
        'the report\'s command "npm run bench -- ceiling pin" runs variant pin, its variant field says none',
      ),
    );
    expect(() => publish(result(), { ...good(), variant: 'pin', tables: table })).toThrow(
      'runs no variant, its variant field says pin',
    );
    const variant = { ...good(), variant: 'pin', command: 'npm run bench -- ceiling pin --set nodes=5', tables: table };
    expect(publish(result(), variant).replaced).toEqual(['two']);
    const future = { ...good(), startedAt: '2999-01-01T00:00:00.000Z', finishedAt: '2999-01-01T00:30:00.000Z' };
    expect(() => publish(result(), { ...future, tables: table })).toThrow(
      new ReportError('the report starts in the future (2999-01-01T00:00:00.000Z)'),
    );
    // Regression (new-user trial): a report whose runs were emptied by hand replaced the published rows.
    expect(() => publish(result(), { ...good(), runs: [], tables: table })).toThrow(
      new ReportError('the report has no runs: its tables are not of a measurement'),
    );
  });

  // Regression (new-user trial): a result file broken by hand gave a SyntaxError's or a ZodError's stack.
  it('names a result file that is not JSON or not a result file, in place of a stack', () => {
    const root = mkdtempSync(join(tmpdir(), 'publish-'));
    try {
      mkdirSync(join(root, 'bench', 'results'), { recursive: true });
      const reportPath = writeReport({ ...good(), tables: [] }, join(root, 'r.json'), () => {});
      writeFileSync(join(root, 'bench', 'results', 'ceiling.json'), '{broken');
      expect(() => publishFile(reportPath, root)).toThrow(ReportError);
      expect(() => publishFile(reportPath, root)).toThrow(/^bench\/results\/ceiling\.json: Expected property name/);
      writeFileSync(join(root, 'bench', 'results', 'ceiling.json'), '{"scenario": "ceiling"}');
      expect(() => publishFile(reportPath, root)).toThrow(/^bench\/results\/ceiling\.json: not a result file: [^\n]+$/);
      expect(readFileSync(join(root, 'bench', 'results', 'ceiling.json'), 'utf8')).toBe('{"scenario": "ceiling"}');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lays a published file out as the result files are', () => {
    const published = loadResults(ROOT).get('ceiling')!;
    const text = readFileSync(join(ROOT, 'bench', 'results', 'ceiling.json'), 'utf8');
    expect(`${jsonText(published)}\n`).toBe(text);
  });
});
