/**
 * docs/metrics.md's table against the extender's registry (src/observability/metrics.ts): every metric
 * the extender registers (the process metrics apart) has a row, every row names a registered metric, each row
 * names the metric's labels, and every label value exported at 0 from the start (binds by result, reservations
 * released by reason, pods nudged and requeue writes by result, placements by locality) is in its row.
 */
import { readFileSync } from 'node:fs';
import { Metrics } from '../../src/observability/metrics.js';

const DOC = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');

/** The table's rows: metric name → the rest of the row (its labels and what it says). */
function documentedRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of DOC.split('\n')) {
    const row = /^\| `(sandbox_extender_[a-z_]+)`[^|]*\|(.*)\|\s*$/.exec(line);
    if (row) rows.set(row[1]!, row[2]!);
  }
  return rows;
}

interface Registered {
  readonly name: string;
  readonly labels: readonly string[];
  /** Label values of the series present before anything happened, by label name. */
  readonly values: ReadonlyMap<string, ReadonlySet<string>>;
}

async function registered(): Promise<Registered[]> {
  const metrics = new Metrics(() => 0, { defaultMetrics: false });
  const out: Registered[] = [];
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    const labels = new Set<string>();
    const values = new Map<string, Set<string>>();
    for (const series of metric.values) {
      for (const [label, value] of Object.entries(series.labels)) {
        if (label === 'le') continue; // a histogram's buckets
        labels.add(label);
        if (!values.has(label)) values.set(label, new Set());
        values.get(label)!.add(String(value));
      }
    }
    // Label names declared but with no series yet (e.g. verb, code) come from the metric's own definition.
    const declared =
      (metrics.registry.getSingleMetric(metric.name) as unknown as { labelNames?: readonly string[] }).labelNames ?? [];
    for (const label of declared) labels.add(label);
    out.push({ name: metric.name, labels: [...labels].sort(), values });
  }
  return out;
}

describe('docs/metrics.md against the registry', () => {
  it('lists every metric the extender registers, and no other', async () => {
    const names = (await registered()).map((m) => m.name).sort();
    expect([...documentedRows().keys()].sort()).toEqual(names);
  });

  it("names each metric's labels in its row", async () => {
    const rows = documentedRows();
    const missing = (await registered()).flatMap((m) =>
      m.labels.filter((label) => !rows.get(m.name)?.includes(`\`${label}\``)).map((label) => `${m.name}: ${label}`),
    );
    expect(missing).toEqual([]);
  });

  it('names every label value exported from the start (e.g. binds_total does_not_fit, the requeue results)', async () => {
    const rows = documentedRows();
    const missing: string[] = [];
    for (const m of await registered()) {
      for (const [label, values] of m.values)
        for (const value of values)
          if (!new RegExp(`\\b${value}\\b`).test(rows.get(m.name) ?? ''))
            missing.push(`${m.name}{${label}="${value}"}`);
    }
    expect(missing).toEqual([]);
    // The check reads what it should: the bind results and the requeue metrics are among the rows it compared.
    const binds = (await registered()).find((m) => m.name === 'sandbox_extender_binds_total')!;
    expect([...binds.values.get('result')!]).toContain('does_not_fit');
    expect([...rows.keys()]).toEqual(
      expect.arrayContaining([
        'sandbox_extender_requeue_writes_total',
        'sandbox_extender_rejected_pods',
        'sandbox_extender_rejected_pods_dropped_total',
      ]),
    );
  });
});
