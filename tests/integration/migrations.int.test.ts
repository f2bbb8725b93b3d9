import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDatabaseFromTemplate, dropDatabase, migrate, MIGRATIONS_DIR } from '@ingest/db';

// Migrations on an empty database: the whole data model of D24 and the roles of D25.
const name = `ingest_test_mig_${randomUUID().slice(0, 8)}`;
let url: string;
let client: pg.Client;

beforeAll(async () => {
  url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, 'template1');
  // Every file of migrations/, in the order of their names, and nothing else.
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -'.sql'.length))
    .sort();
  expect(files[0]).toBe('1763700000000_data-model');
  expect(await migrate(url)).toEqual(files);
  client = new pg.Client({ connectionString: url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await dropDatabase(inject('adminDatabaseUrl'), name);
});

async function asRole<T>(role: string, sql: string): Promise<{ ok: true; rows: T[] } | { ok: false; code: string }> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL ROLE ${role}`);
    const r = await client.query(sql);
    return { ok: true, rows: r.rows as T[] };
  } catch (err) {
    return { ok: false, code: (err as { code: string }).code };
  } finally {
    await client.query('ROLLBACK');
  }
}

describe('migrations', () => {
  it('a second run applies nothing', async () => {
    expect(await migrate(url)).toEqual([]);
  });

  it('leaves room for HOT updates on the upserted tables', async () => {
    const { rows } = await client.query(
      `SELECT c.oid::regclass::text AS t, c.reloptions FROM pg_class c
        WHERE c.oid IN ('sot.inventory_levels'::regclass, 'sot.inventory_daily_snapshots'::regclass, 'public.order_line_master'::regclass, 'public.products'::regclass) ORDER BY 1`,
    );
    expect(rows).toEqual([
      { t: 'order_line_master', reloptions: ['fillfactor=80'] },
      { t: 'products', reloptions: ['fillfactor=90'] },
      // A snapshot rewrites every row of a location at once: room for all of them (1764800000000_hot-snapshots).
      { t: 'sot.inventory_daily_snapshots', reloptions: ['fillfactor=50'] },
      { t: 'sot.inventory_levels', reloptions: ['fillfactor=50'] },
    ]);
  });

  it('a second run applies nothing', async () => {
    expect(await migrate(url)).toEqual([]);
  });

  it('create every table and view of D24', async () => {
    const { rows } = await client.query<{ name: string }>(
      `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_schema IN ('sot', 'public', 'agent_runtime', 'agent_read') AND table_name <> 'pgmigrations'
        ORDER BY 1`,
    );
    expect(rows.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'sot.inventory_levels',
        'sot.inventory_daily_snapshots',
        'sot.inventory_update_logs',
        'sot.locations',
        'sot.location_identifiers',
        'sot.channels',
        'public.products',
        'public.product_update_logs',
        'public.order_line_master',
        'public.order_line_master_update_logs',
        'agent_runtime.processed_commands',
        'agent_runtime.command_results',
        'agent_runtime.outbox',
        'agent_runtime.idempotency_keys',
        'agent_runtime.projector_checkpoints',
        'agent_runtime.parked_commands',
        'agent_runtime.relay_lease',
        'agent_runtime.operator_actions',
        'agent_read.inventory_levels',
        'agent_read.inventory_daily_snapshots',
        'agent_read.inventory_update_logs',
        'agent_read.order_line_master',
        'agent_read.products',
        'agent_read.product_update_logs',
        'agent_read.order_line_master_update_logs',
      ]),
    );
  });

  it('the read views carry shop, barcode and the spec field names', async () => {
    const cols = async (view: string) =>
      (
        await client.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns WHERE table_schema = 'agent_read' AND table_name = $1`,
          [view],
        )
      ).rows.map((r) => r.column_name);
    expect(await cols('inventory_levels')).toEqual(
      expect.arrayContaining([
        'shop',
        'barcode',
        'product_name',
        'location_id',
        'on_hand_qty',
        'available_qty',
        'allocated_qty',
        'reserved_qty',
        'incoming_qty',
      ]),
    );
    expect(await cols('order_line_master')).toEqual(
      expect.arrayContaining([
        'shop',
        'barcode',
        'product_name',
        'sku',
        'source_system',
        'transaction_id',
        'transaction_line_id',
        'line_instance_no',
        'tax_rate',
        'refund_amount',
      ]),
    );
    expect(await cols('products')).toEqual(expect.arrayContaining(['shop', 'barcode', 'product_name', 'current_price', 'is_active']));
  });

  it('D28: every update log and its agent_read view carry the actor, platform by default, last in the view', async () => {
    const { rows } = await client.query<{ t: string; nullable: string; dflt: string | null; last: boolean }>(
      `SELECT c.table_schema || '.' || c.table_name AS t, c.is_nullable AS nullable, c.column_default AS dflt,
              c.ordinal_position = (SELECT max(o.ordinal_position) FROM information_schema.columns o
                                     WHERE o.table_schema = c.table_schema AND o.table_name = c.table_name) AS last
         FROM information_schema.columns c WHERE c.column_name = 'actor' AND c.table_name LIKE '%update_logs' ORDER BY 1`,
    );
    expect(rows).toEqual(
      [
        'agent_read.inventory_update_logs',
        'agent_read.order_line_master_update_logs',
        'agent_read.product_update_logs',
        'public.order_line_master_update_logs',
        'public.product_update_logs',
        'sot.inventory_update_logs',
      ].map((t) =>
        t.startsWith('agent_read.')
          ? { t, nullable: 'YES', dflt: null, last: true }
          : { t, nullable: 'NO', dflt: "'platform'::text", last: true },
      ),
    );
  });

  it('D25: agent_reader may SELECT the agent_read views and nothing else', async () => {
    for (const view of [
      'inventory_levels',
      'inventory_daily_snapshots',
      'inventory_update_logs',
      'order_line_master',
      'products',
      'product_update_logs',
      'order_line_master_update_logs',
    ]) {
      expect(await asRole('agent_reader', `SELECT * FROM agent_read.${view} LIMIT 1`)).toMatchObject({ ok: true });
    }
    for (const table of ['public.products', 'sot.inventory_levels', 'agent_runtime.outbox', 'public.order_line_master']) {
      expect(await asRole('agent_reader', `SELECT * FROM ${table} LIMIT 1`)).toEqual({ ok: false, code: '42501' });
    }
    expect(await asRole('agent_reader', `CREATE TABLE agent_read.x (a int)`)).toEqual({ ok: false, code: '42501' });
  });

  it('D25: the service role writes rows but cannot alter the schema', async () => {
    expect(await asRole('ingest_service', `SELECT count(*) FROM public.products`)).toMatchObject({ ok: true });
    expect(await asRole('ingest_service', `ALTER TABLE public.products ADD COLUMN x int`)).toEqual({ ok: false, code: '42501' });
    expect(await asRole('ingest_service', `CREATE TABLE public.x (a int)`)).toEqual({ ok: false, code: '42501' });
    expect(await asRole('ingest_service', `DROP VIEW agent_read.products`)).toEqual({ ok: false, code: '42501' });
    expect(await asRole('ingest_service', `DELETE FROM public.pgmigrations`)).toEqual({ ok: false, code: '42501' });
    // The tables of 1763900000000_fault-tolerance: parking and the relay lease are written by the services.
    expect(await asRole('ingest_service', `SELECT count(*) FROM agent_runtime.parked_commands`)).toMatchObject({ ok: true });
    expect(await asRole('ingest_service', `DELETE FROM agent_runtime.relay_lease WHERE false`)).toMatchObject({ ok: true });
    // Operator actions are an audit trail (1764600000000_operator-actions): written and updated, never deleted.
    expect(await asRole('ingest_service', `UPDATE agent_runtime.operator_actions SET finished_at = now() WHERE false`)).toMatchObject({
      ok: true,
    });
    expect(await asRole('ingest_service', `DELETE FROM agent_runtime.operator_actions WHERE false`)).toEqual({ ok: false, code: '42501' });
  });

  it('the operator actions migration goes down and up again', async () => {
    const down = await client.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'agent_runtime' AND tablename = 'operator_actions'`);
    expect(down.rowCount).toBe(1);
    const sql = readFileSync(join(MIGRATIONS_DIR, '1764600000000_operator-actions.sql'), 'utf8').split('-- Down Migration');
    await client.query('BEGIN');
    try {
      await client.query(sql[1]!);
      const gone = await client.query(`SELECT 1 FROM pg_class WHERE relname IN ('operator_actions', 'command_results_failed_idx')`);
      expect(gone.rowCount).toBe(0);
      await client.query(sql[0]!);
      const back = await client.query(`SELECT 1 FROM pg_class WHERE relname IN ('operator_actions', 'command_results_failed_idx')`);
      expect(back.rowCount).toBe(2);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('the update logs are keyed by (command_id, log_seq, created_at) and have no index on command_id alone; the migration goes down and up', async () => {
    const LOGS = ['public.product_update_logs', 'sot.inventory_update_logs', 'public.order_line_master_update_logs'];
    // The key's columns and the indexes leading with command_id, of each log and of each of its partitions.
    const keys = async () =>
      (
        await client.query<{ t: string; key: string; by_command: string[] }>(
          `SELECT c.oid::regclass::text AS t,
                  (SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'p') AS key,
                  ARRAY(SELECT i.indexrelid::regclass::text FROM pg_index i
                         WHERE i.indrelid = c.oid AND NOT i.indisprimary AND i.indkey[0] = (SELECT attnum FROM pg_attribute WHERE attrelid = c.oid AND attname = 'command_id')
                         ORDER BY 1) AS by_command
             FROM pg_class c
            WHERE c.oid = ANY($1::regclass[]) OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = ANY($1::regclass[]))
            ORDER BY 1`,
          [LOGS],
        )
      ).rows;
    const now = await keys();
    expect(now.length).toBeGreaterThan(LOGS.length); // the partitions are checked too
    for (const r of now) expect(r, r.t).toMatchObject({ key: 'PRIMARY KEY (command_id, log_seq, created_at)', by_command: [] });
    const sql = readFileSync(join(MIGRATIONS_DIR, '1765000000000_update-log-keys.sql'), 'utf8').split('-- Down Migration');
    await client.query('BEGIN');
    try {
      await client.query(sql[1]!);
      for (const r of await keys()) {
        expect(r.key, r.t).toBe('PRIMARY KEY (log_id, created_at)');
        expect(r.by_command, r.t).toHaveLength(1);
      }
      await client.query(sql[0]!);
      expect(await keys()).toEqual(now);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
