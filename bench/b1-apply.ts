// B1 projector apply: the real projector transaction (claim, load, decide, upsert, logs, daily rows,
// outbox, stored result) for max-size inventory snapshots and order batches, against the contract
// floor (b1-floor.ts: the same rows from one set-based statement, in an identical copy of the
// database, verified identical), a bare INSERT … SELECT FROM unnest(…) ON CONFLICT DO UPDATE of the
// same rows, and a COPY floor.
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, type Pool, type PoolClient } from '@ingest/db';
import type { Command, InventorySnapshotCommand, SnapshotLine } from '@ingest/domain';
import { applyCommand, createCommandDecoder, type CommandPosition } from '@ingest/projection';
import { barcodeOf, BIG_TABLES, explainLoads, nextPosition, preloadB1, SHOP, TOPICS, type B1Settings, type B1World } from './b1-data.ts';
import { bareLevels, bareOrders, copyLevels, copyOrders, levelRows, orderLineRows, type Rows } from './b1-baselines.ts';
import { applyFloor, FLOOR_SQL, floorParams } from './b1-floor.ts';
import { applyBoth, compareFloor, edgeSequence, type Verification } from './b1-verify.ts';
import { orderLinesCommand, orderRow, snapshotCommand } from './lib/commands.ts';
import {
  cloneBenchDatabase,
  explainLoad,
  newSqlTimes,
  timedClient,
  walByRelation,
  walBytesSince,
  walLsn,
  type PlanSummary,
} from './lib/db.ts';
import { median, percentile, round, say } from './lib/util.ts';

/** The edge-case shop of the floor's verification (its own small catalogue, in both databases). */
const EDGE_SHOP = 'bench-edge.myshop.example';

export const SCENARIOS = ['new', 'changed_100', 'changed_10', 'resend'] as const;
type Scenario = (typeof SCENARIOS)[number];
type Path = 'projector' | 'floor' | 'bare_upsert' | 'copy_floor';

interface Sample {
  ms: number;
  wal: number;
  logRows: number;
  outboxRows: number;
  phases: Record<string, number>;
  decodeMs?: number;
  /** The projector's WAL by relation (pg_walinspect). */
  walByRelation?: Awaited<ReturnType<typeof walByRelation>>;
}

export interface B1TargetResult {
  rows_per_command: number;
  commands: number;
  rows_per_s: number;
  p50_ms: number;
  p95_ms: number;
  wal_bytes_per_command: number;
  log_rows_per_command: number;
  outbox_rows_per_command?: number;
  phase_ms_p50?: Record<string, number>;
  decode_validate_ms_p50?: number;
  /** WAL bytes per line of the command (the median sample): the floor's target is 700 at 100 % changed. */
  wal_bytes_per_line?: number;
  /** The median sample's WAL per line by relation, with the full-page images among it. */
  wal_by_relation_per_line?: Array<{ relation: string; bytes: number; fpi_bytes: number; records: number }>;
}

export interface B1ScenarioResult {
  projector: B1TargetResult;
  /** The contract floor (inventory only). */
  floor?: B1TargetResult;
  bare_upsert?: B1TargetResult;
  copy_floor?: B1TargetResult;
  /** Projector rows/s over the bare upsert's and COPY's. */
  ratio_vs_bare?: number;
  ratio_vs_copy?: number;
  /** Floor time / projector time (p50); >= 1 means the projector is as fast as the floor. */
  ratio_floor?: number;
}

export type B1KindResult = Record<Scenario, B1ScenarioResult>;

/** Which parts run: `BENCH_ONLY=b1` runs all of them, `b1.floor` the inventory scenarios with projector and floor only. */
export interface B1Parts {
  floor: boolean;
  baselines: boolean;
  orders: boolean;
}

export interface B1FloorInfo {
  ids: string;
  /** Every verification found the projector's rows and the floor's identical. */
  verified_identical: boolean;
  verifications: Verification[];
  clone_seconds: number;
}

export interface B1Result {
  settings: B1Settings;
  parts: B1Parts;
  preload: B1World['preload'];
  plans: PlanSummary[];
  inventory_snapshot: B1KindResult;
  order_lines?: B1KindResult;
  floor?: B1FloorInfo;
}

