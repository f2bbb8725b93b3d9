import type { PoolClient } from '@ingest/db';
import { auditBatch, decideProductsUpsert, type OutboxEvent, type ProductsUpsertCommand, type Reply } from '@ingest/domain';
import { insertProductLogs, loadProducts, upsertProducts } from './productsStore.ts';

/** load -> decide -> apply for products.upsert (endpoints 1 and 2, D7). */
export async function projectProductsUpsert(
  tx: PoolClient,
  command: ProductsUpsertCommand,
): Promise<{ reply: Reply; events: OutboxEvent[] }> {
  const barcodes = [...new Set(command.payload.items.flatMap((i) => (i.product ? [i.product.barcode] : [])))];
  const state = await loadProducts(tx, command.shop, barcodes);
  const plan = decideProductsUpsert(state, command);
  await upsertProducts(tx, plan.upserts, command.command_id);
  await insertProductLogs(tx, plan.logs, command.actor);
  return {
    reply: plan.reply,
    events: plan.logs.length ? [auditBatch('product_update_logs', command.command_id, command.shop)] : [],
  };
}
