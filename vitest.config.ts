import { defineConfig } from 'vitest/config';

// Tiers are visible in file names (STYLE.md): *.unit.test.ts are pure and fast; *.int.test.ts talk
// to the real Kafka broker and the real PostgreSQL, which tests/support/globalSetup.ts provides.
export default defineConfig({
  test: {
    // `npm test` runs the unit tier with coverage (scripts/test.ts): the pure deciders are the
    // specification, so packages/domain is held to a floor.
    coverage: {
      provider: 'v8',
      include: ['packages/domain/src/**/*.ts'],
      exclude: ['**/*.test.ts'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: '.data/coverage',
      thresholds: { lines: 90, branches: 90, functions: 75, statements: 90 },
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'packages/**/*.unit.test.ts',
            'services/**/*.unit.test.ts',
            'tests/deploy/**/*.unit.test.ts',
            'tests/docs/**/*.unit.test.ts',
            'bench/**/*.unit.test.ts',
          ],
          environment: 'node',
          // The files of a worker share one module graph instead of importing express, ajv, kafkajs,
          // pg and OpenTelemetry again for each file: that import was 16 of the tier's 53 s (30 % of its
          // CPU). It holds because unit tests keep no state between files: no module mocks, no env
          // changes, and the two that set process-wide state (failpoints, tracing) undo it in
          // afterEach/afterAll.
          isolate: false,
          // Three workers on two cores: a third of the tier's time is tests waiting on timers (body
          // deadlines, resend windows, lingering closes) and child processes, which one worker (the
          // default here, CPUs - 1) ran one after the other: 28 s, against 12 s with three.
          maxWorkers: 3,
          // A few unit tests do seconds of real work the first time (the OpenAPI linter loading its
          // rules, two Node processes filling their heaps): on a slow day of this two-core machine
          // with three workers, fresh clones saw both pass vitest's default 5 s. A hang still fails.
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['tests/integration/**/*.int.test.ts', 'packages/*/src/**/*.int.test.ts'],
          environment: 'node',
          globalSetup: ['tests/support/globalSetup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Files mostly wait on Kafka and PostgreSQL (a run uses ~50 s of CPU in ~2 min on 2 cores):
          // four at a time overlap those waits.
          maxWorkers: 4,
          // As in the unit tier, a worker's files share one module graph: importing the gateway,
          // projector, kafkajs, pg and OpenTelemetry again for each of 43 files was 36 of the
          // tier's 80 s of CPU, taken from the steps that run beside it. Files keep no state
          // between them: each starts and stops its own pipeline on a database of its own, and
          // the one that installs a tracer removes it (it passed with the files shuffled).
          isolate: false,
        },
      },
      {
        // `npm run test:cluster`: tests that start brokers of their own (a SASL_SSL broker takes
        // 20-40 s to start on this 2-core machine, more than `npm test`'s budget allows).
        test: {
          name: 'cluster',
          include: ['tests/cluster/**/*.cluster.test.ts'],
          environment: 'node',
          globalSetup: ['tests/support/globalSetup.ts'],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          maxWorkers: 1,
        },
      },
    ],
  },
});
