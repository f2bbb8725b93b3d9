import type {
  CommandEnvelope,
  ExactlyOne,
  InventoryAvailablePayload,
  InventoryLevelsPayload,
  InventorySnapshotLine,
  InventorySnapshotPayload,
} from '@ingest/contracts/types';
import type { CommandMeta } from '../commandMeta.ts';
import type { LocationRef } from './location.ts';

/**
 * Fields every inventory command carries (schemas/commands/envelope.json): the gateway always sets
 * source_system and inventory_as_of, defaulted to its receive time (D3).
 */
export type InventoryMeta = CommandMeta &
  Required<Pick<CommandEnvelope, 'source_system' | 'inventory_as_of'>> &
  Pick<CommandEnvelope, 'idempotency_key' | 'payload_hash'>;

/** A snapshot line as schemas/http/inventory-snapshot.lines.json defines it. */
export type SnapshotLine = InventorySnapshotLine;

export interface InventorySnapshotCommand extends InventoryMeta {
  kind: 'inventory.snapshot';
  /** snapshot_date: the business date of inventory_as_of, decided by the gateway (D16). */
  payload: Omit<InventorySnapshotPayload, 'location'> & { location: LocationRef };
}

type AvailableLineProperties = InventoryAvailablePayload['lines'][number];
/** A line of schemas/commands/inventory-available.json: its barcode and one of available_qty, available_delta. */
export type AvailableLine = Pick<AvailableLineProperties, 'barcode'> & ExactlyOne<Omit<AvailableLineProperties, 'barcode'>>;

export interface InventoryAvailableCommand extends InventoryMeta {
  kind: 'inventory.available';
  payload: Omit<InventoryAvailablePayload, 'location' | 'lines'> & { location: LocationRef; lines: AvailableLine[] };
}

/** A levels line as the gateway normalised it: `set` for absolute mode, `delta` for delta mode (D17). */
export type LevelsLine = Omit<InventoryLevelsPayload['lines'][number], 'location'> & { location: LocationRef };

export interface InventoryLevelsCommand extends InventoryMeta {
  kind: 'inventory.levels';
  payload: Omit<InventoryLevelsPayload, 'lines'> & { lines: LevelsLine[] };
}

export type InventoryCommand = InventorySnapshotCommand | InventoryAvailableCommand | InventoryLevelsCommand;
