import pg from 'pg';
import { isDbUnavailable } from './errors.ts';
import { partitionUpkeep } from './partitionUpkeep.ts';
import { LIVE_SEARCH_PATH } from './pool.ts';
import { upkeepDue, type AutovacuumSettings, type TableCounters, type UpkeepAction, type UpkeepMode } from './upkeepDue.ts';

export interface UpkeepLog {
  debug?(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface TableUpkeepOptions {
  /** The tables' owner must be able to act: VACUUM and ANALYZE are the owner's (no SET ROLE here). */
  connectionString: string;
  mode: UpkeepMode;
  intervalMs: number;
  log: UpkeepLog;
  /** Schemas whose tables are looked after (default: the data model's, and the in-place rebuild's). */
  schemas?: string[];
  /** Called after each action (metrics), and with every table's dead and live rows after each look. */
  onAction?: (table: string, action: UpkeepAction, seconds: number) => void;
  onLook?: (rows: Map<string, { dead: number; live: number }>) => void;
  /** Throttling (default: the server's autovacuum cost delay and vacuum_cost_limit); tests slow a VACUUM down with it. */
  throttle?: { costDelayMs: number; costLimit: number };
  /** Seconds a table waits after its last VACUUM / ANALYZE (default: the server's autovacuum_naptime); tests use 0. */
  naptimeS?: number;
  /** How often a running VACUUM / ANALYZE checks whether it blocks another session (default 500 ms). */
  yieldCheckMs?: number;
  /** How long attaching an update log's partition may wait for its locks (default 250 ms, LOCK_TIMEOUT_MS of logPartitions.ts). */
  partitionLockTimeoutMs?: number;
}

export interface UpkeepDone {
  table: string;
  /** `create_partition`: an update log's month attached ahead (logPartitions.ts), in every mode. */
  action: UpkeepAction | 'create_partition';
  ms: number;
  /** Cancelled because another session waited for a lock it held (the table is looked at again next round). */
  yielded?: true;
}

export interface TableUpkeep {
  /** One look now (tests, operators): what was due and done. Nothing when another process holds the upkeep. */
  runOnce(): Promise<UpkeepDone[]>;
  stop(): Promise<void>;
}

export const UPKEEP_LOCK = 0x7570_6b65_6570; // 'upkeep': one process per database at a time

interface Row {
  schema: string;
  name: string;
  reltuples: number;
  mods: number;
  dead: number;
  live: number;
  inserts: number;
  since_upkeep_s: number | null;
  av_enabled: string | null;
  can_act: boolean;
}

const COUNTERS_SQL = `
SELECT s.schemaname AS schema, s.relname AS name, c.reltuples::float8 AS reltuples,
       s.n_mod_since_analyze::float8 AS mods, s.n_dead_tup::float8 AS dead, s.n_live_tup::float8 AS live, s.n_ins_since_vacuum::float8 AS inserts,
       EXTRACT(epoch FROM now() - GREATEST(s.last_vacuum, s.last_autovacuum, s.last_analyze, s.last_autoanalyze))::float8 AS since_upkeep_s,
       (SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o WHERE o LIKE 'autovacuum_enabled=%') AS av_enabled,
       pg_has_role(current_user, c.relowner, 'USAGE') AS can_act
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
 WHERE s.schemaname = ANY($1::text[])
 ORDER BY s.n_dead_tup DESC, s.n_mod_since_analyze DESC, s.schemaname, s.relname`; // the most bloated first

const SETTINGS_SQL = `
SELECT current_setting('autovacuum') = 'on' AS autovacuum,
       current_setting('autovacuum_vacuum_threshold')::float8 AS vt,
       current_setting('autovacuum_vacuum_scale_factor')::float8 AS vs,
       current_setting('autovacuum_vacuum_insert_threshold')::float8 AS it,
       current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS "is",
       current_setting('autovacuum_analyze_threshold')::float8 AS at,
       current_setting('autovacuum_analyze_scale_factor')::float8 AS "as",
       EXTRACT(epoch FROM current_setting('autovacuum_naptime')::interval)::float8 AS naptime,
       CASE WHEN current_setting('autovacuum_vacuum_cost_delay') = '-1' THEN current_setting('vacuum_cost_delay')
            ELSE current_setting('autovacuum_vacuum_cost_delay') END AS cost_delay,
       CASE WHEN current_setting('autovacuum_vacuum_cost_limit') = '-1' THEN current_setting('vacuum_cost_limit')
            ELSE current_setting('autovacuum_vacuum_cost_limit') END AS cost_limit`;

const STATEMENTS: Record<UpkeepAction, string> = {
  vacuum_analyze: 'VACUUM (ANALYZE, SKIP_LOCKED)',
  vacuum: 'VACUUM (SKIP_LOCKED)',
  analyze: 'ANALYZE (SKIP_LOCKED)',
};

const quoteIdent = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** A client of the upkeep's own: TCP keepalive finds a peer that went silent (a network fault) in the middle of a long VACUUM. */
const upkeepClient = (connectionString: string, applicationName: string): pg.Client => {
  const c = new pg.Client({
    connectionString,
    application_name: applicationName,
    connectionTimeoutMillis: 5000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  c.on('error', () => {}); // the query in flight rejects on its own
  return c;
};

/** Ends a client without waiting on a peer that does not answer (end() waits for the server's goodbye). */
async function closeClient(c: pg.Client, waitMs = 2000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    c.end().then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs))),
  ]);
  clearTimeout(timer);
  if (!ended) (c as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * Vacuums and analyzes our tables where PostgreSQL's autovacuum does not (`auto`: only when the
 * server runs with autovacuum off or a table opts out), by autovacuum's thresholds, in the
 * background, one process per database at a time. Throttled like autovacuum (its cost delay and
 * limit); a table another session is vacuuming or altering is skipped, not waited for, and a
 * VACUUM / ANALYZE that another session comes to wait on is cancelled (it yields, as autovacuum
 * does). A look costs one query on the statistics views.
 */
