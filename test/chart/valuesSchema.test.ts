/**
 * The chart's values.schema.json and values: extender.config is the extender's own config schema (what
 * scripts/values-schema.mjs writes), and every extender config the chart ships parses with parseConfig.
 */
import { readdirSync } from 'node:fs';
import { configJsonSchema, parseConfig } from '../../src/config/load.js';
import {
  CHART_OWNED,
  chartConfigSchema,
  formatSchema,
  withConfigSchema,
} from '../../scripts/lib/chart-values-schema.mjs';
import { CHART, REPO, readText, readYaml } from './chartFiles.js';

interface Values {
  mode: string;
  schedulerName: string;
  scheduler: { percentageOfNodesToScore: number };
  extender: { port: number; config: Record<string, unknown> };
}

const schemaText = readText(`${CHART}values.schema.json`);
const values = readYaml<Values>(`${CHART}values.yaml`);
const ciFiles = readdirSync(`${CHART}ci`).filter((f) => f.endsWith('-values.yaml'));

/**
 * What the chart renders into the config file: the values' extender.config plus the keys it owns (in scheduler mode
 * also kubeScheduler.percentageOfNodesToScore, the profile's; test/e2e/helm-check.sh checks the real rendering).
 */
function renderedConfig(
  config: Record<string, unknown>,
  schedulerName: string,
  port: number,
  percentageOfNodesToScore?: number,
): unknown {
  const owned = percentageOfNodesToScore === undefined ? {} : { kubeScheduler: { percentageOfNodesToScore } };
  return {
    ...config,
    schedulerName,
    server: { ...(config.server as object | undefined), host: '127.0.0.1', port },
    ...owned,
  };
}

describe('values.schema.json', () => {
  it('holds the extender config schema generated from src/config/schema.ts (node scripts/values-schema.mjs after npm run build)', () => {
    const expected = formatSchema(withConfigSchema(JSON.parse(schemaText), configJsonSchema()));
    expect(schemaText).toBe(expected);
  });

  it('leaves out exactly the keys the chart sets, and those keys exist in the extender schema', () => {
    const full = configJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }> };
    const chart = chartConfigSchema(full) as {
      properties: Record<string, { properties?: Record<string, unknown> }>;
      additionalProperties: boolean;
    };
    for (const key of CHART_OWNED.root) {
      expect(full.properties).toHaveProperty([key]);
      expect(chart.properties).not.toHaveProperty([key]);
    }
    for (const group of ['server', 'requeue'] as const) {
      for (const key of CHART_OWNED[group]) {
        expect(full.properties[group]!.properties).toHaveProperty([key]);
        expect(chart.properties[group]!.properties).not.toHaveProperty([key]);
      }
    }
    expect(Object.keys(chart.properties).sort()).toEqual(
      Object.keys(full.properties)
        .filter((k) => !CHART_OWNED.root.includes(k))
        .sort(),
    );
    expect(chart.additionalProperties).toBe(false);
  });

  it('keeps kubeScheduler.percentageOfNodesToScore, 0–100: extender mode sets it to the user’s kube-scheduler’s (scheduler mode refuses it at render)', () => {
    const chart = chartConfigSchema(configJsonSchema()) as {
      properties: Record<string, { properties?: Record<string, unknown> }>;
    };
    expect(chart.properties.kubeScheduler!.properties!.percentageOfNodesToScore).toEqual({
      default: 100,
      type: 'integer',
      minimum: 0,
      maximum: 100,
    });
  });
});

describe('the extender config the chart renders', () => {
  it("parses with the default values, to the documented defaults: the extender's, with template locality on (ADR 0009)", () => {
    const config = parseConfig(
      renderedConfig(
        values.extender.config,
        values.schedulerName,
        values.extender.port,
        values.scheduler.percentageOfNodesToScore,
      ),
    );
    const defaults = parseConfig({});
    expect(config).toEqual({
      ...defaults,
      server: { ...defaults.server, port: values.extender.port },
      locality: { ...defaults.locality, enabled: true },
    });
    // The profile's 100 is the extender's default: every node searched, never a sampled window.
    expect(values.scheduler.percentageOfNodesToScore).toBe(defaults.kubeScheduler.percentageOfNodesToScore);
    expect(values.schedulerName).toBe(defaults.schedulerName);
    expect(values.mode).toBe('scheduler');
  });

  it.each(ciFiles)('parses with ci/%s', (file) => {
    const ci = readYaml<Partial<Values>>(`${CHART}ci/${file}`);
    const config = { ...values.extender.config, ...(ci.extender?.config ?? {}) };
    const percentage =
      (ci.mode ?? values.mode) === 'scheduler'
        ? (ci.scheduler?.percentageOfNodesToScore ?? values.scheduler.percentageOfNodesToScore)
        : undefined;
    expect(() =>
      parseConfig(
        renderedConfig(config, ci.schedulerName ?? values.schedulerName, values.extender.port, percentage),
        `ci/${file}`,
      ),
    ).not.toThrow();
  });
});

describe('Chart.yaml', () => {
  it('has the extender version as appVersion (the default image tag)', () => {
    const chart = readYaml<{ appVersion: string; apiVersion: string }>(`${CHART}Chart.yaml`);
    const pkg = JSON.parse(readText(`${REPO}package.json`)) as { version: string };
    expect(chart.apiVersion).toBe('v2');
    expect(chart.appVersion).toBe(pkg.version);
  });
});
