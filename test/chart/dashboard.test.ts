/**
 * The Grafana dashboard (charts/sandbox-extender/dashboards/sandbox-extender.json): valid JSON, and every
 * query uses only metric names the extender defines (src/observability/metrics.ts), so a renamed metric fails here.
 * That every query returns data from a real Prometheus is test/e2e/prometheus.e2e.test.ts.
 */
import { CHART, readText, exposedNames } from './chartFiles.js';

interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { uid?: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; refId: string }[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: unknown; definition?: string }[] };
}

const dashboard = JSON.parse(readText(`${CHART}dashboards/sandbox-extender.json`)) as Dashboard;
const queries = [
  ...dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ where: `panel "${p.title}" ${t.refId}`, expr: t.expr })),
  ),
  ...dashboard.templating.list
    .filter((v) => v.definition)
    .map((v) => ({ where: `variable ${v.name}`, expr: v.definition! })),
];

describe('Grafana dashboard', () => {
  it('is a dashboard with unique panel ids and a Prometheus data-source variable', () => {
    expect(dashboard.uid).toBe('sandbox-extender');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(expect.arrayContaining(['datasource', 'namespace']));
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) expect(p.datasource?.uid).toBe('${datasource}');
  });

  it('shows placement decisions, latency per verb and per-node pressure', () => {
    const all = queries.map((q) => q.expr).join('\n');
    expect(all).toMatch(/sandbox_extender_placements_total/);
    expect(all).toMatch(
      /histogram_quantile\(0\.99, sum by \(verb, le\) \(rate\(sandbox_extender_http_request_duration_seconds_bucket/,
    );
    expect(all).toMatch(/max by \(node\) \(sandbox_extender_node_pressure_ratio/);
  });

  it("shows kube-scheduler's scheduling SLI of the profile, from the jobs that schedule for it", () => {
    const all = queries.map((q) => q.expr).join('\n');
    expect(all).toMatch(
      /histogram_quantile\(0\.99, sum by \(le\) \(rate\(scheduler_pod_scheduling_sli_duration_seconds_bucket\{job=~"\$scheduler_job"\}/,
    );
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.get('profile')).toMatchObject({ type: 'textbox', query: 'sandbox-scheduler' });
    expect(vars.get('scheduler_job')?.definition).toBe(
      'label_values(scheduler_schedule_attempts_total{profile="$profile"}, job)',
    );
  });

  it('queries only metrics the extender defines', async () => {
    const exposed = await exposedNames();
    const unknown = queries.flatMap((q) =>
      [...q.expr.matchAll(/\bsandbox_extender_[a-z_]+/g)]
        .map((m) => m[0])
        .filter((n) => !exposed.has(n))
        .map((n) => `${q.where}: ${n}`),
    );
    expect(queries.length).toBeGreaterThan(10);
    expect(unknown).toEqual([]);
  });

  it('lays panels out without overlaps on the 24-column grid', () => {
    const cells = new Map<string, string>();
    const overlaps: string[] = [];
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          const key = `${x},${y}`;
          if (cells.has(key)) overlaps.push(`${p.title} / ${cells.get(key)}`);
          cells.set(key, p.title);
        }
      }
    }
    expect([...new Set(overlaps)]).toEqual([]);
  });
});
