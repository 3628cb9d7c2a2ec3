/**
 * Every documented command that is marked runnable is run, so the docs cannot drift from the code.
 *
 * Markers (an HTML comment on the line before a fenced block; invisible on GitHub; test/docs/runnable.ts):
 *   <!-- runnable -->        run here, in the unit tier (needs only the checkout, `npm ci` and the build that
 *                            `npm test` makes first)
 *   <!-- runnable: e2e -->   run by the e2e tier against its running cluster (test/e2e/docs.e2e.test.ts)
 *   <!-- runnable: install --> run by test/e2e/install.e2e.test.ts on a cluster with real nodes and a registry
 * A block with `$ ` lines is a transcript (each command's stdout is compared with the lines after it, `...`
 * standing for any lines); any other block is a bash script that must exit 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ROOT,
  allRunnableBlocks,
  isRunning,
  matchesTranscript,
  runBlock,
  runnableBlocks,
  stepsOf,
} from './runnable.js';

describe('runnable blocks: the markers and the transcript format', () => {
  it('finds a marked block and its tier; a marker without a block, or of an unknown tier, is an error', () => {
    const md =
      'text\n<!-- runnable -->\n\n```sh\necho hi\n```\n<!-- runnable: e2e -->\n```bash\nkubectl get nodes\n```\n```sh\nnot marked\n```\n<!-- runnable: install -->\n```sh\nhelm install x\n```\n';
    expect(runnableBlocks(md, 'x.md')).toEqual([
      { where: 'x.md:4', tier: 'unit', body: 'echo hi' },
      { where: 'x.md:8', tier: 'e2e', body: 'kubectl get nodes' },
      { where: 'x.md:15', tier: 'install', body: 'helm install x' },
    ]);
    expect(() => runnableBlocks('<!-- runnable -->\nno block here\n', 'y.md')).toThrow(
      'y.md:1: the runnable marker is not followed by a fenced code block',
    );
    expect(() => runnableBlocks('<!-- runnable: someday -->\n```sh\ntrue\n```\n', 'z.md')).toThrow(
      'z.md:1: unknown runnable tier "someday"',
    );
  });

  it('a transcript: commands (with continuations) and their expected output; a script otherwise', () => {
    expect(stepsOf('$ echo a \\\n    b\na b\n$ true\n')).toEqual([
      { command: 'echo a  b', expected: ['a b'] },
      { command: 'true', expected: [] },
    ]);
    expect(stepsOf('# a comment\necho a')).toEqual([{ command: '# a comment\necho a', expected: null }]);
  });

  it('a command ending in ` &` (a comment may follow) is a background step with no expected output', () => {
    expect(stepsOf('$ serve --port 1 &   # in the background\n$ a && b\nout\n$ x 2>&1')).toEqual([
      { command: 'serve --port 1', expected: [], background: true },
      { command: 'a && b', expected: ['out'] },
      { command: 'x 2>&1', expected: [] },
    ]);
    expect(() => stepsOf('$ serve &\nsome output')).toThrow(
      'a background command (ending in " &") has no expected output: serve &',
    );
  });

  it('`...` stands for any number of lines, and only there', () => {
    expect(matchesTranscript(['...', 'last'], ['a', 'b', 'last'])).toBe(true);
    expect(matchesTranscript(['...', 'last'], ['last'])).toBe(true);
    expect(matchesTranscript(['first', '...'], ['first'])).toBe(true);
    expect(matchesTranscript(['...', 'last'], ['a', 'last', 'b'])).toBe(false);
    expect(matchesTranscript(['a', 'b'], ['a', 'c'])).toBe(false);
    expect(matchesTranscript(['a'], ['a', 'b'])).toBe(false);
  });

  it('a block runs in a clean environment from the repository root, and a wrong expectation fails', () => {
    const [ok] = runBlock(
      {
        where: 't',
        tier: 'unit',
        body: '$ echo "$HOME" | grep -c runnable-home-\n1\n$ test -f package.json && echo root\nroot',
      },
      {},
      10_000,
    ).slice(-1);
    expect([ok!.status, ok!.matches]).toEqual([0, true]);
    const [wrong] = runBlock({ where: 't', tier: 'unit', body: '$ echo 2\n3' }, {}, 10_000);
    expect([wrong!.status, wrong!.matches]).toEqual([0, false]);
    const [failing] = runBlock({ where: 't', tier: 'unit', body: 'true\nfalse\necho never' }, {}, 10_000);
    expect([failing!.status, failing!.stdout]).toEqual([1, '']);
  });

  it('a background command runs while the next commands do and is stopped when the block ends, also after a failure', () => {
    const dir = mkdtempSync(join(tmpdir(), 'runnable-bg-'));
    try {
      for (const [last, status] of [
        ['true', 0],
        ['false', 1],
      ] as const) {
        const pidFile = join(dir, `pid-${status}`);
        const body = [
          `$ bash -c 'echo $$ > ${pidFile}; exec sleep 300' &`,
          `$ while [ ! -s ${pidFile} ]; do sleep 0.05; done; kill -0 "$(cat ${pidFile})" && echo alive`,
          'alive',
          `$ ${last}`,
        ].join('\n');
        const results = runBlock({ where: 't', tier: 'unit', body }, {}, 10_000);
        expect(results.map((r) => [r.command, r.status, r.matches])).toEqual([
          [`bash -c 'echo $$ > ${pidFile}; exec sleep 300'`, 0, null],
          [expect.stringContaining('echo alive'), 0, true],
          [last, status, true],
        ]);
        expect(isRunning(Number(readFileSync(pidFile, 'utf8')))).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the extender's default port in a block's commands is replaced by a free one, not in its expected output", () => {
    const [step] = runBlock({ where: 't', tier: 'unit', body: '$ echo "port 8888"\nport 8888' }, {}, 10_000);
    const port = Number(/^port (\d+)$/.exec(step!.stdout.trim())?.[1]);
    expect([Number.isInteger(port) && port > 0 && port !== 8888, step!.command, step!.matches]).toEqual([
      true,
      `echo "port ${port}"`,
      false,
    ]);
  });

  it('a background command that ends before the block does (say its port was taken) fails the block', () => {
    const results = runBlock({ where: 't', tier: 'unit', body: '$ exit 3 &\n$ sleep 0.5' }, {}, 10_000);
    expect(results.map((r) => [r.command, r.status])).toEqual([
      ['exit 3', 0],
      ['sleep 0.5', 0],
      ['exit 3', null],
    ]);
    expect(results[2]!.stderr).toBe('the background command ended before the block did');
  });
});

describe('the runnable blocks of the documentation (unit tier)', () => {
  const blocks = allRunnableBlocks();
  const unit = blocks.filter((b) => b.tier === 'unit');

  it("the README's quick start (the verbs over HTTP, the replay) and its rank example are marked", () => {
    expect(unit.filter((b) => b.where.startsWith('README.md:')).map((b) => b.body.split('\n')[0])).toEqual(
      expect.arrayContaining([
        '$ node bin/sandbox-extender.js serve --snapshot examples/snapshot.json --port 8888 &    # `kill %1` stops it',
        '$ node bin/sandbox-extender.js replay',
        '$ node bin/sandbox-extender.js rank --snapshot examples/snapshot.json --pod examples/pod.json',
      ]),
    );
  });

  it('`npm start` is the build and the serve command of the quick start', () => {
    const start = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts.start;
    expect(start).toBe('npm run build --silent && node dist/src/cli/main.js serve --snapshot examples/snapshot.json');
    // The bin runs the same compiled CLI (after checking it is built).
    expect(readFileSync(join(ROOT, 'bin', 'sandbox-extender.js'), 'utf8')).toContain(
      "new URL('../dist/src/cli/main.js', import.meta.url)",
    );
  });

  it.each(unit.map((b) => [b.where, b] as const))('%s', (_where, block) => {
    const results = runBlock(block);
    for (const r of results) {
      const detail = `$ ${r.command}\n--- exit ${r.status}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
      expect([r.status, r.matches === false ? 'output differs' : 'ok', detail]).toEqual([0, 'ok', detail]);
    }
  });
});