function summarize(samples: Sample[], rows: number): B1TargetResult {
  const ms = samples.map((s) => s.ms);
  const p50 = median(ms);
  const out: B1TargetResult = {
    rows_per_command: rows,
    commands: samples.length,
    rows_per_s: Math.round(rows / (p50 / 1000)),
    p50_ms: round(p50, 1),
    p95_ms: round(percentile(ms, 95), 1),
    wal_bytes_per_command: Math.round(median(samples.map((s) => s.wal))),
    log_rows_per_command: median(samples.map((s) => s.logRows)),
  };
  const byWal = [...samples].sort((a, b) => a.wal - b.wal)[Math.floor(samples.length / 2)];
  if (byWal?.walByRelation) {
    out.wal_bytes_per_line = Math.round(byWal.wal / rows);
    out.wal_by_relation_per_line = byWal.walByRelation
      .filter((r) => r.bytes / rows >= 1)
      .map((r) => ({ relation: r.relation, bytes: round(r.bytes / rows, 1), fpi_bytes: round(r.fpi_bytes / rows, 1), records: r.records }));
  }
  if (samples[0]?.decodeMs !== undefined) out.decode_validate_ms_p50 = round(median(samples.map((s) => s.decodeMs ?? 0)), 1);
  if (Object.keys(samples[0]?.phases ?? {}).length) {
    out.outbox_rows_per_command = median(samples.map((s) => s.outboxRows));
    const names = [...new Set(samples.flatMap((s) => Object.keys(s.phases)))];
    out.phase_ms_p50 = Object.fromEntries(names.map((n) => [n, round(median(samples.map((s) => s.phases[n] ?? 0)), 1)]));
  }
  return out;
}

export async function runB1(db: { name: string; url: string }, settings: B1Settings, parts: B1Parts): Promise<B1Result> {
  const pools = (url: string) => ({
    admin: createPool({ connectionString: url, max: 2, applicationName: 'ingest-bench-admin' }),
    svc: createPool({ connectionString: url, role: 'ingest_service', max: 2, applicationName: 'ingest-bench-projector' }),
  });
  let main = pools(db.url);
  let floorDb: ReturnType<typeof pools> | null = null;
  const end = async () => {
    for (const p of [main, floorDb]) if (p) await Promise.all([p.admin.end(), p.svc.end()]);
  };
  try {
    const world = await preloadB1(main.admin, main.svc, settings);
    say(`B1 preload done in ${world.preload.seconds} s: ${JSON.stringify(world.preload)}`);
    let cloneSeconds = 0;
    if (parts.floor) {
      // The floor writes into an identical copy of the preloaded database (no session may be open on the source).
      await end();
      const t0 = performance.now();
      const url = await cloneBenchDatabase(`${db.name}_floor`, db.name);
      cloneSeconds = round((performance.now() - t0) / 1000, 1);
      say(`B1 floor: ${db.name} copied to ${db.name}_floor in ${cloneSeconds} s`);
      main = pools(db.url);
      floorDb = pools(url);
    }
    return await measureB1(world, main, floorDb, settings, parts, cloneSeconds);
  } finally {
    await end();
  }
}

