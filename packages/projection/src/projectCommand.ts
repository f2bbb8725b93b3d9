import type { PoolClient } from '@ingest/db';
import type { Command } from '@ingest/domain';
import { projectDailySnapshot } from './inventory/projectDailySnapshot.ts';
import { projectInventory } from './inventory/projectInventory.ts';
import type { Projection } from './projection.ts';
import { projectOrderLines } from './orders/projectOrderLines.ts';
import { projectProductsUpsert } from './products/projectProductsUpsert.ts';
import { projectRegisterChannels, projectRegisterLocations } from './registry/projectRegistry.ts';

export type { Projection } from './projection.ts';

/** Dispatches a claimed command to its projection; runs inside the command's transaction. */
export async function projectCommand(tx: PoolClient, command: Command): Promise<Projection> {
  const kind = command.kind;
  switch (kind) {
    case 'products.upsert':
      return projectProductsUpsert(tx, command);
    case 'locations.register':
      return projectRegisterLocations(tx, command);
    case 'channels.register':
      return projectRegisterChannels(tx, command);
    case 'inventory.snapshot':
    case 'inventory.available':
    case 'inventory.levels':
      return projectInventory(tx, command);
    case 'inventory.daily_snapshot':
      return projectDailySnapshot(tx, command);
    case 'order_lines.upsert':
      return projectOrderLines(tx, command);
    default: {
      const _exhaustive: never = kind;
      throw new Error(`unknown command kind ${String(_exhaustive)}`);
    }
  }
}
