/**
 * Which of our tables need VACUUM or ANALYZE now, by autovacuum's own rules (PostgreSQL docs,
 * "The Autovacuum Daemon"), for a server that does not run autovacuum for them.
 *
 * Why: with autovacuum off, a table is never analyzed, so the planner keeps its "empty table"
 * estimates and turns the projector's set-based statements into nested loops (measured: a
 * 1,000-line snapshot took 1.9 s instead of ~0.1 s, bench B6 fell from 6,400 lines/s to 0), and
 * dead rows are never reclaimed, so every table and index grows for ever.
 */

export type UpkeepMode = 'auto' | 'always' | 'off';
export type UpkeepAction = 'vacuum_analyze' | 'vacuum' | 'analyze';

/** One table's counters, as pg_stat_user_tables and pg_class give them. */
export interface TableCounters {
  /** pg_class.reltuples: -1 when never vacuumed or analyzed (PostgreSQL 14+). */
  reltuples: number;
  modsSinceAnalyze: number;
  deadRows: number;
  /** n_ins_since_vacuum (PostgreSQL 13+): inserts since the last vacuum (visibility map, freezing). */
  insertsSinceVacuum: number;
  /** The table's own `autovacuum_enabled` storage parameter (null: not set). */
  autovacuumEnabled: boolean | null;
  /** n_live_tup: the rows the statistics count now (reltuples is what the last VACUUM / ANALYZE counted). */
  liveRows: number;
  /** Seconds since the table's last VACUUM or ANALYZE of any kind; null when it never had one. */
  sinceUpkeepS: number | null;
}

/** The server's autovacuum settings (current_setting), the thresholds we apply in its place. */
export interface AutovacuumSettings {
  autovacuum: boolean;
  vacuumThreshold: number;
  vacuumScaleFactor: number;
  insertThreshold: number;
  insertScaleFactor: number;
  analyzeThreshold: number;
  analyzeScaleFactor: number;
  /** autovacuum_naptime: autovacuum visits a database once per naptime, so a table at most that often. */
  naptimeS: number;
}

/** PostgreSQL 15's defaults. */
export const AUTOVACUUM_DEFAULTS: AutovacuumSettings = {
  autovacuum: true,
  vacuumThreshold: 50,
  vacuumScaleFactor: 0.2,
  insertThreshold: 1000,
  insertScaleFactor: 0.2,
  analyzeThreshold: 50,
  analyzeScaleFactor: 0.1,
  naptimeS: 60,
};

/** Whether autovacuum looks after this table itself (then `auto` leaves it alone). */
export function autovacuumCovers(t: Pick<TableCounters, 'autovacuumEnabled'>, s: Pick<AutovacuumSettings, 'autovacuum'>): boolean {
  return s.autovacuum && t.autovacuumEnabled !== false;
}

/**
 * The action a table is due for, or null. `auto`: only where autovacuum does not cover it;
 * `always`: by the same thresholds whatever autovacuum does; `off`: never.
 */
export function upkeepDue(t: TableCounters, s: AutovacuumSettings, mode: UpkeepMode): UpkeepAction | null {
  if (mode === 'off' || (mode === 'auto' && autovacuumCovers(t, s))) return null;
  const tuples = Math.max(0, t.reltuples);
  // Within a naptime of its last VACUUM / ANALYZE a table waits, as under autovacuum (an append-only
  // log growing 10 % every few seconds was analyzed every round, ~1 s of work each time); except one
  // that has more than doubled since its estimates were taken: those turn set-based statements into
  // nested loops while a fresh table fills, so it is looked at again at once (log2 times while it grows).
  const outgrown = t.liveRows > 2 * tuples + s.analyzeThreshold;
  if (t.sinceUpkeepS !== null && t.sinceUpkeepS < s.naptimeS && !outgrown) return null;
  const vacuum =
    t.deadRows > s.vacuumThreshold + s.vacuumScaleFactor * tuples ||
    (s.insertThreshold >= 0 && t.insertsSinceVacuum > s.insertThreshold + s.insertScaleFactor * tuples);
  // A table never analyzed but written to is analyzed at once: its estimates are the ones that hurt.
  const analyze = t.modsSinceAnalyze > s.analyzeThreshold + s.analyzeScaleFactor * tuples || (t.reltuples < 0 && t.modsSinceAnalyze > 0);
  if (vacuum && analyze) return 'vacuum_analyze';
  if (vacuum) return 'vacuum';
  if (analyze) return 'analyze';
  return null;
}
