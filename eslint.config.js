import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The placement core must stay pure: no I/O, no HTTP, no Kubernetes client, no clock, no randomness.
// Time and random numbers are passed in by the caller (see src/core/README in the module headers).
const impureModules = [
  'express', '@kubernetes/client-node', 'prom-client', 'pino', 'commander', 'yaml', 'zod',
  'node:*', 'fs', 'fs/*', 'http', 'https', 'net', 'path', 'os', 'child_process', 'timers', 'crypto',
  '../server/*', '../cli/*', '../config/*', '../snapshot/*',
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.e2e/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', Buffer: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: impureModules.map((group) => ({ group: [group], message: 'src/core is pure: no I/O, HTTP, Kubernetes client, config parsing or logging here.' })) }],
      'no-restricted-globals': ['error',
        { name: 'Date', message: 'src/core takes `now` (ms) as an argument; no clock of its own.' },
        { name: 'performance', message: 'src/core takes `now` as an argument.' },
        { name: 'setTimeout', message: 'src/core owns no timers.' },
        { name: 'setInterval', message: 'src/core owns no timers.' },
        { name: 'process', message: 'src/core reads no environment.' },
        { name: 'fetch', message: 'src/core does no I/O.' },
      ],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'src/core takes a random source as an argument.' }],
    },
  },
);
