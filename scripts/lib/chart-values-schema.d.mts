// Types of chart-values-schema.mjs (used by test/chart/*.test.ts).
export declare const CHART_OWNED: {
  readonly root: readonly string[];
  readonly server: readonly string[];
  readonly requeue: readonly string[];
};
export declare const VALUES_SCHEMA_PATH: string;
export declare function chartConfigSchema(configJsonSchema: unknown): Record<string, unknown>;
export declare function withConfigSchema(valuesSchema: unknown, configJsonSchema: unknown): Record<string, unknown>;
export declare function formatSchema(schema: unknown): string;
