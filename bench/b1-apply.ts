// B1 projector apply: the real projector transaction (claim, load, decide, upsert, logs, daily rows,
// outbox, stored result) for max-size inventory snapshots and order batches, against a bare
// INSERT … SELECT FROM unnest(…) ON CONFLICT DO UPDATE of the same rows and a COPY floor.
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool, PoolClient } from '@ingest/db';
import type { Command, SnapshotLine } from '@ingest/domain';
import { applyCommand } from '../services/projector/src/applyCommand.ts';
import { createCommandDecoder } from '../services/projector/src/decodeCommand.ts';
import { barcodeOf, explainLoads, nextPosition, preloadB1, SHOP, TOPICS, type B1Settings, type B1World } from './b1-data.ts';
import { bareLevels, bareOrders, copyLevels, copyOrders, levelRows, orderLineRows, type Rows } from './b1-baselines.ts';
import { orderLinesCommand, orderRow, snapshotCommand } from './lib/commands.ts';
import { newSqlTimes, timedClient, walBytesSince, walLsn, type PlanSummary } from './lib/db.ts';
import { median, percentile, round, say } from './lib/util.ts';

export const SCENARIOS = ['new', 'changed_100', 'changed_10', 'resend'] as const;
type Scenario = (typeof SCENARIOS)[number];
type Target = 'projector' | 'bare_upsert' | 'copy_floor';

interface Sample {
  ms: number;
  wal: number;
  logRows: number;
  outboxRows: number;
  phases: Record<string, number>;
  decodeMs?: number;
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
}

export type B1KindResult = Record<Scenario, Record<Target, B1TargetResult> & { ratio_vs_bare: number; ratio_vs_copy: number }>;

export interface B1Result {
  settings: B1Settings;
  preload: B1World['preload'];
  plans: PlanSummary[];
  inventory_snapshot: B1KindResult;
  order_lines: B1KindResult;
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
  if (samples[0]?.decodeMs !== undefined) {
    out.outbox_rows_per_command = median(samples.map((s) => s.outboxRows));
    out.decode_validate_ms_p50 = round(median(samples.map((s) => s.decodeMs ?? 0)), 1);
    const names = [...new Set(samples.flatMap((s) => Object.keys(s.phases)))];
    out.phase_ms_p50 = Object.fromEntries(names.map((n) => [n, round(median(samples.map((s) => s.phases[n] ?? 0)), 1)]));
  }
  return out;
}

