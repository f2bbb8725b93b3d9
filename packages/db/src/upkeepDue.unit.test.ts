import { describe, expect, it } from 'vitest';
import { AUTOVACUUM_DEFAULTS, upkeepDue, type TableCounters } from './upkeepDue.ts';

// Table upkeep: autovacuum's thresholds, applied by the service where the server's autovacuum is off.
const OFF = { ...AUTOVACUUM_DEFAULTS, autovacuum: false };
const quiet: TableCounters = {
  reltuples: 100_000,
  modsSinceAnalyze: 0,
  deadRows: 0,
  insertsSinceVacuum: 0,
  autovacuumEnabled: null,
  liveRows: 100_000,
  sinceUpkeepS: null,
};

describe('upkeepDue', () => {
  it('auto leaves a table to autovacuum when the server runs it', () => {
    expect(upkeepDue({ ...quiet, deadRows: 90_000, modsSinceAnalyze: 90_000 }, AUTOVACUUM_DEFAULTS, 'auto')).toBeNull();
  });

  it('auto acts when the server runs without autovacuum, or the table opts out', () => {
    const busy = { ...quiet, deadRows: 90_000, modsSinceAnalyze: 90_000 };
    expect(upkeepDue(busy, OFF, 'auto')).toBe('vacuum_analyze');
    expect(upkeepDue({ ...busy, autovacuumEnabled: false }, AUTOVACUUM_DEFAULTS, 'auto')).toBe('vacuum_analyze');
  });

  it('always acts by the thresholds whatever autovacuum does; off never', () => {
    const busy = { ...quiet, deadRows: 90_000 };
    expect(upkeepDue(busy, AUTOVACUUM_DEFAULTS, 'always')).toBe('vacuum');
    expect(upkeepDue(busy, OFF, 'off')).toBeNull();
  });

  it('vacuums past 50 + 20% dead rows, and not before', () => {
    expect(upkeepDue({ ...quiet, deadRows: 20_050 }, OFF, 'auto')).toBeNull();
    expect(upkeepDue({ ...quiet, deadRows: 20_051 }, OFF, 'auto')).toBe('vacuum');
  });

  it('vacuums an insert-only table past 1,000 + 20% inserts (visibility map, freezing)', () => {
    expect(upkeepDue({ ...quiet, insertsSinceVacuum: 21_000 }, OFF, 'auto')).toBeNull();
    expect(upkeepDue({ ...quiet, insertsSinceVacuum: 21_001 }, OFF, 'auto')).toBe('vacuum');
    // autovacuum_vacuum_insert_threshold = -1 turns insert vacuums off
    expect(upkeepDue({ ...quiet, insertsSinceVacuum: 1e9 }, { ...OFF, insertThreshold: -1 }, 'auto')).toBeNull();
  });

  it('analyzes past 50 + 10% changed rows, and not before', () => {
    expect(upkeepDue({ ...quiet, modsSinceAnalyze: 10_050 }, OFF, 'auto')).toBeNull();
    expect(upkeepDue({ ...quiet, modsSinceAnalyze: 10_051 }, OFF, 'auto')).toBe('analyze');
  });

  it('analyzes a table never analyzed as soon as it is written to (its "empty" estimates are what hurt the plans)', () => {
    const fresh = { ...quiet, reltuples: -1 };
    expect(upkeepDue({ ...fresh, modsSinceAnalyze: 3 }, OFF, 'auto')).toBe('analyze');
    expect(upkeepDue(fresh, OFF, 'auto')).toBeNull();
  });

  it('waits a naptime after the last VACUUM / ANALYZE of a table, as autovacuum visits a database once per naptime', () => {
    const due = { ...quiet, modsSinceAnalyze: 20_000, liveRows: 120_000 };
    expect(upkeepDue({ ...due, sinceUpkeepS: 59 }, OFF, 'auto')).toBeNull();
    expect(upkeepDue({ ...due, sinceUpkeepS: 60 }, OFF, 'auto')).toBe('analyze');
    expect(upkeepDue({ ...due, sinceUpkeepS: 5 }, { ...OFF, naptimeS: 1 }, 'auto')).toBe('analyze');
  });

  it('does not wait for a table that has more than doubled since its estimates were taken (a fresh table filling)', () => {
    const filling = { ...quiet, reltuples: 100, modsSinceAnalyze: 5_000, liveRows: 5_100, sinceUpkeepS: 10 };
    expect(upkeepDue(filling, OFF, 'auto')).toBe('analyze');
    expect(upkeepDue({ ...filling, liveRows: 250 }, OFF, 'auto')).toBeNull();
  });

  it('takes the server’s own thresholds', () => {
    const eager = { ...OFF, analyzeThreshold: 0, analyzeScaleFactor: 0.001 };
    expect(upkeepDue({ ...quiet, modsSinceAnalyze: 101 }, eager, 'auto')).toBe('analyze');
  });
});
