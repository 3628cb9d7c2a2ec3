import { ESLint } from 'eslint';

// The placement core must stay pure. This proves the lint fence in eslint.config.js bites:
// each snippet, linted as if it lived in src/core, must be rejected; the same code elsewhere is fine.
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('src/core purity fence', () => {
  it.each([
    ['express', "import express from 'express';\nexport const app = express;\n", 'no-restricted-imports'],
    ['the Kubernetes client', "import * as k8s from '@kubernetes/client-node';\nexport const k = k8s;\n", 'no-restricted-imports'],
    ['node:fs', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n", 'no-restricted-imports'],
    ['prom-client', "import { Counter } from 'prom-client';\nexport const c = Counter;\n", 'no-restricted-imports'],
    ['the clock', 'export const now = () => Date.now();\n', 'no-restricted-globals'],
    ['randomness', 'export const r = () => Math.random();\n', 'no-restricted-properties'],
    ['timers', 'export const t = () => setTimeout(() => 0, 1);\n', 'no-restricted-globals'],
    ['the environment', 'export const e = () => process.env.HOME;\n', 'no-restricted-globals'],
  ])('rejects %s in src/core', async (_what, code, rule) => {
    expect(await ruleIds(code, 'src/core/probe.ts')).toContain(rule);
    expect(await ruleIds(code, 'src/server/probe.ts')).not.toContain(rule);
  }, 30_000);
});
