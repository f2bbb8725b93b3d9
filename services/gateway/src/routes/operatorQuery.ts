import type { parkedCommands, TimePageKey } from '@ingest/db';
import { isUuid } from '@ingest/domain';

/**
 * The query of `GET /api/admin/commands` (docs/api.md "Operator API"): which commands, of which
 * shop, and where a page resumes. Pure, so each refusal has a unit test.
 */
export const COMMAND_STATUSES = ['parked', 'failed', 'pending'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

export const LIST_LIMIT = { default: 50, max: 500 } as const;
const PARAMS = ['shop', 'status', 'limit', 'cursor'] as const;
const SHOP_MAX = 255;

/** Where the next page starts: after the last row of the previous one, in the status's order. */
export type PageKey = { status: 'parked'; key: parkedCommands.ParkedPageKey } | { status: 'failed' | 'pending'; key: TimePageKey };

/** A cursor is only good for the query that gave it: the same status and the same shop filter. */
export type Cursor = PageKey & { shop: string | null };

export interface CommandListQuery {
  shop: string | null;
  status: CommandStatus;
  limit: number;
  after: PageKey | null;
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** Validates the query string (already parsed by express: a repeated parameter is an array). */
export function parseCommandListQuery(query: Record<string, unknown>): Parsed<CommandListQuery> {
  const values: Partial<Record<(typeof PARAMS)[number], string>> = {};
  for (const [name, value] of Object.entries(query)) {
    if (!(PARAMS as readonly string[]).includes(name)) return fail(`${name} is not allowed`);
    if (typeof value !== 'string') return fail(`${name} must be given once`);
    values[name as (typeof PARAMS)[number]] = value;
  }
  let shop: string | null = null;
  if (values.shop !== undefined) {
    shop = values.shop.trim();
    if (!shop) return fail('shop must not be blank');
    if (shop.includes('\u0000')) return fail(NUL_REFUSED('shop'));
    if ([...shop].length > SHOP_MAX) return fail(`shop must be at most ${SHOP_MAX} characters`);
  }
  const status = values.status ?? 'parked';
  if (!(COMMAND_STATUSES as readonly string[]).includes(status)) return fail(`status must be one of ${COMMAND_STATUSES.join(', ')}`);
  let limit: number = LIST_LIMIT.default;
  if (values.limit !== undefined) {
    limit = /^[0-9]{1,4}$/.test(values.limit) ? Number(values.limit) : NaN;
    if (!(limit >= 1 && limit <= LIST_LIMIT.max)) return fail(`limit must be an integer from 1 to ${LIST_LIMIT.max}`);
  }
  let after: PageKey | null = null;
  if (values.cursor !== undefined) {
    const cursor = decodeCursor(values.cursor);
    if (!cursor) return fail('cursor is invalid');
    if (cursor.status !== status || cursor.shop !== shop) return fail('cursor belongs to another status or shop');
    after = cursor;
  }
  return { ok: true, value: { shop, status: status as CommandStatus, limit, after } };
}

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

/** PostgreSQL text cannot hold NUL (a `%00` in the query string): a query naming one would fail in the database, so it is refused here. */
export const NUL_REFUSED = (name: string): string => `${name} must not contain NUL (\\u0000)`;
const nulFree = (v: unknown): boolean =>
  typeof v === 'string'
    ? !v.includes('\u0000')
    : Array.isArray(v)
      ? v.every(nulFree)
      : v === null || typeof v !== 'object' || Object.values(v).every(nulFree);

/** Opaque to the client (base64url of a small JSON): it may change shape between versions. */
export function encodeCursor(c: Cursor): string {
  const key =
    c.status === 'parked' ? [c.key.shop, c.key.kafka_topic, c.key.kafka_partition, c.key.kafka_offset] : [c.key.at, c.key.command_id];
  return Buffer.from(JSON.stringify({ v: 1, s: c.status, h: c.shop, k: key }), 'utf8').toString('base64url');
}

// PostgreSQL's microsecond UTC text (TimePageKey): what the ledger wrote, nothing else.
const PAGE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const CURSOR_MAX = 2048;

/** The cursor, or null for anything this gateway did not write. */
export function decodeCursor(text: string): Cursor | null {
  if (text.length === 0 || text.length > CURSOR_MAX || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof c !== 'object' || c === null) return null;
  const { v, s, h, k } = c as Record<string, unknown>;
  if (v !== 1 || !(h === null || typeof h === 'string') || !Array.isArray(k) || !nulFree(k) || !nulFree(h)) return null;
  if (s === 'parked') {
    const [shop, topic, partition, offset] = k as unknown[];
    if (k.length !== 4 || typeof shop !== 'string' || typeof topic !== 'string' || !isCount(partition) || !isCount(offset)) return null;
    return { status: 'parked', shop: h, key: { shop, kafka_topic: topic, kafka_partition: partition, kafka_offset: offset } };
  }
  if (s === 'failed' || s === 'pending') {
    const [at, id] = k as unknown[];
    if (k.length !== 2 || typeof at !== 'string' || !PAGE_TIME.test(at) || typeof id !== 'string' || !isUuid(id)) return null;
    return { status: s, shop: h, key: { at, command_id: id } };
  }
  return null;
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
