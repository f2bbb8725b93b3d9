import type { DailySnapshotPayload, ProductsUpsertPayload } from '@ingest/contracts/types';
import type { InventoryCommand } from './inventory/inventoryCommand.ts';
import type { RegisterChannelsCommand, RegisterLocationsCommand } from './registry/decideRegistry.ts';
import type { OrderLinesUpsertCommand } from './orders/decideOrderLines.ts';
import type { CommandMeta } from './commandMeta.ts';

export { PLATFORM_ACTOR, type CommandMeta, type Reply } from './commandMeta.ts';

export interface ProductsUpsertCommand extends CommandMeta {
  kind: 'products.upsert';
  payload: ProductsUpsertPayload;
}

/** D16: copy every level of the shop into the daily table for snapshot_date. */
export interface DailySnapshotCommand extends CommandMeta {
  kind: 'inventory.daily_snapshot';
  payload: DailySnapshotPayload;
}

export type Command =
  | ProductsUpsertCommand
  | RegisterLocationsCommand
  | RegisterChannelsCommand
  | InventoryCommand
  | DailySnapshotCommand
  | OrderLinesUpsertCommand;
export type CommandKind = Command['kind'];
