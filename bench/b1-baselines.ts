// B1 baselines: the same rows the projector writes, through a bare upsert from unnest(…) and through COPY.
import type { PoolClient } from '@ingest/db';
import { orderLineId, orderLineKey, type InventorySnapshotCommand, type OrderLinesUpsertCommand } from '@ingest/domain';
import { copyField, copyIn } from './lib/db.ts';

const QTY = ['on_hand_qty', 'available_qty', 'allocated_qty', 'reserved_qty', 'incoming_qty'] as const;

export type Rows =
  | {
      kind: 'levels';
      shop: string;
      location_id: string;
      at: string;
      command_id: string;
      product_id: string[];
      barcode: string[];
      qty: number[][];
    }
  | { kind: 'orders'; shop: string; at: string; command_id: string; cols: Record<string, unknown[]> };

export function levelRows(c: InventorySnapshotCommand, productIds: ReadonlyMap<string, string>): Rows {
  const lines = c.payload.lines;
  return {
    kind: 'levels',
    shop: c.shop,
    location_id: (c.payload.location as { location_id: string }).location_id,
    at: c.received_at,
    command_id: c.command_id,
    product_id: lines.map((l) => productIds.get(l.barcode)!),
    barcode: lines.map((l) => l.barcode),
    qty: QTY.map((f) =>
      lines.map((l) => (f === 'on_hand_qty' ? l.on_hand_qty : f === 'available_qty' ? (l.available_qty ?? l.on_hand_qty) : (l[f] ?? 0))),
    ),
  };
}

const ORDER_COLS = [
  ['order_line_id', 'uuid'],
  ['source_system', 'text'],
  ['transaction_id', 'text'],
  ['transaction_line_id', 'text'],
  ['line_instance_no', 'int'],
  ['barcode', 'text'],
  ['ordered_at', 'timestamptz'],
  ['currency', 'text'],
  ['is_test', 'boolean'],
  ['channel_id', 'uuid'],
  ['location_id', 'uuid'],
  ['customer_id', 'text'],
  ['gross_amount_taxincl', 'numeric'],
  ['discount_amount_taxincl', 'numeric'],
  ['net_amount_taxincl', 'numeric'],
  ['net_amount_taxexcl', 'numeric'],
  ['tax_amount', 'numeric'],
  ['tax_rate', 'numeric'],
  ['refund_amount', 'numeric'],
  ['refunded_at', 'timestamptz'],
  ['refund_reason', 'text'],
] as const;

export function orderLineRows(c: OrderLinesUpsertCommand): Rows {
  const rows = c.payload.rows as Array<Record<string, unknown>>;
  const cols: Record<string, unknown[]> = Object.fromEntries(ORDER_COLS.map(([n]) => [n, [] as unknown[]]));
  for (const r of rows) {
    const key = orderLineKey(r as { source_system: string; transaction_id: string; transaction_line_id: string; line_instance_no: number });
    for (const [n] of ORDER_COLS) cols[n]!.push(n === 'order_line_id' ? orderLineId(c.shop, key) : r[n]);
  }
  return { kind: 'orders', shop: c.shop, at: c.received_at, command_id: c.command_id, cols };
}

const LEVEL_SET = `on_hand_qty = EXCLUDED.on_hand_qty, available_qty = EXCLUDED.available_qty, allocated_qty = EXCLUDED.allocated_qty,
  reserved_qty = EXCLUDED.reserved_qty, incoming_qty = EXCLUDED.incoming_qty, last_absolute_as_of = EXCLUDED.last_absolute_as_of,
  updated_at = EXCLUDED.updated_at, last_command_id = EXCLUDED.last_command_id`;

export async function bareLevels(r: Rows, client: PoolClient): Promise<void> {
  if (r.kind !== 'levels') throw new Error('level rows expected');
  await client.query(
    `INSERT INTO sot.inventory_levels (shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
            incoming_qty, last_absolute_as_of, stock_event_seq, created_at, updated_at, last_command_id)
     SELECT $1, u.p, $2::uuid, u.b, u.q1, u.q2, u.q3, u.q4, u.q5, $3::timestamptz, 0, $3::timestamptz, $3::timestamptz, $4::uuid
       FROM unnest($5::uuid[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[]) AS u(p, b, q1, q2, q3, q4, q5)
     ON CONFLICT (shop, product_id, location_id) DO UPDATE SET ${LEVEL_SET}`,
    [r.shop, r.location_id, r.at, r.command_id, r.product_id, r.barcode, ...r.qty],
  );
}

export async function copyLevels(r: Rows, client: PoolClient): Promise<void> {
  if (r.kind !== 'levels') throw new Error('level rows expected');
  const out: string[] = [];
  const fixed = [r.shop, r.location_id];
  for (let i = 0; i < r.product_id.length; i++) {
    out.push(
      [fixed[0], r.product_id[i], fixed[1], copyField(r.barcode[i]), ...r.qty.map((q) => q[i]), r.at, 0, r.at, r.at, r.command_id].join(
        '\t',
      ),
    );
  }
  await copyIn(
    client,
    `COPY public.bench_copy_levels (shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
          incoming_qty, last_absolute_as_of, stock_event_seq, created_at, updated_at, last_command_id) FROM STDIN`,
    Buffer.from(out.join('\n') + '\n'),
  );
}

export async function bareOrders(r: Rows, client: PoolClient): Promise<void> {
  if (r.kind !== 'orders') throw new Error('order rows expected');
  const names = ORDER_COLS.map(([n]) => n);
  const sets = names.filter(
    (n) => !['order_line_id', 'source_system', 'transaction_id', 'transaction_line_id', 'line_instance_no'].includes(n),
  );
  await client.query(
    `INSERT INTO public.order_line_master (shop, ${names.join(', ')}, created_at, updated_at, last_command_id)
     SELECT $1, u.*, $2::timestamptz, $2::timestamptz, $3::uuid
       FROM unnest(${ORDER_COLS.map(([, t], i) => `$${i + 4}::${t}[]`).join(', ')}) AS u(${names.join(', ')})
     ON CONFLICT (shop, source_system, transaction_id, transaction_line_id, line_instance_no) DO UPDATE SET
       ${[...sets, 'updated_at', 'last_command_id'].map((n) => `${n} = EXCLUDED.${n}`).join(', ')}`,
    [r.shop, r.at, r.command_id, ...names.map((n) => r.cols[n])],
  );
}

export async function copyOrders(r: Rows, client: PoolClient): Promise<void> {
  if (r.kind !== 'orders') throw new Error('order rows expected');
  const names = ORDER_COLS.map(([n]) => n);
  const n = r.cols['order_line_id']!.length;
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push([r.shop, ...names.map((c) => copyField(r.cols[c]![i])), r.at, r.at, r.command_id].join('\t'));
  await copyIn(
    client,
    `COPY public.bench_copy_order_lines (shop, ${names.join(', ')}, created_at, updated_at, last_command_id) FROM STDIN`,
    Buffer.from(out.join('\n') + '\n'),
  );
}
