import pg from 'pg';
import { LIVE_SEARCH_PATH } from './pool.ts';
import { upkeepDue, type AutovacuumSettings, type TableCounters, type UpkeepAction, type UpkeepMode } from './upkeepDue.ts';

export interface UpkeepLog {
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
}

export interface UpkeepDone {
  table: string;
  action: UpkeepAction;
  ms: number;
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
  av_enabled: string | null;
  can_act: boolean;
}

const COUNTERS_SQL = `
SELECT s.schemaname AS schema, s.relname AS name, c.reltuples::float8 AS reltuples,
       s.n_mod_since_analyze::float8 AS mods, s.n_dead_tup::float8 AS dead, s.n_live_tup::float8 AS live, s.n_ins_since_vacuum::float8 AS inserts,
       (SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o WHERE o LIKE 'autovacuum_enabled=%') AS av_enabled,
       pg_has_role(current_user, c.relowner, 'USAGE') AS can_act
  FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
 WHERE s.schemaname = ANY($1::text[])
 ORDER BY s.schemaname, s.relname`;

const SETTINGS_SQL = `
SELECT current_setting('autovacuum') = 'on' AS autovacuum,
       current_setting('autovacuum_vacuum_threshold')::float8 AS vt,
       current_setting('autovacuum_vacuum_scale_factor')::float8 AS vs,
       current_setting('autovacuum_vacuum_insert_threshold')::float8 AS it,
       current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS "is",
       current_setting('autovacuum_analyze_threshold')::float8 AS at,
       current_setting('autovacuum_analyze_scale_factor')::float8 AS "as",
       CASE WHEN current_setting('autovacuum_vacuum_cost_delay') = '-1' THEN current_setting('vacuum_cost_delay')
            ELSE current_setting('autovacuum_vacuum_cost_delay') END AS cost_delay`;

const STATEMENTS: Record<UpkeepAction, string> = {
  vacuum_analyze: 'VACUUM (ANALYZE, SKIP_LOCKED)',
  vacuum: 'VACUUM (SKIP_LOCKED)',
  analyze: 'ANALYZE (SKIP_LOCKED)',
};

const quoteIdent = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/**
 * Vacuums and analyzes our tables where PostgreSQL's autovacuum does not (`auto`: only when the
 * server runs with autovacuum off or a table opts out), by autovacuum's thresholds, in the
 * background, one process per database at a time. Throttled like autovacuum (its cost delay), and
 * a table another session is vacuuming or altering is skipped, not waited for. A look costs one
 * query on the statistics views.
 */
export function startTableUpkeep(opts: TableUpkeepOptions): TableUpkeep {
  const schemas = opts.schemas ?? [...LIVE_SEARCH_PATH, 'rebuild'];
  let stopped = false;
  let client: pg.Client | null = null;
  let running: Promise<unknown> = Promise.resolve();
  let warnedAutovacuumOff = false;
  const warnedNotOwner = new Set<string>();

  const runOnce = async (): Promise<UpkeepDone[]> => {
    if (opts.mode === 'off' || stopped) return [];
    const c = new pg.Client({ connectionString: opts.connectionString, application_name: 'ingest-upkeep', connectionTimeoutMillis: 5000 });
    c.on('error', () => {}); // the query in flight rejects on its own
    client = c;
    const done: UpkeepDone[] = [];
    try {
      await c.connect();
      const lock = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [UPKEEP_LOCK]);
      if (lock.rows[0]?.ok !== true) return done;
      const st = (await c.query(SETTINGS_SQL)).rows[0] as Record<string, string | number | boolean>;
      const settings: AutovacuumSettings = {
        autovacuum: st['autovacuum'] === true,
        vacuumThreshold: Number(st['vt']),
        vacuumScaleFactor: Number(st['vs']),
        insertThreshold: Number(st['it']),
        insertScaleFactor: Number(st['is']),
        analyzeThreshold: Number(st['at']),
        analyzeScaleFactor: Number(st['as']),
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
      await c.query(
        `SELECT set_config('vacuum_cost_delay', $1, false),
                CASE WHEN current_setting('server_version_num')::int >= 140000
                     THEN set_config('client_connection_check_interval', '1s', false) END`,
        [String(st['cost_delay'])],
      );
      const { rows } = await c.query<Row>(COUNTERS_SQL, [schemas]);
      opts.onLook?.(new Map(rows.map((r) => [`${r.schema}.${r.name}`, { dead: r.dead, live: r.live }])));
      for (const r of rows) {
        if (stopped) break;
        const counters: TableCounters = {
          reltuples: r.reltuples,
          modsSinceAnalyze: r.mods,
          deadRows: r.dead,
          insertsSinceVacuum: r.inserts,
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
        await c.query(`${STATEMENTS[action]} ${quoteIdent(r.schema)}.${quoteIdent(r.name)}`);
        const ms = performance.now() - started;
        done.push({ table, action, ms: Math.round(ms) });
        opts.onAction?.(table, action, ms / 1000);
      }
      if (done.length > 0) opts.log.info({ done }, 'table upkeep');
      return done;
    } finally {
      client = null;
      await c.end().catch(() => {}); // also releases the advisory lock
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
  const timer = opts.mode === 'off' ? null : setInterval(round, opts.intervalMs);
  timer?.unref();

  return {
    runOnce,
    stop: async () => {
      stopped = true;
      if (timer) clearInterval(timer);
      // A VACUUM in flight stops with its session (client_connection_check_interval).
      await client?.end().catch(() => {});
      await running;
    },
  };
}
