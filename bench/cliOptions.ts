/** Option parsers shared by the bench commands (commander's argParser shape), free of the Kubernetes client. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError, type CommanderError } from 'commander';

/** commander's parser of a count option. @throws InvalidArgumentError unless `v` is an integer ≥ 1. */
export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected an integer ≥ 1');
  return n;
}

/** commander's parser of a positive number. @throws InvalidArgumentError unless `v` is a finite number > 0. */
export function positive(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a number > 0');
  return n;
}

/** commander's parser of a number that may be 0. @throws InvalidArgumentError unless `v` is a finite number ≥ 0. */
export function nonNegative(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('expected a number ≥ 0');
  return n;
}

/** commander's parser of a port option. @throws InvalidArgumentError unless `v` is a TCP port, 1–65535, in decimal digits. */
export function tcpPort(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535)
    throw new InvalidArgumentError('expected a port number 1–65535');
  return Number(v);
}

/** commander's parser of a percentage. @throws InvalidArgumentError unless `v` is an integer 0–100. */
export function percentage(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 100) throw new InvalidArgumentError('expected an integer 0–100');
  return n;
}

/** A parser of a comma-separated list whose items `item` parses (empty items left out). @throws what `item` throws. */
export function listOf<T>(item: (v: string) => T): (v: string) => T[] {
  return (v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map(item);
}

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
