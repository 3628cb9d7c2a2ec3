/**
 * Runnable blocks of the documentation: a fenced code block whose line before (blank lines between allowed) is
 * the HTML comment `<!-- runnable -->` (run by the unit tier, test/docs/runnable.test.ts) or
 * `<!-- runnable: e2e -->` (run by the e2e tier against the running cluster, test/e2e/docs.e2e.test.ts) or
 * `<!-- runnable: install -->` (run by test/e2e/install.e2e.test.ts on a cluster of its own with real nodes, with a
 * container engine and a loopback registry, every `REGISTRY` replaced by that registry's address: how users install).
 * The comment renders as nothing on GitHub. Two kinds of block:
 *
 * - a transcript: lines starting with `$ ` are commands (a trailing `\` continues one on the next line), the lines
 *   after each are its expected stdout, compared line by line without trailing blanks; a line `...` stands for
 *   any number of lines. Each command must exit 0. A command ending in ` &` (a `# comment` may follow) is started
 *   in the background, as a shell would: its output is discarded, nothing is expected after it, and it is stopped
 *   (SIGTERM to its process group, SIGKILL after 5 s) when the block ends, whatever the outcome. The commands
 *   after it wait for it themselves (e.g. `curl --retry-connrefused`), as a reader would.
 * - a script: no `$ ` line; the whole block runs with `bash -euo pipefail` and must exit 0 (its output is not
 *   compared; `#` comments are comments).
 *
 * Blocks run from the repository root, in an environment with only PATH, LANG and a fresh empty HOME (plus what
 * the tier adds, e.g. the cluster's KUBECONFIG), so they cannot lean on the writer's shell. A block that uses the
 * extender's default port 8888 runs with a port that was free a moment before instead (every `8888` in its
 * commands, not in the expected output, is replaced), so that runs on one machine at once do not meet on it; its
 * `serve` must therefore name the port (`--port 8888`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export type Tier = 'unit' | 'e2e' | 'install';

export interface RunnableBlock {
  /** path:line of the opening fence, relative to the repository root */
  readonly where: string;
  readonly tier: Tier;
  readonly body: string;
}

const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', '.e2e', '.e2e-bench', '.stryker-tmp', 'coverage']);

/** Every Markdown file of the repository (README.md, docs/**, the READMEs of subfolders), sorted. */
export function markdownFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...markdownFiles(join(dir, entry.name)));
    } else if (entry.name.endsWith('.md')) out.push(join(dir, entry.name));
  }
  return out.sort();
}

/**
 * The runnable blocks of one Markdown text. @throws when a marker is not followed by a fenced block or names an
 * unknown tier (a marker that silently runs nothing would defeat the point).
 */
