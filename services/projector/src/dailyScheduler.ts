import { v7 as uuidv7 } from 'uuid';
import type { Pool } from '@ingest/db';
import { businessDate, previousDate, type DailySnapshotCommand } from '@ingest/domain';
import type { CommandLog } from '@ingest/kafka';
import type { Logger } from '@ingest/runtime';

export interface DailyScheduler {
  /** Appends the commands due now; returns how many (tests and operators). */
  tick(): Promise<number>;
  stop(): void;
}

/**
 * D16: after each business midnight, one `inventory.daily_snapshot` command per shop for the day
 * that just ended. It asks the database which (shop, date) runs exist, so a restart catches up
 * the missed day; several instances may append the same command, and the projector applies a
 * (shop, date) once (agent_runtime.daily_snapshot_runs).
 */
export function startDailyScheduler(deps: {
  pool: Pool;
  commandLog: CommandLog;
  log: Logger;
  timeZone: string;
  intervalMs?: number;
  now?: () => Date;
}): DailyScheduler {
  const now = deps.now ?? (() => new Date());
  const tick = async (): Promise<number> => {
    const date = previousDate(businessDate(now(), deps.timeZone));
    const { rows } = await deps.pool.query<{ shop: string }>(
      `SELECT DISTINCT l.shop FROM sot.inventory_levels l
        WHERE NOT EXISTS (SELECT 1 FROM agent_runtime.daily_snapshot_runs r WHERE r.shop = l.shop AND r.snapshot_date = $1)`,
      [date],
    );
    for (const { shop } of rows) {
      await deps.commandLog.appendCommand({
        command_id: uuidv7(),
        kind: 'inventory.daily_snapshot',
        shop,
        received_at: now().toISOString(),
        source: { endpoint: 'scheduler' },
        payload: { snapshot_date: date },
      } satisfies DailySnapshotCommand);
    }
    if (rows.length) deps.log.info({ snapshot_date: date, shops: rows.length }, 'daily snapshot commands appended');
    return rows.length;
  };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    tick()
      .catch((err: unknown) => deps.log.warn({ err }, 'daily snapshot scheduling failed; will retry'))
      .finally(() => (running = false));
  }, deps.intervalMs ?? 60_000);
  timer.unref();
  return { tick, stop: () => clearInterval(timer) };
}
