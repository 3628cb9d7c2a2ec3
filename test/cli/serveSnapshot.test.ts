/**
 * `serve --snapshot` as a process (the built CLI, dist/src/cli/main.js, which `npm test` builds first), its
 * snapshot file rewritten under it: what it logs, what it answers over HTTP, and how it stops. A process,
 * not serve() in this one, so that a reader that never returns fails this test rather than freezing the runner.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist/src/cli/main.js');
const SNAPSHOT_TEXT = readFileSync(join(ROOT, 'examples/snapshot.json'), 'utf8');
const EXAMPLE_NODES = ['sandbox-node-16', 'sandbox-node-64', 'sandbox-node-192'];

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** A `serve` process and the JSON lines it has logged so far. */
class ServeProcess {
  readonly lines: LogLine[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private partial = '';

  constructor(args: readonly string[]) {
    this.child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      const all = this.partial + text;
      const parts = all.split('\n');
      this.partial = parts.pop()!;
      for (const part of parts) if (part.trim()) this.lines.push(JSON.parse(part) as LogLine);
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** The first line logged with `msg` after the first `after` lines, waiting for it (up to 30 s: a frozen process never logs it). */
  async line(msg: string, after = 0): Promise<LogLine> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const found = this.lines.slice(after).find((l) => l.msg === msg);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no "${msg}" logged within 30 s; logged: ${this.lines.map((l) => l.msg).join(' | ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-extender-serve-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Replaces `path` atomically (a sibling renamed over it), as kubectl > tmp && mv does. */
function replaceFile(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.hrtime.bigint()}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

const filterBody = (uid: string) =>
  JSON.stringify({
    Pod: {
      metadata: { name: uid, namespace: 'default', uid },
      spec: {
        schedulerName: 'sandbox-scheduler',
        containers: [{ name: 'c', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
      },
    },
    NodeNames: EXAMPLE_NODES,
  });

describe('serve --snapshot, the file rewritten under it', () => {
  if (!existsSync(CLI)) {
    it('needs the build', () => {
      throw new Error(`${CLI} does not exist: run \`npm run build\` (\`npm test\` runs it first)`);
    });
    return;
  }

  // Regression (hostile-input trial): a snapshot rewritten 1,000,000 levels deep froze the process for good: no verb,
  // no probe was answered, not even after the file was fixed, and SIGTERM's handler never ran.
  it('a file nested 1,000,000 deep is refused with the file and the limit logged; the last good snapshot is served, a fixed file loaded, and SIGTERM stops it', async () => {
    const path = join(dir, 'snapshot.json');
    writeFileSync(path, SNAPSHOT_TEXT);
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'snapshot: {pollIntervalMs: 50}\nchooseInFilter: false\n');
    const serve = new ServeProcess(['--snapshot', path, '--port', '0', '--config', config]);
    try {
      const url = (await serve.line('sandbox-extender serving')).url as string;
      // The Node objects in the model (a node whose pods stay in the file is still listed, without one).
      const nodesServed = async () =>
        ((await (await fetch(`${url}/debug/nodes`)).json()) as { name: string; hasNode: boolean }[])
          .filter((n) => n.hasNode)
          .map((n) => n.name)
          .sort();
      expect(await nodesServed()).toEqual([...EXAMPLE_NODES].sort());

      const seen = serve.lines.length;
      replaceFile(path, `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`);
      const refused = await serve.line('snapshot not loaded; keeping the previous state', seen);
      expect(refused).toMatchObject({
        level: 50,
        snapshot: path,
        err: `${path}: nests arrays and objects deeper than 100 levels, the most a snapshot may (a Node or a Pod nests about 15); not read`,
      });

      // Still answering, on the last good snapshot.
      expect(await (await fetch(`${url}/readyz`)).text()).toBe('ok');
      const filter = await fetch(`${url}/filter`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: filterBody('after-deep-file'),
      });
      expect(filter.status).toBe(200);
      expect(((await filter.json()) as { NodeNames: string[] }).NodeNames).toEqual(EXAMPLE_NODES);
      expect(await nodesServed()).toEqual([...EXAMPLE_NODES].sort());

      // The file fixed (node-16 gone): loaded.
      const list = JSON.parse(SNAPSHOT_TEXT) as { items: { kind: string; metadata: { name: string } }[] };
      list.items = list.items.filter((i) => !(i.kind === 'Node' && i.metadata.name === 'sandbox-node-16'));
      const beforeFix = serve.lines.length;
      replaceFile(path, JSON.stringify(list));
      expect(await serve.line('snapshot loaded', beforeFix)).toMatchObject({ snapshot: path, nodes: 2 });
      expect(await nodesServed()).toEqual(['sandbox-node-192', 'sandbox-node-64']);

      serve.signal('SIGTERM');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
      expect(serve.lines.at(-1)).toMatchObject({ msg: 'shutting down', signal: 'SIGTERM' });
    } finally {
      serve.kill();
    }
  });
});
