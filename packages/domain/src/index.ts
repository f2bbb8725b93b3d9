export type { Command, CommandKind, CommandMeta, ProductsUpsertCommand, Reply } from './commands.ts';
export { productId, logId, eventId } from './ids.ts';
export { PRODUCT_FIELDS, productData, changeTypeOf, type Product, type ProductField, type ProductChangeType } from './products/product.ts';
export {
  decideProductsUpsert,
  type ProductLog,
  type ProductsUpsertPlan,
  type ProductsState,
} from './products/decideProductsUpsert.ts';
export { auditEvent, cloudEventHeaders, CLOUDEVENTS_SOURCE, type EventChannel, type LogTable, type OutboxEvent } from './events.ts';
