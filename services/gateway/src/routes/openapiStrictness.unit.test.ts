import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '@ingest/access';
import type { JsonObject } from '@ingest/contracts';
import { validateRow } from '@ingest/domain';
import { openApiOracle, type Credentials, type DocOperation, type OpenApiOracle } from '../../testing/openapiOracle.ts';
import { requestDraws, sendDraw, type Draw } from '../../testing/openapiDraws.ts';
import { TEST_CRON_SECRET, TEST_INGEST_SECRET, useTestGateway, type HttpAnswer } from '../../testing/testGateway.ts';

// The OpenAPI document is as strict as the gateway (docs/api.md "API contracts"): every request its
// schemas allow (body, path, query and headers, drawn from the document itself) is accepted, never
// refused as invalid; and what they forbid in the ways the gateway refuses (a NUL, both or neither
// location form, both names of a delta, no quantity, a dry_run outside its values, a credential the
// operation does not list) is refused. At this tier nothing projects: an accepted write is 202 (200
// for a dry run), and an operation on a resource the path names answers 404 for one that is not there.
const RUNS = Number(process.env['PROPERTY_RUNS'] ?? 15);
const SHOP = 'strict.example';
const TIMES = { from: new Date('2000-01-01T00:00:00Z'), until: new Date(Date.now() - 86_400_000) };
const g = useTestGateway();
let oracle: OpenApiOracle;
let creds: Credentials;
let api: DocOperation[];

beforeAll(async () => {
  oracle = openApiOracle((await (await fetch(`${g.url}/openapi.json`)).json()) as JsonObject);
  creds = {
    ingestSecret: TEST_INGEST_SECRET,
    cronSecret: TEST_CRON_SECRET,
    cronShop: SHOP,
    bearerAuth: (await g.keys.create({ shop: SHOP, scopes: [...SCOPES] })).key,
  };
  api = oracle.operations().filter((o) => o.path.startsWith('/api/') && !(o.op['tags'] as string[]).includes('Removed'));
});

const draws = (o: DocOperation): fc.Arbitrary<Draw> => requestDraws(oracle, o, TIMES);
const send = (o: DocOperation, d: Draw, credentials: Record<string, string>): Promise<HttpAnswer> => sendDraw(g.url, o, d, credentials);

const platform = (o: DocOperation): Record<string, string> =>
  oracle.credentialHeaders(((o.op['security'] as Array<Record<string, unknown>> | undefined) ?? [{}])[0] ?? {}, creds);
/**
 * Accepted, or refused for the state it met rather than its form: a resource the path names that
 * is not there (404), an Idempotency-Key whose first request holds it (409: this tier's database
 * answers no rows, so a key's claim is never seen to be won).
 */
const accepted = (o: DocOperation, d: Draw, a: HttpAnswer): boolean =>
  a.status < 300 || (a.status === 404 && o.path.includes('{')) || (a.status === 409 && d.headers['Idempotency-Key'] !== undefined);
// D20's identities between amounts cannot be said in a schema: a row the document allows may fail them, as a row error.
const BUSINESS_ROW_CODES = new Set(['amount_mismatch', 'tax_mismatch']);

/** What the gateway made of an accepted write, where it checks item by item (products, D7) or hands rows to the decider (D20). */
function itemsAccepted(before: { appended: number; dryRuns: number }): void {
  const command = (
    g.appended.length > before.appended ? g.appended.at(-1) : g.dryRuns.length > before.dryRuns ? g.dryRuns.at(-1) : null
  ) as {
    payload?: { items?: Array<Record<string, unknown>>; rows?: unknown[]; row_problems?: unknown };
  } | null;
  const p = command?.payload;
  for (const item of p?.items ?? []) expect(item, 'a product the document allows').not.toHaveProperty('rejected');
  if (p?.rows) {
    expect(p.row_problems, 'row problems found by the gateway').toBeUndefined();
    const codes = p.rows.flatMap((row, i) => validateRow(row, i).errors.map((e) => `${e.code} ${e.message}`));
    expect(codes.filter((c) => !BUSINESS_ROW_CODES.has(c.split(' ')[0]!))).toEqual([]);
  }
}

