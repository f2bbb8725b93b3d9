import pg from 'pg';
import { dailySnapshotRuns, idempotencyKeys, qualified, type LedgerTable } from '@ingest/db';

// The ledger's tables that are projection state: a replay rebuilds them (D26), so they are compared too.
const ledgerEntry = (t: LedgerTable) => ({ table: qualified(t), key: [...t.key] });

/** The read model (D24) and the projection state that shapes later commands, with their keys. */
export const READ_MODEL_TABLES: Array<{ table: string; key: string[] }> = [
  { table: 'public.products', key: ['product_id'] },
  { table: 'public.product_update_logs', key: ['log_id'] },
  { table: 'sot.locations', key: ['location_id'] },
  { table: 'sot.location_identifiers', key: ['location_id', 'identifier_type', 'identifier_value'] },
  { table: 'sot.channels', key: ['channel_id'] },
  { table: 'sot.inventory_levels', key: ['shop', 'product_id', 'location_id'] },
  { table: 'sot.inventory_daily_snapshots', key: ['shop', 'product_id', 'location_id', 'snapshot_date'] },
  { table: 'sot.inventory_update_logs', key: ['log_id'] },
  { table: 'public.order_line_master', key: ['order_line_id'] },
  { table: 'public.order_line_master_update_logs', key: ['log_id'] },
  ledgerEntry(idempotencyKeys.TABLE),
  ledgerEntry(dailySnapshotRuns.TABLE),
];

export interface TableComparison {
  table: string;
  liveRows: number;
  scratchRows: number;
  identical: boolean;
  onlyLive: string[];
  onlyScratch: string[];
  different: string[];
}

// The same text for the same row on any session: fixed time zone, date style and float digits.
const SESSION = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET extra_float_digits = 3";

async function digest(c: pg.Client, table: string): Promise<{ n: number; digest: string }> {
  const { rows } = await c.query<{ n: number; digest: string }>(
    `SELECT count(*)::int AS n, coalesce(md5(string_agg(h, '' ORDER BY h)), '') AS digest FROM (SELECT md5(t::text) AS h FROM ${table} t) x`,
  );
  return rows[0] ?? { n: 0, digest: '' };
}

async function rowHashes(c: pg.Client, table: string, key: string[]): Promise<Map<string, string>> {
  const keyExpr = key.map((k) => `t.${k}::text`).join(` || '/' || `);
  const { rows } = await c.query<{ k: string; h: string }>(`SELECT ${keyExpr} AS k, md5(t::text) AS h FROM ${table} t`);
  return new Map(rows.map((r) => [r.k, r.h]));
}

/**
 * D26 verify: compares two databases' read models table by table by checksum; where a checksum
 * differs, lists the differing rows by key (at most `limit` per kind).
 */
export async function compareReadModels(liveUrl: string, scratchUrl: string, limit = 20): Promise<TableComparison[]> {
  const live = new pg.Client({ connectionString: liveUrl, application_name: 'ingest-verify' });
  const scratch = new pg.Client({ connectionString: scratchUrl, application_name: 'ingest-verify' });
  await live.connect();
  await scratch.connect();
  try {
    await live.query(SESSION);
    await scratch.query(SESSION);
    const out: TableComparison[] = [];
    for (const { table, key } of READ_MODEL_TABLES) {
      const [a, b] = [await digest(live, table), await digest(scratch, table)];
      const result: TableComparison = {
        table,
        liveRows: a.n,
        scratchRows: b.n,
        identical: a.n === b.n && a.digest === b.digest,
        onlyLive: [],
        onlyScratch: [],
        different: [],
      };
      if (!result.identical) {
        const [la, sb] = [await rowHashes(live, table, key), await rowHashes(scratch, table, key)];
        for (const [k, h] of la) {
          if (!sb.has(k)) result.onlyLive.push(k);
          else if (sb.get(k) !== h) result.different.push(k);
        }
        for (const k of sb.keys()) if (!la.has(k)) result.onlyScratch.push(k);
        result.onlyLive = result.onlyLive.slice(0, limit);
        result.onlyScratch = result.onlyScratch.slice(0, limit);
        result.different = result.different.slice(0, limit);
      }
      out.push(result);
    }
    return out;
  } finally {
    await live.end();
    await scratch.end();
  }
}
