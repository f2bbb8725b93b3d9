// Command envelopes exactly as the gateway builds them (services/gateway/src/commands/submit.ts and routes/*):
// the schema version v, command_id UUIDv7, kind, shop, received_at, source.endpoint, actor (D28: platform, the shared secrets), the kind's
// meta fields, payload.
import {
  businessDate,
  COMMAND_VERSION,
  PLATFORM_ACTOR,
  type CommandRecord,
  type DailySnapshotCommand,
  type InventoryAvailableCommand,
  type InventoryLevelsCommand,
  type InventorySnapshotCommand,
  type OrderLinesUpsertCommand,
  type ProductsUpsertCommand,
  type RegisterChannelsCommand,
  type RegisterLocationsCommand,
  type SnapshotLine,
} from '@ingest/domain';
import { validOrderRow } from '@ingest/domain/testing';
import { payloadHash } from '@ingest/gateway';
import { nextInstant, uuidv7 } from './util.ts';

export const BUSINESS_TIMEZONE = 'Asia/Tokyo';

function meta(endpoint: string) {
  const at = nextInstant();
  return {
    v: COMMAND_VERSION,
    command_id: uuidv7(at.getTime()),
    received_at: at.toISOString(),
    source: { endpoint },
    actor: PLATFORM_ACTOR,
  };
}

/** A snapshot as the gateway builds it; `inventoryAsOf` (default: received_at) may be earlier, as a client may send it (D15b). */
export function snapshotCommand(
  shop: string,
  locationId: string,
  lines: SnapshotLine[],
  opts: { inventoryAsOf?: string; idempotencyKey?: string } = {},
): InventorySnapshotCommand {
  const m = meta('/api/ingest/inventory-snapshot');
  const location = { location_id: locationId };
  const asOf = opts.inventoryAsOf ?? m.received_at;
  return {
    ...m,
    kind: 'inventory.snapshot',
    shop,
    source_system: 'bench-wms',
    inventory_as_of: asOf,
    ...(opts.idempotencyKey ? { idempotency_key: opts.idempotencyKey } : {}),
    payload_hash: payloadHash({ location, lines }),
    payload: { location, snapshot_date: businessDate(asOf, BUSINESS_TIMEZONE), lines },
  };
}

/** The daily job's command (D16), as services/projector/src/dailyScheduler.ts appends it. */
export function dailySnapshotCommand(shop: string, snapshotDate: string): CommandRecord<DailySnapshotCommand> {
  const at = nextInstant();
  return {
    v: COMMAND_VERSION,
    command_id: uuidv7(at.getTime()),
    kind: 'inventory.daily_snapshot',
    shop,
    received_at: at.toISOString(),
    source: { endpoint: 'scheduler' },
    actor: PLATFORM_ACTOR,
    payload: { snapshot_date: snapshotDate },
  };
}

export function availableDeltaCommand(
  shop: string,
  locationId: string,
  lines: Array<{ barcode: string; available_delta: number }>,
): InventoryAvailableCommand {
  const m = meta('/api/ingest/inventory-available');
  const payload = { mode: 'delta' as const, location: { location_id: locationId }, lines };
  return {
    ...m,
    kind: 'inventory.available',
    shop,
    source_system: 'bench-oms',
    inventory_as_of: m.received_at,
    idempotency_key: `bench-${m.command_id}`,
    payload_hash: payloadHash(payload),
    payload,
  };
}

export function levelsAbsoluteCommand(
  shop: string,
  lines: Array<{ barcode: string; location_id: string; on_hand_qty: number; available_qty: number }>,
): InventoryLevelsCommand {
  const m = meta('/api/inventory-levels/bulk-upsert');
  const payload = {
    mode: 'absolute' as const,
    lines: lines.map((l) => ({
      barcode: l.barcode,
      location: { location_id: l.location_id },
      set: { on_hand_qty: l.on_hand_qty, available_qty: l.available_qty },
    })),
  };
  return {
    ...m,
    kind: 'inventory.levels',
    shop,
    source_system: 'bench-oms',
    inventory_as_of: m.received_at,
    payload_hash: payloadHash(payload),
    payload,
  };
}

export function orderLinesCommand(shop: string, rows: Array<Record<string, unknown>>): OrderLinesUpsertCommand {
  return {
    ...meta('/api/order-line-master/bulk-upsert'),
    kind: 'order_lines.upsert',
    shop,
    payload: { rows, dry_run: false, change_source: 'external_app', ingest_run_id: null, idempotency_key: null, changed_by_user_id: null },
  };
}

export function productsUpsertCommand(
  shop: string,
  products: Array<{ barcode: string; product_name: string; current_price?: number }>,
): ProductsUpsertCommand {
  return {
    ...meta('/api/ingest/products'),
    kind: 'products.upsert',
    shop,
    payload: { response: 'ingest', items: products.map((product) => ({ product })) },
  };
}

export function registerLocationsCommand(shop: string, locations: Array<{ location_id: string; name: string }>): RegisterLocationsCommand {
  return {
    ...meta('/api/admin/locations'),
    kind: 'locations.register',
    shop,
    payload: { locations: locations.map((l) => ({ ...l, identifiers: [{ identifier_type: 'store_code', identifier_value: l.name }] })) },
  };
}

export function registerChannelsCommand(shop: string, channels: Array<{ channel_id: string; name: string }>): RegisterChannelsCommand {
  return { ...meta('/api/admin/channels'), kind: 'channels.register', shop, payload: { channels } };
}

/** An order line row as a client sends it; amounts satisfy the D20 identities. */
export function orderRow(
  key: { transaction_id: string; line: number },
  refs: { barcode: string; channel_id: string; location_id: string },
  customer: string,
): Record<string, unknown> {
  return validOrderRow(refs, {
    source_system: 'bench-pos',
    transaction_id: key.transaction_id,
    transaction_line_id: String(key.line),
    ordered_at: '2026-03-01T01:02:03.000Z',
    customer_id: customer,
  });
}
