// B1 read model: a realistic preload (≥ 1M inventory levels, matching products, order lines) and
// the EXPLAIN of the projector's load queries against it.
import type { Pool, PoolClient } from '@ingest/db';
import type { TopicNames } from '@ingest/kafka';
import { applyCommand } from '@ingest/projection';
import { registerChannelsCommand, registerLocationsCommand } from './lib/commands.ts';
import { explainLoad, type PlanSummary } from './lib/db.ts';
import { say, uuidv7 } from './lib/util.ts';

export const SHOP = 'bench-big.myshop.example';
export const TOPICS: TopicNames = {
  commands: 'bench.b1.commands',
  audit: 'bench.b1.audit',
  stockZero: 'bench.b1.stock-zero',
  stockRestored: 'bench.b1.stock-restored',
};
export const BIG_TABLES = new Set([
  'products',
  'inventory_levels',
  'order_line_master',
  'inventory_update_logs',
  'order_line_master_update_logs',
  'inventory_daily_snapshots',
]);

export interface B1Settings {
  products: number;
  preloadLocations: number;
  /** Other shops with the same catalogue size (products only): the model is multi-tenant. */
  otherShops: number;
  preloadOrderLines: number;
  snapshotLines: number;
  orderRows: number;
  iterations: number;
  warmup: number;
}

export interface B1World {
  settings: B1Settings;
  /** Locations that hold a level for every product (the ≥ 1M preload). */
  preloaded: string[];
  /** One empty location per "100% new" inventory command (projector and bare separately). */
  fresh: { projector: string[]; bare: string[] };
  channelId: string;
  /** product_id by barcode for the first snapshotLines / orderRows products. */
  productIds: Map<string, string>;
  preload: { inventory_levels: number; products: number; order_line_master: number; seconds: number };
}

let offset = 0;
/** A made-up command log position; the claim records it (D4). */
export function nextPosition() {
  return { topic: TOPICS.commands, partition: 0, offset: String(offset++) };
}

export const barcodeOf = (i: number): string => `49${String(i).padStart(11, '0')}`;

