/**
 * The `rank` example of docs/cli.md is the command's real output, line for line (the command writes no trailing blanks).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/load.js';
import { rankCommand } from '../../src/cli/commands.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

describe('docs/cli.md rank example', () => {
  const block =
    [...page.matchAll(/```\n\$ node bin\/sandbox-extender\.js rank ([\s\S]*?)```/g)].map((m) => m[1]!)[0] ?? '';
  const [command, ...output] = block
    .replace(/\\\n\s*/g, '')
    .trimEnd()
    .split('\n');
  const args = command!.trim().split(/\s+/);
  const values = (flag: string) => args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));

  it('names two snapshot files and a pod file', () => {
    expect(values('--snapshot')).toEqual([
      'test/fixtures/lists/kubectl-get-nodes.json',
      'test/fixtures/lists/kubectl-get-pods-all-namespaces.json',
    ]);
    expect(values('--pod')).toEqual(['examples/pod.json']);
  });

  it('shows exactly what the command prints', () => {
    const actual = rankCommand(
      parseConfig({}),
      values('--snapshot').map((p) => ROOT + p),
      ROOT + values('--pod')[0]!,
    );
    expect(output).toEqual(actual.split('\n'));
  });

  it('the GPU excerpt is the head of that command’s output', () => {
    const excerpt =
      [...page.matchAll(/gets these lines\nabove its table, and only `dgx-h100-07` fits:\n\n```\n([\s\S]*?)```/g)].map(
        (m) => m[1]!,
      )[0] ?? '';
    const actual = rankCommand(
      parseConfig({}),
      values('--snapshot').map((p) => ROOT + p),
      ROOT + 'test/fixtures/pods/gpu-nvidia-hugepages.json',
    ).split('\n');
    const lines = excerpt.trimEnd().split('\n');
    expect(lines).toEqual(actual.slice(1, 1 + lines.length));
    expect(actual.filter((l) => /^\d+ +\S+ +yes /.test(l)).map((l) => l.split(/ +/)[1])).toEqual(['dgx-h100-07']);
  });
});
