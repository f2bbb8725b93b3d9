import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SchemaRegistry } from '@ingest/contracts';
import { createDatabaseFromTemplate, createPool, dropDatabase, type Pool } from '@ingest/db';
import { createKafka } from '@ingest/kafka';
import { compareReadModels, rebuildInPlace, REBUILT_TABLES, replayCommandLog, type RebuildOptions } from '@ingest/operator';
import { collectTopics } from '../support/inventory.ts';
import { INGEST_SECRET, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';
import { mixedWorkload } from '../support/workload.ts';

// D26 in place: `npm run replay` rebuilds into a shadow schema while the live pipeline serves,
// then swaps. Readers of agent_read never see an empty or partial view, the rebuild publishes
// nothing, and every command before, during and after the swap is applied exactly once.
let p: TestPipeline;
let reader: Pool;
const h = { 'x-ingest-secret': INGEST_SECRET };
const VIEWS = [
  'products',
  'product_update_logs',
  'inventory_levels',
  'inventory_daily_snapshots',
  'inventory_update_logs',
  'order_line_master',
  'order_line_master_update_logs',
];

type Digests = Record<string, { n: number; digest: string }>;

/** Every agent_read view's row count and content digest, in one statement (one snapshot). */
async function viewDigests(pool: Pool): Promise<Digests> {
  const sql = VIEWS.map(
    (v) =>
      `SELECT '${v}' AS view, count(*)::int AS n, coalesce(md5(string_agg(h, '' ORDER BY h)), '') AS digest FROM (SELECT md5(t::text) AS h FROM agent_read.${v} t) x`,
  ).join(' UNION ALL ');
  const { rows } = await pool.query<{ view: string; n: number; digest: string }>(sql);
  return Object.fromEntries(rows.map((r) => [r.view, { n: r.n, digest: r.digest }]));
}

/** Reads the views as agent_reader in a loop until stopped; every answer and its latency. */
function readContinuously(pool: Pool) {
  const reads: Array<{ at: number; ms: number; digests: Digests }> = [];
  const errors: unknown[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        reads.push({ at: t0, ms: performance.now() - t0, digests: await viewDigests(pool) });
        reads[reads.length - 1]!.ms = performance.now() - t0;
      } catch (err) {
        errors.push(err);
      }
    }
  })();
  return {
    reads,
    errors,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function tableOids(): Promise<string[]> {
  const { rows } = await p.db.query<{ oid: string }>(
    `SELECT to_regclass(x)::oid::text AS oid FROM unnest($1::text[]) WITH ORDINALITY AS u(x, i) ORDER BY i`,
    [REBUILT_TABLES.map((t) => `${t.schema}.${t.table}`)],
  );
  return rows.map((r) => r.oid);
}

/** Indexes, constraints, storage options and grants of the rebuilt tables, by name. */
async function shape(): Promise<unknown[]> {
  const { rows } = await p.db.query(
    `SELECT n.nspname || '.' || c.relname AS table, c.reloptions, c.relacl::text[] AS acl,
            ARRAY(SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i WHERE i.indrelid = c.oid ORDER BY 1) AS indexes,
            ARRAY(SELECT k.conname || ' ' || pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.conrelid = c.oid ORDER BY 1) AS constraints,
            ARRAY(SELECT a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum) AS columns
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE (n.nspname, c.relname) IN (SELECT * FROM unnest($1::text[], $2::text[])) ORDER BY 1`,
    [REBUILT_TABLES.map((t) => t.schema), REBUILT_TABLES.map((t) => t.table)],
  );
  return rows;
}

async function schemas(): Promise<string[]> {
  const { rows } = await p.db.query<{ name: string }>(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname = 'rebuild' OR nspname LIKE 'retired_%'`,
  );
  return rows.map((r) => r.name);
}

async function topicEnds(): Promise<string[]> {
  const admin = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-ends` }).admin();
  await admin.connect();
  try {
    const out: string[] = [];
    for (const t of [p.topics.audit, p.topics.stockZero, p.topics.stockRestored])
      out.push(...(await admin.fetchTopicOffsets(t)).map((o) => `${t}/${o.partition}:${o.high}`));
    return out;
  } finally {
    await admin.disconnect();
  }
}

