import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The placement core must stay pure: no I/O, no HTTP, no Kubernetes client, no clock, no randomness,
// and nothing of the rest of the extender (it imports only its own modules). Time and random numbers
// are passed in by the caller.
const impureModules = [
  'express',
  '@kubernetes/client-node',
  'prom-client',
  'pino',
  'commander',
  'yaml',
  'zod',
  'node:*',
  'fs',
  'fs/*',
  'http',
  'https',
  'net',
  'path',
  'os',
  'child_process',
  'timers',
  'crypto',
];

// The layers, lowest first; a folder may import only from layers below it (and top-level helpers such as
// ../randomSource.js): core ← config, observability ← snapshot, cluster, server ← runtime ← cli.
const layers = {
  config: ['server', 'cluster', 'runtime', 'cli', 'snapshot', 'observability'],
  observability: ['server', 'cluster', 'runtime', 'cli', 'snapshot', 'config'],
  snapshot: ['server', 'cluster', 'runtime', 'cli', 'observability'],
  cluster: ['server', 'runtime', 'cli', 'snapshot'],
  server: ['cluster', 'runtime', 'cli', 'snapshot'],
  runtime: ['cli'],
  cli: [],
};
const layerPatterns = (folder) =>
  layers[folder].map((other) => ({
    group: [`../${other}/*`],
    message: `src/${folder} must not import src/${other} (layers: core ← config, observability ← snapshot, cluster, server ← runtime ← cli).`,
  }));
// The scheduler cache's door: outside src/core only the runtime's wiring (src/runtime/cacheDoors.ts) imports the cache
// itself (and the CLI's offline replay, src/cli/replay.ts, which fills a cache of its own and never sees the live one). Everyone else reads the read-only view (core/cache/cacheView.ts, PlacementService.cache) and changes it through the
// decision side (PlacementService) or the informer side (core/cache/sync.ts CacheUpdates). Type imports too: a type is
// enough to cast the view back into the cache.
const cacheFence = {
  regex: '(^|/)core/cache/schedulerCache(\\.js)?$',
  message:
    'Only src/core, src/runtime/cacheDoors.ts and the offline replay import the scheduler cache itself: read core/cache/cacheView.ts (PlacementService.cache); change it through the PlacementService (assume, finishBinding, unreserve, sweep) or CacheUpdates (core/cache/sync.ts).',
};
const layerFences = Object.keys(layers).map((folder) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: { 'no-restricted-imports': ['error', { patterns: [...layerPatterns(folder), cacheFence] }] },
}));
const fenceExceptions = [
  {
    files: ['src/runtime/cacheDoors.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: layerPatterns('runtime') }] },
  },
  { files: ['src/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [cacheFence] }] } },
];
// Two pure modules that only the CLI uses (node candidacy, the offline replay) live in src/cli but keep the core's
// purity: no I/O, clock or randomness of their own. The replay may import the cache (its own, see cacheFence).
const cliPureFiles = ['src/cli/candidacy.ts', 'src/cli/replay.ts'];
const cliPureMessage =
  'candidacy.ts and replay.ts are pure like src/core: no I/O, HTTP, Kubernetes client, config parsing or logging.';
const cliPure = [
  {
    files: ['src/cli/candidacy.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [...impureModules.map((group) => ({ group: [group], message: cliPureMessage })), cacheFence] },
      ],
    },
  },
  {
    files: ['src/cli/replay.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: impureModules.map((group) => ({ group: [group], message: cliPureMessage })) },
      ],
    },
  },
];
const coreMessage =
  'src/core is pure: no I/O, HTTP, Kubernetes client, config parsing or logging here, and nothing from outside src/core.';

// The core is one folder a concern, lowest first; a folder imports only its own modules and the folders listed for it:
//   objects  the shapes the core reads and the records it keeps (quantities, requests, template locality)
//   cache    the scheduler cache, its view, NodeInfo, reservations and the informer side's door   ← objects
//   fit      the fit rule, the candidate scan, the Placer and its strategies                      ← objects, cache
//   requeue  the pods rejected for capacity and which to nudge                                    ← objects, cache, fit
//   decide, text  the decisions (PlacementService, replies) and their words (explain, debug view): the top, free to
//            import every folder; they share types both ways (DecisionExplanation, DecisionWindow), so neither is
//            fenced from the other.
// A file's depth decides the patterns: from src/core/F/x.ts, '../G/*' is a sibling folder and '../../*' is outside
// src/core; from src/core/F/sub/x.ts, one more '../' each (coreDepths: folders nested deeper than that need a larger list).
const coreFolders = {
  objects: [],
  cache: ['objects'],
  fit: ['objects', 'cache'],
  requeue: ['objects', 'cache', 'fit'],
};
const coreOrder = 'core folders, lowest first: objects ← cache ← fit ← requeue ← decide, text';
const coreDepths = [1, 2, 3, 4];
const up = (n) => '../'.repeat(n);
// Files `depth` folders below src/core: src/core/*.ts is depth 0.
const coreFiles = (folder, depth) => `src/core/${[folder, ...Array(depth).fill('*')].join('/')}/*.ts`;
const purePatterns = (depth) =>
  [...impureModules, `${up(depth + 1)}*`].map((group) => ({ group: [group], message: coreMessage }));
const orderPatterns = (folder, depth) =>
  Object.keys({ ...coreFolders, decide: 0, text: 0 })
    .filter((other) => other !== folder && !coreFolders[folder].includes(other))
    .map((other) => ({
      group: [`${up(depth)}${other}/*`],
      message: `src/core/${folder} must not import src/core/${other} (${coreOrder}).`,
    }));
const coreFences = [
  { files: ['src/core/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: purePatterns(0) }] } },
  ...coreDepths.map((depth) => ({
    files: [coreFiles('*', depth - 1)],
    rules: { 'no-restricted-imports': ['error', { patterns: purePatterns(depth) }] },
  })),
  ...Object.keys(coreFolders).flatMap((folder) =>
    coreDepths.map((depth) => ({
      files: [coreFiles(folder, depth - 1)],
      rules: {
        'no-restricted-imports': ['error', { patterns: [...purePatterns(depth), ...orderPatterns(folder, depth)] }],
      },
    })),
  ),
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.e2e/', '.e2e-bench/', '.stryker-tmp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  ...layerFences,
  ...fenceExceptions,
  ...cliPure,
  ...coreFences,
  {
    files: ['src/core/**/*.ts', ...cliPureFiles],
    rules: {
      'no-restricted-globals': [
        'error',
        { name: 'Date', message: 'src/core takes `now` (ms) as an argument; no clock of its own.' },
        { name: 'performance', message: 'src/core takes `now` as an argument.' },
        { name: 'setTimeout', message: 'src/core owns no timers.' },
        { name: 'setInterval', message: 'src/core owns no timers.' },
        { name: 'process', message: 'src/core reads no environment.' },
        { name: 'fetch', message: 'src/core does no I/O.' },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: 'src/core takes a random source as an argument.' },
      ],
    },
  },
);
