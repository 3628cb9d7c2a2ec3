/** Option parsers shared by the bench commands (commander's argParser shape), free of the Kubernetes client. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError, type CommanderError } from 'commander';
import { listenHostProblem } from '../src/config/schema.js';
import { milliValue, parseQuantity } from '../src/core/objects/quantity.js';

/**
 * commander's parser of a number for which `ok` holds (a finite number written out: not empty or blank).
 * @throws InvalidArgumentError "expected EXPECTED" otherwise.
 */
function numberWhere(ok: (n: number) => boolean, expected: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (v.trim() === '' || !Number.isFinite(n) || !ok(n)) throw new InvalidArgumentError(`expected ${expected}`);
    return n;
  };
}

/** commander's parser of a positive number. @throws InvalidArgumentError unless `v` is a finite number > 0. */
export const positive = numberWhere((n) => n > 0, 'a number > 0');

/** commander's parser of a number that may be 0. @throws InvalidArgumentError unless `v` is a finite number ≥ 0. */
export const nonNegative = numberWhere((n) => n >= 0, 'a number ≥ 0');

/** commander's parser of a share such as a pressure band: a number 0–1. @throws InvalidArgumentError otherwise. */
export const fraction = numberWhere((n) => n >= 0 && n <= 1, 'a number 0–1');

/** commander's parser of a port option. @throws InvalidArgumentError unless `v` is a TCP port, 1–65535, in decimal digits. */
export function tcpPort(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535)
    throw new InvalidArgumentError('expected a port number 1–65535');
  return Number(v);
}

/** commander's parser of an address to listen on, as serve's --host takes it (listenHostProblem). @throws InvalidArgumentError otherwise. */
export function listenHost(v: string): string {
  const problem = listenHostProblem(v);
  if (problem !== null) throw new InvalidArgumentError(problem);
  return v;
}

/** commander's parser of a percentage. @throws InvalidArgumentError unless `v` is an integer 0–100. */
export function percentage(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 100) throw new InvalidArgumentError('expected an integer 0–100');
  return n;
}

/**
 * A parser of a comma-separated list whose items `item` parses (empty items left out).
 * @throws what `item` throws; InvalidArgumentError when no item is left.
 */
export function listOf<T>(item: (v: string) => T): (v: string) => T[] {
  return (v) => {
    const items = v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (items.length === 0) throw new InvalidArgumentError('expected a comma-separated list of at least one item');
    return items.map(item);
  };
}

/** commander's parser of an integer of at least `min`. @throws InvalidArgumentError otherwise (decimal digits only). */
export function intAtLeast(min: number): (v: string) => number {
  return (v) => {
    if (!/^\d+$/.test(v) || Number(v) < min) throw new InvalidArgumentError(`expected an integer ≥ ${min}`);
    return Number(v);
  };
}

/** commander's parser of a count option. @throws InvalidArgumentError unless `v` is an integer ≥ 1 in decimal digits. */
export const positiveInt = intAtLeast(1);

/** commander's parser of a number above `low` and at most `high`. @throws InvalidArgumentError otherwise. */
export const within = (low: number, high: number): ((v: string) => number) =>
  numberWhere((n) => n > low && n <= high, `a number in (${low}, ${high}]`);

/** A parser that takes one of `allowed`. @throws InvalidArgumentError naming the allowed values. */
export function oneOf<T extends string>(allowed: readonly T[]): (v: string) => T {
  return (v) => {
    if (!(allowed as readonly string[]).includes(v))
      throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}`);
    return v as T;
  };
}

/** commander's parser of a file that must exist; returns its absolute path. @throws InvalidArgumentError when it does not. */
export function existingFile(v: string): string {
  if (!existsSync(v)) throw new InvalidArgumentError(`no such file: ${v}`);
  return resolve(v);
}

/**
 * commander's exitOverride for a bench program: a usage error (an unknown option, a value its parser refuses) exits 2,
 * as the runner's own refusals do; --help exits 0. Commander has printed the message by then.
 */
export function exitOnUsage(err: CommanderError): never {
  process.exit(err.exitCode === 0 ? 0 : 2);
}

/**
 * commander's parser of a request such as `--pod-cpu 250m`: a Kubernetes quantity (parseQuantity, as the API server
 * reads one) above zero; returns it as written. @throws InvalidArgumentError otherwise.
 */
export function quantity(v: string): string {
  let milli: bigint;
  try {
    milli = milliValue(parseQuantity(v));
  } catch {
    throw new InvalidArgumentError('expected a Kubernetes quantity, e.g. 250m or 512Mi');
  }
  if (milli <= 0n) throw new InvalidArgumentError('expected a quantity above 0');
  return v;
}

/**
 * commander's parser of a cluster's nodes in cluster-up.sh's CLUSTER_NODES shorthand, `[COUNTx]CPUS[/MEMORY]`,
 * comma-separated (the rule of test/e2e/cluster-nodes.mjs), e.g. `1000x32/128Gi`. @throws InvalidArgumentError
 * naming the entry at fault.
 */
export function clusterNodes(v: string): string {
  v.split(',').forEach((part, i) => {
    const m = /^\s*(?:(\d+)\s*[x×*]\s*)?(\d+)\s*(?:cpus?)?\s*(?:\/\s*([0-9.]+[A-Za-z]*))?\s*$/.exec(part);
    if (!m || (m[3] !== undefined && !isQuantity(m[3])))
      throw new InvalidArgumentError(`entry ${i + 1} "${part}": expected [COUNTx]CPUS[/MEMORY], e.g. 1000x32/128Gi`);
  });
  return v;
}

function isQuantity(v: string): boolean {
  try {
    parseQuantity(v);
    return true;
  } catch {
    return false;
  }
}

/** commander's parser of a Go duration such as KWOK's ready delay (`5s`, `1m30s`). @throws InvalidArgumentError otherwise. */
export function goDuration(v: string): string {
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(v))
    throw new InvalidArgumentError('expected a Go duration, e.g. 5s or 1m30s');
  return v;
}