describe('what the document allows, the gateway accepts', () => {
  it('every operation of the API: drawn bodies, path parameters, queries and headers', async () => {
    for (const o of api) {
      await fc.assert(
        fc.asyncProperty(draws(o), async (d) => {
          const before = { appended: g.appended.length, dryRuns: g.dryRuns.length };
          const a = await send(o, d, platform(o));
          // The test gateway's dry runner answers a fixed body: only its status is the gateway's.
          const dryRun = d.query['dry_run'] === 'true' || (d.body as { dry_run?: unknown } | undefined)?.dry_run === true;
          if (dryRun) expect(Object.keys(o.op['responses'] as object)).toContain(String(a.status));
          else expect(oracle.undocumented(o, a)).toEqual([]);
          expect(accepted(o, d, a), `${o.name} ${JSON.stringify(d)}: ${a.status} ${a.text}`).toBe(true);
          itemsAccepted(before);
        }),
        { numRuns: RUNS },
      );
    }
  }, 120_000);
});

/** Where the strings of a value are (paths of keys and indexes). */
function stringPaths(v: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof v === 'string') return [at];
  if (Array.isArray(v)) return v.flatMap((x, i) => stringPaths(x, [...at, i]));
  if (v !== null && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => stringPaths(x, [...at, k]));
  return [];
}
const edit = <T>(value: T, change: (copy: any) => void): T => {
  const copy = structuredClone(value);
  change(copy);
  return copy;
};
const byName = (name: string): DocOperation => api.find((o) => o.name === name)!;
const NUL_REFUSED = 'invalid JSON body: strings must not contain NUL (\\u0000)';
const LEVELS = 'POST /api/inventory-levels/bulk-upsert';

/** A property over the draws of `o` that `change` turns into a request the document forbids: the gateway must refuse it with `refusal`. */
async function forbidden(
  o: DocOperation,
  change: (d: Draw, pick: number) => Draw | null,
  refusal: (d: Draw) => { status: number; error: string | RegExp },
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(draws(o), fc.nat(), async (drawn, pick) => {
      const d = change(drawn, pick);
      fc.pre(d !== null);
      const at = oracle.bodyAt(o);
      const queryProblem = Object.entries(d.query).some(([k, v]) => oracle.check(oracle.parameterAt(o, k, 'query'), v) !== null);
      expect(queryProblem || (at !== null && oracle.check(at, d.body) !== null), `the document allows ${JSON.stringify(d)}`).toBe(true);
      const a = await send(o, d, platform(o));
      const want = refusal(d);
      expect(a.status, a.text).toBe(want.status);
      expect(a.json?.error).toMatch(want.error);
      expect(oracle.undocumented(o, a)).toEqual([]);
    }),
    { numRuns: RUNS },
  );
}

