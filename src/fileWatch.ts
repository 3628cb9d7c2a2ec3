/**
 * Watching a file for changes by polling its metadata (so editors' atomic renames, mounted Secrets
 * and files on any filesystem are seen): used for the snapshot file and the TLS certificate files.
 */
import { unwatchFile, watchFile, type Stats } from 'node:fs';

/**
 * Calls `onChange` whenever the file's modification time, size or inode changes, checking every
 * `intervalMs`. Does not keep the process alive. @returns a function that stops watching.
 */
export function watchFileChanges(path: string, intervalMs: number, onChange: () => void): () => void {
  const listener = (current: Stats, previous: Stats) => {
    if (current.mtimeMs !== previous.mtimeMs || current.size !== previous.size || current.ino !== previous.ino)
      onChange();
  };
  watchFile(path, { interval: intervalMs, persistent: false }, listener);
  return () => unwatchFile(path, listener);
}
