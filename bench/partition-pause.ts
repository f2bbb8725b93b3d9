// How long creating an update log's month stalls the projector's inserts and the relay's reads, under
// load (docs/operations.md "Update log partitions"): `node scripts/bootstrap.mjs bench/partition-pause.ts`.
// Writers insert 1,000-row batches into sot.inventory_update_logs (the projector's log insert);
// readers read 50 commands' records by command_id (the relay's audit expansion, every partition).
// Meanwhile, in turn, a month ahead is made the way the upkeep makes it (CREATE TABLE, then ATTACH
// PARTITION under lock_timeout, packages/db/src/logPartitions.ts) and the plain way (CREATE TABLE …
// PARTITION OF, ACCESS EXCLUSIVE on the parent), and dropped again. Reported: each statement's
// latency while a creation ran against the rest of the time, per way, and the creations' own time.
import { randomUUID } from 'node:crypto';
import {
  createDatabaseFromTemplate,
  createPool,
  dropDatabase,
  ensureLogPartitions,
  LOCK_TIMEOUT_MS,
  migrate,
  monthStart,
  partitionName,
} from '@ingest/db';
import { ADMIN_URL } from './lib/db.ts';

const SECONDS = Number(process.env['PAUSE_SECONDS'] ?? 60);
const WRITERS = Number(process.env['PAUSE_WRITERS'] ?? 2);
const READERS = Number(process.env['PAUSE_READERS'] ?? 2);
const name = `ingest_bench_p${process.pid}_pause`;
const PARENT = 'sot.inventory_update_logs';

await dropDatabase(ADMIN_URL, name);
const url = await createDatabaseFromTemplate(ADMIN_URL, name, 'template1');
const pool = createPool({ connectionString: url, max: WRITERS + READERS + 2 });

const INSERT = `INSERT INTO sot.inventory_update_logs (log_id, shop, product_id, location_id, barcode, change_type, change_source, after_data, changed_fields,
                  inventory_as_of, command_id, log_seq, created_at)
  SELECT gen_random_uuid(), 'shop-' || (i % 7), gen_random_uuid(), $2::uuid, 'B' || i, 'snapshot', 'pos', jsonb_build_object('on_hand_qty', i, 'available_qty', i),
         '{on_hand_qty,available_qty}', now(), $1::uuid, i, now() FROM generate_series(0, 999) i`;
const commands: string[] = [];
type Sample = { at: number; ms: number; kind: 'insert' | 'read' };
const samples: Sample[] = [];
type Way = 'attach' | 'partition_of' | 'drop';
const windows: Array<{ way: Way; from: number; to: number; ok: boolean }> = [];
let running = true;

async function writer(): Promise<void> {
  while (running) {
    const cmd = randomUUID();
    const at = performance.now();
    await pool.query(INSERT, [cmd, randomUUID()]);
    samples.push({ at, ms: performance.now() - at, kind: 'insert' });
    commands.push(cmd);
  }
}
async function reader(): Promise<void> {
  while (running) {
    const ids = Array.from({ length: 50 }, () => commands[Math.floor(Math.random() * commands.length)] ?? randomUUID());
    const at = performance.now();
    await pool.query(`SELECT * FROM ${PARENT} WHERE command_id = ANY($1::uuid[]) ORDER BY command_id, log_seq`, [ids]);
    samples.push({ at, ms: performance.now() - at, kind: 'read' });
  }
}
async function creations(): Promise<void> {
  const far = monthStart(new Date(), 6); // a month no row falls in: made and dropped again each time
  const part = partitionName(PARENT, far);
  const bounds = `FOR VALUES FROM ('${far.toISOString()}') TO ('${monthStart(far, 1).toISOString()}')`;
  for (let k = 0; running; k++) {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const c = await pool.connect();
    const way: Way = k % 2 === 0 ? 'attach' : 'partition_of';
    const from = performance.now();
    let ok = true;
    try {
      if (way === 'attach') {
        ok = (await ensureLogPartitions(c, { now: far, ahead: 0, parents: [PARENT], lockTimeoutMs: LOCK_TIMEOUT_MS })).length === 1;
      } else {
        await c.query('BEGIN');
        await c.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
        await c.query(`CREATE TABLE ${part} PARTITION OF ${PARENT} ${bounds}`);
        await c.query('COMMIT');
      }
    } catch {
      ok = false;
      await c.query('ROLLBACK').catch(() => {});
    }
    windows.push({ way, from, to: performance.now(), ok });
    // Dropping it takes ACCESS EXCLUSIVE on the parent, as an archival's DETACH does: timed as its own way.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const dropFrom = performance.now();
    await c.query('BEGIN');
    await c.query(`SET LOCAL lock_timeout = ${LOCK_TIMEOUT_MS}`);
    const dropped = await c.query(`DROP TABLE IF EXISTS ${part}`).then(
      () => true,
      () => false,
    );
    await c.query(dropped ? 'COMMIT' : 'ROLLBACK');
    windows.push({ way: 'drop', from: dropFrom, to: performance.now(), ok: dropped });
    c.release();
  }
}

async function measure(): Promise<void> {
  const stop = new Promise<void>((resolve) => setTimeout(resolve, SECONDS * 1000));
  const work = [...Array.from({ length: WRITERS }, writer), ...Array.from({ length: READERS }, reader), creations()];
  await stop;
  running = false;
  await Promise.all(work);

  const pct = (xs: number[], p: number) =>
    xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]! : NaN;
  const overlaps = (s: Sample, w: (typeof windows)[number]) => s.at < w.to && s.at + s.ms > w.from;
  const row = (label: string, xs: number[]) =>
    `${label.padEnd(34)} n=${String(xs.length).padStart(5)}  p50=${pct(xs, 50).toFixed(1)}  p99=${pct(xs, 99).toFixed(1)}  max=${Math.max(...xs).toFixed(1)} ms`;
  console.log(`${SECONDS} s, ${WRITERS} writers (1,000-row log inserts), ${READERS} readers (50 commands by command_id)`);
  for (const way of ['attach', 'partition_of', 'drop'] as const) {
    const ws = windows.filter((w) => w.way === way);
    console.log(
      row(
        `${way}: the creation itself`,
        ws.map((w) => w.to - w.from),
      ),
      ` (${ws.filter((w) => !w.ok).length} gave up)`,
    );
    for (const kind of ['insert', 'read'] as const) {
      console.log(
        row(
          `  ${kind} overlapping it`,
          samples.filter((s) => s.kind === kind && ws.some((w) => overlaps(s, w))).map((s) => s.ms),
        ),
      );
    }
  }
  for (const kind of ['insert', 'read'] as const) {
    console.log(
      row(
        `${kind}, no creation running`,
        samples.filter((s) => s.kind === kind && !windows.some((w) => overlaps(s, w))).map((s) => s.ms),
      ),
    );
  }
}

try {
  await migrate(url);
  await measure();
} finally {
  await pool.end();
  await dropDatabase(ADMIN_URL, name);
}
