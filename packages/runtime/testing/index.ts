// Test fixtures of the runtime, for tests, benches and scripts (never production code; the import
// rules keep it so): a logger that writes nothing, tracing into memory, and a lint of /metrics.
export { silentLogger } from './silentLogger.ts';
export { startTracingInMemory, type FinishedSpan } from './tracingInMemory.ts';
export { lintExposition, type MetricProblem } from './exposition.ts';
