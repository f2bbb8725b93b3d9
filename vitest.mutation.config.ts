import { defineConfig } from 'vitest/config';

// `npm run test:mutation` (stryker.config.mjs): the unit tests of the code it mutates, the pure
// deciders of packages/domain and the request validator of packages/contracts, and nothing else
// (the gateway's unit tests also import the deciders, but a rule is to be pinned at the lowest tier).
export default defineConfig({
  test: {
    include: ['packages/domain/src/**/*.unit.test.ts', 'packages/contracts/src/**/*.unit.test.ts'],
    environment: 'node',
  },
});