describe('what the document forbids, the gateway refuses', () => {
  it('a NUL in any string of any body (400, edge/body.ts)', async () => {
    for (const o of api.filter((x) => oracle.bodyAt(x))) {
      await forbidden(
        o,
        (d, pick) => {
          const paths = d.body === undefined ? [] : stringPaths(d.body);
          if (!paths.length) return null;
          const path = paths[pick % paths.length]!;
          return edit(d, (c) => {
            const parent = path.slice(0, -1).reduce((n: any, k) => n[k], c.body);
            const s = parent[path.at(-1)!] as string;
            parent[path.at(-1)!] = `${s.slice(0, pick % (s.length + 1))}\u0000${s.slice(pick % (s.length + 1))}`;
          });
        },
        () => ({ status: 400, error: NUL_REFUSED }),
      );
    }
  });

  it('both location forms, or neither, on endpoints 4 and 5 (D11: 422, 400)', async () => {
    for (const name of ['POST /api/ingest/inventory-snapshot', 'POST /api/ingest/inventory-available']) {
      const both = (d: Draw) =>
        edit(d, (c) => Object.assign(c.body, { location_id: 'L-1', location: { identifier_type: 't', identifier_value: 'v' } }));
      await forbidden(byName(name), both, () => ({ status: 422, error: 'location_id and location are mutually exclusive; send one' }));
      const neither = (d: Draw) => edit(d, (c) => (delete c.body.location_id, delete c.body.location));
      await forbidden(byName(name), neither, () => ({ status: 400, error: 'location_id or location required' }));
    }
  });

  it('a levels line with both location forms, neither, no quantity, or both names of a delta (D17: 422)', async () => {
    type Lines = { mode: string; lines: Array<Record<string, unknown>> };
    /** The draw with `change` made to one of its lines (none: not a case). */
    const onLine =
      (change: (l: Record<string, unknown>) => void, when: (b: Lines) => boolean = () => true) =>
      (d: Draw, pick: number) => {
        const b = d.body as Lines;
        return b.lines.length && when(b) ? edit(d, (c: { body: Lines }) => change(c.body.lines[pick % b.lines.length]!)) : null;
      };
    const refusal = (text: string) => () => ({ status: 422, error: new RegExp(`^${text.replace(/L/g, 'lines\\[\\d+\\]')}`) });
    const levels = byName(LEVELS);
    await forbidden(
      levels,
      onLine((l) => Object.assign(l, { location_id: 'L-1', location: { identifier_type: 't', identifier_value: 'v' } })),
      refusal('L\\.location_id and L\\.location are mutually exclusive'),
    );
    await forbidden(
      levels,
      onLine((l) => (delete l['location_id'], delete l['location'])),
      refusal('L\\.location_id or L\\.location required'),
    );
    await forbidden(
      levels,
      onLine((l) => Object.keys(l).forEach((k) => k !== 'barcode' && !k.startsWith('location') && delete l[k])),
      refusal('L needs at least one'),
    );
    await forbidden(
      levels,
      onLine(
        (l) => Object.assign(l, { available_delta: 1, available_qty_delta: 1 }),
        (b) => b.mode === 'delta',
      ),
      refusal('L\\.available_delta and L\\.available_qty_delta are the same field'),
    );
  });

  it('credentials: each security requirement lets a request in, and no other mix of them does (requireAccess, D8, D28)', async () => {
    const schemes = ['ingestSecret', 'cronSecret', 'cronShop', 'bearerAuth'];
    for (const o of api.filter((x) => ((x.op['security'] as unknown[] | undefined) ?? []).length)) {
      // A request the document allows, for the shop of the test key.
      const [drawn] = fc.sample(draws(o), { numRuns: 1, seed: 20261127 });
      const d = edit(drawn!, (c) => {
        if (c.body && typeof c.body === 'object' && 'shop' in c.body) c.body.shop = SHOP;
        if ('shop' in c.query) c.query.shop = SHOP;
        delete c.headers['Idempotency-Key'];
      });
      for (let mask = 0; mask < 1 << schemes.length; mask++) {
        const held = Object.fromEntries(schemes.filter((_, i) => mask & (1 << i)).map((s) => [s, []]));
        const headers = oracle.credentialHeaders(held, creds);
        const a = await send(o, d, headers);
        const refused = a.status === 401 || a.status === 403 || a.json?.error === 'x-shop header required';
        expect(refused, `${o.name} with ${Object.keys(held).join(' + ') || 'nothing'}: ${a.status} ${a.text}`).toBe(
          !oracle.authorised(o, headers),
        );
        expect(oracle.undocumented(o, a)).toEqual([]);
      }
    }
  });

  it('a per-shop key without the scope an operation names is refused (403 missing scope, D28)', async () => {
    for (const o of api) {
      const scope = ((o.op['security'] as Array<Record<string, string[]>> | undefined) ?? []).find((r) => r['bearerAuth'])?.[
        'bearerAuth'
      ]?.[0];
      if (!scope) continue;
      const key = await g.keys.create({ shop: SHOP, scopes: SCOPES.filter((s) => s !== scope) });
      const [drawn] = fc.sample(draws(o), { numRuns: 1, seed: 20261127 });
      const a = await send(o, drawn!, { authorization: `Bearer ${key.key}` });
      expect([a.status, a.json?.error], o.name).toEqual([403, `missing scope ${scope}`]);
      expect(oracle.undocumented(o, a)).toEqual([]);
    }
  });

  it('a dry_run other than true or false, on every write (400)', async () => {
    for (const o of api.filter((x) => oracle.parameters(x).some((p) => p['name'] === 'dry_run'))) {
      await forbidden(
        o,
        (d, pick) => ({ ...d, query: { ...d.query, dry_run: ['', 'TRUE', 'yes', '1', 'true ', 'false,true'][pick % 6]! } }),
        () => ({ status: 400, error: 'dry_run must be true or false' }),
      );
    }
  });
});