async function apply(svc: Pool, c: Parameters<typeof applyCommand>[1]): Promise<void> {
  const client = await svc.connect();
  try {
    await client.query('BEGIN');
    await applyCommand(client, c, nextPosition(), { sideEffects: { topics: TOPICS } });
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

export async function preloadB1(admin: Pool, svc: Pool, settings: B1Settings): Promise<B1World> {
  const started = performance.now();
  const runs = settings.warmup + settings.iterations;
  const preloaded = Array.from({ length: settings.preloadLocations }, () => uuidv7());
  const fresh = { projector: Array.from({ length: runs }, () => uuidv7()), bare: Array.from({ length: runs }, () => uuidv7()) };
  const channelId = uuidv7();
  // The registry goes through the projector, as the admin endpoints would.
  const all = [...preloaded, ...fresh.projector, ...fresh.bare];
  await apply(
    svc,
    registerLocationsCommand(
      SHOP,
      all.map((id, i) => ({ location_id: id, name: `S${String(i).padStart(3, '0')}` })),
    ),
  );
  await apply(svc, registerChannelsCommand(SHOP, [{ channel_id: channelId, name: 'bench web' }]));

  const seed = uuidv7();
  say(`B1 preload: ${settings.products.toLocaleString('en-US')} products`);
  await admin.query(
    `INSERT INTO public.products (product_id, shop, barcode, product_name, currency, is_active, current_price, created_at, updated_at, last_command_id)
     SELECT md5($1 || '|' || b)::uuid, $1, b, 'Bench product ' || g, 'JPY', true, 100 + g % 900, now(), now(), $2::uuid
       FROM generate_series(1, $3::int) AS g, LATERAL (SELECT '49' || lpad(g::text, 11, '0') AS b) x`,
    [SHOP, seed, settings.products],
  );
  if (settings.otherShops > 0) {
    say(`B1 preload: ${(settings.products * settings.otherShops).toLocaleString('en-US')} products of ${settings.otherShops} other shops`);
    await admin.query(
      `INSERT INTO public.products (product_id, shop, barcode, product_name, currency, is_active, current_price, created_at, updated_at, last_command_id)
       SELECT md5(s || '|' || b)::uuid, s, b, 'Other product ' || g, 'JPY', true, 100 + g % 900, now(), now(), $1::uuid
         FROM generate_series(1, $2::int) AS n, LATERAL (SELECT 'other-' || n || '.myshop.example' AS s) y,
              generate_series(1, $3::int) AS g, LATERAL (SELECT '49' || lpad(g::text, 11, '0') AS b) x`,
      [seed, settings.otherShops, settings.products],
    );
  }
  say(
    `B1 preload: ${(settings.products * preloaded.length).toLocaleString('en-US')} inventory levels (${preloaded.length} locations x products)`,
  );
  await admin.query(
    `INSERT INTO sot.inventory_levels (shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty,
            incoming_qty, last_absolute_as_of, stock_event_seq, created_at, updated_at, last_command_id)
     SELECT p.shop, p.product_id, l.id, p.barcode, 1 + g % 97, 1 + g % 97, 0, 0, 0, timestamptz '2025-01-01T00:00:00Z', 0, now(), now(), $3::uuid
       FROM generate_series(1, $2::int) AS g
       JOIN public.products p ON p.shop = $1 AND p.barcode = '49' || lpad(g::text, 11, '0')
      CROSS JOIN unnest($4::uuid[]) AS l(id)`,
    [SHOP, settings.products, seed, preloaded],
  );
  say(`B1 preload: ${settings.preloadOrderLines.toLocaleString('en-US')} order lines`);
  await admin.query(
    `INSERT INTO public.order_line_master (order_line_id, shop, source_system, transaction_id, transaction_line_id, line_instance_no, barcode,
            ordered_at, currency, is_test, channel_id, location_id, customer_id, gross_amount_taxincl, discount_amount_taxincl,
            net_amount_taxincl, net_amount_taxexcl, tax_amount, tax_rate, refund_amount, refunded_at, refund_reason, created_at, updated_at, last_command_id)
     SELECT md5('ol|' || g)::uuid, $1, 'bench-pos', 'P' || (g / 4), (g % 4)::text, 1, '49' || lpad((1 + g % $2::int)::text, 11, '0'),
            timestamptz '2025-06-01T00:00:00Z' + g * interval '1 second', 'JPY', false, $3::uuid, $4::uuid, 'c' || (g % 10000),
            1100, 100, 1000, 909.09, 90.91, 0.1, 0, NULL, NULL, now(), now(), $5::uuid
       FROM generate_series(1, $6::int) AS g`,
    [SHOP, settings.products, channelId, preloaded[0], seed, settings.preloadOrderLines],
  );
  say('B1 preload: VACUUM ANALYZE, CHECKPOINT');
  await admin.query('VACUUM ANALYZE');
  await admin.query('CHECKPOINT');

  const want = Math.max(settings.snapshotLines, settings.orderRows);
  const { rows } = await admin.query<{ barcode: string; product_id: string }>(
    'SELECT barcode, product_id FROM public.products WHERE shop = $1 AND barcode = ANY($2::text[])',
    [SHOP, Array.from({ length: want }, (_, i) => barcodeOf(i + 1))],
  );
  const counts = (
    await admin.query<{ l: number; p: number; o: number }>(
      'SELECT (SELECT count(*) FROM sot.inventory_levels)::int AS l, (SELECT count(*) FROM public.products)::int AS p, (SELECT count(*) FROM public.order_line_master)::int AS o',
    )
  ).rows[0]!;
  return {
    settings,
    preloaded,
    fresh,
    channelId,
    productIds: new Map(rows.map((r) => [r.barcode, r.product_id])),
    preload: {
      inventory_levels: counts.l,
      products: counts.p,
      order_line_master: counts.o,
      seconds: Math.round((performance.now() - started) / 100) / 10,
    },
  };
}

/** The projector's load statements (services/projector/src/*Store.ts), explained with a full command's parameters. */
export async function explainLoads(
  client: PoolClient,
  world: B1World,
  orderKeys: Array<{ transaction_id: string; line: number }>,
): Promise<PlanSummary[]> {
  const s = world.settings;
  const barcodes = Array.from({ length: s.snapshotLines }, (_, i) => barcodeOf(i + 1));
  const productIds = barcodes.map((b) => world.productIds.get(b)!);
  const location = world.preloaded[0]!;
  const plans: PlanSummary[] = [];
  const ex = async (name: string, sql: string, params: unknown[]) => plans.push(await explainLoad(client, name, sql, params, BIG_TABLES));
  await ex('inventory: loadProductIds', 'SELECT barcode, product_id FROM public.products WHERE shop = $1 AND barcode = ANY($2::text[])', [
    SHOP,
    barcodes,
  ]);
  await ex('inventory: loadLocationMatches', 'SELECT location_id FROM sot.locations WHERE shop = $1 AND location_id = ANY($2::uuid[])', [
    SHOP,
    [location],
  ]);
  await ex(
    'inventory: loadLevels',
    `SELECT shop, product_id, location_id, barcode, on_hand_qty, available_qty, allocated_qty, reserved_qty, incoming_qty,
            last_absolute_as_of, stock_event_seq, created_at, updated_at
       FROM sot.inventory_levels WHERE shop = $1 AND product_id = ANY($2::uuid[]) AND location_id = ANY($3::uuid[])`,
    [SHOP, productIds, [location]],
  );
  await ex(
    'orders: stored lines',
    `SELECT o.order_line_id FROM public.order_line_master o
       JOIN unnest($2::text[], $3::text[], $4::text[], $5::int[]) AS k(s, t, l, n)
         ON o.source_system = k.s AND o.transaction_id = k.t AND o.transaction_line_id = k.l AND o.line_instance_no = k.n
      WHERE o.shop = $1`,
    [
      SHOP,
      orderKeys.map(() => 'bench-pos'),
      orderKeys.map((k) => k.transaction_id),
      orderKeys.map((k) => String(k.line)),
      orderKeys.map(() => 1),
    ],
  );
  await ex('orders: channels', 'SELECT channel_id AS id FROM sot.channels WHERE shop = $1 AND channel_id = ANY($2::uuid[])', [
    SHOP,
    [world.channelId],
  ]);
  await ex('orders: locations', 'SELECT location_id AS id FROM sot.locations WHERE shop = $1 AND location_id = ANY($2::uuid[])', [
    SHOP,
    [location],
  ]);
  await ex('orders: products', 'SELECT barcode FROM public.products WHERE shop = $1 AND barcode = ANY($2::text[])', [
    SHOP,
    barcodes.slice(0, s.orderRows),
  ]);
  return plans;
}