export function startTableUpkeep(opts: TableUpkeepOptions): TableUpkeep {
  const schemas = opts.schemas ?? [...LIVE_SEARCH_PATH, 'rebuild'];
  let stopped = false;
  let client: pg.Client | null = null;
  let running: Promise<unknown> = Promise.resolve();
  let warnedAutovacuumOff = false;
  const warnedNotOwner = new Set<string>();
  const partitions = partitionUpkeep(schemas, opts.log, opts.partitionLockTimeoutMs);

  /**
   * Like autovacuum, which cancels itself when it blocks another session's lock request (a
   * migration's ALTER TABLE, the in-place rebuild's swap): while one VACUUM / ANALYZE runs, a second
   * session looks every yieldCheckMs for a backend that waits on it, and cancels it if so.
   * stop() answers whether it did.
   */
  const yieldToWaiters = (pid: number): { stop(): Promise<boolean> } => {
    let done = false;
    let wake: () => void = () => {};
    const watching = (async (): Promise<boolean> => {
      const w = upkeepClient(opts.connectionString, 'ingest-upkeep-watch');
      try {
        await w.connect();
        while (!done) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, opts.yieldCheckMs ?? 500);
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          if (done) break;
          const r = await w.query<{ blocking: boolean }>(
            'SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))) AS blocking',
            [pid],
          );
          if (r.rows[0]?.blocking && !done) {
            await w.query('SELECT pg_cancel_backend($1::int)', [pid]);
            return true;
          }
        }
        return false;
      } catch {
        return false; // no watcher: the VACUUM goes on, as a manual one would
      } finally {
        await closeClient(w);
      }
    })();
    return {
      stop: () => {
        done = true;
        wake();
        return watching;
      },
    };
  };

  const runOnce = async (): Promise<UpkeepDone[]> => {
    if (stopped) return [];
    const c = upkeepClient(opts.connectionString, 'ingest-upkeep');
    client = c;
    const done: UpkeepDone[] = [];
    try {
      await c.connect();
      const lock = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [UPKEEP_LOCK]);
      if (lock.rows[0]?.ok !== true) return done;
      for (const p of await partitions(c)) done.push({ table: p.partition, action: 'create_partition', ms: p.ms });
      if (opts.mode === 'off') return done;
      const st = (await c.query(SETTINGS_SQL)).rows[0] as Record<string, string | number | boolean>;
      const settings: AutovacuumSettings = {
        autovacuum: st['autovacuum'] === true,
        vacuumThreshold: Number(st['vt']),
        vacuumScaleFactor: Number(st['vs']),
        insertThreshold: Number(st['it']),
        insertScaleFactor: Number(st['is']),
        analyzeThreshold: Number(st['at']),
        analyzeScaleFactor: Number(st['as']),
        naptimeS: opts.naptimeS ?? Number(st['naptime']),
      };
      if (!settings.autovacuum && !warnedAutovacuumOff && opts.mode === 'auto') {
        warnedAutovacuumOff = true;
        opts.log.warn(
          {},
          "PostgreSQL runs with autovacuum off: this process vacuums and analyzes the service's tables itself (DB_UPKEEP=auto)",
        );
      }
      // Like autovacuum: throttled, and a session that ends (stop) ends its VACUUM within a second.
      // (client_connection_check_interval exists from PostgreSQL 14; n_ins_since_vacuum, read below, from 13.)
      const me = await c.query<{ pid: number }>(
        `SELECT pg_backend_pid() AS pid, set_config('vacuum_cost_delay', $1, false), set_config('vacuum_cost_limit', $2, false),
                CASE WHEN current_setting('server_version_num')::int >= 140000
                     THEN set_config('client_connection_check_interval', '1s', false) END`,
        opts.throttle
          ? [`${opts.throttle.costDelayMs}ms`, String(opts.throttle.costLimit)]
          : [String(st['cost_delay']), String(st['cost_limit'])],
      );
      const pid = me.rows[0]!.pid;
      const { rows } = await c.query<Row>(COUNTERS_SQL, [schemas]);
      opts.onLook?.(new Map(rows.map((r) => [`${r.schema}.${r.name}`, { dead: r.dead, live: r.live }])));
      for (const r of rows) {
        if (stopped) break;
        const counters: TableCounters = {
          reltuples: r.reltuples,
          modsSinceAnalyze: r.mods,
          deadRows: r.dead,
          insertsSinceVacuum: r.inserts,
          liveRows: r.live,
          sinceUpkeepS: r.since_upkeep_s,
          autovacuumEnabled: r.av_enabled === null ? null : r.av_enabled === 'true' || r.av_enabled === 'on',
        };
        const action = upkeepDue(counters, settings, opts.mode);
        if (!action) continue;
        const table = `${r.schema}.${r.name}`;
        if (!r.can_act) {
          if (!warnedNotOwner.has(table)) {
            warnedNotOwner.add(table);
            opts.log.warn(
              { table, action },
              'table needs upkeep but this login does not own it: enable autovacuum, or give the projector the owner as DATABASE_URL',
            );
          }
          continue;
        }
        const started = performance.now();
        const watch = yieldToWaiters(pid);
        try {
          await c.query(`${STATEMENTS[action]} ${quoteIdent(r.schema)}.${quoteIdent(r.name)}`);
        } catch (err) {
          if ((err as { code?: string }).code === '57014' && (await watch.stop())) {
            const ms = Math.round(performance.now() - started);
            done.push({ table, action, ms, yielded: true });
            opts.log.info({ table, action, ms }, 'table upkeep yielded to a session waiting for a lock on its table');
            continue;
          }
          if (isDbUnavailable(err)) throw err; // the session is gone: the next round starts over
          // One table that cannot be done (dropped meanwhile, say) does not keep the others waiting.
          opts.log.warn({ err, table, action }, 'table upkeep failed on one table; going on with the others');
          continue;
        } finally {
          await watch.stop();
        }
        const ms = performance.now() - started;
        done.push({ table, action, ms: Math.round(ms) });
        opts.onAction?.(table, action, ms / 1000);
      }
      // Routine rounds (a small hot table such as the relay's lease every few seconds) at debug; a long one at info.
      if (done.some((d) => d.ms >= 1000)) opts.log.info({ done }, 'table upkeep');
      else if (done.length > 0) opts.log.debug?.({ done }, 'table upkeep');
      return done;
    } finally {
      client = null;
      await closeClient(c); // also releases the advisory lock
    }
  };

  let busy = false;
  const round = (): void => {
    if (busy) return; // a long VACUUM outlasts the interval: no second session meanwhile
    busy = true;
    running = runOnce()
      .catch((err: unknown) => {
        if (!stopped) opts.log.warn({ err }, 'table upkeep round failed; the next round will retry');
      })
      .finally(() => (busy = false));
  };
  const timer = setInterval(round, opts.intervalMs);
  timer.unref();

  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      // A VACUUM in flight stops with its session (client_connection_check_interval).
      // A peer that does not answer (a network fault) does not hold the shutdown either.
      if (client) await closeClient(client);
      await Promise.race([running, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    },
  };
}
