import type { Pool } from '@ingest/db';

/** The three update logs (packages/db logPartitions.ts), as the tests below name them. */
export const LOG_TABLES = ['public.product_update_logs', 'sot.inventory_update_logs', 'public.order_line_master_update_logs'] as const;

/**
 * `n` rows in each update log, created_at spread over [from, from + days), one shop and barcode per
 * 10 rows; `tag` keeps the ids of separate calls apart. Inserted through the parent, as the projection
 * inserts them: each row lands in the partition of its month.
 */
export async function insertLogRows(db: Pick<Pool, 'query'>, opts: { from: string; days: number; n: number; tag: string }): Promise<void> {
  const rows = `FROM generate_series(0, $1::int - 1) i,
    LATERAL (SELECT 'shop-' || (i % 3) AS s, 'B' || (i / 10) AS b, timestamptz '${opts.from}' + (i * $2::float8 / $1) * interval '1 day' AS t,
                    md5($3 || i)::uuid AS id, md5($3 || (i / 10))::uuid AS cmd) x`;
  const args = [opts.n, opts.days, opts.tag];
  await db.query(
    `INSERT INTO public.product_update_logs (log_id, shop, product_id, barcode, change_type, after_data, changed_fields, change_source, command_id, log_seq, created_at, actor)
     SELECT id, s, md5(s || b)::uuid, b, 'price_change', jsonb_build_object('current_price', i), '{current_price}', '/api/ingest/products', cmd, i % 10, t, 'platform' ${rows}`,
    args,
  );
  await db.query(
    `INSERT INTO sot.inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, before_data, after_data, changed_fields,
                                            idempotency_key, inventory_as_of, command_id, log_seq, created_at)
     SELECT id, s, md5(s || b)::uuid, md5(s)::uuid, b, 'snapshot', 'pos', NULL, jsonb_build_object('on_hand_qty', i, 'note', 'é"\\'), '{on_hand_qty}',
            CASE WHEN i % 2 = 0 THEN 'k' || i END, t, cmd, i % 10, t ${rows}`,
    args,
  );
  await db.query(
    `INSERT INTO public.order_line_master_update_logs (log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id, line_instance_no, change_type,
                                                       after_data, changed_fields, change_source, command_id, log_seq, created_at)
     SELECT id, s, md5(s || i)::uuid, 'pos', 'T' || i, '1', 1, 'insert', jsonb_build_object('gross_amount_taxincl', 1.10), '{gross_amount_taxincl}', 'pos', cmd, i % 10, t ${rows}`,
    args,
  );
}

/** A digest of a log's rows (every column, in log_id order) within [from, to): equal digests, equal rows. */
export async function logDigest(
  db: Pick<Pool, 'query'>,
  table: string,
  from = '-infinity',
  to = 'infinity',
): Promise<{ n: number; md5: string }> {
  const { rows } = await db.query<{ n: number; md5: string }>(
    `SELECT count(*)::int AS n, coalesce(md5(string_agg(t::text, '|' ORDER BY t.log_id)), '') AS md5
       FROM ${table} t WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz`,
    [from, to],
  );
  return rows[0]!;
}

/** Which partition holds how many rows of a log. */
export async function rowsByPartition(db: Pick<Pool, 'query'>, table: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ p: string; n: number }>(
    `SELECT tableoid::regclass::text AS p, count(*)::int AS n FROM ${table} GROUP BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.p, r.n]));
}
