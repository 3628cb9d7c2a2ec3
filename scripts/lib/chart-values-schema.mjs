/* global structuredClone */
// The chart's `extender.config` schema, derived from the extender's own config schema (configJsonSchema(),
// from src/config/schema.ts). Shared by scripts/values-schema.mjs (writes charts/sandbox-extender/values.schema.json)
// and test/chart/valuesSchema.test.ts (checks that file is in sync with the code).

/** Keys the chart sets itself (mode, names, listeners, TLS); a value for them fails at install. */
export const CHART_OWNED = {
  root: ['schedulerName', 'kubeconfig', 'snapshot'],
  server: ['host', 'port', 'tls'],
  // The requeue object the chart creates (templates/requeue.yaml).
  requeue: ['namespace', 'name'],
};

export const VALUES_SCHEMA_PATH = 'charts/sandbox-extender/values.schema.json';

/**
 * configJsonSchema() minus its $schema (it is embedded in the values schema) and minus the chart-owned keys.
 * @param {any} configJsonSchema the extender's JSON Schema, io: 'input'
 */
export function chartConfigSchema(configJsonSchema) {
  const schema = structuredClone(configJsonSchema);
  delete schema.$schema;
  for (const key of CHART_OWNED.root) delete schema.properties[key];
  for (const group of ['server', 'requeue']) {
    const sub = schema.properties[group];
    for (const key of CHART_OWNED[group]) {
      delete sub.properties[key];
      if (sub.default) delete sub.default[key];
    }
    if (Array.isArray(sub.required)) sub.required = sub.required.filter((k) => !CHART_OWNED[group].includes(k));
  }
  if (Array.isArray(schema.required)) schema.required = schema.required.filter((k) => !CHART_OWNED.root.includes(k));
  schema.description =
    "The extender's config file (docs/configuration.md), generated from src/config/schema.ts by scripts/values-schema.mjs. " +
    `The chart sets ${CHART_OWNED.root.join(', ')}, server.${CHART_OWNED.server.join('/')} and requeue.${CHART_OWNED.requeue.join('/')} itself.`;
  return schema;
}

/**
 * The whole values schema with its extender.config replaced by chartConfigSchema(configJsonSchema).
 * @param {any} valuesSchema the parsed values.schema.json
 * @param {any} configJsonSchema
 */
export function withConfigSchema(valuesSchema, configJsonSchema) {
  const out = structuredClone(valuesSchema);
  const extender = out?.properties?.extender;
  if (!extender?.properties) throw new Error(`${VALUES_SCHEMA_PATH} has no properties.extender.properties`);
  extender.properties.config = chartConfigSchema(configJsonSchema);
  return out;
}

/** The file's text: two-space JSON and a final newline. */
export function formatSchema(schema) {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
