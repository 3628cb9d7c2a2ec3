/**
 * manifests/prometheus-rules.yaml (the chart's PrometheusRule with default values, rendered by
 * scripts/render-manifests.sh; that it is the chart's rendering is checked with helm by test/e2e/helm-check.sh):
 * every extender metric it reads is one the extender exports, its thresholds are the ones derived from the
 * extender's config defaults and the chart's values, and every alert has promtool unit tests
 * (test/alerts/*.test.yaml, run by test/e2e/prometheus.e2e.test.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseConfig } from '../../src/config/load.js';
import { CHART, MANIFESTS, REPO, readYaml, exposedNames } from './chartFiles.js';

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
const file = readYaml<{ groups: { name: string; rules: Rule[] }[] }>(`${MANIFESTS}prometheus-rules.yaml`);
const rules = file.groups.flatMap((g) => g.rules);
const byName = new Map(rules.map((r) => [r.alert, r]));
const values = readYaml<{
  schedulerName: string;
  schedulerExtender: { httpTimeout: string };
  prometheusRule: { alerts: { verbLatency: { timeoutShare: number } } };
}>(`${CHART}values.yaml`);

/** The number an expression compares against at its end (`... > 30`). */
const threshold = (alert: string) => Number(/[<>]=? *([0-9.]+)\s*$/.exec(byName.get(alert)!.expr)?.[1]);

describe('alerting rules (manifests/prometheus-rules.yaml)', () => {
  it('has the alerts an operator must be woken for, each with a severity, a summary and a description', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'SandboxExtenderDown',
      'SandboxExtenderNotSynced',
      'SandboxExtenderModelStale',
      'SandboxExtenderWatchSilent',
      'SandboxExtenderPlacementErrors',
      'SandboxExtenderBindErrors',
      'SandboxExtenderReservationsPilingUp',
      'SandboxExtenderReservationsExpiring',
      'SandboxExtenderVerbSlow',
      'SandboxSchedulerAttemptErrors',
    ]);
    for (const r of rules) {
      expect([r.alert, r.labels.severity]).toEqual([r.alert, expect.stringMatching(/^(critical|warning)$/)]);
      expect(r.annotations.summary).toBeTruthy();
      expect(r.annotations.description).toBeTruthy();
    }
  });

  it('reads only metrics the extender exports, selected by the ServiceMonitor job of the default install', async () => {
    const exposed = await exposedNames();
    const used = rules.flatMap((r) => [...r.expr.matchAll(/\bsandbox_extender_[a-z_]+/g)].map((m) => m[0]));
    expect(used.length).toBeGreaterThan(8);
    expect(used.filter((n) => !exposed.has(n))).toEqual([]);
    for (const r of rules.filter((x) => x.expr.includes('sandbox_extender_') || x.expr.startsWith('up{'))) {
      expect(r.expr).toContain('{job="sandbox-extender-metrics",namespace="kube-system"');
    }
    expect(byName.get('SandboxSchedulerAttemptErrors')!.expr).toContain(`profile="${values.schedulerName}"`);
  });

  it("thresholds: stale past the extender's default watch.maxBrokenSeconds, slow past a share of httpTimeout", () => {
    expect(threshold('SandboxExtenderModelStale')).toBe(parseConfig({}).watch.maxBrokenSeconds);
    const timeoutSeconds = Number(/^(\d+)s$/.exec(values.schedulerExtender.httpTimeout)![1]);
    expect(threshold('SandboxExtenderVerbSlow')).toBe(
      timeoutSeconds * values.prometheusRule.alerts.verbLatency.timeoutShare,
    );
  });

  it('every alert has promtool unit tests', () => {
    const tests = readdirSync(`${REPO}test/alerts`)
      .filter((f) => f.endsWith('.test.yaml'))
      .map((f) => readFileSync(`${REPO}test/alerts/${f}`, 'utf8'))
      .join('\n');
    expect(rules.filter((r) => !new RegExp(`alertname: ${r.alert}[,}\\s]`).test(tests)).map((r) => r.alert)).toEqual(
      [],
    );
  });
});
