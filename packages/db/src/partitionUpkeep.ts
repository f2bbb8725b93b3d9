import type pg from 'pg';
import { isDbUnavailable } from './errors.ts';
import { ensureLogPartitions, LOCK_TIMEOUT_MS, UPDATE_LOG_TABLES, type PartitionCreated } from './logPartitions.ts';

export interface PartitionUpkeepLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * The table upkeep's first step each round, in every DB_UPKEEP mode (the partitions are not
 * autovacuum's to make): the update logs' coming months, in the live schemas and in the in-place
 * rebuild's twins (`schemas`). A busy moment (lock_timeout, 55P03) or a login that does not own the
 * tables (42501, warned once) is left for the next round; the default partition holds meanwhile.
 */
export function partitionUpkeep(schemas: readonly string[], log: PartitionUpkeepLog, lockTimeoutMs = LOCK_TIMEOUT_MS) {
  const parents = [...new Set([...UPDATE_LOG_TABLES, ...schemas.flatMap((s) => UPDATE_LOG_TABLES.map((t) => `${s}.${t.split('.')[1]}`))])];
  let warnedNotOwner = false;
  return async (c: pg.Client, now = new Date()): Promise<PartitionCreated[]> => {
    try {
      const created = await ensureLogPartitions(c, { parents, now, lockTimeoutMs });
      for (const p of created) log.info(p, 'update log partition created');
      return created;
    } catch (err) {
      if (isDbUnavailable(err)) throw err;
      const code = (err as { code?: string }).code;
      if (code === '55P03') log.info({ lockTimeoutMs }, 'update log partition not created: its locks were busy; the next round retries');
      else if (code !== '42501') log.warn({ err }, 'update log partitions could not be created; the next round retries');
      else if (!warnedNotOwner) {
        warnedNotOwner = true;
        log.warn({}, "update log partitions need the tables' owner: give the projector the owner as DATABASE_URL");
      }
      return [];
    }
  };
}
