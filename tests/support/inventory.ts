import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { createKafka } from '@ingest/kafka';
import { INGEST_SECRET, post, waitFor, type HttpResult, type TestPipeline } from './pipeline.ts';

// Shared helpers of the inventory integration tests (endpoints 3, 4, 5, the registry of D14,
// stock events of D18 and the daily job of D16). Everything goes through HTTP or the real topics;
// assertions read the agent_read views and the sot tables.

export const ING = { 'x-ingest-secret': INGEST_SECRET };

/**
 * Pipeline settings of the inventory tests: the projector's daily scheduler (D16) would append a
 * daily_snapshot for yesterday's business date once a minute and add daily_job rows under the
 * tests' feet, so its periodic check is pushed out of a test file's lifetime (tests call tick()).
 */
export const INVENTORY_ENV: NodeJS.ProcessEnv = { DAILY_SNAPSHOT_CHECK_MS: String(60 * 60 * 1000) };

/** A shop name unique to one test, so tests of one file never see each other's rows. */
export const uniqueShop = (what: string): string => `${what}-${randomUUID().slice(0, 8)}.example`;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export type Ident = { identifier_type: string; identifier_value: string };
export type LocationInput = { location_id?: string; name: string; identifiers?: Ident[] };

export const registerLocations = (p: TestPipeline, shop: string, locations: LocationInput[]): Promise<HttpResult> =>
  post(`${p.url()}/api/admin/locations`, { shop, locations }, ING);

export const registerChannels = (
  p: TestPipeline,
  shop: string,
  channels: Array<{ channel_id?: string; name: string }>,
): Promise<HttpResult> => post(`${p.url()}/api/admin/channels`, { shop, channels }, ING);

/** Registers one location and answers its id (asserting the 200). */
export async function newLocation(p: TestPipeline, shop: string, name = 'Store', identifiers: Ident[] = []): Promise<string> {
  const r = await registerLocations(p, shop, [{ name, identifiers }]);
  expect(r.status, r.text).toBe(200);
  return r.json.locations[0].location_id as string;
}

/** Registers products in the master (endpoint 2), asserting they were all created. */
export async function newProducts(p: TestPipeline, shop: string, barcodes: string[]): Promise<void> {
  const r = await post(
    `${p.url()}/api/ingest/products`,
    { shop, products: barcodes.map((barcode) => ({ barcode, product_name: `Product ${barcode}` })) },
    ING,
  );
  expect(r.status, r.text.slice(0, 500)).toBe(200);
  expect(r.json.created + r.json.unchanged + r.json.updated).toBe(barcodes.length);
}

export const snapshot = (p: TestPipeline, body: Record<string, unknown>): Promise<HttpResult> =>
  post(`${p.url()}/api/ingest/inventory-snapshot`, body, ING);
export const available = (p: TestPipeline, body: Record<string, unknown>): Promise<HttpResult> =>
  post(`${p.url()}/api/ingest/inventory-available`, body, ING);
export const levels = (p: TestPipeline, body: Record<string, unknown>): Promise<HttpResult> =>
  post(`${p.url()}/api/inventory-levels/bulk-upsert`, body, ING);

export interface LevelRow {
  shop: string;
  product_id: string;
  location_id: string;
  barcode: string;
  product_name: string | null;
  on_hand_qty: number;
  available_qty: number;
  allocated_qty: number;
  reserved_qty: number;
  incoming_qty: number;
  inventory_as_of: Date | null;
  updated_at: Date;
}

export async function levelRows(p: TestPipeline, shop: string): Promise<LevelRow[]> {
  const { rows } = await p.db.query<LevelRow>('SELECT * FROM agent_read.inventory_levels WHERE shop = $1 ORDER BY location_id, barcode', [
    shop,
  ]);
  return rows;
}

export async function level(p: TestPipeline, shop: string, barcode: string, locationId: string): Promise<LevelRow | undefined> {
  const { rows } = await p.db.query<LevelRow>(
    'SELECT * FROM agent_read.inventory_levels WHERE shop = $1 AND barcode = $2 AND location_id = $3',
    [shop, barcode, locationId],
  );
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0];
}

/** The five quantities of a level, for compact assertions. */
export function qty(l: LevelRow | undefined): Record<string, number> | undefined {
  if (!l) return undefined;
  return {
    on_hand_qty: l.on_hand_qty,
    available_qty: l.available_qty,
    allocated_qty: l.allocated_qty,
    reserved_qty: l.reserved_qty,
    incoming_qty: l.incoming_qty,
  };
}

