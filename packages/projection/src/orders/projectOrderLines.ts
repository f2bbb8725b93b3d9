import { readFileSync } from 'node:fs';
import type { PoolClient } from '@ingest/db';
import { auditBatch, decideOrderLines, type OrderLinesUpsertCommand } from '@ingest/domain';
import type { Projection } from '../projection.ts';
import { insertOrderLineLogs, loadOrderLinesState, upsertOrderLines } from './orderLinesStore.ts';

/** D23: the order-lines projector's package version. */
export const ADAPTER_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;

/** load -> decide -> apply for endpoint 6; a dry run reads the same state and writes nothing (D22). */
export async function projectOrderLines(tx: PoolClient, c: OrderLinesUpsertCommand): Promise<Projection> {
  const state = await loadOrderLinesState(tx, c.shop, c.payload.rows);
  const plan = decideOrderLines(state, c, ADAPTER_VERSION);
  await upsertOrderLines(tx, plan.upserts, c.command_id);
  await insertOrderLineLogs(tx, plan.logs, c.actor);
  return { reply: plan.reply, events: plan.logs.length ? [auditBatch('order_line_master_update_logs', c.command_id, c.shop)] : [] };
}
