import type { InventorySnapshotLine } from '@ingest/contracts/types';
import type { CommandMeta } from '../commandMeta.ts';
import type { LocationRef } from './location.ts';
import type { QtyField } from './level.ts';

/** Fields every inventory command carries; inventory_as_of was defaulted by the gateway (D3). */
export interface InventoryMeta extends CommandMeta {
  source_system: string;
  inventory_as_of: string;
  idempotency_key?: string;
  /** Hash of the request's payload, computed by the gateway for delta requests with an idempotency_key (D19). */
  payload_hash?: string;
}

/** A snapshot line as schemas/http/inventory-snapshot.lines.json defines it. */
export type SnapshotLine = InventorySnapshotLine;

export interface InventorySnapshotCommand extends InventoryMeta {
  kind: 'inventory.snapshot';
  /** snapshot_date: the business date of inventory_as_of, decided by the gateway (D16). */
  payload: { location: LocationRef; snapshot_date: string; lines: SnapshotLine[] };
}

export type AvailableLine = { barcode: string; available_qty: number } | { barcode: string; available_delta: number };

export interface InventoryAvailableCommand extends InventoryMeta {
  kind: 'inventory.available';
  payload: { mode: 'absolute' | 'delta'; location: LocationRef; lines: AvailableLine[] };
}

/** A levels line as the gateway normalised it: `set` for absolute mode, `delta` for delta mode (D17). */
export interface LevelsLine {
  barcode: string;
  location: LocationRef;
  set?: Partial<Record<QtyField, number>>;
  delta?: Partial<Record<QtyField, number>>;
}

export interface InventoryLevelsCommand extends InventoryMeta {
  kind: 'inventory.levels';
  payload: { mode: 'absolute' | 'delta'; lines: LevelsLine[] };
}

export type InventoryCommand = InventorySnapshotCommand | InventoryAvailableCommand | InventoryLevelsCommand;
