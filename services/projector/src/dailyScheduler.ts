import { v7 as uuidv7 } from 'uuid';
import { dailySnapshotRuns, type Pool } from '@ingest/db';
import { businessDate, COMMAND_VERSION, PLATFORM_ACTOR, previousDate, type CommandRecord, type DailySnapshotCommand } from '@ingest/domain';
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
 * (shop, date) once (the ledger's dailySnapshotRuns).
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
    const shops = await dailySnapshotRuns.shopsWithoutRun(deps.pool, date);
    for (const shop of shops) {
      await deps.commandLog.appendCommand({
        v: COMMAND_VERSION,
        command_id: uuidv7(),
        kind: 'inventory.daily_snapshot',
        shop,
        received_at: now().toISOString(),
        source: { endpoint: 'scheduler' },
        // D28: no shop's key asked for it; the daily job is the platform's.
        actor: PLATFORM_ACTOR,
        payload: { snapshot_date: date },
      } satisfies CommandRecord<DailySnapshotCommand>);
    }
    if (shops.length) deps.log.info({ snapshot_date: date, shops: shops.length }, 'daily snapshot commands appended');
    return shops.length;
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
