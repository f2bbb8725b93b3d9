// The walk of one inventory snapshot, measured: the project files in which a function ran while one
// `POST /api/ingest/inventory-snapshot` went from the route to its rows, its reply and its stock event.
//
//   node scripts/bootstrap.mjs bench/walk.ts [checkout]     (default: this one)
//
// It starts `scripts/start.ts` of the checkout in this process (its own broker on 9092 or the one
// running there; the database of DATABASE_URL), registers a location and a product for a new shop,
// sends one warm-up snapshot, then resets V8's precise coverage, sends a snapshot that takes the stock
// to 0 (so a stock_zero event is relayed too), waits for the relay and lists the files whose functions
// ran. Another checkout (a worktree of an older commit, installed) is measured the same way, so two
// commits compare like for like. Left out, because they are not the walk: entry and re-export files
// (index.ts), logging, tracing and metrics, settings, the retry and failpoint helpers, and what runs
// on timers whatever the requests are (table upkeep, partition upkeep, the relay's lease, the lag
// reader, the API keys' last-used flush).
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const checkout = resolve(process.argv[2] ?? new URL('..', import.meta.url).pathname);
const NOT_THE_WALK =
  /\/index\.ts$|observability|logging|metrics|config|retry|failpoint|tableUpkeep|upkeepDue|logPartitions|relayLease|\/lag\.ts$|access\/src\/keyService\.ts$|\.test\.ts$|^bench\/|node_modules/;

Object.assign(process.env, {
  INGEST_SECRET: process.env['INGEST_SECRET'] ?? 'dev-ingest',
  CRON_SECRET: process.env['CRON_SECRET'] ?? 'dev-cron',
  API_KEY_PEPPER: process.env['API_KEY_PEPPER'] ?? 'walk-pepper-0123456789abcdef0123456789',
  LOG_LEVEL: process.env['LOG_LEVEL'] ?? 'warn',
});
process.chdir(checkout);

interface Coverage {
  result: Array<{ url: string; functions: Array<{ functionName: string; ranges: Array<{ count: number }> }> }>;
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
await import(pathToFileURL(`${checkout}/scripts/start.ts`).href);

const base = `http://127.0.0.1:${process.env['PORT'] ?? 8080}`;
for (
  let i = 0;
  i < 240 &&
  !(await fetch(`${base}/readyz`).then(
    (r) => r.ok,
    () => false,
  ));
  i++
)
  await sleep(500);
const shop = `walk${Date.now()}.myshop.example`;
const post = async (path: string, body: unknown): Promise<void> => {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { 'x-ingest-secret': process.env['INGEST_SECRET']!, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${text}`);
};
const location = { identifier_type: 'pos_store_code', identifier_value: 'W1' };
const snapshot = (qty: number) => ({ shop, source_system: 'pos', location, lines: [{ barcode: '4901234567894', on_hand_qty: qty }] });
await post('/api/admin/locations', { shop, locations: [{ name: 'Walk store', identifiers: [location] }] });
await post('/api/ingest/products', { shop, products: [{ barcode: '4901234567894', product_name: 'Green tea' }] });
await post('/api/ingest/inventory-snapshot', snapshot(5));
await sleep(3000);

await session.post('Profiler.takePreciseCoverage'); // counts from here on
await post('/api/ingest/inventory-snapshot', snapshot(0));
await sleep(3000); // the relay publishes the stock_zero event and the audit records
const { result } = (await session.post('Profiler.takePreciseCoverage')) as Coverage;

const prefix = pathToFileURL(`${checkout}/`).href;
const walked = result
  .filter((s) => s.url.startsWith(prefix) && s.functions.some((f) => f.ranges.some((r) => r.count > 0)))
  .map((s) => s.url.slice(prefix.length))
  .filter((path) => !NOT_THE_WALK.test(path))
  .sort();
const byPart = new Map<string, number>();
for (const path of walked) {
  const part = path.split('/').slice(0, 2).join('/');
  byPart.set(part, (byPart.get(part) ?? 0) + 1);
}
console.log(walked.join('\n'));
console.log(`\n${walked.length} files: ${[...byPart].map(([part, n]) => `${part} ${n}`).join(', ')}`);
process.exit(0);
