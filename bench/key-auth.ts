// What authenticating a request costs the gateway (D28): `node scripts/bootstrap.mjs bench/key-auth.ts`.
// The gateway's own front door (services/gateway/src/edge/auth.ts `requireAccess`) for the rule of
// POST /api/ingest/inventory-snapshot ({ platform: 'ingest', scope: 'inventory:write', retailer: true }),
// called directly with minimal req/res objects and a `next` callback: no HTTP server, no body, only
// authentication. In one run, over a scratch database migrated from migrations/ and dropped at the end:
//   - the platform shared secret (x-ingest-secret) with 1 and with 3 configured secrets;
//   - a per-shop key, warm (the same key again and again, and cycling over KA_KEYS already-seen keys);
//   - a per-shop key, cold (each key seen for the first time: one indexed read of agent_runtime.api_keys);
//   - a wrong key (well formed, unknown, not cached: one read) and a malformed one (no read);
//   - beside them, references: HMAC-SHA-256 of a key alone; the key service alone on a cold key
//     (authenticate, no middleware); the read alone (the ledger's apiKeys.findByHash on the same pool),
//     the same SQL as a named prepared statement, and a bare `SELECT 1`: the floors of the cold path.
// The key service is the gateway's (createKeyService over pgKeyRows, a real LISTEN connection, so its
// cache is trusted), as role ingest_service; the keys are minted through it. Each path is warmed up, then
// measured KA_N (in memory) or KA_N_DB (a database read) times per round, over KA_ROUNDS rounds whose
// order alternates (forward, reversed, forward, ...) so drift on the shared machine falls on every path
// alike. Every call's outcome is checked (200-path: next() without error and the principal set; refused:
// a 401) and the reads per request are counted. Writes bench/results/key-auth-<date>.json
// (BENCH_RESULTS_DIR elsewhere) and prints a markdown table.
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Request, RequestHandler, Response } from 'express';
import { SchemaRegistry } from '@ingest/contracts';
import {
  apiKeys,
  createDatabaseFromTemplate,
  createListener,
  createPool,
  dropDatabase,
  migrate,
  type Listener,
  type Pool,
  type Queryable,
} from '@ingest/db';
import { REPO_ROOT } from '@ingest/devstack';
import { createKeyService, keyHash, mintKey, pgKeyRows, type KeyService } from '@ingest/access';
import { requireAccess } from '@ingest/gateway';
import { ADMIN_URL } from './lib/db.ts';
import { busyShareSince, gitHead, machine, machineCpu, packageVersion, percentile, round, say, sleep } from './lib/util.ts';

const env = process.env;
const KEYS = Number(env['KA_KEYS'] ?? 1000);
const N = Number(env['KA_N'] ?? 20_000);
const N_DB = Number(env['KA_N_DB'] ?? 2000);
const ROUNDS = Number(env['KA_ROUNDS'] ?? 3);
const WARMUP = Math.max(1, Math.round(N / 10));
const WARMUP_DB = Math.max(1, Math.round(N_DB / 10));
const SHOPS = 4;
const PEPPER = 'bench-pepper-of-at-least-thirty-two-characters';
const SECRETS = ['bench-ingest-secret-0', 'bench-ingest-secret-1', 'bench-ingest-secret-2'];
const RULE = "{ platform: 'ingest', scope: 'inventory:write', retailer: true }";
const ROUTE = '/api/ingest/inventory-snapshot';
/** packages/db/src/ledger/apiKeys.ts findByHash's statement, for the prepared-statement reference. */
const FIND_BY_HASH =
  'SELECT key_id, shop, scopes, note, created_at, expires_at, revoked_at, last_used_at FROM agent_runtime.api_keys WHERE key_hash = $1';

const access = { createKeyService, pgKeyRows, mintKey, keyHash };

// ---- the scratch database ------------------------------------------------------------------------

const dbName = `ingest_bench_p${process.pid}_keyauth_${randomBytes(3).toString('hex')}`;
let dropped = false;
const dropScratch = async (): Promise<void> => {
  if (dropped) return;
  dropped = true;
  await dropDatabase(ADMIN_URL, dbName);
  say(`dropped ${dbName}`);
};
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void dropScratch().finally(() => process.exit(130));
  });

const started = performance.now();
/** What `run` opens, closed in `finally` whatever happened. */
const opened: { pool: Pool | null; listener: Listener | null } = { pool: null, listener: null };
const services: KeyService[] = [];
let exitCode = 0;
try {
  const url = await createDatabaseFromTemplate(ADMIN_URL, dbName, 'template1');
  await migrate(url);
  say(`created and migrated ${dbName}`);
  await run(url);
} catch (err) {
  exitCode = 1;
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
} finally {
  for (const s of services) await s.close().catch(() => {});
  await opened.listener?.close().catch(() => {});
  await opened.pool?.end().catch(() => {});
  await dropScratch().catch((err: unknown) => {
    exitCode = 1;
    process.stderr.write(`could not drop ${dbName}: ${String(err)}\n`);
  });
}
process.exit(exitCode);

