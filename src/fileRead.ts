/**
 * Reading a whole input file with a size bound: the config, a pod, a snapshot read whole, the TLS files. A
 * character device or a pipe has no size to check first (`/dev/zero` never ends), so the bytes are counted as
 * they are read and the read stops one byte past the bound.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Thrown when a file holds more than the bound its reader allows. */
export class FileTooLargeError extends Error {
  override readonly name = 'FileTooLargeError';
}

/** `bytes` in the largest whole unit (KiB, MiB) it is a multiple of, for messages. */
function formatBytes(bytes: number): string {
  if (bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The whole of the file at `path`, at most `maxBytes` bytes (a regular file's size is checked before reading).
 * @throws FileTooLargeError when it holds more ("larger than N MiB"); the fs error (ENOENT, EACCES, EISDIR …)
 *   when it cannot be opened or read.
 */
export function readFileBounded(path: string, maxBytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const stats = fstatSync(fd);
    const tooLarge = () => new FileTooLargeError(`larger than ${formatBytes(maxBytes)}, the most this file may hold`);
    if (stats.isFile() && stats.size > maxBytes) throw tooLarge();
    const chunks: Buffer[] = [];
    let total = 0;
    const buffer = Buffer.allocUnsafe(Math.min(maxBytes + 1, 1 << 20));
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw tooLarge();
      chunks.push(Buffer.from(buffer.subarray(0, n)));
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** {@link readFileBounded} as UTF-8 text. @throws as readFileBounded does. */
export function readTextBounded(path: string, maxBytes: number): string {
  return readFileBounded(path, maxBytes).toString('utf8');
}

/** The bounds of the files read whole. */
export const MAX_BYTES = {
  /** A config file: a few hundred bytes in practice. */
  config: 1 << 20,
  /** A PEM certificate, key or CA bundle. */
  tls: 1 << 20,
  /** One pod (`rank --pod`): the API server stores at most 1.5 MiB per object; YAML with comments gets room. */
  pod: 16 << 20,
  /** A snapshot read whole (rank, YAML): V8's longest string is ~512 MiB; `serve` streams a JSON one without a bound. */
  snapshot: 500 << 20,
} as const;
