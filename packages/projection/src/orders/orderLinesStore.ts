import type { PoolClient } from '@ingest/db';
import { isUuid, orderLineKey, type OrderLine, type OrderLineLog } from '@ingest/domain';

const LINE_COLUMNS = `order_line_id uuid, shop text, source_system text, transaction_id text, transaction_line_id text,
  line_instance_no integer, barcode text, ordered_at timestamptz, currency text, is_test boolean, channel_id uuid,
  location_id uuid, customer_id text, gross_amount_taxincl numeric, discount_amount_taxincl numeric,
  net_amount_taxincl numeric, net_amount_taxexcl numeric, tax_amount numeric, tax_rate numeric, refund_amount numeric,
  refunded_at timestamptz, refund_reason text, created_at timestamptz, updated_at timestamptz`;

type RawRow = Record<string, unknown>;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** What the rows name, read in four statements whatever their number: stored lines, channels, locations, products. */
export async function loadOrderLinesState(tx: PoolClient, shop: string, rows: unknown[]) {
  const objs = rows.filter((r): r is RawRow => r !== null && typeof r === 'object' && !Array.isArray(r));
  const keys = objs.filter((r) => typeof r['line_instance_no'] === 'number' && Number.isInteger(r['line_instance_no']));
  const ids = (f: string) => [
    ...new Set(
      objs
        .map((r) => str(r[f]))
        .filter((v): v is string => v !== null && isUuid(v))
        .map((v) => v.toLowerCase()),
    ),
  ];

  // One client runs one statement at a time: sequential awaits, not Promise.all.
  const lines = keys.length
    ? await tx.query<OrderLine & { ordered_at: Date; refunded_at: Date | null; created_at: Date; updated_at: Date }>(
        `SELECT o.order_line_id, o.shop, o.source_system, o.transaction_id, o.transaction_line_id, o.line_instance_no, o.barcode,
                  o.ordered_at, o.currency, o.is_test, o.channel_id, o.location_id, o.customer_id, o.gross_amount_taxincl,
                  o.discount_amount_taxincl, o.net_amount_taxincl, o.net_amount_taxexcl, o.tax_amount, o.tax_rate,
                  o.refund_amount, o.refunded_at, o.refund_reason, o.created_at, o.updated_at
             FROM order_line_master o
             JOIN unnest($2::text[], $3::text[], $4::text[], $5::int[]) AS k(s, t, l, n)
               ON o.source_system = k.s AND o.transaction_id = k.t AND o.transaction_line_id = k.l AND o.line_instance_no = k.n
            WHERE o.shop = $1`,
        [
          shop,
          keys.map((r) => String(r['source_system'])),
          keys.map((r) => String(r['transaction_id'])),
          keys.map((r) => String(r['transaction_line_id'])),
          keys.map((r) => Math.min(Math.max(r['line_instance_no'] as number, -2147483648), 2147483647)),
        ],
      )
    : { rows: [] };
  const channels = await tx.query<{ id: string }>(
    'SELECT channel_id AS id FROM channels WHERE shop = $1 AND channel_id = ANY($2::uuid[])',
    [shop, ids('channel_id')],
  );
  const locations = await tx.query<{ id: string }>(
    'SELECT location_id AS id FROM locations WHERE shop = $1 AND location_id = ANY($2::uuid[])',
    [shop, ids('location_id')],
  );
  const products = await tx.query<{ barcode: string }>('SELECT barcode FROM products WHERE shop = $1 AND barcode = ANY($2::text[])', [
    shop,
    [...new Set(objs.map((r) => str(r['barcode'])).filter((v): v is string => v !== null))],
  ]);
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    lines: new Map(
      lines.rows.map((r) => {
        const line: OrderLine = {
          ...r,
          ordered_at: r.ordered_at.toISOString(),
          refunded_at: iso(r.refunded_at),
          created_at: r.created_at.toISOString(),
          updated_at: r.updated_at.toISOString(),
        };
        return [orderLineKey(line), line];
      }),
    ),
    channels: new Set(channels.rows.map((r) => r.id)),
    locations: new Set(locations.rows.map((r) => r.id)),
    barcodes: new Set(products.rows.map((r) => r.barcode)),
  };
}

export async function upsertOrderLines(tx: PoolClient, lines: OrderLine[], commandId: string): Promise<void> {
  if (lines.length === 0) return;
  await tx.query(
    `INSERT INTO order_line_master
       (order_line_id, shop, source_system, transaction_id, transaction_line_id, line_instance_no, barcode, ordered_at,
        currency, is_test, channel_id, location_id, customer_id, gross_amount_taxincl, discount_amount_taxincl,
        net_amount_taxincl, net_amount_taxexcl, tax_amount, tax_rate, refund_amount, refunded_at, refund_reason,
        created_at, updated_at, last_command_id)
     SELECT x.*, $2::uuid FROM jsonb_to_recordset($1::jsonb) AS x(${LINE_COLUMNS})
     ON CONFLICT (shop, source_system, transaction_id, transaction_line_id, line_instance_no) DO UPDATE SET
       barcode = EXCLUDED.barcode, ordered_at = EXCLUDED.ordered_at, currency = EXCLUDED.currency, is_test = EXCLUDED.is_test,
       channel_id = EXCLUDED.channel_id, location_id = EXCLUDED.location_id, customer_id = EXCLUDED.customer_id,
       gross_amount_taxincl = EXCLUDED.gross_amount_taxincl, discount_amount_taxincl = EXCLUDED.discount_amount_taxincl,
       net_amount_taxincl = EXCLUDED.net_amount_taxincl, net_amount_taxexcl = EXCLUDED.net_amount_taxexcl,
       tax_amount = EXCLUDED.tax_amount, tax_rate = EXCLUDED.tax_rate, refund_amount = EXCLUDED.refund_amount,
       refunded_at = EXCLUDED.refunded_at, refund_reason = EXCLUDED.refund_reason, updated_at = EXCLUDED.updated_at,
       last_command_id = EXCLUDED.last_command_id`,
    [JSON.stringify(lines), commandId],
  );
}

/** One statement for all the command's log records; `actor` is the command's, the same for every record (D28). */
export async function insertOrderLineLogs(tx: PoolClient, logs: OrderLineLog[], actor: string): Promise<void> {
  if (logs.length === 0) return;
  await tx.query(
    `INSERT INTO order_line_master_update_logs
       (log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id, line_instance_no, change_type,
        before_data, after_data, changed_fields, change_source, ingest_run_id, idempotency_key, changed_by_user_id,
        command_id, log_seq, created_at, actor)
     SELECT log_id, shop, order_line_id, source_system, transaction_id, transaction_line_id, line_instance_no, change_type,
            before_data, after_data, ARRAY(SELECT jsonb_array_elements_text(changed_fields)), change_source, ingest_run_id,
            idempotency_key, changed_by_user_id, command_id, log_seq, created_at, $2::text
       FROM jsonb_to_recordset($1::jsonb) AS x(log_id uuid, shop text, order_line_id uuid, source_system text,
            transaction_id text, transaction_line_id text, line_instance_no integer, change_type text, before_data jsonb,
            after_data jsonb, changed_fields jsonb, change_source text, ingest_run_id text, idempotency_key text,
            changed_by_user_id uuid, command_id uuid, log_seq integer, created_at timestamptz)`,
    [JSON.stringify(logs), actor],
  );
}
