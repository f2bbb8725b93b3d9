// `npm run test:mutation` (docs/testing.md "Mutation testing"), not part of `npm test`: StrykerJS
// changes the pure deciders and the request validator one small edit at a time (a `<` for a `<=`, a
// condition forced true, a string emptied) and runs their unit tests against each change; a change
// no test notices is a rule of the spec that no test pins.

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'packages/domain/src/**/*.ts',
    '!packages/domain/src/**/*.test.ts',
    // Re-exports only.
    '!packages/domain/src/index.ts',
    'packages/contracts/src/validation.ts',
  ],
  // Only what those files and their tests read is copied into the sandboxes (.data/mutation/tmp).
  ignorePatterns: [
    '/*',
    '!/packages',
    '/packages/*',
    '!/packages/domain',
    '!/packages/contracts',
    '!/schemas',
    '!/package.json',
    '!/tsconfig.base.json',
    '!/tsconfig.mutation.json',
    '!/vitest.mutation.config.ts',
  ],
  // pnpm keeps each plugin beside its own dependencies: they are named, not discovered.
  plugins: ['@stryker-mutator/vitest-runner', '@stryker-mutator/typescript-checker'],
  testRunner: 'vitest',
  // The unit tests of packages/domain and packages/contracts, and only those.
  vitest: { configFile: 'vitest.mutation.config.ts' },
  // A mutant that does not compile is not a test's business: the checker sets it aside.
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.mutation.json',
  // Each mutant runs only the tests that reach it.
  coverageAnalysis: 'perTest',
  // This machine has 2 cores, shared: a checker and a test runner, then two test runners once every
  // mutant is checked. `npm run test:mutation -- --concurrency 1` leaves a core free.
  concurrency: 2,
  tempDirName: '.data/mutation/tmp',
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  // The table of scores per file, and every surviving mutant with its place.
  clearTextReporter: { logTests: false, reportTests: false, allowColor: false },
  htmlReporter: { fileName: '.data/mutation/index.html' },
  jsonReporter: { fileName: '.data/mutation/mutation.json' },
  thresholds: { high: 95, low: 90, break: null },
};
