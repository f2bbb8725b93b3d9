import type { OrderLinesUpsertPayload } from '@ingest/contracts/types';
import type { CommandMeta, Reply } from '../commandMeta.ts';
import { logId, orderLineId } from '../ids.ts';
import { KEY_FIELDS, ORDER_LINE_FIELDS, orderLineData, orderLineKey, type OrderLine } from './orderLine.ts';
import { validateRow, type RowProblem } from './validateRow.ts';

export interface OrderLinesUpsertCommand extends CommandMeta {
  kind: 'order_lines.upsert';
  payload: OrderLinesUpsertPayload;
}

export type OrderLineChangeType = 'insert' | 'update' | 'refund';

export interface OrderLineLog {
  log_id: string;
  shop: string;
  order_line_id: string;
  source_system: string;
  transaction_id: string;
  transaction_line_id: string;
  line_instance_no: number;
  change_type: OrderLineChangeType;
  before_data: Record<string, unknown> | null;
  after_data: Record<string, unknown>;
  changed_fields: string[];
  change_source: string;
  ingest_run_id: string | null;
  idempotency_key: string | null;
  changed_by_user_id: string | null;
  command_id: string;
  log_seq: number;
  created_at: string;
}

export interface OrderLinesState {
  /** Stored lines by orderLineKey, for the keys the rows name. */
  lines: ReadonlyMap<string, OrderLine>;
  /** The shop's channel and location ids among those the rows name, and its known barcodes. */
  channels: ReadonlySet<string>;
  locations: ReadonlySet<string>;
  barcodes: ReadonlySet<string>;
}

export interface OrderLinesPlan {
  upserts: OrderLine[];
  logs: OrderLineLog[];
  reply: Reply;
}

/** D21: an update that raises refund_amount or sets refunded_at from null is a refund. */
function changeTypeOf(before: OrderLine, after: OrderLine): OrderLineChangeType {
  if (after.refund_amount > before.refund_amount || (before.refunded_at === null && after.refunded_at !== null)) return 'refund';
  return 'update';
}

function same(a: unknown, b: unknown): boolean {
  return a === b;
}

/**
 * Endpoint 6: every row is checked (D20); valid rows are upserted by their key in request order
 * (D6a), identical rows are no-ops (D21), unknown barcodes are stored with a warning, and a dry
 * run answers the same counts and writes nothing (D22).
 */
export function decideOrderLines(state: OrderLinesState, c: OrderLinesUpsertCommand, adapterVersion: string): OrderLinesPlan {
  const p = c.payload;
  const current = new Map(state.lines);
  const touched = new Set<string>();
  const logs: OrderLineLog[] = [];
  const errors: RowProblem[] = [];
  const warnings: RowProblem[] = [];
  let accepted = 0;
  let inserted = 0;
  let updated = 0;
  let rejected = 0;
  // D27 applies to the commands appended since; older ones carry no value and keep their projection (D3, D26).
  const unknownFields = p.unknown_fields ?? 'ignore';
  // row_problems: what only the gateway could see (a number JSON parsing rounded) or checked on receipt.
  const found = new Map<number, RowProblem[]>();
  for (const problem of p.row_problems ?? []) found.set(problem.row_index, [...(found.get(problem.row_index) ?? []), problem]);

  p.rows.forEach((raw, i) => {
    const { line, errors: rowErrors, ids } = validateRow(raw, i, unknownFields);
    if (ids.channel_id && !state.channels.has(ids.channel_id))
      rowErrors.push({
        row_index: i,
        field: 'channel_id',
        code: 'channel_not_found',
        message: `channel_id ${ids.channel_id} is not a channel of this shop`,
      });
    if (ids.location_id && !state.locations.has(ids.location_id))
      rowErrors.push({
        row_index: i,
        field: 'location_id',
        code: 'location_not_found',
        message: `location_id ${ids.location_id} is not a location of this shop`,
      });
    rowErrors.push(...(found.get(i) ?? []));
    if (!line || rowErrors.length) {
      errors.push(...rowErrors);
      rejected++;
      return;
    }
    accepted++;
    if (!state.barcodes.has(line.barcode))
      warnings.push({
        row_index: i,
        field: 'barcode',
        code: 'product_not_in_master_warning',
        message: `barcode ${line.barcode} is not in the product master; stored without product name and SKU`,
      });

    const key = orderLineKey(line);
    const before = current.get(key);
    const after: OrderLine = {
      ...line,
      order_line_id: before?.order_line_id ?? orderLineId(c.shop, key),
      shop: c.shop,
      created_at: before?.created_at ?? c.received_at,
      updated_at: c.received_at,
    };
    const changed = before ? ORDER_LINE_FIELDS.filter((f) => !same(before[f], after[f])) : [...KEY_FIELDS, ...ORDER_LINE_FIELDS];
    if (before && changed.length === 0) return; // identical: accepted, no write, no log (D21)
    const type: OrderLineChangeType = before ? changeTypeOf(before, after) : 'insert';
    if (before) updated++;
    else inserted++;
    current.set(key, after);
    touched.add(key);
    logs.push({
      log_id: logId(c.command_id, logs.length),
      shop: c.shop,
      order_line_id: after.order_line_id,
      source_system: after.source_system,
      transaction_id: after.transaction_id,
      transaction_line_id: after.transaction_line_id,
      line_instance_no: after.line_instance_no,
      change_type: type,
      before_data: before ? orderLineData(before) : null,
      after_data: orderLineData(after),
      changed_fields: [...changed],
      change_source: p.change_source,
      ingest_run_id: p.ingest_run_id,
      idempotency_key: p.idempotency_key,
      changed_by_user_id: p.changed_by_user_id,
      command_id: c.command_id,
      log_seq: logs.length,
      created_at: c.received_at,
    });
  });

  const reply: Reply = {
    status: 200,
    body: {
      ok: true,
      dry_run: p.dry_run,
      accepted_rows: accepted,
      inserted_rows: inserted,
      updated_rows: updated,
      rejected_rows: rejected,
      warnings_count: warnings.length,
      errors,
      warnings,
      adapter_version: adapterVersion,
    },
  };
  // D22: a dry run answers what a real run would and writes nothing.
  if (p.dry_run) return { upserts: [], logs: [], reply };
  return { upserts: [...touched].map((k) => current.get(k) as OrderLine), logs, reply };
}