async function measureB1(
  world: B1World,
  main: { admin: Pool; svc: Pool },
  floorDb: { admin: Pool; svc: Pool } | null,
  settings: B1Settings,
  parts: B1Parts,
  cloneSeconds: number,
): Promise<B1Result> {
  const { admin, svc } = main;
  const decode = createCommandDecoder(new SchemaRegistry());
  // WAL by relation for the projector's commands (walByRelation).
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  if (parts.baselines) {
    await admin.query('CREATE TABLE public.bench_copy_levels (LIKE sot.inventory_levels INCLUDING DEFAULTS)');
    await admin.query('CREATE TABLE public.bench_copy_order_lines (LIKE public.order_line_master INCLUDING DEFAULTS)');
    await admin.query('GRANT ALL ON public.bench_copy_levels, public.bench_copy_order_lines TO ingest_service');
  }

  /** One transaction on `pool`, timed by phase, with its WAL and rows written. */
  const timedTx = async (pool: Pool, commandId: string, run: (tx: PoolClient) => Promise<unknown>): Promise<Sample> => {
    const lsn = await walLsn(admin);
    const times = newSqlTimes();
    const client = await pool.connect();
    const t0 = performance.now();
    try {
      const tx = timedClient(client, times);
      await tx.query('BEGIN');
      await run(tx);
      await tx.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
    const ms = performance.now() - t0;
    const end = await walLsn(admin);
    const wal = await walBytesSince(admin, lsn);
    // On a shared server another session's checkpoint can recycle the segments meanwhile (58P01 via
    // pg_walinspect): that sample goes without its breakdown rather than failing B1.
    const byRelation = pool === svc ? await walByRelation(admin, lsn, end).catch(() => undefined) : undefined;
    const counts = (
      await (pool === svc ? admin : floorDb!.admin).query<{ logs: number; outbox: number; status: number }>(
        `SELECT (SELECT count(*) FROM sot.inventory_update_logs WHERE command_id = $1)::int
            + (SELECT count(*) FROM public.order_line_master_update_logs WHERE command_id = $1)::int AS logs,
              (SELECT count(*) FROM agent_runtime.outbox WHERE command_id = $1)::int AS outbox,
              (SELECT status_code FROM agent_runtime.command_results WHERE command_id = $1) AS status`,
        [commandId],
      )
    ).rows[0]!;
    if (counts.status !== 200) throw new Error(`${pool === svc ? 'projector' : 'floor'} answered ${counts.status} to a bench command`);
    const sql = [...times.byPhase.values()].reduce((a, b) => a + b, 0);
    const phases = Object.fromEntries(times.byPhase);
    if (pool === svc) {
      const decide = times.firstWriteAt !== null && times.lastLoadEnd !== null ? times.firstWriteAt - times.lastLoadEnd : 0;
      phases['decide_and_serialize_js'] = decide;
      phases['other_js'] = Math.max(0, ms - sql - decide);
    } else {
      phases['js'] = Math.max(0, ms - sql);
    }
    return { ms, wal, logRows: counts.logs, outboxRows: counts.outbox, phases, ...(byRelation ? { walByRelation: byRelation } : {}) };
  };

  /** One projector command (decoded first, as the projector does, timed apart). */
  const projector = async (c: Command, at: CommandPosition = nextPosition()): Promise<Sample> => {
    const d0 = performance.now();
    const decoded = decode(Buffer.from(JSON.stringify(c)));
    const decodeMs = performance.now() - d0;
    if (!decoded.ok) throw new Error(`bench command does not decode: ${decoded.error}`);
    const sample = await timedTx(svc, c.command_id, async (tx) => {
      if ((await applyCommand(tx, decoded.command, at, { sideEffects: { topics: TOPICS } })) !== 'applied')
        throw new Error('command was already applied');
    });
    return { ...sample, decodeMs };
  };

  /** The same command through the floor, in the floor's copy of the database, at the same log position. */
  const floor = async (c: Command, at: CommandPosition): Promise<Sample> =>
    timedTx(floorDb!.svc, c.command_id, async (tx) => {
      if (!(await applyFloor(tx, c as InventorySnapshotCommand, at, TOPICS)).applied) throw new Error('command was already applied');
    });

  /** A baseline statement in one transaction: client-side preparation included, as for the projector. */
  const baseline = async (rows: Rows, run: (rows: Rows, client: PoolClient) => Promise<void>, before?: string): Promise<Sample> => {
    if (before) await admin.query(before);
    const lsn = await walLsn(admin);
    const client = await svc.connect();
    const t0 = performance.now();
    try {
      await client.query('BEGIN');
      await run(rows, client);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
    const ms = performance.now() - t0;
    return { ms, wal: await walBytesSince(admin, lsn), logRows: 0, outboxRows: 0, phases: {} };
  };

  const measure = async (
    label: string,
    nRows: number,
    build: (s: Scenario, i: number, who: 'projector' | 'bare') => { command?: Command; rows: Rows },
    others: {
      floor: boolean;
      bare?: (rows: Rows, client: PoolClient) => Promise<void>;
      copy?: (rows: Rows, client: PoolClient) => Promise<void>;
      copyTable?: string;
    },
  ): Promise<{ result: B1KindResult; commandIds: string[] }> => {
    const empty = (): Record<Path, Sample[]> => ({ projector: [], floor: [], bare_upsert: [], copy_floor: [] });
    const samples = Object.fromEntries(SCENARIOS.map((s) => [s, empty()]));
    const commandIds: string[] = [];
    const runs = settings.warmup + settings.iterations;
    for (let i = 0; i < runs; i++) {
      const warm = i < settings.warmup;
      for (const s of SCENARIOS) {
        const p = build(s, i, 'projector');
        const at = nextPosition();
        commandIds.push(p.command!.command_id);
        const got: Partial<Record<Path, Sample>> = {};
        // Projector and floor take turns going first.
        for (const path of i % 2 === 0 ? (['projector', 'floor'] as const) : (['floor', 'projector'] as const)) {
          if (path === 'projector') got.projector = await projector(p.command!, at);
          else if (others.floor) got.floor = await floor(p.command!, at);
        }
        if (others.bare && others.copy) {
          const b = build(s, i, 'bare');
          got.bare_upsert = await baseline(b.rows, others.bare);
          got.copy_floor = await baseline(b.rows, others.copy, `TRUNCATE ${others.copyTable}`);
        }
        const ms = (path: Path) => (got[path] ? `, ${path} ${got[path].ms.toFixed(0)} ms` : '');
        say(
          `B1 ${label} ${s} #${i}${warm ? ' (warm-up)' : ''}: projector ${got.projector!.ms.toFixed(0)} ms (${got.projector!.logRows} logs)${ms('floor')}${ms('bare_upsert')}${ms('copy_floor')}`,
        );
        if (warm) continue;
        for (const [path, sample] of Object.entries(got)) samples[s]![path as Path].push(sample);
      }
    }
    const result = Object.fromEntries(
      SCENARIOS.map((s) => {
        const x = samples[s]!;
        const r: B1ScenarioResult = { projector: summarize(x.projector, nRows) };
        if (x.floor.length) {
          r.floor = summarize(x.floor, nRows);
          r.ratio_floor = round(r.floor.p50_ms / r.projector.p50_ms, 3);
        }
        if (x.bare_upsert.length) {
          r.bare_upsert = summarize(x.bare_upsert, nRows);
          r.copy_floor = summarize(x.copy_floor, nRows);
          r.ratio_vs_bare = round(r.projector.rows_per_s / r.bare_upsert.rows_per_s, 3);
          r.ratio_vs_copy = round(r.projector.rows_per_s / r.copy_floor.rows_per_s, 3);
        }
        return [s, r];
      }),
    ) as B1KindResult;
    return { result, commandIds };
  };

  // Floor verification first, on a small shop of its own: every rule the floor must reproduce.
  const verifications: Verification[] = [];
  const plans: PlanSummary[] = [];
  if (floorDb) {
    const edge = edgeSequence(EDGE_SHOP);
    for (const step of edge.steps) await applyBoth(step, nextPosition(), svc, floorDb.svc, TOPICS);
    const v = await compareFloor(
      'edge cases: D6a repeats, D15b stale, D16/D16b daily rows, D18 events, unresolved, resend',
      admin,
      floorDb.admin,
      EDGE_SHOP,
      edge.steps.length,
    );
    verifications.push(v);
    say(
      `B1 floor verification (edge cases, ${edge.steps.length} commands): ${v.identical ? 'rows identical' : `ROWS DIFFER: ${JSON.stringify(v.tables.filter((t) => !t.identical))}`}`,
    );
    // The floor statement's plan on the preloaded model (a rolled-back run of a full command).
    const c = await floorDb.admin.connect();
    try {
      const probe = snapshotCommand(
        SHOP,
        world.preloaded[0]!,
        Array.from({ length: settings.snapshotLines }, (_, k) => ({
          barcode: barcodeOf(k + 1),
          on_hand_qty: 7 + (k % 13),
          available_qty: 5 + (k % 13),
        })),
      );
      const plan = await explainLoad(
        c,
        'floor: the one statement (EXPLAIN ANALYZE, rolled back)',
        FLOOR_SQL,
        floorParams(probe, TOPICS),
        BIG_TABLES,
      );
      plans.push(plan);
      say(
        `B1 floor plan: ${plan.node_types.join(', ')}${plan.seq_scan_on_big_table ? '  <-- SEQ SCAN OF A BIG TABLE' : ''} (${plan.execution_ms} ms)`,
      );
    } finally {
      c.release();
    }
  }

  // Inventory: 10,000 lines at one location. "new" goes to an empty location; the other scenarios
  // rewrite a preloaded location (projector and bare each on their own), each starting from the previous one's state.
  // The floor applies the projector's very commands in its copy of the database.
  const L = settings.snapshotLines;
  const last: Record<'projector' | 'bare', SnapshotLine[]> = { projector: [], bare: [] };
  const snapshotLines = (s: Scenario, i: number, who: 'projector' | 'bare'): SnapshotLine[] => {
    const base = Array.from({ length: L }, (_, k) => ({
      barcode: barcodeOf(k + 1),
      on_hand_qty: 1000 * (i + 1) + (k % 50),
      available_qty: 1000 * (i + 1) + (k % 50) - 1,
    }));
    if (s === 'new' || s === 'changed_100') return (last[who] = base);
    if (s === 'changed_10')
      return (last[who] = last[who].map((l, k) =>
        k % 10 === 0 ? { ...l, on_hand_qty: l.on_hand_qty + 7, available_qty: (l.available_qty ?? l.on_hand_qty) + 7 } : l,
      ));
    return last[who];
  };
  const inventory = await measure(
    'inventory',
    L,
    (s, i, who) => {
      const location = s === 'new' ? world.fresh[who][i]! : world.preloaded[who === 'projector' ? 1 : 2]!;
      const lines = snapshotLines(s, i, who);
      const command = snapshotCommand(SHOP, location, lines);
      return { command, rows: levelRows(command, world.productIds) };
    },
    { floor: Boolean(floorDb), ...(parts.baselines ? { bare: bareLevels, copy: copyLevels, copyTable: 'public.bench_copy_levels' } : {}) },
  );
  if (floorDb) {
    const scope = { locations: [world.preloaded[1]!, ...world.fresh.projector], commandIds: inventory.commandIds };
    const v = await compareFloor(
      'the measured snapshots (every scenario, warm-up included)',
      admin,
      floorDb.admin,
      SHOP,
      inventory.commandIds.length,
      scope,
    );
    verifications.push(v);
    say(
      `B1 floor verification (measured commands): ${v.identical ? 'rows identical' : `ROWS DIFFER: ${JSON.stringify(v.tables.filter((t) => !t.identical))}`}`,
    );
  }
  const floorInfo: B1FloorInfo | undefined = floorDb
    ? {
        ids: 'log ids and stock-event ids computed in the statement (pgcrypto sha1, only for the rows that get one); the audit batch event id passed in from JS (eventId)',
        verified_identical: verifications.every((v) => v.identical),
        verifications,
        clone_seconds: cloneSeconds,
      }
    : undefined;

  // Order lines: 5,000 rows. "new" has fresh keys; the others update a key set created up front.
  const R = settings.orderRows;
  const refs = (n: number) => ({ barcode: barcodeOf((n % L) + 1), channel_id: world.channelId, location_id: world.preloaded[0]! });
  const keyed = (who: string) =>
    Array.from({ length: R }, (_, n) => ({ transaction_id: `K-${who}-${Math.floor(n / 5)}`, line: (n % 5) + 1 }));
  const explain = async () => {
    say('B1 EXPLAIN of the load queries');
    const c = await admin.connect();
    plans.unshift(...(await explainLoads(c, world, keyed('projector')).finally(() => c.release())));
    for (const p of plans)
      say(
        `  ${p.query}: ${p.node_types.join(', ')}${p.seq_scan_on_big_table ? '  <-- SEQ SCAN OF A BIG TABLE' : ''} (${p.execution_ms} ms)`,
      );
  };
  if (!parts.orders) {
    await explain();
    return {
      settings,
      parts,
      preload: world.preload,
      plans,
      inventory_snapshot: inventory.result,
      ...(floorInfo ? { floor: floorInfo } : {}),
    };
  }

  const lastRows: Record<'projector' | 'bare', Array<Record<string, unknown>>> = { projector: [], bare: [] };
  const orderRows = (s: Scenario, i: number, who: 'projector' | 'bare') => {
    if (s === 'new')
      return Array.from({ length: R }, (_, n) =>
        orderRow({ transaction_id: `N-${who}-${i}-${Math.floor(n / 5)}`, line: (n % 5) + 1 }, refs(n), `c${n}`),
      );
    if (s === 'changed_100') return (lastRows[who] = keyed(who).map((k, n) => orderRow(k, refs(n), `c${n}-${i}`)));
    if (s === 'changed_10')
      return (lastRows[who] = lastRows[who].map((r, n) => (n % 10 === 0 ? { ...r, customer_id: `${String(r['customer_id'])}-x` } : r)));
    return lastRows[who];
  };
  // The key sets exist before the first measured update.
  const seedP = orderLinesCommand(
    SHOP,
    keyed('projector').map((k, n) => orderRow(k, refs(n), 'seed')),
  );
  await projector(seedP);
  const seedB = orderLinesCommand(
    SHOP,
    keyed('bare').map((k, n) => orderRow(k, refs(n), 'seed')),
  );
  await baseline(orderLineRows(seedB), bareOrders);
  await admin.query('ANALYZE');

  await explain();

  const orders = await measure(
    'orders',
    R,
    (s, i, who) => {
      const command = orderLinesCommand(SHOP, orderRows(s, i, who));
      return { command, rows: orderLineRows(command) };
    },
    { floor: false, bare: bareOrders, copy: copyOrders, copyTable: 'public.bench_copy_order_lines' },
  );
  return {
    settings,
    parts,
    preload: world.preload,
    plans,
    inventory_snapshot: inventory.result,
    order_lines: orders.result,
    ...(floorInfo ? { floor: floorInfo } : {}),
  };
}
