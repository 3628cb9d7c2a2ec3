/** Option parsers shared by the bench commands (commander's argParser shape), free of the Kubernetes client. */
import { InvalidArgumentError } from 'commander';

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
