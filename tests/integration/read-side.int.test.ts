import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDatabaseFromTemplate, createPool, dropDatabase, ensureLogPartitions, type Pool, type PoolClient } from '@ingest/db';

// The read side for agents (D24, D25; migration 1764300000000_read-side): every
// agent_read view and column carries a comment, the registry views exist and agent_reader reads
// them and nothing outside agent_read, and the lookups docs/reading-data.md documents use an
// index on a big table. The plans are checked on PLAN_ROWS rows per table (50 shops), loaded with
// one INSERT ... SELECT generate_series per table. 1,000,000 rows per table take minutes on the
// test machine; the planner picks the same index for every lookup at 20,000 rows as at 1,000,000
// (compared once, see the README), so that is the default: READ_PLAN_ROWS=1000000 runs it at full size.
const PLAN_ROWS = Number(process.env['READ_PLAN_ROWS'] ?? 20_000);

const VIEWS = [
  'channels',
  'inventory_daily_snapshots',
  'inventory_levels',
  'inventory_update_logs',
  'location_identifiers',
  'locations',
  'order_line_master',
  'order_line_master_update_logs',
  'product_update_logs',
  'products',
];

const name = `ingest_test_read_${randomUUID().slice(0, 8)}`;
let pool: Pool;

beforeAll(async () => {
  const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
  pool = createPool({ connectionString: url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await dropDatabase(inject('adminDatabaseUrl'), name);
});

/** Runs `fn` as agent_reader in a transaction that is rolled back. */
async function asReader<T>(fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    await c.query('SET LOCAL ROLE agent_reader');
    return await fn(c);
  } finally {
    await c.query('ROLLBACK');
    c.release();
  }
}

describe('agent_read catalog', () => {
  it('holds exactly the documented views (D24, D14: locations, location_identifiers, channels)', async () => {
    const { rows } = await pool.query<{ v: string }>(
      `SELECT c.relname AS v FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'agent_read' ORDER BY 1`,
    );
    expect(rows.map((r) => r.v)).toEqual(VIEWS);
  });

  it('every agent_read view and every column has a non-empty comment', async () => {
    const { rows } = await pool.query<{ object: string }>(
      `SELECT c.relname AS object FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'agent_read' AND btrim(coalesce(obj_description(c.oid, 'pg_class'), '')) = ''
       UNION ALL
       SELECT c.relname || '.' || a.attname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = 'agent_read' AND btrim(coalesce(col_description(c.oid, a.attnum), '')) = ''`,
    );
    expect(rows.map((r) => r.object)).toEqual([]);
    const count = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'agent_read' AND a.attnum > 0 AND NOT a.attisdropped`,
    );
    expect(count.rows[0]?.n).toBeGreaterThan(100);
  });

  it('D25: agent_reader may SELECT every agent_read view, write none, and read no relation of another schema', async () => {
    const { rows } = await pool.query<{ rel: string; sel: boolean; write: boolean }>(
      `SELECT n.nspname || '.' || c.relname AS rel, has_table_privilege('agent_reader', c.oid, 'SELECT') AS sel,
              has_table_privilege('agent_reader', c.oid, 'INSERT,UPDATE,DELETE,TRUNCATE') AS write
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname IN ('agent_read', 'sot', 'public', 'agent_runtime')`,
    );
    const readable = rows
      .filter((r) => r.sel)
      .map((r) => r.rel)
      .sort();
    expect(readable).toEqual(VIEWS.map((v) => `agent_read.${v}`));
    expect(rows.filter((r) => r.write)).toEqual([]);
  });
});

describe('registry views (D14)', () => {
  const SHOP = 'registry.read.example';
  const A = '01900000-0000-7000-8000-00000000000a';
  const B = '01900000-0000-7000-8000-00000000000b';
  const CH = '01900000-0000-7000-8000-0000000000c1';
  const AT = '2026-11-20T01:02:03Z';

  beforeAll(async () => {
    const cmd = '01900000-0000-7000-8000-000000000001';
    await pool.query(
      `INSERT INTO sot.locations (location_id, shop, name, created_at, updated_at, last_command_id)
       VALUES ($1, $3, 'Shibuya store', $4, $4, $5), ($2, $3, 'Chiba warehouse', $4, $4, $5)`,
      [A, B, SHOP, AT, cmd],
    );
    await pool.query(
      `INSERT INTO sot.location_identifiers (location_id, shop, identifier_type, identifier_value)
       VALUES ($1, $2, 'pos_store_code', 'S001'), ($1, $2, 'wms_code', 'WH-1'), ($1, $2, 'pos_store_code', 'S000')`,
      [A, SHOP],
    );
    await pool.query(
      `INSERT INTO sot.channels (channel_id, shop, name, created_at, updated_at, last_command_id) VALUES ($1, $2, 'Online store', $3, $3, $4)`,
      [CH, SHOP, AT, cmd],
    );
  });

  it('agent_reader reads locations with their identifiers ([] when none), sorted by type and value', async () => {
    const rows = await asReader(
      async (c) =>
        (
          await c.query(
            `SELECT location_id, shop, name, identifiers, created_at, updated_at FROM agent_read.locations WHERE shop = $1 ORDER BY name`,
            [SHOP],
          )
        ).rows,
    );
    expect(rows).toEqual([
      { location_id: B, shop: SHOP, name: 'Chiba warehouse', identifiers: [], created_at: new Date(AT), updated_at: new Date(AT) },
      {
        location_id: A,
        shop: SHOP,
        name: 'Shibuya store',
        identifiers: [
          { identifier_type: 'pos_store_code', identifier_value: 'S000' },
          { identifier_type: 'pos_store_code', identifier_value: 'S001' },
          { identifier_type: 'wms_code', identifier_value: 'WH-1' },
        ],
        created_at: new Date(AT),
        updated_at: new Date(AT),
      },
    ]);
  });

  it('agent_reader finds a location by external identifier, and reads channels', async () => {
    const found = await asReader(
      async (c) =>
        (
          await c.query(
            `SELECT l.location_id, l.name FROM agent_read.location_identifiers i JOIN agent_read.locations l USING (location_id)
              WHERE i.shop = $1 AND i.identifier_type = $2 AND i.identifier_value = $3`,
            [SHOP, 'wms_code', 'WH-1'],
          )
        ).rows,
    );
    expect(found).toEqual([{ location_id: A, name: 'Shibuya store' }]);
    const channels = await asReader(
      async (c) => (await c.query('SELECT channel_id, shop, name FROM agent_read.channels WHERE shop = $1', [SHOP])).rows,
    );
    expect(channels).toEqual([{ channel_id: CH, shop: SHOP, name: 'Online store' }]);
  });

  it('agent_reader cannot read the registry tables behind the views (42501)', async () => {
    for (const table of ['sot.locations', 'sot.location_identifiers', 'sot.channels']) {
      await expect(asReader((c) => c.query(`SELECT 1 FROM ${table} LIMIT 1`))).rejects.toMatchObject({ code: '42501' });
    }
  });
});

/** Every plan node, depth first. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
function nodes(n: PlanNode): PlanNode[] {
  return [n, ...(n.Plans ?? []).flatMap(nodes)];
}

/**
 * The lookups of README "Reading the data", as an agent sends them, and the index each must use on
 * its table. Parameters are bound, as a client sends them; times fall within the loaded data.
 */
const LOOKUPS: Array<{ what: string; sql: string; params: unknown[]; table: string; index: string }> = [
  {
    what: 'a product by barcode',
    table: 'public.products',
    index: 'products_shop_barcode_key',
    sql: 'SELECT * FROM agent_read.products WHERE shop = $1 AND barcode = $2',
    params: ['shop-07', '4900000000123'],
  },
  {
    what: "a shop's products, a page at a time",
    table: 'public.products',
    index: 'products_shop_barcode_key',
    sql: 'SELECT * FROM agent_read.products WHERE shop = $1 AND barcode > $2 ORDER BY barcode LIMIT 100',
    params: ['shop-07', ''],
  },
  {
    what: "a product's change history",
    table: 'public.product_update_logs',
    index: 'product_update_logs_shop_barcode_idx',
    sql: 'SELECT * FROM agent_read.product_update_logs WHERE shop = $1 AND barcode = $2 ORDER BY created_at, log_seq',
    params: ['shop-07', '4900000000003'],
  },
  {
    what: 'product changes in a time window',
    table: 'public.product_update_logs',
    index: 'product_update_logs_shop_created_idx',
    sql: 'SELECT * FROM agent_read.product_update_logs WHERE shop = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, log_seq',
    params: ['shop-07', '2026-01-02T00:00:00Z', '2026-01-02T06:00:00Z'],
  },
  {
    what: "a barcode's stock at every location",
    table: 'sot.inventory_levels',
    index: 'inventory_levels_shop_barcode_idx',
    sql: 'SELECT * FROM agent_read.inventory_levels WHERE shop = $1 AND barcode = $2',
    params: ['shop-07', '4900000000012'],
  },
  {
    what: "a location's stock",
    table: 'sot.inventory_levels',
    index: 'inventory_levels_location_idx',
    sql: 'SELECT * FROM agent_read.inventory_levels WHERE shop = $1 AND location_id = $2',
    params: ['shop-07', '00000000-0000-4000-8000-000000000029'],
  },
  {
    what: 'stock on business dates',
    table: 'sot.inventory_daily_snapshots',
    index: 'inventory_daily_snapshots_shop_date_idx',
    sql: 'SELECT * FROM agent_read.inventory_daily_snapshots WHERE shop = $1 AND snapshot_date BETWEEN $2 AND $3',
    params: ['shop-07', '2026-01-02', '2026-01-02'],
  },
  {
    what: "a barcode's daily stock history",
    table: 'sot.inventory_daily_snapshots',
    index: 'inventory_daily_snapshots_shop_barcode_idx',
    sql: 'SELECT * FROM agent_read.inventory_daily_snapshots WHERE shop = $1 AND barcode = $2 AND snapshot_date BETWEEN $3 AND $4 ORDER BY snapshot_date, location_id',
    params: ['shop-07', '4900000000012', '2026-01-01', '2026-01-31'],
  },
  {
    what: "a barcode's stock changes",
    table: 'sot.inventory_update_logs',
    index: 'inventory_update_logs_shop_barcode_idx',
    sql: 'SELECT * FROM agent_read.inventory_update_logs WHERE shop = $1 AND barcode = $2 ORDER BY created_at, log_seq',
    params: ['shop-07', '4900000000012'],
  },
  {
    what: 'stock changes in a time window',
    table: 'sot.inventory_update_logs',
    index: 'inventory_update_logs_shop_created_idx',
    sql: 'SELECT * FROM agent_read.inventory_update_logs WHERE shop = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, log_seq',
    params: ['shop-07', '2026-01-02T00:00:00Z', '2026-01-02T06:00:00Z'],
  },
  {
    what: 'order lines in a time window',
    table: 'public.order_line_master',
    index: 'order_line_master_ordered_at_idx',
    sql: 'SELECT * FROM agent_read.order_line_master WHERE shop = $1 AND ordered_at >= $2 AND ordered_at < $3',
    params: ['shop-07', '2026-01-02T00:00:00Z', '2026-01-02T06:00:00Z'],
  },
  {
    what: "a barcode's order lines",
    table: 'public.order_line_master',
    index: 'order_line_master_shop_barcode_idx',
    sql: 'SELECT * FROM agent_read.order_line_master WHERE shop = $1 AND barcode = $2',
    params: ['shop-07', '4900000000012'],
  },
  {
    what: 'order line changes in a time window',
    table: 'public.order_line_master_update_logs',
    index: 'order_line_master_update_logs_shop_created_idx',
    sql: 'SELECT * FROM agent_read.order_line_master_update_logs WHERE shop = $1 AND created_at >= $2 AND created_at < $3 ORDER BY created_at, log_seq',
    params: ['shop-07', '2026-01-02T00:00:00Z', '2026-01-02T06:00:00Z'],
  },
  {
    what: "a transaction's order line changes",
    table: 'public.order_line_master_update_logs',
    index: 'order_line_master_update_logs_line_idx',
    sql: `SELECT l.* FROM agent_read.order_line_master o JOIN agent_read.order_line_master_update_logs l USING (order_line_id)
           WHERE o.shop = $1 AND o.source_system = $2 AND o.transaction_id = $3 ORDER BY l.created_at, l.log_seq`,
    params: ['shop-07', 'pos', 'T1007'],
  },
];

/**
 * PLAN_ROWS rows in each big table, one INSERT ... SELECT generate_series each: 50 shops (shop-00 ..
 * shop-49), ids and times growing with i as the projector appends them; daily rows day by day,
 * 10,000 levels a day, as the daily job writes them. Location k of shop s is ...-<4s+k>. The update
 * logs' rows span 2026-01-01 .. 2026-03-11, whatever their number: the January and February
 * partitions (made beforehand, as the upkeep makes them) and the default partition (March has none)
 * all hold rows, so each lookup is planned across partitions (1764900000000_partitioned-update-logs).
 */
const LOAD = [
  `INSERT INTO public.products (product_id, shop, barcode, product_name, sku, currency, is_active, current_price, created_at, updated_at, last_command_id)
   SELECT md5(s || b)::uuid, s, b, 'product ' || b, 'SKU' || b, 'JPY', true, 100 + i % 900, t, t, md5(s)::uuid
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT 'shop-' || lpad((i % 50)::text, 2, '0') AS s, '49' || lpad((i / 50)::text, 11, '0') AS b,
                          timestamptz '2026-01-01Z' + i * interval '10 s' AS t) x`,
  `INSERT INTO sot.inventory_levels (shop, product_id, location_id, barcode, on_hand_qty, available_qty, last_absolute_as_of, created_at, updated_at, last_command_id)
   SELECT s, md5(s || b)::uuid, loc, b, i % 20, i % 20, t, t, t, md5(s)::uuid
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT 'shop-' || lpad((i % 50)::text, 2, '0') AS s, '49' || lpad((i / 200)::text, 11, '0') AS b,
                          ('00000000-0000-4000-8000-' || lpad(((i % 50) * 4 + (i / 50) % 4)::text, 12, '0'))::uuid AS loc,
                          timestamptz '2026-01-01Z' + i * interval '10 s' AS t) x`,
  `INSERT INTO sot.inventory_daily_snapshots (shop, product_id, location_id, snapshot_date, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
                                              incoming_qty, source, inventory_as_of, command_id)
   SELECT s, md5(s || b)::uuid, loc, date '2026-01-01' + i / 10000, b, j % 20, j % 20, 0, 0, 0, 'daily_job',
          timestamptz '2026-01-01Z' + (i / 10000) * interval '1 day', md5(s)::uuid
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT i % 10000 AS j) j,
          LATERAL (SELECT 'shop-' || lpad((j % 50)::text, 2, '0') AS s, '49' || lpad((j / 200)::text, 11, '0') AS b,
                          ('00000000-0000-4000-8000-' || lpad(((j % 50) * 4 + (j / 50) % 4)::text, 12, '0'))::uuid AS loc) x`,
  `INSERT INTO sot.inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, after_data, changed_fields, inventory_as_of,
                                          command_id, log_seq, created_at)
   SELECT id, s, md5(s || b)::uuid, loc, b, 'snapshot', 'pos', '{"on_hand_qty":1}', '{on_hand_qty}', t, cmd, i % 100, t
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT 'shop-' || lpad((i % 50)::text, 2, '0') AS s, '49' || lpad(((i / 50) % 5000)::text, 11, '0') AS b,
                          ('00000000-0000-4000-8000-' || lpad(((i % 50) * 4 + (i / 250000) % 4)::text, 12, '0'))::uuid AS loc,
                          timestamptz '2026-01-01Z' + i * (interval '6000000 s' / $1::int) AS t,
                          ('00000000-0000-8000-8000-' || lpad(to_hex(i), 12, '0'))::uuid AS id,
                          ('00000000-0000-7000-8000-' || lpad(to_hex(i / 100), 12, '0'))::uuid AS cmd) x`,
  `INSERT INTO public.product_update_logs (log_id, shop, product_id, barcode, change_type, after_data, changed_fields, change_source, command_id, log_seq, created_at)
   SELECT id, s, md5(s || b)::uuid, b, 'price_change', '{"current_price":1}', '{current_price}', '/api/ingest/products', cmd, i % 100, t
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT 'shop-' || lpad((i % 50)::text, 2, '0') AS s, '49' || lpad(((i / 50) % 20000)::text, 11, '0') AS b,
                          timestamptz '2026-01-01Z' + i * (interval '6000000 s' / $1::int) AS t,
                          ('00000000-0000-8000-8000-' || lpad(to_hex(i), 12, '0'))::uuid AS id,
                          ('00000000-0000-7000-8000-' || lpad(to_hex(i / 100), 12, '0'))::uuid AS cmd) x`,
  `INSERT INTO public.order_line_master (order_line_id, shop, source_system, transaction_id, transaction_line_id, line_instance_no, barcode, ordered_at, currency,
                                         is_test, channel_id, location_id, gross_amount_taxincl, discount_amount_taxincl, net_amount_taxincl, net_amount_taxexcl,
                                         tax_amount, tax_rate, refund_amount, created_at, updated_at, last_command_id)
   SELECT id, s, 'pos', 'T' || i, '1', 1, b, t, 'JPY', false, md5(s || 'ch')::uuid,
          ('00000000-0000-4000-8000-' || lpad(((i % 50) * 4 + i % 4)::text, 12, '0'))::uuid, 110, 0, 110, 100, 10, 0.1, 0, t, t, md5(s)::uuid
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT 'shop-' || lpad((i % 50)::text, 2, '0') AS s, '49' || lpad(((i / 50) % 20000)::text, 11, '0') AS b,
                          timestamptz '2026-01-01Z' + i * interval '10 s' AS t,
                          ('00000000-0000-5000-8000-' || lpad(to_hex(i), 12, '0'))::uuid AS id) x`,
  `INSERT INTO public.order_line_master_update_logs (log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id, line_instance_no, change_type,
                                                     after_data, changed_fields, change_source, command_id, log_seq, created_at)
   SELECT id, s, ('00000000-0000-5000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'pos', 'T' || i, '1', 1, 'insert', '{}', '{barcode}', 'external_app', cmd, i % 100, t
     FROM generate_series(0, $1::int - 1) i,
          LATERAL (SELECT 'shop-' || lpad((i % 50)::text, 2, '0') AS s,
                          timestamptz '2026-01-01Z' + i * (interval '6000000 s' / $1::int) AS t,
                          ('00000000-0000-8000-8000-' || lpad(to_hex(i), 12, '0'))::uuid AS id,
                          ('00000000-0000-7000-8000-' || lpad(to_hex(i / 100), 12, '0'))::uuid AS cmd) x`,
];
const PARTITIONED = ['sot.inventory_update_logs', 'public.product_update_logs', 'public.order_line_master_update_logs'];
const BIG_TABLES = [
  'public.products',
  'sot.inventory_levels',
  'sot.inventory_daily_snapshots',
  'sot.inventory_update_logs',
  'public.product_update_logs',
  'public.order_line_master',
  'public.order_line_master_update_logs',
];

describe(`documented lookups on ${PLAN_ROWS.toLocaleString('en')} rows per table`, () => {
  beforeAll(async () => {
    const c = await pool.connect();
    try {
      await c.query('SET synchronous_commit = off'); // test data only: no need to wait for the WAL flush
      await ensureLogPartitions(c, { now: new Date('2026-01-01T00:00:00Z'), ahead: 1 });
      for (const sql of LOAD) await c.query(sql, [PLAN_ROWS]);
      await c.query(`ANALYZE ${BIG_TABLES.join(', ')}`);
    } finally {
      c.release();
    }
  }, 600_000);

  it.each(LOOKUPS)('$what: $index, no Seq Scan', async ({ sql, params, table, index }) => {
    const plan = await asReader(
      async (c) =>
        (await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows[0]?.['QUERY PLAN'][0]
          ?.Plan,
    );
    expect(plan).toBeDefined();
    const all = nodes(plan!);
    const scans = all
      .filter((n) => n['Relation Name'] !== undefined || n['Index Name'] !== undefined)
      .map((n) => `${n['Node Type']} ${n['Relation Name'] ?? ''} ${n['Index Name'] ?? ''}`.trim());
    // A Seq Scan only of an empty partition (a month made ahead, not yet written: it has no page to
    // read, and the planner sizes a table by its pages now, so it plans an index once rows come).
    const seq = all.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
    const sizes = await pool.query<{ name: string; pages: number }>(
      `SELECT c.relname AS name, (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages
         FROM pg_class c WHERE c.relname = ANY($1::text[]) AND c.relispartition`,
      [seq],
    );
    expect(
      seq.filter((name) => !sizes.rows.some((r) => r.name === name && r.pages === 0)),
      scans.join('\n'),
    ).toEqual([]);
    // On a partitioned log, each partition's scan names that partition's own index: it counts as the
    // partitioned index it belongs to (pg_partition_root), on the partitioned table.
    const { rows } = await pool.query<{ scanned: string; root: string; t: string }>(
      `SELECT x.relname AS scanned, r.relname AS root, n.nspname || '.' || c.relname AS t
         FROM pg_class x CROSS JOIN LATERAL (SELECT coalesce(pg_partition_root(x.oid), x.oid) AS oid) ro
         JOIN pg_class r ON r.oid = ro.oid JOIN pg_index i ON i.indexrelid = r.oid
         JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE x.relkind IN ('i', 'I') AND x.relname = ANY($1::text[])`,
      [all.map((n) => n['Index Name']).filter((n) => n !== undefined)],
    );
    expect(
      rows.filter((r) => r.root === index),
      scans.join('\n'),
    ).not.toEqual([]);
    // The index is on the looked-up table (a Bitmap Index Scan names no relation; its heap scan does).
    expect(rows.filter((r) => r.root === index).map((r) => r.t)).toEqual(rows.filter((r) => r.root === index).map(() => table));
    if (PARTITIONED.includes(table)) {
      // Every partition with rows is read through an index (the empty ones checked above); a lookup with
      // no time bound reads all three (January, February, the default), a time window only its month
      // (pruned at plan time).
      const ofLog = all.filter((n) => (n['Relation Name'] ?? '').startsWith(table.split('.')[1]!));
      expect(
        ofLog.filter((n) => !['Index Scan', 'Index Only Scan', 'Bitmap Heap Scan', 'Seq Scan'].includes(n['Node Type'])),
        scans.join('\n'),
      ).toEqual([]);
      const read = new Set(ofLog.filter((n) => n['Node Type'] !== 'Seq Scan').map((n) => n['Relation Name']));
      expect(read.size, scans.join('\n')).toBe(sql.includes('created_at >= $2') ? 1 : 3);
    }
  });

  it('the loaded rows are there (the plans above are for tables of this size)', async () => {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT sum(reltuples)::bigint::int AS n FROM pg_class WHERE oid = ANY($1::regclass[])`,
      [BIG_TABLES],
    );
    expect(rows[0]?.n).toBeGreaterThanOrEqual(PLAN_ROWS * BIG_TABLES.length * 0.9);
  });
});