export async function runB1(admin: Pool, svc: Pool, settings: B1Settings): Promise<B1Result> {
  const world = await preloadB1(admin, svc, settings);
  say(`B1 preload done in ${world.preload.seconds} s: ${JSON.stringify(world.preload)}`);
  const decode = createCommandDecoder(new SchemaRegistry());
  await admin.query('CREATE TABLE public.bench_copy_levels (LIKE sot.inventory_levels INCLUDING DEFAULTS)');
  await admin.query('CREATE TABLE public.bench_copy_order_lines (LIKE public.order_line_master INCLUDING DEFAULTS)');
  await admin.query('GRANT ALL ON public.bench_copy_levels, public.bench_copy_order_lines TO ingest_service');

  /** One projector command in one transaction, timed by phase, with its WAL and rows written. */
  const projector = async (c: Command): Promise<Sample> => {
    const d0 = performance.now();
    const decoded = decode(Buffer.from(JSON.stringify(c)));
    const decodeMs = performance.now() - d0;
    if (!decoded.ok) throw new Error(`bench command does not decode: ${decoded.error}`);
    const lsn = await walLsn(admin);
    const times = newSqlTimes();
    const client = await svc.connect();
    const t0 = performance.now();
    try {
      const tx = timedClient(client, times);
      await tx.query('BEGIN');
      if ((await applyCommand(tx, decoded.command, nextPosition(), { sideEffects: { topics: TOPICS } })) !== 'applied') throw new Error('command was already applied');
      await tx.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
    const ms = performance.now() - t0;
    const wal = await walBytesSince(admin, lsn);
    const counts = (await admin.query<{ logs: number; outbox: number; status: number }>(
      `SELECT (SELECT count(*) FROM sot.inventory_update_logs WHERE command_id = $1)::int
            + (SELECT count(*) FROM public.order_line_master_update_logs WHERE command_id = $1)::int AS logs,
              (SELECT count(*) FROM agent_runtime.outbox WHERE command_id = $1)::int AS outbox,
              (SELECT status_code FROM agent_runtime.command_results WHERE command_id = $1) AS status`,
      [c.command_id],
    )).rows[0]!;
    if (counts.status !== 200) throw new Error(`projector answered ${counts.status} to a bench command`);
    const sql = [...times.byPhase.values()].reduce((a, b) => a + b, 0);
    const decide = times.firstWriteAt !== null && times.lastLoadEnd !== null ? times.firstWriteAt - times.lastLoadEnd : 0;
    const phases = Object.fromEntries(times.byPhase);
    phases['decide_and_serialize_js'] = decide;
    phases['other_js'] = Math.max(0, ms - sql - decide);
    return { ms, wal, logRows: counts.logs, outboxRows: counts.outbox, phases, decodeMs };
  };

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
    bare: (rows: Rows, client: PoolClient) => Promise<void>,
    copy: (rows: Rows, client: PoolClient) => Promise<void>,
    copyTable: string,
  ): Promise<B1KindResult> => {
    const samples = Object.fromEntries(SCENARIOS.map((s) => [s, { projector: [] as Sample[], bare_upsert: [] as Sample[], copy_floor: [] as Sample[] }]));
    const runs = settings.warmup + settings.iterations;
    for (let i = 0; i < runs; i++) {
      const warm = i < settings.warmup;
      for (const s of SCENARIOS) {
        const p = build(s, i, 'projector');
        const b = build(s, i, 'bare');
        const sp = await projector(p.command!);
        const sb = await baseline(b.rows, bare);
        const sc = await baseline(b.rows, copy, `TRUNCATE ${copyTable}`);
        say(`B1 ${label} ${s} #${i}${warm ? ' (warm-up)' : ''}: projector ${sp.ms.toFixed(0)} ms (${sp.logRows} logs), bare ${sb.ms.toFixed(0)} ms, copy ${sc.ms.toFixed(0)} ms`);
        if (warm) continue;
        samples[s]!.projector.push(sp);
        samples[s]!.bare_upsert.push(sb);
        samples[s]!.copy_floor.push(sc);
      }
    }
    return Object.fromEntries(
      SCENARIOS.map((s) => {
        const r = { projector: summarize(samples[s]!.projector, nRows), bare_upsert: summarize(samples[s]!.bare_upsert, nRows), copy_floor: summarize(samples[s]!.copy_floor, nRows) };
        return [s, { ...r, ratio_vs_bare: round(r.projector.rows_per_s / r.bare_upsert.rows_per_s, 3), ratio_vs_copy: round(r.projector.rows_per_s / r.copy_floor.rows_per_s, 3) }];
      }),
    ) as B1KindResult;
  };

  // Inventory: 10,000 lines at one location. "new" goes to an empty location; the other scenarios
  // rewrite a preloaded location (projector and bare each on their own), each starting from the previous one's state.
  const L = settings.snapshotLines;
  const last: Record<'projector' | 'bare', SnapshotLine[]> = { projector: [], bare: [] };
  const snapshotLines = (s: Scenario, i: number, who: 'projector' | 'bare'): SnapshotLine[] => {
    const base = Array.from({ length: L }, (_, k) => ({ barcode: barcodeOf(k + 1), on_hand_qty: 1000 * (i + 1) + (k % 50), available_qty: 1000 * (i + 1) + (k % 50) - 1 }));
    if (s === 'new' || s === 'changed_100') return (last[who] = base);
    if (s === 'changed_10') return (last[who] = last[who].map((l, k) => (k % 10 === 0 ? { ...l, on_hand_qty: l.on_hand_qty + 7, available_qty: (l.available_qty ?? l.on_hand_qty) + 7 } : l)));
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
    bareLevels,
    copyLevels,
    'public.bench_copy_levels',
  );

  // Order lines: 5,000 rows. "new" has fresh keys; the others update a key set created up front.
  const R = settings.orderRows;
  const refs = (n: number) => ({ barcode: barcodeOf((n % L) + 1), channel_id: world.channelId, location_id: world.preloaded[0]! });
  const keyed = (who: string) => Array.from({ length: R }, (_, n) => ({ transaction_id: `K-${who}-${Math.floor(n / 5)}`, line: (n % 5) + 1 }));
  const lastRows: Record<'projector' | 'bare', Array<Record<string, unknown>>> = { projector: [], bare: [] };
  const orderRows = (s: Scenario, i: number, who: 'projector' | 'bare') => {
    if (s === 'new') return Array.from({ length: R }, (_, n) => orderRow({ transaction_id: `N-${who}-${i}-${Math.floor(n / 5)}`, line: (n % 5) + 1 }, refs(n), `c${n}`));
    if (s === 'changed_100') return (lastRows[who] = keyed(who).map((k, n) => orderRow(k, refs(n), `c${n}-${i}`)));
    if (s === 'changed_10') return (lastRows[who] = lastRows[who].map((r, n) => (n % 10 === 0 ? { ...r, customer_id: `${String(r['customer_id'])}-x` } : r)));
    return lastRows[who];
  };
  // The key sets exist before the first measured update.
  const seedP = orderLinesCommand(SHOP, keyed('projector').map((k, n) => orderRow(k, refs(n), 'seed')));
  await projector(seedP);
  const seedB = orderLinesCommand(SHOP, keyed('bare').map((k, n) => orderRow(k, refs(n), 'seed')));
  await baseline(orderLineRows(seedB), bareOrders);
  await admin.query('ANALYZE');

  say('B1 EXPLAIN of the load queries');
  const c = await admin.connect();
  const plans = await explainLoads(c, world, keyed('projector')).finally(() => c.release());
  for (const p of plans) say(`  ${p.query}: ${p.node_types.join(', ')}${p.seq_scan_on_big_table ? '  <-- SEQ SCAN OF A BIG TABLE' : ''} (${p.execution_ms} ms)`);

  const orders = await measure(
    'orders',
    R,
    (s, i, who) => {
      const command = orderLinesCommand(SHOP, orderRows(s, i, who));
      return { command, rows: orderLineRows(command) };
    },
    bareOrders,
    copyOrders,
    'public.bench_copy_order_lines',
  );
  return { settings, preload: world.preload, plans, inventory_snapshot: inventory, order_lines: orders };
}
