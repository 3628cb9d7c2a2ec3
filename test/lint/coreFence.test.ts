import { ESLint } from 'eslint';

// The placement core must stay pure. This proves the lint fence in eslint.config.js bites:
// each snippet, linted as if it lived in src/core (in each of its folders, at each depth), must be rejected; the same
// code elsewhere is fine. The core's folders point down only: objects ← cache ← fit ← requeue ← decide, text.
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('src/core purity fence', () => {
  it.each([
    ['express', "import express from 'express';\nexport const app = express;\n", 'no-restricted-imports'],
    [
      'the Kubernetes client',
      "import * as k8s from '@kubernetes/client-node';\nexport const k = k8s;\n",
      'no-restricted-imports',
    ],
    ['node:fs', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n", 'no-restricted-imports'],
    ['prom-client', "import { Counter } from 'prom-client';\nexport const c = Counter;\n", 'no-restricted-imports'],
    ['the clock', 'export const now = () => Date.now();\n', 'no-restricted-globals'],
    ['randomness', 'export const r = () => Math.random();\n', 'no-restricted-properties'],
    ['timers', 'export const t = () => setTimeout(() => 0, 1);\n', 'no-restricted-globals'],
    ['the environment', 'export const e = () => process.env.HOME;\n', 'no-restricted-globals'],
  ])(
    'rejects %s in src/core',
    async (_what, code, rule) => {
      for (const file of [
        'src/core/probe.ts',
        'src/core/objects/probe.ts',
        'src/core/fit/probe.ts',
        'src/core/decide/probe.ts',
        'src/core/fit/strategies/probe.ts',
      ]) {
        expect(await ruleIds(code, file)).toContain(rule);
      }
      expect(await ruleIds(code, 'src/server/probe.ts')).not.toContain(rule);
    },
    30_000,
  );

  it.each([
    ['node:fs', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n", 'no-restricted-imports'],
    ['the clock', 'export const now = () => Date.now();\n', 'no-restricted-globals'],
  ])(
    'rejects %s in the pure modules only the CLI uses (candidacy, replay)',
    async (_what, code, rule) => {
      expect(await ruleIds(code, 'src/cli/candidacy.ts')).toContain(rule);
      expect(await ruleIds(code, 'src/cli/replay.ts')).toContain(rule);
      expect(await ruleIds(code, 'src/cli/probe.ts')).not.toContain(rule);
    },
    30_000,
  );
});

describe('the core imports only itself', () => {
  it.each([
    ['../cluster/kubeClient.js', 'src/core/probe.ts'],
    ['../../cluster/kubeClient.js', 'src/core/objects/probe.ts'],
    ['../../server/wire.js', 'src/core/decide/probe.ts'],
    ['../../observability/metrics.js', 'src/core/text/probe.ts'],
    ['../../randomSource.js', 'src/core/fit/probe.ts'],
    ['../../config/schema.js', 'src/core/cache/probe.ts'],
    ['../../runtime/serve.js', 'src/core/requeue/probe.ts'],
    ['../../../cluster/kubeClient.js', 'src/core/fit/strategies/probe.ts'],
    ['../../../randomSource.js', 'src/core/decide/sub/probe.ts'],
  ])(
    'rejects %s from %s',
    async (module, file) => {
      expect(await ruleIds(`import * as m from '${module}';\nexport const x = m;\n`, file)).toContain(
        'no-restricted-imports',
      );
    },
    30_000,
  );

  it('allows its own modules, from a subfolder too', async () => {
    expect(
      await ruleIds("import * as m from './scan.js';\nexport const x = m;\n", 'src/core/fit/probe.ts'),
    ).not.toContain('no-restricted-imports');
    expect(
      await ruleIds("import * as m from '../scan.js';\nexport const x = m;\n", 'src/core/fit/strategies/probe.ts'),
    ).not.toContain('no-restricted-imports');
    expect(
      await ruleIds(
        "import * as m from '../../objects/records.js';\nexport const x = m;\n",
        'src/core/fit/strategies/probe.ts',
      ),
    ).not.toContain('no-restricted-imports');
  }, 30_000);
});

describe('the core’s folders point down only (objects ← cache ← fit ← requeue ← decide, text)', () => {
  const lint = (file: string, module: string) =>
    ruleIds(`import * as m from '${module}';\nexport const x = m;\n`, file);

  it.each([
    ['src/core/objects/probe.ts', '../cache/nodeInfo.js'],
    ['src/core/objects/probe.ts', '../fit/scan.js'],
    ['src/core/objects/probe.ts', '../text/explain.js'],
    ['src/core/cache/probe.ts', '../fit/evaluation.js'],
    ['src/core/cache/probe.ts', '../requeue/rejections.js'],
    ['src/core/cache/probe.ts', '../decide/placementService.js'],
    ['src/core/fit/probe.ts', '../requeue/rejections.js'],
    ['src/core/fit/probe.ts', '../decide/placementService.js'],
    ['src/core/fit/probe.ts', '../text/explain.js'],
    ['src/core/fit/strategies/probe.ts', '../../decide/placementService.js'],
    ['src/core/requeue/probe.ts', '../decide/placementService.js'],
    ['src/core/requeue/probe.ts', '../text/debugView.js'],
  ])(
    '%s may not import %s',
    async (file, module) => {
      expect(await lint(file, module)).toContain('no-restricted-imports');
    },
    30_000,
  );

  it.each([
    ['src/core/cache/probe.ts', '../objects/records.js'],
    ['src/core/fit/probe.ts', '../cache/nodeInfo.js'],
    ['src/core/fit/strategies/probe.ts', '../../cache/nodeInfo.js'],
    ['src/core/requeue/probe.ts', '../fit/evaluation.js'],
    ['src/core/decide/probe.ts', '../requeue/rejections.js'],
    ['src/core/decide/probe.ts', '../text/explain.js'],
    ['src/core/text/probe.ts', '../decide/placementService.js'],
  ])(
    '%s may import %s',
    async (file, module) => {
      expect(await lint(file, module)).not.toContain('no-restricted-imports');
    },
    30_000,
  );

  it('the purity fence still holds where the order is added (the lists are merged, not replaced)', async () => {
    expect(await lint('src/core/objects/probe.ts', 'node:fs')).toContain('no-restricted-imports');
    expect(await lint('src/core/cache/probe.ts', '../../cluster/kubeClient.js')).toContain('no-restricted-imports');
    expect(await lint('src/core/fit/strategies/probe.ts', '../../../server/wire.js')).toContain(
      'no-restricted-imports',
    );
  }, 30_000);
});

describe('layers point down only (core ← config, observability ← snapshot, cluster, server ← runtime ← cli)', () => {
  it.each([
    ['src/cluster/probe.ts', '../server/handlers.js'],
    ['src/cluster/probe.ts', '../runtime/extender.js'],
    ['src/server/probe.ts', '../cluster/kubeClient.js'],
    ['src/server/probe.ts', '../runtime/serve.js'],
    ['src/observability/probe.ts', '../server/app.js'],
    ['src/snapshot/probe.ts', '../cluster/kubeClient.js'],
    ['src/config/probe.ts', '../runtime/extender.js'],
    ['src/runtime/probe.ts', '../cli/main.js'],
  ])(
    '%s may not import %s',
    async (file, module) => {
      expect(await ruleIds(`import * as m from '${module}';\nexport const x = m;\n`, file)).toContain(
        'no-restricted-imports',
      );
    },
    30_000,
  );

  it.each([
    ['src/cluster/probe.ts', '../observability/metrics.js'],
    ['src/server/probe.ts', '../core/objects/binding.js'],
    ['src/runtime/probe.ts', '../cluster/kubeClient.js'],
    ['src/cli/probe.ts', '../runtime/extender.js'],
  ])(
    '%s may import %s',
    async (file, module) => {
      expect(await ruleIds(`import * as m from '${module}';\nexport const x = m;\n`, file)).not.toContain(
        'no-restricted-imports',
      );
    },
    30_000,
  );
});

describe('the scheduler cache’s door: only src/core and the runtime’s wiring import the cache itself', () => {
  const value = (module: string) => `import { SchedulerCache } from '${module}';\nexport const x = SchedulerCache;\n`;
  const typeOnly = (module: string) =>
    `import type { SchedulerCache } from '${module}';\nexport type X = SchedulerCache;\n`;

  it.each([
    ['src/server/probe.ts', '../core/cache/schedulerCache.js'],
    ['src/cli/probe.ts', '../core/cache/schedulerCache.js'],
    ['src/cli/candidacy.ts', '../core/cache/schedulerCache.js'],
    ['src/cluster/probe.ts', '../core/cache/schedulerCache.js'],
    ['src/runtime/sources.ts', '../core/cache/schedulerCache.js'],
    ['src/runtime/extender.ts', '../core/cache/schedulerCache.js'],
    ['src/runtime/serve.ts', '../core/cache/schedulerCache.js'],
    ['src/snapshot/probe.ts', '../core/cache/schedulerCache.js'],
    ['src/observability/probe.ts', '../core/cache/schedulerCache.js'],
    ['src/config/probe.ts', '../core/cache/schedulerCache.js'],
    ['src/probe.ts', './core/cache/schedulerCache.js'],
  ])(
    '%s may not import %s, not even its type (a type is enough to cast the view back)',
    async (file, module) => {
      expect(await ruleIds(value(module), file)).toContain('no-restricted-imports');
      expect(await ruleIds(typeOnly(module), file)).toContain('no-restricted-imports');
    },
    30_000,
  );

  it.each([
    ['src/core/cache/probe.ts', './schedulerCache.js'],
    ['src/core/decide/probe.ts', '../cache/schedulerCache.js'],
    ['src/core/fit/strategies/probe.ts', '../../cache/schedulerCache.js'],
    ['src/runtime/cacheDoors.ts', '../core/cache/schedulerCache.js'],
    ['src/cli/replay.ts', '../core/cache/schedulerCache.js'],
  ])(
    '%s may import %s',
    async (file, module) => {
      expect(await ruleIds(value(module), file)).not.toContain('no-restricted-imports');
    },
    30_000,
  );

  it.each([
    ['src/server/probe.ts', '../core/cache/cacheView.js'],
    ['src/cli/probe.ts', '../core/cache/cacheView.js'],
    ['src/cluster/probe.ts', '../core/cache/sync.js'],
  ])(
    '%s may import the view and the informer side (%s)',
    async (file, module) => {
      expect(await ruleIds(`import * as m from '${module}';\nexport const x = m;\n`, file)).not.toContain(
        'no-restricted-imports',
      );
    },
    30_000,
  );

  it('the layer fences still hold where the door is added (the two lists of restricted imports are merged, not replaced)', async () => {
    expect(
      await ruleIds("import * as m from '../cluster/kubeClient.js';\nexport const x = m;\n", 'src/server/probe.ts'),
    ).toContain('no-restricted-imports');
    expect(
      await ruleIds("import * as m from '../cli/main.js';\nexport const x = m;\n", 'src/runtime/cacheDoors.ts'),
    ).toContain('no-restricted-imports');
  }, 30_000);
});
