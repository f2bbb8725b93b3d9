import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRON_SECRET, INGEST_SECRET, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';
import { INVENTORY_ENV } from '../support/inventory.ts';
import { documentedAnswers } from '../support/openapi.ts';

// "Every accepted value is storable" (docs/api.md "Value ranges"): schema-valid bodies for every
// endpoint, with the edges of every type (longest strings of 4-byte characters, unicode oddities,
// the largest and smallest numbers, times at the range edges), go through the real gateway,
// Kafka, projector and PostgreSQL. Whatever the gateway accepts (200/202) must end in a stored
// 200 result, and nothing may be parked; anything else must be a 4xx (never a 5xx).
//
// `npm test` runs a fixed seed and 12 runs (a few seconds); run it longer with, e.g.,
//   PROPERTY_RUNS=500 PROPERTY_SEED=$RANDOM ./node_modules/.bin/vitest run --project integration tests/integration/accepted-is-storable.int.test.ts
// (PROPERTY_DEBUG=1 prints every answer). A failure prints the seed and path to replay it.
const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 12);
const SEED = Number(process.env['PROPERTY_SEED'] ?? 20261123);

let p: TestPipeline;
/** Every answer, whatever its status, is what the served OpenAPI document says it is. */
let documented: Awaited<ReturnType<typeof documentedAnswers>>;
beforeAll(async () => {
  p = await startPipeline({ env: INVENTORY_ENV });
  documented = await documentedAnswers(p.url());
});
afterAll(async () => p?.stop());

const ING = { 'x-ingest-secret': INGEST_SECRET };

// --- Numbers written digit for digit ------------------------------------------------------------
/** A JSON number written exactly as these characters (JSON.stringify would write its own form). */
class Digits {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
const TOKEN = `RAW${randomUUID().replaceAll('-', '')}`;
const toJson = (body: unknown): string =>
  JSON.stringify(body, (_k, v: unknown) => (v instanceof Digits ? `${TOKEN}${v.text}${TOKEN}` : v)).replace(
    new RegExp(`"${TOKEN}([^"]*)${TOKEN}"`, 'g'),
    '$1',
  );

// --- Strings ----------------------------------------------------------------------------------
const ODD = [
  '\ufeff',
  '\u2028',
  '\u2029',
  '\uffff',
  '\ufffd',
  '\u{10ffff}',
  'e\u0301',
  '\u202e',
  '👩‍👩‍👧',
  '𝄞',
  '\'";--',
  '\\',
  '%s%n',
  '<b>',
  ' ',
  '\t',
];
/** Any well-formed string of `min`..`max` code points (no NUL: refused on purpose, see body.ts), edges first. */
function text(min: number, max: number): fc.Arbitrary<string> {
  const clean = (s: string) => s.replaceAll('\u0000', '0');
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, 40) }).map(clean) },
      { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...ODD), minLength: min, maxLength: Math.min(max, 20) }) },
      // The longest value in the widest characters: 4 bytes each in UTF-8, the worst case of an index row.
      { weight: 1, arbitrary: fc.constantFrom('𝄞'.repeat(max), '\uffff'.repeat(max), 'a'.repeat(max)) },
    )
    .filter((s) => [...s].length >= min && [...s].length <= max);
}
/** The first `n` UTF-16 units, never half a surrogate pair. */
const head = (s: string, n: number) => s.slice(0, n).replace(/[\ud800-\udbff]$/, 'x');
/** Order-row key fields are bounded in UTF-16 units (validateRow). */
const unitText = (max: number) => text(1, max).map((s) => head(s, max));
/** Ends with a unique ASCII tail: every run has its own shop, and it is never blank. */
const shopText = text(1, 255).map((s) => (n: number) => {
  const tail = `~${n}`;
  return [...s].slice(0, 255 - tail.length).join('') + tail;
});

// --- Numbers ------------------------------------------------------------------------------------
const price = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 5e-324, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MAX_SAFE_INTEGER, 2 ** 53, 0.1, 1e21, 1e-7),
  fc.constantFrom(
    new Digits('9007199254740993'),
    new Digits('1e400'),
    new Digits('0.30000000000000000001'),
    new Digits('1.50'),
    new Digits('15e-1'),
  ),
  fc.constant(null),
);
const qty = fc.oneof(fc.constantFrom(0, 1, 999_999_999_999, 1e12), fc.bigInt({ min: 0n, max: 10n ** 12n }).map(Number), fc.nat(1000));
const delta = fc.oneof(fc.constantFrom(-1e12, 1e12, 0, -1, 1), fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }).map(Number));
const cents = fc.oneof(
  fc.bigInt({ min: 0n, max: 10n ** 17n }),
  fc.bigInt({ min: 0n, max: 100_000n }),
  fc.constantFrom(0n, 1n, 900719925474099n),
);
const decimal = (c: bigint) =>
  new Digits(`${c < 0n ? '-' : ''}${(c < 0n ? -c : c) / 100n}.${String((c < 0n ? -c : c) % 100n).padStart(2, '0')}`);

