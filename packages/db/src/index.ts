export {
  createPool,
  withTransaction,
  LIVE_SEARCH_PATH,
  PREPARED_PER_SESSION,
  PLAN_WITH_VALUES_FROM_LINES,
  querySized,
  type Pool,
  type PoolClient,
  type PoolOptions,
  type Queryable,
} from './pool.ts';
export { migrate, ensureDatabase, createDatabaseFromTemplate, dropDatabase, withDatabase, MIGRATIONS_DIR } from './migrate.ts';
export { classifyDbError, isDbUnavailable, isDbTransient, type DbFailureKind } from './errors.ts';
export { createListener, type Listener, type ListenerOptions } from './listener.ts';
export { startTableUpkeep, UPKEEP_LOCK, type TableUpkeep, type TableUpkeepOptions, type UpkeepDone } from './tableUpkeep.ts';
export {
  ensureLogPartitions,
  listLogPartitions,
  monthStart,
  partitionName,
  PARTITIONS_AHEAD,
  LOCK_TIMEOUT_MS,
  UPDATE_LOG_TABLES,
  type LogPartition,
  type PartitionCreated,
} from './logPartitions.ts';
export {
  upkeepDue,
  autovacuumCovers,
  AUTOVACUUM_DEFAULTS,
  type UpkeepMode,
  type UpkeepAction,
  type TableCounters,
  type AutovacuumSettings,
} from './upkeepDue.ts';
// The ledger: the only code that names agent_runtime's tables (ledger/index.ts).
export * from './ledger/index.ts';
