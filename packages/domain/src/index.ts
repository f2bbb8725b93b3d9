export { PLATFORM_ACTOR, type Command, type CommandKind, type CommandMeta, type ProductsUpsertCommand, type Reply } from './commands.ts';
export { productId, logId, eventId, isUuid } from './ids.ts';
export {
  COMMAND_UPCASTERS,
  COMMAND_VERSION,
  COMMAND_VERSIONS,
  unchanged,
  upcast,
  versionOf,
  type CommandRecord,
  type CommandVersions,
  type StoredCommand,
  type Upcaster,
  type Upcasters,
  type UpcastResult,
} from './versions/commandVersions.ts';
export { PRODUCT_FIELDS, productData, changeTypeOf, type Product, type ProductField, type ProductChangeType } from './products/product.ts';
export { decideProductsUpsert, type ProductLog, type ProductsUpsertPlan, type ProductsState } from './products/decideProductsUpsert.ts';
export {
  auditBatch,
  auditEvent,
  cloudEventHeaders,
  CLOUDEVENTS_SOURCE,
  EVENT_DATA_SCHEMAS,
  operatorActionEvent,
  withDataschema,
  type AuditedLog,
  type EventChannel,
  type LogTable,
  type OperatorActionFacts,
  type OutboxEvent,
} from './events.ts';
export type { DailySnapshotCommand } from './commands.ts';
export {
  QTY_FIELDS,
  QTY_MAX,
  ZERO,
  clampQty,
  levelKey,
  quantities,
  isBefore,
  type Level,
  type QtyField,
  type Quantities,
} from './inventory/level.ts';
export { locationRefKey, resolveLocation, describeRef, type LocationRef, type Resolution } from './inventory/location.ts';
export type {
  InventoryCommand,
  InventoryMeta,
  InventorySnapshotCommand,
  InventoryAvailableCommand,
  InventoryLevelsCommand,
  SnapshotLine,
  AvailableLine,
  LevelsLine,
} from './inventory/inventoryCommand.ts';
export { LevelBook, type InventoryLog } from './inventory/levelBook.ts';
export type { InventoryState, InventoryPlan, DailyRow } from './inventory/inventoryState.ts';
export { inventoryEvents, stockEvent, type InventoryChangeType, type StockChange, type StockEventKind } from './inventory/outcome.ts';
export {
  availableClamp,
  availableReply,
  levelsClamp,
  levelsReply,
  locationNotResolved,
  newTally,
  productNotFound,
  snapshotReply,
  staleLine,
  stockZeroLine,
  type AvailableClamp,
  type LevelsClamp,
  type LineTally,
  type SnapshotTally,
  type StaleLine,
  type StockZeroLine,
  type Unresolved,
} from './inventory/outcome.ts';
export { DailyBook, dailyKey, sameDailyValues } from './inventory/dailyBook.ts';
export { decideSnapshot } from './inventory/decideSnapshot.ts';
export { decideAvailable } from './inventory/decideAvailable.ts';
export { decideLevels } from './inventory/decideLevels.ts';
export {
  decideRegisterLocations,
  decideRegisterChannels,
  type RegisterLocationsCommand,
  type RegisterChannelsCommand,
  type RegistryPlan,
  type RegistryRow,
  type RegistryState,
  type LocationIdentifier,
} from './registry/decideRegistry.ts';
export { orderLineId } from './ids.ts';
export { ORDER_LINE_FIELDS, KEY_FIELDS, orderLineKey, orderLineData, type OrderLine, type OrderLineField } from './orders/orderLine.ts';
export { validateRow, type RowProblem, type UnknownFields } from './orders/validateRow.ts';
export { toDecimal, withinTolerance } from './orders/decimal.ts';
export {
  decideOrderLines,
  type OrderLinesUpsertCommand,
  type OrderLinesState,
  type OrderLinesPlan,
  type OrderLineLog,
  type OrderLineChangeType,
} from './orders/decideOrderLines.ts';
export { parseInstant, inBusinessTime, BUSINESS_TIME } from './instant.ts';
export { businessDate, compressedClock, previousDate } from './businessDate.ts';
