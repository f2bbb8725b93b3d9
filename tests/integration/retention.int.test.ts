import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '@ingest/kafka';
import { runProjector } from '@ingest/projector';
import { silentLogger } from '@ingest/runtime/testing';
import { INGEST_SECRET, get, post, startPipeline, TEST_FETCH_WAIT_MS, waitFor, type TestPipeline } from '../support/pipeline.ts';

// Bounded state (docs/operations.md#retention): agent_runtime grew forever, and exactly-once (D4)
// depended on keeping every marker because a new consumer group re-reads the log from offset 0.
// Now the partition's applied position is stored with each command's effect, and the markers,
// results, requests and published outbox rows are pruned after their windows; a request whose
// command has no result yet is kept (its poll answers pending, never 410 while it waits).
let p: TestPipeline;

beforeAll(async () => {
  p = await startPipeline({ env: { MARKER_RETENTION: '1s', RESULT_RETENTION: '1s' } });
});
afterAll(async () => {
  await p.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const count = async (sql: string, params: unknown[] = []): Promise<number> => (await p.db.query<{ n: number }>(sql, params)).rows[0]!.n;

async function committedEverywhere(groupId: string): Promise<boolean> {
  const admin = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-admin` }).admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(p.topics.commands);
    const [group] = await admin.fetchOffsets({ groupId, topics: [p.topics.commands] });
    return ends.every((e) => Number(e.high) === 0 || group?.partitions.find((g) => g.partition === e.partition)?.offset === e.high);
  } finally {
    await admin.disconnect();
  }
}

describe('bounded state', () => {
  it('prunes markers, results, requests and published outbox rows; a pruned command answers 410 expired; a new consumer group from offset 0 changes nothing', async () => {
    const shop = `retention-${randomUUID().slice(0, 6)}.example`;
    const sent = [];
    for (let i = 0; i < 5; i++)
      sent.push(
        await post(
          `${p.url()}/api/ingest/products`,
          { shop, products: [{ barcode: `R${i}`, product_name: 'x' }] },
          { ...ING, Prefer: 'respond-async' },
        ),
      );
    for (const r of sent) await waitFor(async () => (await get(`${p.url()}${r.json.result_url}`, ING)).status === 200, 15_000, 'applied');
    await waitFor(
      async () => (await count('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL')) === 0,
      15_000,
      'published',
    );
    const logsBefore = await count('SELECT count(*)::int AS n FROM public.product_update_logs WHERE shop = $1', [shop]);
    const xminBefore = (await p.db.query(`SELECT barcode, xmin::text FROM public.products WHERE shop = $1 ORDER BY barcode`, [shop])).rows;
    expect(logsBefore).toBe(5);

    // A command still waiting in the log past the window (a lagging projector): accepted, recorded,
    // no result yet. Its poll must say pending, not expired, for as long as it waits.
    const waiting = uuidv7();
    await p.db.query(
      `INSERT INTO agent_runtime.command_requests (command_id, shop, kind, received_at) VALUES ($1, $2, 'products.upsert', now() - interval '1 hour')`,
      [waiting, shop],
    );

    await new Promise((r) => setTimeout(r, 1100));
    const deleted = await p.projector!.pruner!.runOnce();
    expect(deleted['agent_runtime.processed_commands']).toBeGreaterThanOrEqual(5);
    expect(deleted['agent_runtime.command_results']).toBeGreaterThanOrEqual(5);
    expect(deleted['agent_runtime.command_requests']).toBeGreaterThanOrEqual(5);
    expect(deleted['agent_runtime.outbox']).toBeGreaterThanOrEqual(5);
    for (const table of ['processed_commands', 'command_results', 'outbox'])
      expect(await count(`SELECT count(*)::int AS n FROM agent_runtime.${table}`)).toBe(0);
    expect((await p.db.query('SELECT command_id FROM agent_runtime.command_requests')).rows).toEqual([{ command_id: waiting }]);
    const pending = await get(`${p.url()}/api/commands/${waiting}`, ING);
    expect(pending.status).toBe(202);
    expect(pending.json).toMatchObject({ ok: true, status: 'pending', command_id: waiting });
    await p.db.query('DELETE FROM agent_runtime.command_requests WHERE command_id = $1', [waiting]);

    const expired = await get(`${p.url()}${sent[0]!.json.result_url}`, ING);
    expect(expired.status).toBe(410);
    expect(expired.json).toMatchObject({ ok: false, status: 'expired', command_id: sent[0]!.json.command_id });
    // Ids from outside the pruned span were never ours: 404, not expired.
    expect((await get(`${p.url()}/api/commands/${uuidv7()}`, ING)).status).toBe(404);
    expect((await get(`${p.url()}/api/commands/00000000-0000-7000-8000-000000000001`, ING)).status).toBe(404);

    // The consumer group reset to the earliest offset, with no markers left: the positions hold.
    await p.stopProjector();
    const groupId = `test-${p.id}-reset-${randomUUID().slice(0, 6)}`;
    const fresh = await runProjector({ ...p.env, PROJECTOR_GROUP_ID: groupId }, silentLogger(), { fetchWaitMs: TEST_FETCH_WAIT_MS });
    try {
      // Ready once it has joined its group (and reaches PostgreSQL and its LISTEN connection).
      await waitFor(async () => Object.values(await fresh.readiness()).every(Boolean), 30_000, 'the new projector ready');
      await waitFor(() => committedEverywhere(groupId), 30_000, 'the new group at the end of the log');
      expect(await count('SELECT count(*)::int AS n FROM public.product_update_logs WHERE shop = $1', [shop])).toBe(logsBefore);
      expect((await p.db.query(`SELECT barcode, xmin::text FROM public.products WHERE shop = $1 ORDER BY barcode`, [shop])).rows).toEqual(
        xminBefore,
      );
      expect(await count('SELECT count(*)::int AS n FROM agent_runtime.outbox')).toBe(0);
      expect(await count('SELECT count(*)::int AS n FROM agent_runtime.processed_commands')).toBe(0);
    } finally {
      await fresh.stop();
    }
  });
});
