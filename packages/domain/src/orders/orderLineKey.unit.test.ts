import { describe, expect, it } from 'vitest';
import { validOrderRow } from '../../testing/orderRow.ts';
import { orderLineId } from '../ids.ts';
import { decideOrderLines, type OrderLinesState, type OrderLinesUpsertCommand } from './decideOrderLines.ts';
import { orderLineKey } from './orderLine.ts';

// Endpoint 6: the unique key (shop, source_system, transaction_id, transaction_line_id,
// line_instance_no) keeps its parts apart, the logs carry the line's identity in before/after data
// (D21), and the registry and product-master findings name what they found (rules 5 and 6, D20).

const SHOP = 'shop.example';
const CH = '0190a000-0000-7000-8000-0000000000c1';
const LOC = '0190a000-0000-7000-8000-0000000000a1';
const OTHER = '0190a000-0000-7000-8000-0000000000ff';
const KNOWN = '4900000000001';
const CMD = '01900000-0000-7000-8000-000000000001';
const T1 = '2026-11-02T00:00:00.000Z';

const row = (over: Record<string, unknown> = {}) => validOrderRow({ barcode: KNOWN, channel_id: CH, location_id: LOC }, over);
const state: OrderLinesState = { lines: new Map(), channels: new Set([CH]), locations: new Set([LOC]), barcodes: new Set([KNOWN]) };
const command = (rows: unknown[]): OrderLinesUpsertCommand => ({
  kind: 'order_lines.upsert',
  command_id: CMD,
  shop: SHOP,
  received_at: T1,
  source: { endpoint: '/api/order-line-master/bulk-upsert' },
  actor: 'platform',
  payload: { rows, dry_run: false, change_source: 'external_app', ingest_run_id: null, idempotency_key: null, changed_by_user_id: null },
});
const decide = (rows: unknown[]) => decideOrderLines(state, command(rows), '1.0.0');

describe('the order line key', () => {
  it('keeps its parts apart: transaction T-1 line 2L and transaction T-12 line L are two lines', () => {
    const a = { source_system: 'pos', transaction_id: 'T-1', transaction_line_id: '2L', line_instance_no: 1 };
    const b = { source_system: 'pos', transaction_id: 'T-12', transaction_line_id: 'L', line_instance_no: 1 };
    expect(orderLineKey(a)).not.toBe(orderLineKey(b));
    const plan = decide([row(a), row(b)]);
    expect(plan.reply.body).toMatchObject({ accepted_rows: 2, inserted_rows: 2, updated_rows: 0 });
    expect(new Set(plan.upserts.map((u) => u.order_line_id)).size).toBe(2);
  });
});

describe('order line logs (D21)', () => {
  it('before_data and after_data carry the line id and the shop beside the key and the fields', () => {
    const first = decide([row()]);
    const id = orderLineId(
      SHOP,
      orderLineKey({ source_system: 'pos', transaction_id: 'T-1', transaction_line_id: 'L-1', line_instance_no: 1 }),
    );
    expect(first.logs[0]?.after_data).toMatchObject({ order_line_id: id, shop: SHOP, source_system: 'pos', transaction_id: 'T-1' });

    const stored = first.upserts[0]!;
    const second = decideOrderLines(
      { ...state, lines: new Map([[orderLineKey(stored), stored]]) },
      command([row({ customer_id: 'C-2' })]),
      '1.0.0',
    );
    expect(second.logs[0]?.before_data).toMatchObject({ order_line_id: id, shop: SHOP, customer_id: 'C-1' });
    expect(second.logs[0]?.after_data).toMatchObject({ order_line_id: id, shop: SHOP, customer_id: 'C-2' });
  });

  it('each log of one command has its own log_seq, in row order', () => {
    const plan = decide([row(), row({ line_instance_no: 2 }), row({ line_instance_no: 3 })]);
    expect(plan.logs.map((l) => l.log_seq)).toEqual([0, 1, 2]);
    expect(new Set(plan.logs.map((l) => l.log_id)).size).toBe(3);
  });
});

describe('registry and product-master findings name the value (spec rules 5 and 6, D20)', () => {
  it('channel_not_found and location_not_found name the id that is not of the shop', () => {
    expect(decide([row({ channel_id: OTHER, location_id: OTHER })]).reply.body['errors']).toEqual([
      { row_index: 0, field: 'channel_id', code: 'channel_not_found', message: `channel_id ${OTHER} is not a channel of this shop` },
      { row_index: 0, field: 'location_id', code: 'location_not_found', message: `location_id ${OTHER} is not a location of this shop` },
    ]);
  });

  it('product_not_in_master_warning names the barcode and what the read view then lacks', () => {
    expect(decide([row({ barcode: 'NEW-1' })]).reply.body['warnings']).toEqual([
      {
        row_index: 0,
        field: 'barcode',
        code: 'product_not_in_master_warning',
        message: 'barcode NEW-1 is not in the product master; stored without product name and SKU',
      },
    ]);
  });
});
