// Types generated from schemas/ (type-only: safe for the pure domain package to import).
export type { ProductInput } from './generated/http.product.ts';
export type { ProductsBulkUpsertRequest } from './generated/http.products-bulk-upsert.request.ts';
export type { ProductsIngestRequest } from './generated/http.products-ingest.request.ts';
export type { CommandEnvelope } from './generated/commands.envelope.ts';
export type { ProductsUpsertPayload } from './generated/commands.products-upsert.ts';
export type { AuditRecord } from './generated/events.audit-record.ts';
export type { InventorySnapshotLine } from './generated/http.inventory-snapshot.lines.ts';
export type { OrderLinesUpsertPayload } from './generated/commands.order-lines-upsert.ts';