export function runnableBlocks(text: string, file: string): RunnableBlock[] {
  const lines = text.split('\n');
  const blocks: RunnableBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!--\s*runnable(?::\s*([a-z0-9]+))?\s*-->\s*$/.exec(lines[i]!);
    if (!marker) continue;
    const tier = marker[1] ?? 'unit';
    if (tier !== 'unit' && tier !== 'e2e' && tier !== 'install')
      throw new Error(`${file}:${i + 1}: unknown runnable tier "${tier}" (unit, e2e or install)`);
    let open = i + 1;
    while (open < lines.length && lines[open]!.trim() === '') open++;
    const fence = /^(```+)[\w-]*\s*$/.exec(lines[open] ?? '');
    if (!fence) throw new Error(`${file}:${i + 1}: the runnable marker is not followed by a fenced code block`);
    let close = open + 1;
    while (close < lines.length && lines[close] !== fence[1]) close++;
    if (close >= lines.length) throw new Error(`${file}:${open + 1}: the fenced block is not closed`);
    blocks.push({ where: `${file}:${open + 1}`, tier, body: lines.slice(open + 1, close).join('\n') });
    i = close;
  }
  return blocks;
}

/** Every runnable block of the repository's Markdown files. */
export function allRunnableBlocks(): RunnableBlock[] {
  return markdownFiles().flatMap((f) => runnableBlocks(readFileSync(f, 'utf8'), relative(ROOT, f)));
}

export interface Step {
  readonly command: string;
  /** null: a script (no output compared) */
  readonly expected: readonly string[] | null;
  /** true: a transcript command ending in ` &`, started in the background (`command` without the `&`) */
  readonly background?: true;
}

/** A transcript command ending in ` &`, optionally followed by a `# comment`: the command before the `&`. */
const BACKGROUND = /^(.*?\S)\s+&\s*(?:#[^'"]*)?$/;

/** A block as its steps: the commands of a transcript with their expected output, or the one script. */
export function stepsOf(body: string): Step[] {
  const lines = body.split('\n');
  if (!lines.some((l) => l.startsWith('$ '))) return [{ command: body, expected: null }];
  if (!lines[0]!.startsWith('$ '))
    throw new Error(`a transcript must start with a "$ " command line, not: ${lines[0]}`);
  const steps: { command: string; expected: string[] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('$ ')) {
      let command = line.slice(2);
      while (command.endsWith('\\') && i + 1 < lines.length) command = `${command.slice(0, -1)} ${lines[++i]!.trim()}`;
      steps.push({ command, expected: [] });
    } else steps.at(-1)!.expected.push(line);
  }
  return steps.map((s) => {
    const expected = trimEnd(s.expected);
    const background = BACKGROUND.exec(s.command);
    if (!background || s.command.endsWith('&&')) return { command: s.command, expected };
    if (expected.length > 0)
      throw new Error(`a background command (ending in " &") has no expected output: ${s.command}`);
    return { command: background[1]!, expected, background: true };
  });
}

function trimEnd(lines: readonly string[]): string[] {
  const out = lines.map((l) => l.trimEnd());
  while (out.length > 0 && out.at(-1) === '') out.pop();
  return out;
}

/** Whether `actual` matches `expected`, where an expected line `...` matches any number of lines. */
export function matchesTranscript(expected: readonly string[], actual: readonly string[]): boolean {
  const go = (e: number, a: number): boolean => {
    if (e === expected.length) return a === actual.length;
    if (expected[e] === '...') {
      for (let k = a; k <= actual.length; k++) if (go(e + 1, k)) return true;
      return false;
    }
    return a < actual.length && expected[e] === actual[a] && go(e + 1, a + 1);
  };
  return go(0, 0);
}

export interface StepResult {
  /** the command run: as written, a background one without its `&`, the port 8888 replaced (see the header) */
  readonly command: string;
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** null for a script or a background command */
  readonly matches: boolean | null;
}

/**
 * Runs the steps of a block from the repository root in a clean environment (see the header), in order, up to the
 * first that fails; then stops what the block started in the background. A background command that ended by
 * itself before that (say its port was taken) is a failed step of its own, added at the end: the commands after it
 * may have been answered by someone else. (One that fails only after the block's last command is not seen.)
 */
export function runBlock(block: RunnableBlock, extraEnv: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): StepResult[] {
  const home = mkdtempSync(join(tmpdir(), 'runnable-home-'));
  const background: { pid: number; command: string }[] = [];
  const results: StepResult[] = [];
  const port = block.body.includes(DEFAULT_PORT) ? String(freePort()) : DEFAULT_PORT;
  try {
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: home, ...extraEnv };
    for (const written of stepsOf(block.body)) {
      const step = { ...written, command: written.command.replaceAll(DEFAULT_PORT, port) };
      if (step.background) {
        // Its own process group (detached), so that stopping it stops what it started too.
        const child = spawn('bash', ['-euo', 'pipefail', '-c', step.command], {
          cwd: ROOT,
          env,
          stdio: 'ignore',
          detached: true,
        });
        child.unref();
        if (child.pid !== undefined) background.push({ pid: child.pid, command: step.command });
        results.push({
          command: step.command,
          status: child.pid === undefined ? null : 0,
          stdout: '',
          stderr: '',
          matches: null,
        });
        if (child.pid === undefined) break;
        continue;
      }
      const r = spawnSync('bash', ['-euo', 'pipefail', '-c', step.command], {
        cwd: ROOT,
        env,
        encoding: 'utf8',
        timeout: timeoutMs,
      });
      const matches = step.expected === null ? null : matchesTranscript(step.expected, trimEnd(r.stdout.split('\n')));
      results.push({ command: step.command, status: r.status, stdout: r.stdout, stderr: r.stderr, matches });
      if (r.status !== 0 || matches === false) break;
    }
  } finally {
    for (const { pid, command } of background) {
      const endedEarly = !isRunning(pid);
      stopGroup(pid);
      if (endedEarly)
        results.push({
          command,
          status: null,
          stdout: '',
          stderr: 'the background command ended before the block did',
          matches: null,
        });
    }
    rmSync(home, { recursive: true, force: true });
  }
  return results;
}

/** The extender's default port (src/config/schema.ts), which blocks running a server are written with. */
const DEFAULT_PORT = '8888';

/** A loopback TCP port that is free now (the kernel's pick for port 0, asked of a child process). */
export function freePort(): number {
  const script =
    "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });";
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const port = Number(r.stdout.trim());
  if (r.status !== 0 || !Number.isInteger(port) || port <= 0) throw new Error(`no free port: ${r.stderr}`);
  return port;
}

/** Whether process `pid` still runs (a zombie, which this process reaps later, does not). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true; // no /proc: kill(0) is all there is
  }
}

/** SIGTERM to the process group led by `pid`, then waits up to 5 s for the leader to end, then SIGKILL. */
function stopGroup(pid: number): void {
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  for (let i = 0; i < 50 && isRunning(pid); i++) spawnSync('sleep', ['0.1']);
  signal('SIGKILL');
}
