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
