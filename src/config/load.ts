/**
 * Loading the configuration: YAML file → flag overrides → zod schema → frozen Config.
 * Every problem is reported at once, each with its path, and start-up stops.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { isRecord } from '../core/objects/kubeObjects.js';
import { MAX_BYTES, readTextBounded } from '../fileRead.js';
import { REMOVED_SETTINGS, configSchema, type Config, type ConfigInput } from './schema.js';

/** Thrown when the configuration is invalid; `issues` lists every problem as `path: message`. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly source: string,
    readonly issues: readonly string[],
  ) {
    super(`invalid configuration (${source}):\n${issues.map((i) => `  - ${i}`).join('\n')}`);
  }
}

/**
 * Validates `input` (a parsed YAML document merged with overrides) and returns a frozen Config.
 * @throws ConfigError listing every issue with its path (e.g. `server.port: Too big: expected number to be <=65535`),
 *   a removed setting with what to do instead (REMOVED_SETTINGS).
 */
export function parseConfig(input: unknown, source = 'configuration'): Config {
  const { removed, rest } = splitRemoved(input ?? {});
  const result = configSchema.safeParse(rest);
  const issues = removed.map((key) => `${key}: ${REMOVED_SETTINGS[key]}`);
  if (!result.success)
    issues.push(...result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
  if (!result.success || issues.length > 0) throw new ConfigError(source, issues);
  return deepFreeze(result.data);
}

/** The removed settings `input` sets, and `input` without them (so the schema does not report them again, less clearly). */
function splitRemoved(input: unknown): { removed: string[]; rest: unknown } {
  if (!isRecord(input)) return { removed: [], rest: input };
  const removed = Object.keys(input).filter((key) => Object.hasOwn(REMOVED_SETTINGS, key));
  if (removed.length === 0) return { removed, rest: input };
  return { removed, rest: Object.fromEntries(Object.entries(input).filter(([key]) => !removed.includes(key))) };
}

/**
 * Reads a YAML config file (if given), applies `overrides` on top (flags win), and validates.
 * @throws ConfigError for an unreadable file, invalid YAML or any schema issue.
 */
export function loadConfig(path: string | undefined, overrides: ConfigInput = {}): Config {
  let fromFile: unknown = {};
  if (path) {
    let text: string;
    try {
      text = readTextBounded(path, MAX_BYTES.config);
    } catch (err) {
      throw new ConfigError(path, [`cannot read the file: ${(err as Error).message}`]);
    }
    try {
      fromFile = parseYaml(text) ?? {};
    } catch (err) {
      throw new ConfigError(path, [`not valid YAML: ${(err as Error).message}`]);
    }
    if (typeof fromFile !== 'object' || Array.isArray(fromFile))
      throw new ConfigError(path, ['(root): expected a mapping of settings']);
    // The file on its own first: a flag that overrides a bad value (--port over a bad server.port) must not hide it.
    parseConfig(fromFile, path);
  }
  return parseConfig(merge(fromFile as Record<string, unknown>, overrides as Record<string, unknown>), path ?? 'flags');
}

function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isRecord(current) && isRecord(value) ? merge(current, value) : value;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The JSON Schema of the config file (for editors and, later, the Helm chart's values schema). */
export function configJsonSchema(): unknown {
  return z.toJSONSchema(configSchema, { io: 'input' });
}
