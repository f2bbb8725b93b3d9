import { setImmediate } from 'node:timers/promises';
import type { Pool } from '@ingest/db';
import { auditEvent, type AuditedLog, type LogTable } from '@ingest/domain';
import type { OutgoingMessage } from '@ingest/kafka';

const YIELD_EVERY = 250;

const LOG_TABLES: Record<LogTable, string> = {
  product_update_logs: 'public.product_update_logs',
  inventory_update_logs: 'sot.inventory_update_logs',
  order_line_master_update_logs: 'public.order_line_master_update_logs',
};

/** A stored log row as the audit record carries it (its actor included, D28): timestamps as ISO strings, like the decider wrote them. */
function asRecord(row: Record<string, unknown>): Record<string, unknown> & AuditedLog {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = v instanceof Date ? v.toISOString() : v;
  return out as ReturnType<typeof asRecord>;
}

/**
 * The audit events an audit-batch outbox row stands for: every record of its log table written by
 * its command, in log_seq order, one statement per table for all the batch rows given.
 */
export async function expandAuditBatches(
  pool: Pool,
  batches: Array<{ log_table: LogTable; command_id: string; topic: string }>,
): Promise<Map<string, OutgoingMessage[]>> {
  const out = new Map<string, OutgoingMessage[]>();
  for (const table of Object.keys(LOG_TABLES) as LogTable[]) {
    const mine = batches.filter((b) => b.log_table === table);
    if (mine.length === 0) continue;
    const topics = new Map(mine.map((b) => [b.command_id, b.topic]));
    const ids = [...topics.keys()];
    const { rows } = await pool.query<Record<string, unknown>>(
      `SELECT * FROM ${LOG_TABLES[table]} WHERE command_id = ANY($1::uuid[]) ORDER BY command_id, log_seq`,
      [ids],
    );
    for (let i = 0; i < rows.length; i++) {
      // Built in slices, the event loop free between them: a round of 5,000 records is ~45 ms of
      // work that would otherwise hold every waiting HTTP answer and command of the process.
      if (i > 0 && i % YIELD_EVERY === 0) await setImmediate();
      const e = auditEvent(table, asRecord(rows[i]!));
      const key = `${table}|${e.command_id}`;
      const list = out.get(key) ?? [];
      list.push({ topic: topics.get(e.command_id) ?? '', key: e.key, value: JSON.stringify(e.payload), headers: e.headers });
      out.set(key, list);
    }
  }
  return out;
}
