/* global structuredClone */
// The chart's `extender.config` schema, derived from the extender's own config schema (configJsonSchema(),
// from src/config/schema.ts). Shared by scripts/values-schema.mjs (writes charts/sandbox-extender/values.schema.json)
// and test/chart/valuesSchema.test.ts (checks that file is in sync with the code).

/** Keys the chart sets itself (mode, names, listeners, TLS); a value for them fails at install. */
export const CHART_OWNED = {
  root: ['schedulerName', 'kubeconfig', 'snapshot'],
  server: ['host', 'port', 'tls'],
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
  const server = schema.properties.server;
  for (const key of CHART_OWNED.server) {
    delete server.properties[key];
    if (server.default) delete server.default[key];
  }
  if (Array.isArray(schema.required)) schema.required = schema.required.filter((k) => !CHART_OWNED.root.includes(k));
  if (Array.isArray(server.required)) server.required = server.required.filter((k) => !CHART_OWNED.server.includes(k));
  schema.description =
    "The extender's config file (README: Configuration), generated from src/config/schema.ts by scripts/values-schema.mjs. " +
    `The chart sets ${CHART_OWNED.root.join(', ')} and server.${CHART_OWNED.server.join('/')} itself.`;
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
