export { createPool, withTransaction, LIVE_SEARCH_PATH, type Pool, type PoolClient, type PoolOptions } from './pool.ts';
export { migrate, ensureDatabase, createDatabaseFromTemplate, dropDatabase, withDatabase, MIGRATIONS_DIR } from './migrate.ts';
export { classifyDbError, isDbUnavailable, isDbTransient, type DbFailureKind } from './errors.ts';
export { createListener, type Listener, type ListenerOptions } from './listener.ts';
