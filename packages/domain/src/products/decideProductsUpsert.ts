import type { ProductInput } from '@ingest/contracts/types';
import type { ProductsUpsertCommand } from '../commands.ts';
import type { Reply } from '../commandMeta.ts';
import { logId, productId } from '../ids.ts';
import { changeTypeOf, PRODUCT_FIELDS, productData, type Product, type ProductChangeType, type ProductField } from './product.ts';

export interface ProductLog {
  log_id: string;
  shop: string;
  product_id: string;
  barcode: string;
  change_type: ProductChangeType;
  before_data: Record<string, unknown> | null;
  after_data: Record<string, unknown>;
  changed_fields: string[];
  change_source: string;
  command_id: string;
  /** Order of the record within its command. */
  log_seq: number;
  created_at: string;
}

export interface ProductsUpsertPlan {
  /** Final state of every product the command created or changed, one per barcode. */
  upserts: Product[];
  logs: ProductLog[];
  reply: Reply;
}

/** Stored products of the shop, by barcode: those the command's items name. */
export type ProductsState = ReadonlyMap<string, Product>;

const DEFAULTS_ON_CREATE = { currency: 'JPY', is_active: true } as const;

/**
 * Endpoints 1 and 2 (D7): upsert by shop + barcode. Items apply in order, exactly as if each had been
 * sent alone (D6a); an omitted optional field keeps its stored value and null clears it (D10).
 */
export function decideProductsUpsert(state: ProductsState, command: ProductsUpsertCommand): ProductsUpsertPlan {
  const { shop, command_id: commandId, received_at: at } = command;
  const current = new Map(state);
  const touched = new Set<string>();
  const logs: ProductLog[] = [];
  const errors: { barcode: string; error: string }[] = [];
  let created = 0;
  let updated = 0;
  let unchanged = 0;

  const log = (p: Product, type: ProductChangeType, before: Product | null, fields: string[]): void => {
    logs.push({
      log_id: logId(commandId, logs.length),
      log_seq: logs.length,
      shop,
      product_id: p.product_id,
      barcode: p.barcode,
      change_type: type,
      before_data: before ? productData(before) : null,
      after_data: productData(p),
      changed_fields: fields,
      change_source: command.source.endpoint,
      command_id: commandId,
      created_at: at,
    });
  };

  for (const item of command.payload.items) {
    if (item.rejected) {
      errors.push(item.rejected);
      continue;
    }
    const input = item.product;
    if (!input) continue;
    const before = current.get(input.barcode);
    if (!before) {
      const p = createProduct(shop, input, at);
      current.set(p.barcode, p);
      touched.add(p.barcode);
      created++;
      log(
        p,
        'created',
        null,
        PRODUCT_FIELDS.filter((f) => p[f] !== null),
      );
      continue;
    }
    const changed = PRODUCT_FIELDS.filter((f) => f in input && input[f] !== undefined && !same(before[f], input[f]));
    if (changed.length === 0) {
      unchanged++;
      continue;
    }
    const after: Product = { ...before, updated_at: at };
    for (const f of changed) (after as unknown as Record<ProductField, unknown>)[f] = input[f] ?? null;
    current.set(after.barcode, after);
    touched.add(after.barcode);
    updated++;
    // One log per kind of change, in a fixed order (D10: both, if both changed).
    for (const type of ['price_change', 'name_change', 'attribute_change'] as const) {
      const fields = changed.filter((f) => changeTypeOf(f) === type);
      if (fields.length) log(after, type, before, fields);
    }
  }

  const counts = { created, updated, unchanged };
  const body =
    command.payload.response === 'ingest' ? { ok: true, ...counts, errors_count: errors.length, errors } : { ok: true, ...counts, errors };
  return {
    upserts: [...touched].map((barcode) => current.get(barcode) as Product),
    logs,
    reply: { status: 200, body },
  };
}

function createProduct(shop: string, input: ProductInput, at: string): Product {
  return {
    product_id: productId(shop, input.barcode),
    shop,
    barcode: input.barcode,
    product_name: input.product_name,
    sku: input.sku ?? null,
    variant_name: input.variant_name ?? null,
    brand: input.brand ?? null,
    category_l1: input.category_l1 ?? null,
    category_l2: input.category_l2 ?? null,
    category_l3: input.category_l3 ?? null,
    current_price: input.current_price ?? null,
    current_cost: input.current_cost ?? null,
    currency: input.currency === undefined ? DEFAULTS_ON_CREATE.currency : input.currency,
    is_active: input.is_active ?? DEFAULTS_ON_CREATE.is_active,
    created_at: at,
    updated_at: at,
  };
}

function same(a: unknown, b: unknown): boolean {
  return a === b || (a === null && b === undefined);
}
