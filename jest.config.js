// Two tiers: `unit` (pure core, wire and HTTP edge; milliseconds) and `e2e` (the real control plane).
const tsJest = ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }];
const shared = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
  // The e2e state (etcd's own *.snap files among it) is not part of the project's modules.
  modulePathIgnorePatterns: ['<rootDir>/.e2e/', '<rootDir>/.e2e-bench/', '<rootDir>/.stryker-tmp/'],
};
export default {
  // A generous bound, not a speed check: a loaded, shared machine must not fail a test that would pass (the
  // heavy unit tests, a 10 MB body or a CLI process, take seconds there). e2e tests set their own.
  testTimeout: 60_000,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/test/e2e/'],
    },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
  ],
};