const rebuild = (extra: Partial<RebuildOptions> = {}) =>
  rebuildInPlace({
    databaseUrl: p.databaseUrl,
    kafka: createKafka({ brokers: p.brokers, clientId: `test-${p.id}-rebuild` }),
    schemas: new SchemaRegistry(),
    topic: p.topics.commands,
    batchSize: 5,
    ...extra,
  });

const outboxCount = async () => (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox')).rows[0].n as number;
const allPublished = () =>
  waitFor(
    async () => (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL')).rows[0].n === 0,
    30_000,
    'outbox drained',
  );

beforeAll(async () => {
  p = await startPipeline({ env: { DAILY_SNAPSHOT_CHECK_MS: '3600000' } });
  reader = createPool({ connectionString: p.databaseUrl, role: 'agent_reader', max: 2, applicationName: 'test-reader' });
  for (const shop of ['inplace-a.example', 'inplace-b.example']) await mixedWorkload(p, shop);
  await allPublished();
});
afterAll(async () => {
  await reader?.end();
  await p?.stop();
});

describe('in-place rebuild with an atomic swap (D26)', () => {
  it('swaps in rebuilt tables while readers read: every read sees the whole read model, and nothing is published', async () => {
    const before = await viewDigests(reader);
    const [oids, outbox, ends, shapeBefore] = [await tableOids(), await outboxCount(), await topicEnds(), await shape()];
    const reading = readContinuously(reader);
    let blockedReaders = 0;
    const result = await rebuild({
      // Hold the swap until a reader is queued behind its locks: that read spans the swap.
      onLocked: async () => {
        blockedReaders = await waitFor(
          async () =>
            (
              await p.db.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'test-reader' AND wait_event_type = 'Lock'`,
              )
            ).rows[0].n,
          10_000,
          'a reader waiting on the swap',
        );
      },
    });
    const swappedAt = performance.now();
    await waitFor(async () => reading.reads.filter((r) => r.at > swappedAt).length >= 3, 10_000, 'reads after the swap');
    await reading.stop();

    expect(result).toMatchObject({ complete: true, swapped: true, retired: null });
    expect(result.applied).toBeGreaterThan(20);
    expect(blockedReaders).toBeGreaterThan(0);
    expect(reading.errors).toEqual([]);
    // Every single read, before, during and after the swap, saw exactly the live read model.
    for (const r of reading.reads) expect(r.digests).toEqual(before);
    // The tables really were replaced; the shadow and retired schemas are gone.
    const after = await tableOids();
    after.forEach((oid, i) => expect(oid, REBUILT_TABLES[i]!.table).not.toBe(oids[i]));
    expect(await schemas()).toEqual([]);
    // ...with the same columns, defaults, keys, indexes, foreign keys, storage options and grants.
    expect(await shape()).toEqual(shapeBefore);
    expect(
      (shapeBefore as Array<{ table: string; reloptions: string[] | null }>).find((t) => t.table === 'sot.inventory_levels')?.reloptions,
    ).toEqual(['fillfactor=50']);
    // The update logs are still partitioned by month, each partition moved in with its log (1764900000000_partitioned-update-logs).
    const parts = await p.db.query<{ log: string; n: number; elsewhere: number }>(
      `SELECT pc.relnamespace::regnamespace::text || '.' || pc.relname AS log, count(*)::int AS n, count(*) FILTER (WHERE c.relnamespace <> pc.relnamespace)::int AS elsewhere
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class pc ON pc.oid = i.inhparent
        WHERE i.inhparent IN ('sot.inventory_update_logs'::regclass, 'public.product_update_logs'::regclass, 'public.order_line_master_update_logs'::regclass)
        GROUP BY 1 ORDER BY 1`,
    );
    expect(parts.rows.map((r) => [r.log, r.n > 1, r.elsewhere])).toEqual([
      ['public.order_line_master_update_logs', true, 0],
      ['public.product_update_logs', true, 0],
      ['sot.inventory_update_logs', true, 0],
    ]);
    // No outbox rows, no events: they were published live.
    expect(await outboxCount()).toBe(outbox);
    expect(await topicEnds()).toEqual(ends);
  });

  it('after the swap the live path carries on in the rebuilt tables, with its projection state', async () => {
    const shop = 'inplace-a.example';
    const levels = async () =>
      (await p.db.query(`SELECT barcode, location_id, available_qty FROM sot.inventory_levels WHERE shop = $1 ORDER BY 1, 2`, [shop])).rows;
    const locations = (await p.db.query(`SELECT location_id FROM sot.locations WHERE shop = $1 AND name = 'Main'`, [shop])).rows;
    const l1 = locations[0].location_id as string;
    const was = await levels();
    // The idempotency key k1 was used before the rebuild: the rebuilt state still knows it.
    const resend = await post(
      `${p.url()}/api/ingest/inventory-available`,
      { shop, source_system: 'pos', mode: 'delta', location_id: l1, idempotency_key: 'k1', lines: [{ barcode: 'A', available_delta: -7 }] },
      h,
    );
    expect(resend.status).toBe(200);
    expect(await levels()).toEqual(was);
    const fresh = await post(
      `${p.url()}/api/ingest/inventory-available`,
      {
        shop,
        source_system: 'pos',
        mode: 'delta',
        location_id: l1,
        idempotency_key: 'after-swap',
        lines: [{ barcode: 'A', available_delta: 1 }],
      },
      h,
    );
    expect(fresh.status, fresh.text).toBe(200);
    const a = (await levels()).find((r) => r.barcode === 'A' && r.location_id === l1);
    const aWas = was.find((r) => r.barcode === 'A' && r.location_id === l1);
    expect(Number(a.available_qty)).toBe(Number(aWas.available_qty) + 1);
  });

  it('stopped half way it leaves the live tables alone; resumed, it swaps', async () => {
    const before = await viewDigests(reader);
    const oids = await tableOids();
    const stop = new AbortController();
    const first = await rebuild({
      batchSize: 2,
      progressEveryMs: 1,
      onProgress: (pr) => {
        if (pr.done >= 10) stop.abort();
      },
      signal: stop.signal,
    });
    expect(first).toMatchObject({ complete: false, swapped: false });
    expect(await tableOids()).toEqual(oids);
    expect(await schemas()).toEqual(['rebuild']);
    const second = await rebuild({ resume: true, keepRetired: true });
    expect(second).toMatchObject({ complete: true, swapped: true });
    expect(second.retired).toMatch(/^retired_\d{8}_\d{6}$/);
    expect(first.applied + second.applied).toBe(
      (await p.db.query('SELECT count(*)::int AS n FROM agent_runtime.processed_commands')).rows[0].n,
    );
    expect(await viewDigests(reader)).toEqual(before);
    expect(await schemas()).toEqual([second.retired]);
    await p.db.query(`DROP SCHEMA ${second.retired} CASCADE`);
  });

  it('refuses to run beside another rebuild of the same database', async () => {
    const other = await p.db.connect();
    try {
      await other.query(`SELECT pg_advisory_lock(hashtext('ingest.rebuild'))`);
      await expect(rebuild()).rejects.toThrow(/another rebuild of this database is running/);
      expect(await schemas()).toEqual([]);
    } finally {
      await other.query(`SELECT pg_advisory_unlock(hashtext('ingest.rebuild'))`);
      other.release();
    }
  });

  it('refuses to resume into a shadow schema older than a migration of the live tables', async () => {
    const stop = new AbortController();
    stop.abort();
    expect(await rebuild({ signal: stop.signal })).toMatchObject({ swapped: false });
    await p.db.query('ALTER TABLE sot.channels ADD COLUMN note text');
    try {
      await expect(rebuild({ resume: true })).rejects.toThrow(/live tables changed since this rebuild started \(sot\.channels\)/);
    } finally {
      await p.db.query('ALTER TABLE sot.channels DROP COLUMN note');
      await p.db.query('DROP SCHEMA rebuild CASCADE');
    }
  });

  it('refuses a live database projected from another log (offsets past the end of this one), instead of waiting forever', async () => {
    const saved = await p.db.query(
      `SELECT * FROM agent_runtime.projector_checkpoints WHERE projector = 'live' AND kafka_topic = $1 AND kafka_partition = 0`,
      [p.topics.commands],
    );
    await p.db.query(
      `INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset) VALUES ('live', $1, 0, 1000001)
       ON CONFLICT (projector, kafka_topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
      [p.topics.commands],
    );
    try {
      await expect(rebuild()).rejects.toThrow(
        /projected offsets past the end of the command log .* \(partition 0: 1000001 > \d+\): it was projected from another log/,
      );
    } finally {
      await p.db.query(
        `DELETE FROM agent_runtime.projector_checkpoints WHERE projector = 'live' AND kafka_topic = $1 AND kafka_partition = 0`,
        [p.topics.commands],
      );
      for (const r of saved.rows)
        await p.db.query(
          'INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset) VALUES ($1, $2, $3, $4)',
          [r.projector, r.kafka_topic, r.kafka_partition, r.next_offset],
        );
      await p.db.query('DROP SCHEMA IF EXISTS rebuild CASCADE');
    }
  });

  it('with the live pipeline under load during the rebuild: views only grow, and every command lands exactly once', async () => {
    const shop = 'inplace-load.example';
    await post(
      `${p.url()}/api/admin/locations`,
      { shop, locations: [{ name: 'Main', identifiers: [{ identifier_type: 'pos', identifier_value: 'load-1' }] }] },
      h,
    );
    let sending = true;
    const statuses: number[] = [];
    const traffic = (async () => {
      for (let i = 0; sending; i++) {
        const products = await post(
          `${p.url()}/api/ingest/products`,
          { shop, products: [{ barcode: `P${i}`, product_name: `Item ${i}`, current_price: 100 + i }] },
          h,
        );
        const snapshot = await post(
          `${p.url()}/api/ingest/inventory-snapshot`,
          {
            shop,
            source_system: 'pos',
            location: { identifier_type: 'pos', identifier_value: 'load-1' },
            lines: [
              { barcode: `P${i}`, on_hand_qty: i % 3 },
              { barcode: 'P0', on_hand_qty: i % 2 },
            ],
          },
          h,
        );
        statuses.push(products.status, snapshot.status);
      }
    })();
    await waitFor(async () => statuses.length >= 6, 20_000, 'traffic flowing');
    const reading = readContinuously(reader);
    const result = await rebuild({ batchSize: 3 });
    await waitFor(async () => statuses.length >= 6 + 20, 30_000, 'traffic after the swap');
    sending = false;
    await traffic;
    await reading.stop();

    expect(result).toMatchObject({ complete: true, swapped: true });
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(reading.errors).toEqual([]);
    // Only inserts happen here (new products, new levels, new log rows): no view ever shrinks.
    for (let i = 1; i < reading.reads.length; i++) {
      for (const v of VIEWS) expect(reading.reads[i]!.digests[v]!.n, v).toBeGreaterThanOrEqual(reading.reads[i - 1]!.digests[v]!.n);
    }

    // Exactly once across the swap: a from-scratch projection of the whole log is identical.
    await p.stopProjector();
    const name = `ingest_test_inplace_${randomUUID().slice(0, 8)}`;
    const url = await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase'));
    const scratch = createPool({ connectionString: url, max: 4 });
    try {
      await replayCommandLog({
        pool: scratch,
        kafka: createKafka({ brokers: p.brokers, clientId: `test-${p.id}-check` }),
        schemas: new SchemaRegistry(),
        topic: p.topics.commands,
      });
      for (const t of await compareReadModels(p.databaseUrl, url)) expect(t, t.table).toMatchObject({ identical: true });
    } finally {
      await scratch.end();
      await dropDatabase(inject('adminDatabaseUrl'), name);
    }
    // Every audit record was published once: one audit event per log row, no id twice.
    await p.startProjector();
    await allPublished();
    const logRows = (
      await p.db.query(
        'SELECT (SELECT count(*) FROM public.product_update_logs) + (SELECT count(*) FROM sot.inventory_update_logs) + (SELECT count(*) FROM public.order_line_master_update_logs) AS n',
      )
    ).rows[0].n as number;
    const audit = await collectTopics(p, [p.topics.audit]);
    try {
      await waitFor(async () => audit.messages.length >= logRows, 30_000, 'every audit event');
      expect(new Set(audit.messages.map((m) => m.value.event_id)).size).toBe(audit.messages.length);
      expect(audit.messages.length).toBe(logRows);
    } finally {
      await audit.stop();
    }
  });
});
