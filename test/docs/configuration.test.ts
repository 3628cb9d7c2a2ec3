/**
 * docs/configuration.md's table against the config schema (src/config/schema.ts): every key of the
 * schema is in the table and every key in the table is in the schema, each with the schema's default.
 * A cell may name several keys of one section, `a.b` / `c` / `a.d` meaning a.b, a.c and a.d; its default
 * cell then has one value per key (or one for all), `unset` where the schema has no default. The "Bounds" table
 * is every numeric setting's range as the schema enforces it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { configJsonSchema } from '../../src/config/load.js';

const DOC = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

interface JsonSchema {
  readonly properties?: Record<string, JsonSchema>;
  readonly default?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly type?: string;
  readonly minimum?: number;
  readonly exclusiveMinimum?: number;
  readonly maximum?: number;
  readonly exclusiveMaximum?: number;
}

/** Every leaf of the schema (a field that is not a section), by dotted path, with its default (undefined: none). */
function schemaLeaves(schema: JsonSchema, prefix = ''): Map<string, unknown> {
  const leaves = new Map<string, unknown>();
  for (const [key, field] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${key}`;
    if (field.properties) for (const [leaf, value] of schemaLeaves(field, `${path}.`)) leaves.set(leaf, value);
    else leaves.set(path, field.default);
  }
  return leaves;
}

/** The table's rows as [key, default as written] per key, shorthands expanded. */
function documentedKeys(): Map<string, string> {
  const keys = new Map<string, string>();
  const table = DOC.slice(DOC.indexOf('| key | default | meaning |'));
  for (const line of table.split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [keyCell, defaultCell] = line.split(' | ').map((c) => c.replace(/^\|\s*/, '').trim());
    const names = keyCell!.split(' / ').map((k) => k.replace(/`/g, ''));
    const section = names[0]!.includes('.') ? names[0]!.slice(0, names[0]!.lastIndexOf('.') + 1) : '';
    const paths = names.map((name) => (name.includes('.') ? name : `${section}${name}`));
    const defaults = defaultCell!.split(' / ');
    if (defaults.length !== 1 && defaults.length !== paths.length)
      throw new Error(`docs/configuration.md: ${keyCell} has ${paths.length} keys but ${defaults.length} defaults`);
    paths.forEach((path, i) => {
      if (keys.has(path)) throw new Error(`docs/configuration.md: ${path} is in the table twice`);
      keys.set(path, (defaults.length === 1 ? defaults[0] : defaults[i])!);
    });
  }
  return keys;
}

/** A default as the table writes it: `unset` (…) for none, else the value in backticks, read as YAML. */
function documentedValue(cell: string): unknown {
  if (/^unset\b/.test(cell)) return undefined;
  const m = /^`([^`]*)`$/.exec(cell.trim());
  if (!m) throw new Error(`docs/configuration.md: a default cell must be \`value\` or unset, got ${cell}`);
  return parseYaml(m[1]!) as unknown;
}

describe('docs/configuration.md: the table is the schema', () => {
  const schema = schemaLeaves(configJsonSchema() as JsonSchema);
  const documented = documentedKeys();

  it('reads a table of the right size (the parser found the rows)', () => {
    expect(documented.size).toBeGreaterThan(30);
    expect(documented.get('startingLimit.perCore')).toBe('unset (off)');
    expect(documented.get('server.tls.keyFile')).toBe('unset');
  });

  it('documents every key of the schema, and no key the schema does not have', () => {
    expect([...documented.keys()].sort()).toEqual([...schema.keys()].sort());
  });

  it('gives each key the schema’s default', () => {
    const mismatches = [...documented].map(([key, cell]) => ({
      key,
      documented: documentedValue(cell),
      schema: schema.get(key),
    }));
    expect(mismatches.filter((m) => JSON.stringify(m.documented) !== JSON.stringify(m.schema))).toEqual([]);
  });
});

/** A numeric setting's range as the Bounds table writes it, e.g. `integer, 0 to 65,535` or `> 0, ≤ 86,400`. */
function rangeText(field: JsonSchema): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const parts: string[] = [];
  if (field.minimum !== undefined && field.maximum !== undefined && field.maximum < Number.MAX_SAFE_INTEGER)
    parts.push(`${n(field.minimum)} to ${n(field.maximum)}`);
  else {
    if (field.minimum !== undefined && field.minimum > Number.MIN_SAFE_INTEGER) parts.push(`≥ ${n(field.minimum)}`);
    if (field.exclusiveMinimum !== undefined) parts.push(`> ${n(field.exclusiveMinimum)}`);
    if (field.maximum !== undefined && field.maximum < Number.MAX_SAFE_INTEGER) parts.push(`≤ ${n(field.maximum)}`);
  }
  if (field.exclusiveMaximum !== undefined) parts.push(`< ${n(field.exclusiveMaximum)}`);
  return [...(field.type === 'integer' ? ['integer'] : []), ...parts].join(', ') || 'any number';
}

/** Every numeric leaf of the schema by dotted path (an optional one is an anyOf in the JSON Schema). */
function numericLeaves(schema: JsonSchema, prefix = ''): [string, JsonSchema][] {
  return Object.entries(schema.properties ?? {}).flatMap(([key, field]): [string, JsonSchema][] => {
    const path = `${prefix}${key}`;
    if (field.properties) return numericLeaves(field, `${path}.`);
    const numeric = [field, ...(field.anyOf ?? [])].find((f) => f.type === 'number' || f.type === 'integer');
    return numeric ? [[path, numeric]] : [];
  });
}

describe('docs/configuration.md: the Bounds table is the schema’s ranges', () => {
  // Regression (new-user trial): the table of settings gave some bounds and not others.
  it('lists every numeric setting with the range start-up enforces', () => {
    const expected = numericLeaves(configJsonSchema() as JsonSchema).map(
      ([path, field]) => `| \`${path}\` | ${rangeText(field)} |`,
    );
    const section = DOC.slice(DOC.indexOf('## Bounds'));
    const rows = section
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .slice(0, expected.length + 5);
    expect(rows).toEqual(expected);
  });
});