// ---- the bench -----------------------------------------------------------------------------------

interface Path {
  name: string;
  what: string;
  db: boolean;
  /** One call; resolves with the number of the iteration's failures (0 or 1). */
  call(i: number): Promise<number>;
}

interface PathResult {
  path: string;
  what: string;
  iterations: number;
  reads_per_request: number;
  mean_us: number;
  p50_us: number;
  p99_us: number;
  cpu_us_per_request: number;
  p50_us_by_round: number[];
  cpu_us_by_round: number[];
}

async function run(url: string): Promise<void> {
  const p = createPool({ connectionString: url, role: 'ingest_service', max: 4, applicationName: 'ingest-bench-keyauth' });
  const lst = createListener({ connectionString: url, role: 'ingest_service', applicationName: 'ingest-bench-keyauth-listen' });
  opened.pool = p;
  opened.listener = lst;
  let reconnects = -1;
  lst.onConnect(() => reconnects++);
  // Every read of a key by its hash goes through here: counted per path (warm and malformed must read nothing).
  let reads = 0;
  const counted: Queryable = {
    query: ((...args: Parameters<Pool['query']>) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
      if (text?.includes('WHERE key_hash')) reads++;
      return (p.query as (...a: unknown[]) => unknown)(...args);
    }) as Queryable['query'],
  };
  const newService = (): KeyService => {
    const s = access.createKeyService({
      rows: access.pgKeyRows(counted, lst),
      pepper: PEPPER,
      onError: (err, what) => say(`key service: ${what}: ${String(err)}`),
    });
    services.push(s);
    return s;
  };
  // Two services over the same table and LISTEN connection: the warm one only ever sees the KEYS keys,
  // so the cold and wrong keys (more than its 10,000 entries) never push them out of its cache.
  const warmKeys = newService();
  const coldKeys = newService();
  for (let t = 0; !lst.connected(); t++) {
    if (t > 100) throw new Error('the LISTEN connection did not come up');
    await sleep(50);
  }

  // Keys: KEYS for the warm paths, and one fresh key per cold call, all minted through the service.
  const coldCount = WARMUP_DB + ROUNDS * N_DB;
  const mint = async (count: number, tag: string): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < count; i += 16) {
      const batch = Array.from({ length: Math.min(16, count - i) }, (_, k) =>
        warmKeys.create({
          shop: `bench-keyauth-${(i + k) % SHOPS}.myshop.example`,
          scopes: ['inventory:write', 'orders:write'],
          note: tag,
        }),
      );
      for (const c of await Promise.all(batch)) out.push(c.key);
    }
    return out;
  };
  const t0 = performance.now();
  const seen = await mint(KEYS, 'warm');
  const fresh = await mint(coldCount, 'cold');
  // And as many again for the key service alone (a third service, its own cache), without the middleware.
  const freshAlone = await mint(coldCount, 'cold, service alone');
  const aloneKeys = newService();
  const minted = seen.length + fresh.length + freshAlone.length;
  say(`minted ${minted} keys for ${SHOPS} shops in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const wrong = Array.from({ length: coldCount }, () => access.mintKey().key);
  const malformed = `isk_${'x'.repeat(20)}!`;
  const hashes = seen.map((k) => access.keyHash(PEPPER, k));

  // The middleware, as the gateway builds it, per configuration.
  const schemas = new SchemaRegistry();
  const secrets1 = authOf(schemas, SECRETS.slice(0, 1), warmKeys);
  const secrets3 = authOf(schemas, SECRETS, warmKeys);
  const coldAuth = authOf(schemas, SECRETS.slice(0, 1), coldKeys);

  const bearer = (key: string): Request => ({ headers: { authorization: `Bearer ${key}` } }) as unknown as Request;
  const seenReqs = seen.map(bearer);
  const freshReqs = fresh.map(bearer);
  const wrongReqs = wrong.map(bearer);
  const malformedReq = bearer(malformed);
  // The last configured secret: with 3, every digest is compared anyway (no early exit).
  const secretReq1 = { headers: { 'x-ingest-secret': SECRETS[0]! } } as unknown as Request;
  const secretReq3 = { headers: { 'x-ingest-secret': SECRETS[2]! } } as unknown as Request;

  // Warm the warm service's cache with every seen key before anything is measured.
  for (const r of seenReqs) await expectOk(secrets1, r, 'key');
  const coldAt = { fresh: 0, wrong: 0, alone: 0 };
  const paths: Path[] = [
    { name: 'secret (1 configured)', what: 'x-ingest-secret, 1 secret', db: false, call: () => expectOk(secrets1, secretReq1, 'ingest') },
    { name: 'secret (3 configured)', what: 'x-ingest-secret, 3 secrets', db: false, call: () => expectOk(secrets3, secretReq3, 'ingest') },
    { name: 'key, warm, same key', what: 'Bearer key, cached', db: false, call: () => expectOk(secrets1, seenReqs[0]!, 'key') },
    {
      name: `key, warm, ${KEYS} keys cycled`,
      what: 'Bearer key, cached',
      db: false,
      call: (i) => expectOk(secrets1, seenReqs[i % seenReqs.length]!, 'key'),
    },
    {
      name: 'key, cold',
      what: 'Bearer key, first use: 1 read',
      db: true,
      call: () => expectOk(coldAuth, freshReqs[coldAt.fresh++]!, 'key'),
    },
    {
      name: 'key, wrong (unknown)',
      what: 'Bearer, unknown: 1 read, 401',
      db: true,
      call: () => expect401(coldAuth, wrongReqs[coldAt.wrong++]!),
    },
    { name: 'key, malformed', what: 'Bearer, bad shape: no read, 401', db: false, call: () => expect401(coldAuth, malformedReq) },
    {
      name: 'ref: HMAC-SHA-256 of a key',
      what: 'keyHash alone',
      db: false,
      call: async (i) => (access.keyHash(PEPPER, seen[i % seen.length]!).length === 32 ? 0 : 1),
    },
    {
      name: 'ref: findByHash read alone',
      what: "the key service's read alone (apiKeys.findByHash), same pool",
      db: true,
      call: async (i) => ((await apiKeys.findByHash(counted, hashes[i % hashes.length]!)) ? 0 : 1),
    },
    {
      name: 'ref: key service alone, cold',
      what: 'KeyService.authenticate of a key seen for the first time, no middleware',
      db: true,
      call: async () => ((await aloneKeys.authenticate(freshAlone[coldAt.alone++]!)) ? 0 : 1),
    },
    {
      // The same statement, named: parsed and planned once per connection instead of on every call.
      name: 'ref: the same read, named prepared',
      what: "apiKeys.findByHash's SQL as a named prepared statement",
      db: true,
      call: async (i) =>
        (await counted.query({ name: 'bench_find_key', text: FIND_BY_HASH, values: [hashes[i % hashes.length]] })).rows.length === 1
          ? 0
          : 1,
    },
    {
      name: 'ref: SELECT 1 round trip',
      what: 'PostgreSQL round trip',
      db: true,
      call: async () => ((await p.query('SELECT 1')).rows.length === 1 ? 0 : 1),
    },
  ];

  // Warm-up: every path, then the rounds.
  for (const path of paths) await measure(path, path.db ? WARMUP_DB : WARMUP);
  say('warmed up');
  const samples = new Map<string, number[]>(paths.map((x) => [x.name, []]));
  const byRound = new Map<string, { p50: number; cpu: number }[]>(paths.map((x) => [x.name, []]));
  const readsOf = new Map<string, number>(paths.map((x) => [x.name, 0]));
  const cpuOf = new Map<string, number>(paths.map((x) => [x.name, 0]));
  const busy0 = machineCpu();
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...paths].reverse() : paths;
    for (const path of order) {
      const n = path.db ? N_DB : N;
      const readsBefore = reads;
      const m = await measure(path, n);
      const all = samples.get(path.name)!;
      for (const x of m.samples) all.push(x);
      readsOf.set(path.name, readsOf.get(path.name)! + (reads - readsBefore));
      cpuOf.set(path.name, cpuOf.get(path.name)! + m.cpuUs);
      byRound.get(path.name)!.push({ p50: round(percentile(m.samples, 50), 2), cpu: round(m.cpuUs / n, 2) });
    }
    say(`round ${r + 1} of ${ROUNDS} (${r % 2 ? 'reversed' : 'forward'} order) done`);
  }
  const machineBusy = round(busyShareSince(busy0), 2);
  say(`the machine was ${Math.round(machineBusy * 100)} % busy (all cores) during the rounds`);
  if (reconnects > 0) say(`warning: the LISTEN connection reconnected ${reconnects} time(s) (each drops the caches)`);

  const results: PathResult[] = paths.map((path) => {
    const s = samples.get(path.name)!;
    const n = s.length;
    return {
      path: path.name,
      what: path.what,
      iterations: n,
      reads_per_request: round(readsOf.get(path.name)! / n, 3),
      mean_us: round(s.reduce((a, b) => a + b, 0) / n, 2),
      p50_us: round(percentile(s, 50), 2),
      p99_us: round(percentile(s, 99), 2),
      cpu_us_per_request: round(cpuOf.get(path.name)! / n, 2),
      p50_us_by_round: byRound.get(path.name)!.map((x) => x.p50),
      cpu_us_by_round: byRound.get(path.name)!.map((x) => x.cpu),
    };
  });
  const table = markdownTable(results);
  const serverVersion = (await p.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v ?? 'unknown';
  const head = gitHead(REPO_ROOT);
  const date = new Date();
  const out = {
    bench: 'key-auth',
    decision: 'D28',
    commit: head.commit,
    working_tree_dirty: head.dirty,
    date: date.toISOString(),
    total_seconds: round((performance.now() - started) / 1000, 1),
    machine: { ...machine(), node: process.version },
    versions: {
      node: process.version,
      postgres: serverVersion,
      pg: packageVersion('pg', join(REPO_ROOT, 'packages/db/package.json')),
      express: packageVersion('express', join(REPO_ROOT, 'services/gateway/package.json')),
    },
    settings: {
      rule: RULE,
      route: ROUTE,
      keys: KEYS,
      shops: SHOPS,
      cold_keys_per_cold_path: coldCount,
      keys_minted: minted,
      iterations_in_memory: N,
      iterations_db: N_DB,
      warmup_in_memory: WARMUP,
      warmup_db: WARMUP_DB,
      rounds: ROUNDS,
      order: 'forward, reversed, forward, ...',
      db_role: 'ingest_service',
      listen_reconnects: Math.max(0, reconnects),
      machine_busy_share_during_rounds: machineBusy,
      timing:
        'performance.now() around each awaited call of the middleware (a fresh res per call); CPU: process.cpuUsage() (user + system) over each batch / its calls',
    },
    results,
    table_md: table,
  };
  const dir = env['BENCH_RESULTS_DIR'] ?? join(REPO_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `key-auth-${date.toISOString().slice(0, 10)}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  say(`wrote ${file}`);
  process.stdout.write(`${table}\n`);
}