export const Q = (on_hand_qty: number, available_qty: number, allocated_qty = 0, reserved_qty = 0, incoming_qty = 0) => ({
  on_hand_qty,
  available_qty,
  allocated_qty,
  reserved_qty,
  incoming_qty,
});

export interface InventoryLogRow {
  log_id: string;
  shop: string;
  product_id: string;
  location_id: string;
  barcode: string;
  change_type: string;
  change_source: string;
  before_data: Record<string, number> | null;
  after_data: Record<string, number>;
  changed_fields: string[];
  idempotency_key: string | null;
  inventory_as_of: Date;
  command_id: string;
  log_seq: number;
  created_at: Date;
}

/**
 * Inventory update logs in the order they were written: by command (UUIDv7 ids grow with time and
 * one shop's commands are applied in order, D2), then by log_seq, the record's position in its
 * command (created_at alone ties within a command).
 */
export async function inventoryLogs(
  p: TestPipeline,
  shop: string,
  filter: { barcode?: string; location_id?: string; command_id?: string } = {},
): Promise<InventoryLogRow[]> {
  const { rows } = await p.db.query<InventoryLogRow>(
    `SELECT * FROM agent_read.inventory_update_logs
      WHERE shop = $1 AND ($2::text IS NULL OR barcode = $2) AND ($3::uuid IS NULL OR location_id = $3)
        AND ($4::uuid IS NULL OR command_id = $4)
      ORDER BY created_at, command_id, log_seq`,
    [shop, filter.barcode ?? null, filter.location_id ?? null, filter.command_id ?? null],
  );
  return rows;
}

export async function countLogs(p: TestPipeline, shop: string): Promise<number> {
  const { rows } = await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sot.inventory_update_logs WHERE shop = $1', [shop]);
  return rows[0]!.n;
}

export interface DailyRowRead {
  shop: string;
  product_id: string;
  location_id: string;
  snapshot_date: string;
  barcode: string;
  on_hand_qty: number;
  available_qty: number;
  allocated_qty: number;
  reserved_qty: number;
  incoming_qty: number;
  source: string;
  inventory_as_of: Date;
}

export async function dailyRows(p: TestPipeline, shop: string): Promise<DailyRowRead[]> {
  const { rows } = await p.db.query<DailyRowRead>(
    `SELECT shop, product_id, location_id, snapshot_date::text AS snapshot_date, barcode, on_hand_qty, available_qty,
            allocated_qty, reserved_qty, incoming_qty, source, inventory_as_of
       FROM agent_read.inventory_daily_snapshots WHERE shop = $1 ORDER BY snapshot_date, location_id, barcode`,
    [shop],
  );
  return rows;
}

/** The command of the last reply stored for a shop (the HTTP replies of endpoints 3-5 carry no command_id). */
export async function lastCommandId(p: TestPipeline, shop: string, kind?: string): Promise<string> {
  const { rows } = await p.db.query<{ command_id: string }>(
    `SELECT command_id FROM agent_runtime.command_results WHERE shop = $1 AND ($2::text IS NULL OR kind = $2)
      ORDER BY command_id DESC LIMIT 1`,
    [shop, kind ?? null],
  );
  expect(rows[0], `a stored result for ${shop}`).toBeDefined();
  return rows[0]!.command_id;
}

/** A past instant, in the gateway's normalised form (ISO with milliseconds, Z). */
export const minutesAgo = (m: number): string => new Date(Date.now() - m * 60_000).toISOString();

export interface SeenMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  headers: Record<string, string>;
  value: any;
}

/** A real kafkajs consumer on some topics, from the beginning, collecting every message. */
export interface TopicCollector {
  messages: SeenMessage[];
  waitFor(pred: (m: SeenMessage) => boolean, what: string, timeoutMs?: number): Promise<SeenMessage>;
  stop(): Promise<void>;
}

export async function collectTopics(p: TestPipeline, topics: string[]): Promise<TopicCollector> {
  const kafka = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-collector-${randomUUID().slice(0, 6)}` });
  const consumer = kafka.consumer({ groupId: `test-${p.id}-collector-${randomUUID()}` });
  await consumer.connect();
  for (const topic of topics) await consumer.subscribe({ topic, fromBeginning: true });
  const messages: SeenMessage[] = [];
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      messages.push({
        topic,
        partition,
        offset: message.offset,
        key: message.key ? message.key.toString() : null,
        headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
        value: JSON.parse(message.value!.toString()),
      });
    },
  });
  return {
    messages,
    waitFor: (pred, what, timeoutMs = 30_000) => waitFor(async () => messages.find(pred), timeoutMs, what),
    stop: () => consumer.disconnect(),
  };
}
