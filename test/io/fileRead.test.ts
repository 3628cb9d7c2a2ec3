/** Bounded whole-file reads (src/fileRead.ts): regular files, a device that never ends, a pipe. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileTooLargeError, readFileBounded, readTextBounded } from '../../src/fileRead.js';
import { thrown } from '../fixtures/thrown.js';

const dir = mkdtempSync(join(tmpdir(), 'file-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readFileBounded', () => {
  it('reads a file of exactly the bound, byte for byte', () => {
    const path = join(dir, 'exact.bin');
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256));
    writeFileSync(path, bytes);
    expect(readFileBounded(path, 3000).equals(bytes)).toBe(true);
  });

  it('refuses a regular file one byte over the bound, saying the bound', () => {
    const path = join(dir, 'over.txt');
    writeFileSync(path, 'x'.repeat(1025));
    expect(thrown(FileTooLargeError, () => readTextBounded(path, 1024)).message).toBe(
      'larger than 1 KiB, the most this file may hold',
    );
  });

  // Regression: `--config /dev/zero` (and --pod, a snapshot read whole) never returned: a device has no size to check.
  it('stops reading a device that never ends one chunk past the bound', () => {
    expect(thrown(FileTooLargeError, () => readFileBounded('/dev/zero', 1 << 20)).message).toBe(
      'larger than 1 MiB, the most this file may hold',
    );
  });

  it('reads a pipe (process substitution) to its end', async () => {
    const fifo = join(dir, 'fifo');
    await new Promise<void>((ok, bad) =>
      spawn('mkfifo', [fifo]).on('close', (code) => (code === 0 ? ok() : bad(new Error(`mkfifo exited ${code}`)))),
    );
    const writer = spawn('sh', ['-c', `printf 'kind: Pod\\n' > ${fifo}`]);
    expect(readTextBounded(fifo, 1024)).toBe('kind: Pod\n');
    await new Promise((ok) => writer.on('close', ok));
  });

  it('passes the fs error of a missing file through', () => {
    expect(() => readFileBounded(join(dir, 'missing'), 10)).toThrow(/ENOENT/);
  });
});
