// The jest configuration of the mutation run (npm run mutation): the core's own tests, which are the ones
// that must kill mutants of src/core (the HTTP, cluster and CLI tests reach the core only through them).
const tsJest = ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }];
export default {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/core/**/*.test.ts'],
  modulePathIgnorePatterns: ['<rootDir>/.e2e/', '<rootDir>/.e2e-bench/', '<rootDir>/.stryker-tmp/'],
};
