// Types generated from schemas/ (type-only: safe for the pure domain package to import). The one
// source of every command, event and request shape (docs/architecture.md
// "Contracts and fixtures"): code states no copy of them, it names these or derives from them.
import type { LocationRef as LocationRefProperties } from './generated/commands.inventory-snapshot.ts';

// HTTP request bodies (schemas/http).
export type { ProductInput } from './generated/http.product.ts';
export type { ProductsBulkUpsertRequest } from './generated/http.products-bulk-upsert.request.ts';
export type { ProductsIngestRequest } from './generated/http.products-ingest.request.ts';
export type { RegisterLocationsRequest, LocationInput } from './generated/http.admin-locations.request.ts';
export type { RegisterChannelsRequest, ChannelInput } from './generated/http.admin-channels.request.ts';
export type { DailySnapshotRequest } from './generated/http.admin-daily-snapshot.request.ts';
export type { CreateApiKeyRequest } from './generated/http.admin-keys.request.ts';
export type { RetryParkedRequest } from './generated/http.admin-parked-retry.request.ts';
export type { SkipParkedRequest } from './generated/http.admin-parked-skip.request.ts';
export type { InventorySnapshotRequest } from './generated/http.inventory-snapshot.request.ts';
export type { InventorySnapshotLines, InventorySnapshotLine } from './generated/http.inventory-snapshot.lines.ts';
export type { InventoryAvailableRequest } from './generated/http.inventory-available.request.ts';
export type { InventoryAvailableAbsoluteLines } from './generated/http.inventory-available.absolute-lines.ts';
export type { InventoryAvailableDeltaLines } from './generated/http.inventory-available.delta-lines.ts';
export type { InventoryLevelsRequest } from './generated/http.inventory-levels.request.ts';
export type { OrderLinesBulkUpsertRequest } from './generated/http.order-lines.request.ts';
export type { OrderLineRow } from './generated/http.order-line.ts';

// Commands on the log (schemas/commands).
export type { CommandEnvelope } from './generated/commands.envelope.ts';
export type { ProductsUpsertPayload } from './generated/commands.products-upsert.ts';
export type { RegisterLocationsPayload, ExternalLocationRef } from './generated/commands.locations-register.ts';
export type { RegisterChannelsPayload } from './generated/commands.channels-register.ts';
export type { InventorySnapshotPayload } from './generated/commands.inventory-snapshot.ts';
export type { InventoryAvailablePayload } from './generated/commands.inventory-available.ts';
export type { InventoryLevelsPayload } from './generated/commands.inventory-levels.ts';
export type { DailySnapshotPayload } from './generated/commands.daily-snapshot.ts';
export type { OrderLinesUpsertPayload } from './generated/commands.order-lines-upsert.ts';

// Events (schemas/events).
export type { AuditRecord } from './generated/events.audit-record.ts';
export type { StockLevelEvent } from './generated/events.stock-level-event.ts';
export type { OperatorAction as OperatorActionEvent } from './generated/events.operator-action.ts';

/**
 * Exactly one of T's properties, present and defined: what a schema's `minProperties: 1,
 * maxProperties: 1` says and the generator cannot (it makes every property optional).
 */
export type ExactlyOne<T> = { [K in keyof T]-?: { [P in K]-?: Exclude<T[P], undefined> } }[keyof T];

/** How a command names a location (spec: Location reference): `location_id` or `location`, one of them. */
export type LocationRef = ExactlyOne<LocationRefProperties>;
