/**
 * The published figures (bench/results/*.json) match their schema, and the tables of README.md and
 * docs/benchmarks.md are what bench/results.ts renders from them: a table edited by hand, or a result file changed
 * without `npm run bench:render`, fails here.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  RENDERED_FILES,
  SCENARIOS,
  fillRegions,
  formatDate,
  loadResults,
  regionsOf,
  renderRegion,
  resultSchema,
  type Result,
} from '../../bench/results.js';
import { jsonText } from '../../bench/report.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(`${ROOT}${file}`, 'utf8');

const minimal = (): Result => ({
  scenario: 'cluster',
  command: 'npm run bench -- cluster',
  date: '2026-12-04',
  conditions: {
    machine: '2 shared cores',
    nodes: '1,000',
    pods: '1,000',
    sampling: [
      { side: 'stock', scheduler: 'stock', percentageOfNodesToScore: 'unset' },
      { side: 'sandbox', scheduler: 'sandbox-scheduler', percentageOfNodesToScore: 100 },
    ],
  },
  tables: [
    { id: 't', title: 'T', columns: ['figure', { name: 'sandbox/stock', decimals: 2 }], rows: [['drain', 0.5]] },
  ],
});

describe('the result schema', () => {
  it('accepts a result that names its command, conditions, sampling and date', () => {
    expect(resultSchema.safeParse(minimal()).success).toBe(true);
  });

  it('refuses a row of the wrong width, a ratio whose side has no sampling, an unknown key and a bad date', () => {
    const wide = minimal();
    wide.tables[0]!.rows = [['drain', 0.5, 1]];
    expect(resultSchema.safeParse(wide).success).toBe(false);
    const noSide = minimal();
    noSide.tables[0]!.columns = ['figure', 'sandbox/floor'];
    expect(resultSchema.safeParse(noSide).error?.issues[0]?.message).toBe(
      'the ratio\'s side "floor" has no sampling in conditions.sampling',
    );
    expect(resultSchema.safeParse({ ...minimal(), figures: 1 }).success).toBe(false);
    expect(resultSchema.safeParse({ ...minimal(), date: '4 December' }).success).toBe(false);
  });
});

describe('the rendering', () => {
  it('formats dates and numbers with their column’s decimals; null is a dash', () => {
    expect(formatDate('2026-12-04')).toBe('4 December 2026');
    expect(formatDate('2026-12-04', '2026-12-03')).toBe('3–4 December 2026');
    const r = minimal();
    r.tables[0]!.rows = [
      ['drain', 0.5],
      ['burst', null],
    ];
    const text = renderRegion('cluster/t', new Map([['cluster', r]]));
    expect(text).toContain('| drain | 0.50 |\n| burst | – |');
    expect(text).toContain('sampling: stock as shipped (percentageOfNodesToScore unset), sandbox at 100 %');
  });

  it('fills a region between its markers and leaves the rest alone; a region without its end is an error', () => {
    const results = new Map([['cluster', minimal()]] as const);
    const md = 'before\n<!-- results: cluster/t -->\nstale\n<!-- /results -->\nafter\n';
    const filled = fillRegions(md, new Map(results), 'x.md');
    expect(filled.startsWith('before\n<!-- results: cluster/t -->\n')).toBe(true);
    expect(filled.endsWith('\n<!-- /results -->\nafter\n')).toBe(true);
    expect(fillRegions(filled, new Map(results), 'x.md')).toBe(filled);
    expect(() => regionsOf('<!-- results: cluster -->\n', 'x.md')).toThrow(
      'x.md:1: results region "cluster" has no <!-- /results -->',
    );
  });
});

describe('the published figures', () => {
  const results = loadResults(ROOT);

  it('has one result file per scenario', () => {
    expect([...results.keys()].sort()).toEqual([...SCENARIOS].sort());
  });

  // Regression (new-user trial): publishing into bounds.json also rewrote a table it did not touch, because the file
  // was not laid out as --publish writes it; a diff of a publish should show the figures that changed, nothing else.
  it.each([...SCENARIOS])('bench/results/%s.json is laid out as --publish writes it', (scenario) => {
    const text = read(`bench/results/${scenario}.json`);
    expect(text).toBe(`${jsonText(JSON.parse(text))}\n`);
  });

  it('docs/benchmarks.md shows every scenario, and README.md its measured table from the cluster result', () => {
    expect(
      regionsOf(read('docs/benchmarks.md'), 'docs/benchmarks.md')
        .map((r) => r.name)
        .sort(),
    ).toEqual([...SCENARIOS].sort());
    expect(regionsOf(read('README.md'), 'README.md').map((r) => r.name)).toEqual(['cluster/readme']);
  });

  it.each(RENDERED_FILES)('%s: every results region is what its result file renders', (file) => {
    const stale = regionsOf(read(file), file)
      .filter((region) => region.body !== renderRegion(region.name, results))
      .map(
        (region) =>
          `${file}:${region.line}: the region "${region.name}" differs from bench/results/${region.name.split('/')[0]}.json: run \`npm run bench:render\``,
      );
    expect(stale).toEqual([]);
  });
});
