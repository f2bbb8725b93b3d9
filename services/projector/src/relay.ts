import pg from 'pg';
import type { Pool } from '@ingest/db';
import type { MessageSink } from '@ingest/kafka';
import type { LogTable } from '@ingest/domain';
import { Counter, Gauge, type Logger, type Registry } from '@ingest/runtime';
import { expandAuditBatches } from './auditExpansion.ts';

export interface RelayDeps {
  pool: Pool;
  /** For the LISTEN connection and the leader lock (a dedicated session). */
  connectionString: string;
  role?: string;
  sink: MessageSink;
  log: Logger;
  registry: Registry;
  batchSize?: number;
  pollMs?: number;
}

export interface Relay {
  stop(): Promise<void>;
  /** Publishes everything pending now (tests, shutdown). */
  drain(): Promise<number>;
}

const LEADER_LOCK = 0x6f7574626f78; // 'outbox': one relay publishes at a time, others stand by

/**
 * Outbox relay (D5): publishes outbox rows in id order with the idempotent producer, then marks
 * them published. A crash between the two re-sends a row: at least once, never zero times;
 * consumers dedupe by the deterministic event_id.
 */
export async function startRelay(deps: RelayDeps): Promise<Relay> {
  const { pool, sink, log } = deps;
  // Outbox rows per round; an audit batch row may stand for thousands of records.
  const batchSize = deps.batchSize ?? 20;
  const pollMs = deps.pollMs ?? 500;
  const published = new Counter({ name: 'relay_events_published_total', help: 'Outbox events published', registers: [deps.registry] });
  const pendingGauge = new Gauge({ name: 'relay_outbox_pending', help: 'Outbox rows not yet published', registers: [deps.registry] });

  const session = new pg.Client({
    connectionString: deps.connectionString,
    application_name: 'ingest-relay',
    ...(deps.role ? { options: `-c role=${deps.role}` } : {}),
  });
  session.on('error', (err) => log.warn({ err }, 'relay session error'));
  await session.connect();
  await session.query('LISTEN outbox');

  let stopped = false;
  let leader = false;
  let wake: (() => void) | null = null;
  session.on('notification', () => wake?.());

  const publishBatch = async (): Promise<number> => {
    const { rows } = await pool.query<{
      id: number;
      topic: string;
      message_key: string;
      headers: Record<string, string>;
      payload: unknown;
      command_id: string;
      log_table: LogTable | null;
    }>(
      `SELECT id, topic, message_key, headers, payload, command_id, log_table FROM agent_runtime.outbox
        WHERE published_at IS NULL ORDER BY id LIMIT $1`,
      [batchSize],
    );
    if (rows.length === 0) return 0;
    const expanded = await expandAuditBatches(
      pool,
      rows.flatMap((r) => (r.log_table ? [{ log_table: r.log_table, command_id: r.command_id, topic: r.topic }] : [])),
    );
    // Outbox order is publish order; an audit batch becomes its records, in log_seq order.
    const messages = rows.flatMap((r) =>
      r.log_table
        ? (expanded.get(`${r.log_table}|${r.command_id}`) ?? [])
        : [{ topic: r.topic, key: r.message_key, value: JSON.stringify(r.payload), headers: r.headers }],
    );
    if (messages.length) await sink.sendMany(messages);
    await pool.query('UPDATE agent_runtime.outbox SET published_at = now() WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
    published.inc(messages.length);
    return rows.length;
  };

  const drain = async (): Promise<number> => {
    let total = 0;
    for (let n = await publishBatch(); n > 0; n = await publishBatch()) total += n;
    return total;
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      try {
        if (!leader) {
          const r = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [LEADER_LOCK]);
          leader = r.rows[0]?.ok === true;
          if (leader) log.info('outbox relay is the leader');
        }
        if (leader) {
          await drain();
          const p = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL');
          pendingGauge.set(p.rows[0]?.n ?? 0);
        }
      } catch (err) {
        log.warn({ err }, 'outbox relay: publish failed, will retry');
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, leader ? pollMs : pollMs * 4);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      wake = null;
    }
  };
  const running = loop();

  return {
    drain,
    stop: async () => {
      stopped = true;
      wake?.();
      await running;
      await session.end().catch(() => {});
    },
  };
}