/** The gateway's front door for the snapshot route's rule (RULE), with these secrets and keys. */
function authOf(_schemas: SchemaRegistry, ingestSecrets: string[], keys: KeyService): RequestHandler {
  return requireAccess(
    { ingestSecrets, cronSecrets: [], platformSecretsForRetailers: true, keys },
    { platform: 'ingest', scope: 'inventory:write', retailer: true },
  );
}

/** One authenticated call: next() without an error, and the credential set (ingest:… or key:…). */
async function expectOk(auth: RequestHandler, req: Request, kind: 'ingest' | 'key'): Promise<number> {
  const res = { locals: {} } as Response;
  let failure: unknown = 'next not called';
  await auth(req, res, (err?: unknown) => {
    failure = err ?? null;
  });
  const credential = res.locals['credential'] as string | undefined;
  return failure === null && credential?.startsWith(`${kind}:`) === true ? 0 : 1;
}

/** One refused call: next() with a 401. */
async function expect401(auth: RequestHandler, req: Request): Promise<number> {
  const res = { locals: {} } as Response;
  let status: unknown;
  await auth(req, res, (err?: unknown) => {
    status = (err as { status?: number } | undefined)?.status;
  });
  return status === 401 ? 0 : 1;
}

/** `n` timed calls of a path (µs each) and the process CPU they took (µs). Throws on any wrong outcome. */
async function measure(path: Path, n: number): Promise<{ samples: number[]; cpuUs: number }> {
  const samples = new Array<number>(n);
  let failures = 0;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    failures += await path.call(i);
    samples[i] = (performance.now() - s) * 1000;
  }
  const cpu = process.cpuUsage(cpu0);
  if (failures > 0) throw new Error(`${path.name}: ${failures} of ${n} calls had the wrong outcome`);
  return { samples, cpuUs: cpu.user + cpu.system };
}

function markdownTable(results: PathResult[]): string {
  const f = (n: number): string =>
    n.toLocaleString('en-US', { maximumFractionDigits: n >= 100 ? 0 : 1, minimumFractionDigits: n >= 100 ? 0 : 1 });
  const lines = [
    `Rule ${RULE} (the ${ROUTE} route's requireAccess), called directly; µs per request.`,
    '',
    '| path | requests | reads / request | mean µs | p50 µs | p99 µs | CPU µs / request | p50 µs by round |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    ...results.map(
      (r) =>
        `| ${r.path} | ${r.iterations.toLocaleString('en-US')} | ${r.reads_per_request} | ${f(r.mean_us)} | ${f(r.p50_us)} | ${f(r.p99_us)} | ${f(r.cpu_us_per_request)} | ${r.p50_us_by_round.map(f).join(' / ')} |`,
    ),
  ];
  return lines.join('\n');
}
