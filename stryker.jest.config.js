// The jest configuration of the mutation run (npm run mutation): the core's own tests, which are the ones
// that must kill mutants of src/core (the HTTP, cluster and CLI tests reach the core only through them), and the
// tests of the two pure modules only the CLI uses (src/cli/candidacy.ts, replay.ts), mutated with the core.
const tsJest = ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }];
export default {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
  testMatch: [
    '<rootDir>/test/core/**/*.test.ts',
    '<rootDir>/test/cli/candidacy.test.ts',
    '<rootDir>/test/cli/replay.test.ts',
  ],
  modulePathIgnorePatterns: ['<rootDir>/.e2e/', '<rootDir>/.e2e-bench/', '<rootDir>/.stryker-tmp/'],
};
