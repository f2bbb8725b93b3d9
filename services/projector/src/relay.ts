import { setImmediate, setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { outbox, relayLease, type Listener, type Pool } from '@ingest/db';
import type { MessageSink, OutgoingMessage } from '@ingest/kafka';
import { auditEvent, withDataschema, type AuditedLog, type LogTable } from '@ingest/domain';
import { failpoint, publicBaseUrl, retry, type Logger, type Registry } from '@ingest/runtime';
import { relayMetrics } from './metrics.ts';

export interface RelayDeps {
  pool: Pool;
  /** For the leader's own session, which holds the lock and does every outbox read and write. */
  connectionString: string;
  role?: string;
  /** The process's LISTEN connection: `outbox` notifications wake the relay. */
  listener: Listener;
  sink: MessageSink;
  log: Logger;
  registry: Registry;
  batchSize?: number;
  /** Most records (Kafka messages) per round, once audit rows are expanded (default 5,000). */
  maxRecords?: number;
  pollMs?: number;
  /**
   * How long a relay that takes the lead over waits after the previous leader's last renewal
   * before publishing: longer than any one publish takes (the sink's send timeout), so the old
   * leader's last batch has ended first.
   */
  fenceMs?: number;
  /**
   * PUBLIC_BASE_URL: every published CloudEvent names its data's schema in
   * `ce_dataschema`, `<base>/schemas/events/...`, which the gateway serves. Default: the default base.
   */
  publicBaseUrl?: string;
  /** How often the leader counts the backlog and reads its oldest row's age (default 5 s). */
  countEveryMs?: number;
}

export interface Relay {
  stop(): Promise<void>;
  /** Publishes everything pending now (tests, shutdown); nothing when this relay is not the leader. */
  drain(): Promise<number>;
  isLeader(): boolean;
}

/**
 * Messages per produce request. kafkajs encodes a request synchronously, about 25 µs a message with
 * our CloudEvents headers: 1,000 held the event loop, and with it every waiting HTTP answer and
 * command of the process, for 25 ms at a time (B7's quiet answers); 200 hold it for about 5 ms. But
 * each request's acknowledgement is waited for before the next (one in flight keeps the order):
 * 5,000 messages went out at 10,200–13,700 a second in slices of 200 against 13,200–17,800 in
 * slices of 1,000 (alternating, one broker). So small slices while the relay keeps up, where the
 * latency of the process's other work matters, and large ones once a round finds a backlog.
 */
const BACKLOG_MESSAGES = 2000;
const sendSlice = (roundMessages: number): number => (roundMessages > BACKLOG_MESSAGES ? 1000 : 200);
const LEADER_LOCK = 0x6f7574626f78; // "outbox" in ASCII: one relay publishes at a time, others stand by

interface OutboxRow extends outbox.PendingRow {
  log_table: LogTable | null;
}

/**
 * Outbox relay (D5): publishes outbox rows in id order with the idempotent producer, then marks
 * them published. A crash between the two re-sends a row: at least once, never zero times;
 * consumers dedupe by the deterministic event_id.
 *
 * One publisher at a time, through outages (docs/operations.md "Faults and outages"): leadership
 * is a session advisory lock on a dedicated connection. Every batch starts by renewing the lease
 * on that very session, so a leader whose session is gone (and with it the lock) cannot start
 * another batch; losing the session drops the lead at once. A new leader waits out the fence
 * after the old leader's last renewal. Rows leave in id order from one publisher, so a level's
 * stock events keep `seq` order.
 */
export async function startRelay(deps: RelayDeps): Promise<Relay> {
  const { pool, sink, log } = deps;
  // Outbox rows per round; an audit batch row may stand for thousands of records.
  const batchSize = deps.batchSize ?? 20;
  const maxRecords = deps.maxRecords ?? 5000;
  const pollMs = deps.pollMs ?? 500;
  const fenceMs = deps.fenceMs ?? 15_000;
  const me = `relay-${randomUUID().slice(0, 8)}`;
  const schemaBase = `${deps.publicBaseUrl ?? publicBaseUrl({})}/schemas`;
  const metrics = relayMetrics(deps.registry);
  const { published, pending: pendingGauge, leader: leaderGauge } = metrics;
  // The backlog is counted at most this often (a count over a large backlog is not free).
  const countEveryMs = deps.countEveryMs ?? 5000;
  let countedAt = -Infinity;

  let session: pg.Client | null = null;
  let leader = false;
  const stopping = new AbortController();
  let wake: (() => void) | null = null;

  const setLeader = (v: boolean): void => {
    if (leader !== v) log.info({ relay: me }, v ? 'outbox relay is the leader' : 'outbox relay lost the lead');
    leader = v;
    leaderGauge.set(v ? 1 : 0);
    if (!v) metrics.setOldest(null);
    countedAt = -Infinity;
  };
  const dropSession = (c: pg.Client, err: unknown): void => {
    if (session !== c) return;
    session = null;
    setLeader(false); // the lock went with the session: stop at once
    log.warn({ err }, 'relay session lost');
    void c.end().catch(() => {});
  };
  const openSession = async (): Promise<pg.Client> => {
    const c = new pg.Client({
      connectionString: deps.connectionString,
      application_name: 'ingest-relay',
      keepAlive: true,
      connectionTimeoutMillis: 5000,
      ...(deps.role ? { options: `-c role=${deps.role}` } : {}),
    });
    c.on('error', (err) => dropSession(c, err));
    c.on('end', () => dropSession(c, new Error('relay session ended')));
    session = c;
    try {
      await c.connect();
    } catch (err) {
      dropSession(c, err);
      throw err;
    }
    return c;
  };

  /** Takes the lead if it is free; then waits out the fence after the previous holder's last renewal. */
  const tryLead = async (s: pg.Client): Promise<void> => {
    const r = await s.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [LEADER_LOCK]);
    if (r.rows[0]?.ok !== true) return;
    const prev = await relayLease.fence(s, fenceMs);
    const wait = prev && prev.holder !== me ? prev.wait_ms : 0;
    if (wait > 0) {
      log.info({ previous: prev?.holder, waitMs: wait }, 'outbox relay waits out the fence before publishing');
      await sleep(wait);
    }
    if (session === s && !stopping.signal.aborted) setLeader(true);
  };

  const publishBatch = async (): Promise<number> => {
    const s = session;
    if (!leader || !s) return 0;
    // Renewed on the locked session itself: if this succeeds the session, and so the lock, is ours.
    await relayLease.renew(s, me);
    const rows = await outbox.readPending<OutboxRow>(s, batchSize);
    if (rows.length === 0) return 0;
    const expanded = await expandAuditBatches(
      pool,
      rows.flatMap((r) => (r.log_table ? [{ log_table: r.log_table, command_id: r.command_id, topic: r.topic }] : [])),
    );
    // Outbox order is publish order; an audit batch becomes its records, in log_seq order. A round
    // is bounded by records, not rows (one audit row may stand for 10,000 records): the rows whose
    // records fit, and always at least one.
    // An audit batch row's own headers are its command's trace context (CloudEvents distributed
    // tracing, packages/projection applyCommand.ts eventTraceHeaders): every record it stands for carries it.
    const messagesOf = (r: OutboxRow) =>
      r.log_table
        ? (expanded.get(`${r.log_table}|${r.command_id}`) ?? []).map((m) => ({ ...m, headers: { ...m.headers, ...r.headers } }))
        : [{ topic: r.topic, key: r.message_key, value: JSON.stringify(r.payload), headers: r.headers }];
    // Added on the way out, not stored: the outbox rows (and so replays) do not depend on the deployment's URL.
    const described = (m: OutgoingMessage): OutgoingMessage => ({ ...m, headers: withDataschema(m.headers ?? {}, schemaBase) });
    const taken: OutboxRow[] = [];
    const messages = [];
    for (const r of rows) {
      const mine = messagesOf(r);
      if (taken.length > 0 && messages.length + mine.length > maxRecords) break;
      taken.push(r);
      messages.push(...mine.map(described));
    }
    if (!leader || session !== s) return 0; // lost the session while reading: the new leader sends these
    // Sent in slices, each acknowledged before the next (one request in flight keeps the order).
    const slice = sendSlice(messages.length);
    for (let i = 0; i < messages.length; i += slice) {
      const sent = metrics.publishSeconds.startTimer();
      await sink.sendMany(messages.slice(i, i + slice));
      sent();
    }
    await failpoint('relay.after-publish-before-mark');
    const ids = taken.map((r) => r.id);
    await outbox.markPublished(s, ids);
    published.inc(messages.length);
    return taken.length;
  };

  const drain = async (): Promise<number> => {
    let total = 0;
    for (let n = await publishBatch(); n > 0; n = await publishBatch()) total += n;
    return total;
  };

  /** One round: (re)connect, try to lead, publish what is pending and, now and then, count the backlog. */
  const round = async (): Promise<void> => {
    const s = session ?? (await openSession());
    if (!leader) await tryLead(s);
    if (!leader) return;
    // Counted even when publishing fails (Kafka down): that is when the backlog's age matters.
    let failed: { err: unknown } | null = null;
    await drain().catch((err: unknown) => {
      failed = { err };
    });
    if (performance.now() - countedAt >= countEveryMs) {
      const p = await outbox.backlog(s);
      countedAt = performance.now();
      pendingGauge.set(p.n);
      if (leader) metrics.setOldest(p.age === null ? null : Math.max(0, p.age));
    }
    if (failed) throw (failed as { err: unknown }).err;
  };

  /** Waits `ms`, or until an `outbox` notification or stop() ends the wait. */
  const nap = async (ms: number): Promise<void> => {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    wake = null;
  };

  const loop = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      try {
        await retry(round, {
          classify: () => 'round',
          // Backs off while rounds fail (database or broker down), up to 10 s.
          backoff: (failures) => Math.min(10_000, pollMs * 2 ** Math.min(failures, 5)),
          signal: stopping.signal,
          onRetry: ({ err, attempt }) => {
            if (attempt % 20 === 1) log.warn({ err, attempt }, 'outbox relay: round failed, will retry');
          },
          wait: nap,
        });
      } catch {
        break; // stopped while rounds failed
      }
      if (stopping.signal.aborted) break;
      await nap(leader ? pollMs : pollMs * 4);
    }
  };
  const unsubscribe = deps.listener.subscribe(outbox.CHANNEL, () => wake?.());
  const running = loop();

  return {
    drain,
    isLeader: () => leader,
    stop: async () => {
      stopping.abort();
      unsubscribe();
      wake?.();
      await running;
      const s = session;
      // A graceful stop hands over at once: no batch of ours is in flight, so no fence to wait out.
      if (leader && s) await relayLease.handOver(s, me).catch(() => {});
      setLeader(false);
      session = null;
      await s?.end().catch(() => {});
    },
  };
}

// --- Audit batches: one outbox row per command and log table, expanded into its records here ---

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
