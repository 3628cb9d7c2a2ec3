/**
 * The documentation's cross-references resolve: every relative Markdown link of every .md file names a file of the
 * repository and, with a `#fragment`, a heading of it (GitHub's anchors); and wherever a file points at a section
 * of the README in words ("README: Configuration"), the README has that section.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, markdownFiles } from './runnable.js';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | null = null;
  for (const line of markdown.split('\n')) {
    const f = /^(```+|~~~+)/.exec(line);
    if (f) fence = fence === null ? f[1]! : line.startsWith(fence) ? null : fence;
    if (fence !== null || f) continue;
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const text = h[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** The relative links of a Markdown text, outside code: [text](target) with no scheme. */
export function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split('\n')) {
    if (/^(```|~~~)/.test(line)) inFence = !inFence;
    if (inFence) continue;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) if (!/^[a-z]+:/i.test(m[1]!)) out.push(m[1]!);
  }
  return out;
}

describe('anchors and links (the checker itself)', () => {
  it('computes GitHub anchors', () => {
    expect([
      ...headingAnchors(
        '# A b\n## `rank`: where would this pod go?\n```\n# not a heading\n```\n## A b\n### Accounting (`x.e2e.test.ts`)\n',
      ),
    ]).toEqual(['a-b', 'rank-where-would-this-pod-go', 'a-b-1', 'accounting-xe2etestts']);
  });

  it('finds relative links outside code only', () => {
    expect(
      relativeLinks('see [a](docs/a.md#x) and [b](https://e.x) `[c](no.md)`\n```\n[d](no.md)\n```\n[e](../f.md)'),
    ).toEqual(['docs/a.md#x', '../f.md']);
  });
});

describe('the repository documentation', () => {
  const files = markdownFiles();
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    if (!anchorsOf.has(file)) anchorsOf.set(file, headingAnchors(readFileSync(file, 'utf8')));
    return anchorsOf.get(file)!;
  };

  it.each(files.map((f) => [relative(ROOT, f), f] as const))('%s: every relative link resolves', (_name, file) => {
    const broken: string[] = [];
    for (const link of relativeLinks(readFileSync(file, 'utf8'))) {
      const [path, fragment] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(target)) broken.push(`${link}: no such file`);
      else if (
        fragment !== undefined &&
        statSync(target).isFile() &&
        target.endsWith('.md') &&
        !anchors(target).has(fragment)
      )
        broken.push(`${link}: no heading with that anchor in ${relative(ROOT, target)}`);
    }
    expect(broken).toEqual([]);
  });

  it('a section of the README named in words ("README: X") exists', () => {
    const headings = new Set(
      readFileSync(join(ROOT, 'README.md'), 'utf8')
        .split('\n')
        .flatMap((l) => /^#{2,6}\s+(.*)$/.exec(l)?.slice(1) ?? []),
    );
    const skip = new Set(['node_modules', 'dist', '.git', '.e2e', '.e2e-bench', '.stryker-tmp', 'coverage', '.cache']);
    const missing: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!skip.has(entry.name)) walk(path);
        } else if (
          path !== fileURLToPath(import.meta.url) &&
          /\.(ts|mts|mjs|js|json|ya?ml|sh|md|txt|tpl)$|^run$|^Dockerfile$/.test(entry.name) &&
          statSync(path).size < 2_000_000
        ) {
          for (const m of readFileSync(path, 'utf8').matchAll(/README[:,] ([A-Z][\w`'-]*(?: [\w`'-]+)*)/g)) {
            if (![...headings].some((h) => m[1]!.startsWith(h)))
              missing.push(`${relative(ROOT, path)}: README: ${m[1]}`);
          }
        }
      }
    };
    walk(ROOT);
    expect(missing).toEqual([]);
  });
});