// --- Times --------------------------------------------------------------------------------------
const FROM = Date.parse('2000-01-01T00:00:00Z');
const UNTIL = Date.parse('2100-01-01T00:00:00Z');
/** An ISO 8601 date-time of `ms` written in another offset, with 0 to 6 fraction digits. */
const written = (ms: number, offsetMin: number, digits: number) => {
  const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
  const frac = digits
    ? `.${String(ms % 1000)
        .padStart(3, '0')
        .padEnd(digits, '0')
        .slice(0, digits)}`
    : '';
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return `${local}${frac}${offsetMin === 0 ? 'Z' : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`}`;
};
const instant = (min: number, max: number) =>
  fc
    .tuple(
      fc.oneof(fc.constantFrom(min, max - 1), fc.integer({ min, max: max - 1 })),
      fc.oneof(fc.constant(0), fc.integer({ min: -12 * 60, max: 14 * 60 })),
      fc.integer({ min: 0, max: 6 }),
    )
    .map(([ms, off, digits]) => written(ms, off, digits));
/** Schema-valid times outside the business range too: those must be refused, never fail later. */
const EDGE_TIMES = [
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '0001-01-02T00:00:00+14:00',
  '1999-12-31T23:59:59.999Z',
  '2100-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
];
const orderTime = fc.oneof(
  { weight: 5, arbitrary: instant(FROM, UNTIL) },
  { weight: 1, arbitrary: instant(Date.parse('1990-01-01T00:00:00Z'), Date.parse('2200-01-01T00:00:00Z')) },
  { weight: 1, arbitrary: fc.constantFrom(...EDGE_TIMES) },
);
const asOfTime = fc.oneof(
  { weight: 5, arbitrary: instant(FROM, Date.now() - 60_000) },
  { weight: 1, arbitrary: fc.constantFrom(...EDGE_TIMES) },
);
const snapshotDate = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.integer({ min: FROM, max: Date.now() - 2 * 86_400_000 }).map((ms) => new Date(ms).toISOString().slice(0, 10)),
  },
  { weight: 1, arbitrary: fc.constantFrom('0000-01-01', '0001-01-01', '1999-12-31', '2000-01-01', '9999-12-31') },
);

// --- One run: a fresh shop, its registry, products, inventory, order rows, a daily snapshot --------
const scenario = fc.record({
  shop: shopText,
  locations: fc.array(fc.record({ name: text(1, 1000), type: text(1, 190), value: text(1, 190), upper: fc.boolean(), id: fc.boolean() }), {
    minLength: 1,
    maxLength: 3,
  }),
  channels: fc.array(fc.record({ name: text(1, 1000), id: fc.boolean() }), { minLength: 1, maxLength: 2 }),
  products: fc.array(
    fc.record(
      {
        barcode: text(1, 120),
        product_name: text(1, 1000),
        sku: fc.option(text(0, 256)),
        variant_name: fc.option(text(0, 1000)),
        brand: fc.option(text(0, 1000)),
        category_l1: fc.option(text(0, 1000)),
        current_price: price,
        current_cost: price,
        currency: fc.option(text(1, 16)),
        is_active: fc.boolean(),
      },
      { requiredKeys: ['barcode', 'product_name'] },
    ),
    { minLength: 1, maxLength: 4 },
  ),
  snapshotLines: fc.array(
    fc.record({
      pick: fc.nat(),
      on_hand_qty: qty,
      available_qty: fc.option(qty, { nil: undefined }),
      incoming_qty: fc.option(qty, { nil: undefined }),
    }),
    { maxLength: 4 },
  ),
  asOf: fc.option(asOfTime, { nil: undefined }),
  sourceSystem: text(1, 255),
  idempotencyKey: fc.option(text(1, 255), { nil: undefined }),
  available: fc.record({ delta: fc.boolean(), lines: fc.array(fc.record({ pick: fc.nat(), q: qty, d: delta }), { maxLength: 4 }) }),
  levels: fc.record({
    delta: fc.boolean(),
    lines: fc.array(
      fc.record({
        pick: fc.nat(),
        loc: fc.nat(),
        byIdentifier: fc.boolean(),
        q: qty,
        d: delta,
        field: fc.constantFrom('on_hand', 'available', 'allocated', 'reserved', 'incoming'),
      }),
      { maxLength: 5 },
    ),
  }),
  rows: fc.array(
    fc.record({
      pick: fc.nat(),
      known: fc.boolean(),
      source_system: unitText(128),
      transaction_id: unitText(128),
      transaction_line_id: unitText(128),
      line_instance_no: fc.oneof(fc.constantFrom(1, 2_147_483_647), fc.integer({ min: 1, max: 2_147_483_647 })),
      ordered_at: orderTime,
      refunded_at: fc.option(orderTime),
      currency: text(1, 1000),
      customer_id: fc.option(text(0, 3000)),
      refund_reason: fc.option(text(0, 3000)),
      gross: cents,
      discount: cents,
      tax: cents,
      refund: cents,
      tax_rate: fc.oneof(fc.constantFrom(0, 1, 0.1, 5e-324), fc.double({ min: 0, max: 1, noNaN: true })),
      is_test: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  dryRun: fc.boolean(),
  changeSource: fc.option(text(1, 255), { nil: undefined }),
  snapshotDate: fc.option(snapshotDate, { nil: undefined }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const at = <T>(xs: T[], i: number): T => xs[i % xs.length] as T;
const uuid = (upper: boolean) => (upper ? randomUUID().toUpperCase() : randomUUID());

/** Every answer of one run; the run fails on a 5xx, and on an accepted request whose stored result is not 200. */
async function play(s: Scenario, run: number): Promise<void> {
  const shop = s.shop(run);
  const answers: Array<{ what: string; r: HttpResult }> = [];
  const send = async (what: string, path: string, body: unknown, headers: Record<string, string> = ING) => {
    const r = await post(`${p.url()}${path}`, toJson(body), headers);
    answers.push({ what, r });
    expect(r.status, `${what}: ${r.text.slice(0, 300)}`).toBeLessThan(500);
    expect(documented('post', path, r), what).toBeNull();
    return r;
  };

  const locations = s.locations.map((l, i) => ({
    ...(l.id ? { location_id: uuid(l.upper) } : {}),
    name: l.name,
    identifiers: [{ identifier_type: l.type, identifier_value: `${l.value}#${i}` }],
  }));
  const loc = await send('locations', '/api/admin/locations', { shop, locations });
  const ch = await send('channels', '/api/admin/channels', {
    shop,
    channels: s.channels.map((c) => ({ ...(c.id ? { channel_id: uuid(false) } : {}), name: c.name })),
  });
  const locationIds: string[] =
    loc.status === 200 ? (loc.json.locations as Array<{ location_id: string }>).map((l) => l.location_id) : [randomUUID()];
  const channelIds: string[] =
    ch.status === 200 ? (ch.json.channels as Array<{ channel_id: string }>).map((c) => c.channel_id) : [randomUUID()];

  const products = s.products.map((pr) => Object.fromEntries(Object.entries(pr).filter(([, v]) => v !== undefined)));
  const barcodes = products.map((pr) => pr['barcode'] as string);
  // Endpoint 1 when the shop can travel in a header (Latin-1, no outer blanks), endpoint 2 otherwise.
  if (/^[\x21-\x7e\xa0-\xff][\x20-\x7e\xa0-\xff]*$/.test(shop) && shop.trim() === shop && shop.length <= 255)
    await send('products (1)', '/api/products/bulk-upsert', { products }, { 'x-cron-secret': CRON_SECRET, 'x-shop': shop });
  else await send('products (2)', '/api/ingest/products', { shop, products });

  const common = {
    shop,
    source_system: s.sourceSystem,
    ...(s.asOf ? { inventory_as_of: s.asOf } : {}),
    ...(s.idempotencyKey ? { idempotency_key: s.idempotencyKey } : {}),
  };
  const lines = s.snapshotLines.map((l) => ({
    barcode: at(barcodes, l.pick),
    on_hand_qty: l.on_hand_qty,
    ...(l.available_qty !== undefined ? { available_qty: l.available_qty } : {}),
    ...(l.incoming_qty !== undefined ? { incoming_qty: l.incoming_qty } : {}),
  }));
  await send('snapshot', '/api/ingest/inventory-snapshot', { ...common, location_id: at(locationIds, 0), lines });
  const ident = locations[0]?.identifiers[0];
  await send('available', '/api/ingest/inventory-available', {
    ...common,
    mode: s.available.delta ? 'delta' : 'absolute',
    ...(ident && loc.status === 200 ? { location: ident } : { location_id: at(locationIds, 0) }),
    lines: s.available.lines.map((l) => ({
      barcode: at(barcodes, l.pick),
      ...(s.available.delta ? { available_delta: l.d } : { available_qty: l.q }),
    })),
  });
  await send('levels', '/api/inventory-levels/bulk-upsert', {
    ...common,
    mode: s.levels.delta ? 'delta' : 'absolute',
    lines: s.levels.lines.map((l) => {
      const i = l.loc % locationIds.length;
      const where = l.byIdentifier && loc.status === 200 ? { location: locations[i]!.identifiers[0] } : { location_id: at(locationIds, i) };
      return { barcode: at(barcodes, l.pick), ...where, ...(s.levels.delta ? { [`${l.field}_delta`]: l.d } : { [`${l.field}_qty`]: l.q }) };
    }),
  });

  const rows = s.rows.map((r, i) => {
    const gross = r.gross;
    const discount = r.discount > gross ? gross : r.discount;
    const net = gross - discount;
    const tax = r.tax > net ? net : r.tax;
    return {
      source_system: r.source_system,
      transaction_id: r.transaction_id,
      transaction_line_id: `${head(r.transaction_line_id, 120)}#${i}`,
      line_instance_no: r.line_instance_no,
      barcode: r.known ? at(barcodes, r.pick) : `unknown-${r.pick}`,
      ordered_at: r.ordered_at,
      currency: r.currency,
      is_test: r.is_test,
      channel_id: at(channelIds, r.pick),
      location_id: at(locationIds, r.pick),
      ...(r.customer_id !== null ? { customer_id: r.customer_id } : {}),
      gross_amount_taxincl: decimal(gross),
      discount_amount_taxincl: decimal(discount),
      net_amount_taxincl: decimal(net),
      net_amount_taxexcl: decimal(net - tax),
      tax_amount: decimal(tax),
      tax_rate: r.tax_rate,
      refund_amount: decimal(r.refund),
      refunded_at: r.refunded_at,
      refund_reason: r.refund_reason,
    };
  });
  await send('order rows', '/api/order-line-master/bulk-upsert', {
    shop,
    rows,
    dry_run: s.dryRun,
    ...(s.changeSource ? { change_source: s.changeSource } : {}),
  });
  await send('daily snapshot', '/api/admin/daily-snapshot', { shop, ...(s.snapshotDate ? { snapshot_date: s.snapshotDate } : {}) });

  // PROPERTY_DEBUG=1 shows what each run was answered.
  if (process.env['PROPERTY_DEBUG'])
    console.log(answers.map((a) => `${a.what}=${a.r.status}${a.r.status === 200 ? '' : ` ${a.r.text.slice(0, 120)}`}`).join(' | '));
  // Every command of this shop the gateway accepted has a stored result, and it is a 200.
  // A dry run (D22) is answered without being appended: it has no request row or result.
  const accepted = answers.filter((a) => (a.r.status === 200 || a.r.status === 202) && a.r.json?.dry_run !== true).length;
  const results = await waitFor(
    async () => {
      const { rows: stored } = await p.db.query<{ kind: string; status_code: number; body: unknown }>(
        `SELECT q.kind, r.status_code, r.body FROM agent_runtime.command_requests q
         LEFT JOIN agent_runtime.command_results r USING (command_id) WHERE q.shop = $1`,
        [shop],
      );
      return stored.length === accepted && stored.every((x) => x.status_code !== null) ? stored : null;
    },
    30_000,
    `stored results of ${shop}`,
  );
  for (const r of results)
    expect({ kind: r.kind, status: r.status_code, body: r.status_code === 200 ? 'ok' : r.body }).toEqual({
      kind: r.kind,
      status: 200,
      body: 'ok',
    });
  const { rows: parked } = await p.db.query<{ kind: string; error: string }>(
    'SELECT kind, error FROM agent_runtime.parked_commands WHERE shop = $1',
    [shop],
  );
  expect(parked).toEqual([]);
}

describe('every value the gateway accepts is stored', () => {
  it(`property: schema-valid bodies at every edge, through the real pipeline, end in stored 200s (seed ${SEED}, ${RUNS} runs)`, async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        await play(s, run++);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const { rows } = await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.parked_commands');
    expect(rows[0]?.n).toBe(0);
  }, 300_000);
});
