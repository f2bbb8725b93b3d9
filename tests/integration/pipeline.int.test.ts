import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { createCommandLog, createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { retry } from '@ingest/runtime';
import { expectServedCloudEvent, TEST_PUBLIC_BASE_URL } from '../support/cloudEvents.ts';
import { documentedAnswers } from '../support/openapi.ts';
import { CRON_SECRET, INGEST_SECRET, get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// The command path itself: exactly-once effect (D4), replies under load and across gateway
// instances, and the asynchronous answer (D6).
let p: TestPipeline;
let sink: MessageSink;
beforeAll(async () => {
  p = await startPipeline({ env: { PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL } });
  await p.startGateway(); // a second gateway instance on the same topics and database
  sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-raw` }));
});
afterAll(async () => {
  await sink?.close();
  await p?.stop();
});

const ingest = (shop: string, products: unknown[], gateway = 0, headers: Record<string, string> = {}) =>
  post(`${p.url(gateway)}/api/ingest/products`, { shop, products }, { 'x-ingest-secret': INGEST_SECRET, ...headers });

describe('exactly-once effect (D4)', () => {
  it('a command delivered twice changes nothing the second time and keeps the same result', async () => {
    const command = {
      command_id: uuidv7(),
      kind: 'products.upsert' as const,
      shop: 'd4.example',
      received_at: new Date().toISOString(),
      source: { endpoint: '/api/ingest/products' },
      payload: { response: 'ingest', items: [{ product: { barcode: 'D4', product_name: 'Twice', current_price: 5 } }] },
    };
    const log = createCommandLog(sink, p.topics.commands);
    await log.appendCommand(command);
    await log.appendCommand(command);
    // A later command of the same shop is consumed after both copies (D2): once it is done, both are.
    const after = await ingest('d4.example', [{ barcode: 'LATER', product_name: 'After' }]);
    expect(after.status).toBe(200);

    const stored = await get(`${p.url()}/api/commands/${command.command_id}`, { 'x-ingest-secret': INGEST_SECRET });
    expect(stored.status).toBe(200);
    expect(stored.json).toEqual({ ok: true, created: 1, updated: 0, unchanged: 0, errors_count: 0, errors: [] });
    const counts = await p.db.query(
      `SELECT (SELECT count(*)::int FROM public.products WHERE shop = 'd4.example' AND barcode = 'D4') AS products,
              (SELECT count(*)::int FROM public.product_update_logs WHERE command_id = $1) AS logs,
              (SELECT count(*)::int FROM agent_runtime.processed_commands WHERE command_id = $1) AS processed,
              (SELECT count(*)::int FROM agent_runtime.outbox WHERE command_id = $1) AS outbox`,
      [command.command_id],
    );
    expect(counts.rows[0]).toEqual({ products: 1, logs: 1, processed: 1, outbox: 1 });
  });

  it('a projector restarted from offset 0 (new consumer group) re-reads the whole log and changes nothing', async () => {
    const before = await p.db.query(`SELECT count(*)::int AS n FROM public.product_update_logs`);
    await p.stopProjector();
    p.env['PROJECTOR_GROUP_ID'] = `test-${p.id}-projector-again`;
    await p.startProjector();
    const r = await ingest('d4.example', [{ barcode: 'D4-AFTER-RESTART', product_name: 'New' }]);
    expect(r.json).toMatchObject({ created: 1 });
    const after = await p.db.query(`SELECT count(*)::int AS n FROM public.product_update_logs`);
    expect(after.rows[0].n).toBe(before.rows[0].n + 1);
  });
});

describe('synchronous replies (D6)', () => {
  it('a burst of concurrent requests from many shops, over two gateways, all get their own correct replies', async () => {
    const shops = Array.from({ length: 24 }, (_, i) => `burst-${i}.example`);
    const replies = await Promise.all(
      shops.flatMap((shop, i) => [
        ingest(
          shop,
          Array.from({ length: (i % 5) + 1 }, (_, j) => ({ barcode: `P${j}`, product_name: `n${j}` })),
          i % 2,
        ),
        ingest(shop, [{ barcode: 'P0', product_name: 'renamed' }, { barcode: '' }], (i + 1) % 2),
      ]),
    );
    for (const r of replies) expect(r.status).toBe(200);
    // Per shop, the two requests were applied in some order; their counts must add up.
    shops.forEach((_, i) => {
      const a = replies[2 * i]!.json;
      const b = replies[2 * i + 1]!.json;
      expect(a.created + b.created).toBe((i % 5) + 1);
      expect(b.errors_count).toBe(1);
      expect(a.errors_count).toBe(0);
    });
    const { rows } = await p.db.query(`SELECT count(*)::int AS n FROM public.products WHERE shop LIKE 'burst-%'`);
    expect(rows[0].n).toBe(shops.reduce((s, _, i) => s + (i % 5) + 1, 0));
  });

  it('each of two gateway instances gets its own reply', async () => {
    const [a, b] = await Promise.all([
      ingest('two-gw.example', [{ barcode: 'A', product_name: 'A' }], 0),
      ingest(
        'two-gw.example',
        [
          { barcode: 'B', product_name: 'B' },
          { barcode: 'C', product_name: 'C' },
        ],
        1,
      ),
    ]);
    expect(a.json.created).toBe(1);
    expect(b.json.created).toBe(2);
  });

  it('Prefer: respond-async answers 202 at once; the result can be fetched later from any instance', async () => {
    const r = await ingest('async.example', [{ barcode: 'Z', product_name: 'Later' }], 0, { Prefer: 'respond-async' });
    expect(r.status).toBe(202);
    expect(r.json).toMatchObject({ ok: true, status: 'accepted' });
    expect(r.json.result_url).toBe(`/api/commands/${r.json.command_id}`);
    const done = await waitFor(async () => {
      const g = await get(`${p.url(1)}${r.json.result_url}`, { 'x-ingest-secret': INGEST_SECRET });
      return g.status === 200 ? g : null;
    });
    expect(done.json).toEqual({ ok: true, created: 1, updated: 0, unchanged: 0, errors_count: 0, errors: [] });
  });

  it('while the projector is down the answer is 202 after the reply timeout, then pending, then the result', async () => {
    await p.stopProjector();
    try {
      const slow = await p.startGateway({ REPLY_TIMEOUT_MS: '300' });
      const r = await post(
        `http://127.0.0.1:${slow.port}/api/ingest/products`,
        { shop: 'late.example', products: [{ barcode: 'L', product_name: 'L' }] },
        { 'x-ingest-secret': INGEST_SECRET },
      );
      expect(r.status).toBe(202);
      const pending = await get(`${p.url()}${r.json.result_url}`, { 'x-ingest-secret': INGEST_SECRET });
      expect(pending.status).toBe(202);
      // A pending answer also says where the command stands (checked in its own test below).
      expect(pending.json).toMatchObject({
        ok: true,
        status: 'pending',
        command_id: r.json.command_id,
        position: { commands_ahead: expect.any(Number) },
      });
      await p.startProjector();
      const done = await waitFor(async () => {
        const g = await get(`${p.url()}${r.json.result_url}`, { 'x-cron-secret': CRON_SECRET, 'x-shop': 'late.example' });
        return g.status === 200 ? g : null;
      });
      expect(done.json.created).toBe(1);
      // The cron secret only sees commands of the shop it names.
      const other = await get(`${p.url()}${r.json.result_url}`, { 'x-cron-secret': CRON_SECRET, 'x-shop': 'someone-else.example' });
      expect(other.status).toBe(404);
      // Each of these answers is what the served OpenAPI document says.
      const documented = await documentedAnswers(p.url());
      expect(documented('post', '/api/ingest/products', r)).toBeNull();
      for (const answer of [pending, done, other]) expect(documented('get', '/api/commands/{id}', answer)).toBeNull();
    } finally {
      // A failure above must not leave the later cases of this file without a projector.
      if (!p.projector) await p.startProjector();
    }
  });
});

describe('status with position', () => {
  it('pending commands say how many commands of their partition are ahead of them, on any gateway; then their result', async () => {
    await p.stopProjector();
    try {
      const shop = `position-${randomUUID().slice(0, 6)}.example`;
      const sent: { id: string; before: number; after: number }[] = [];
      for (let i = 0; i < 3; i++) {
        const before = Date.now();
        const r = await ingest(shop, [{ barcode: `P${i}`, product_name: 'P' }], 0, { Prefer: 'respond-async' });
        expect(r.status).toBe(202);
        sent.push({ id: r.json.command_id, before, after: Date.now() });
        // A command's place is found from its receive time, to the millisecond: keep these apart.
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const ids = sent.map((s) => s.id);
      // Two gateways that have not read the log's end offsets yet (each keeps them POSITION_CACHE, 1 s):
      // an earlier case's reads, from before these commands were appended, must not answer here.
      const fresh = [await p.startGateway(), await p.startGateway()].map((g) => `http://127.0.0.1:${g.port}`);
      const positions = [];
      for (const [i, { id, before, after }] of sent.entries()) {
        const askedAt = Date.now();
        const g = await get(`${fresh[i % 2]}/api/commands/${id}`, { 'x-ingest-secret': INGEST_SECRET });
        const answeredAt = Date.now();
        expect(g.status).toBe(202);
        expect(g.json).toMatchObject({ ok: true, status: 'pending', command_id: id });
        // waiting_seconds is the command's age when the gateway answered (rounded to 0.1 s): no less than
        // the time from the POST's answer to this GET's start, no more than from the POST's start to this answer.
        expect(g.json.position.waiting_seconds).toBeGreaterThanOrEqual((askedAt - after) / 1000 - 0.05);
        expect(g.json.position.waiting_seconds).toBeLessThanOrEqual((answeredAt - before) / 1000 + 0.05);
        positions.push(g.json.position);
      }
      const [first, second, third] = positions;
      expect(new Set(positions.map((x) => x.partition)).size).toBe(1);
      expect(second.commands_ahead - first.commands_ahead).toBe(1);
      expect(third.commands_ahead - first.commands_ahead).toBe(2);
      // Nothing of this shop's partition is applied while the projector is down: all three are in the backlog.
      expect(third.partition_backlog).toBe(third.commands_ahead + 1);

      await p.startProjector();
      for (const id of ids)
        await waitFor(async () => (await get(`${p.url()}/api/commands/${id}`, { 'x-ingest-secret': INGEST_SECRET })).status === 200);
      // The partition computed from the shop is the one the projector consumed the commands from.
      const { rows } = await p.db.query(
        'SELECT DISTINCT kafka_partition AS p FROM agent_runtime.processed_commands WHERE command_id = ANY($1::uuid[])',
        [ids],
      );
      expect(rows).toEqual([{ p: first.partition }]);
    } finally {
      // A failure above must not leave the later cases of this file without a projector.
      if (!p.projector) await p.startProjector();
    }
  });
});

/** The audit topic read from its start by a new group: key, headers as strings, JSON value; stop() disconnects. */
async function readAudit(tag: string) {
  const consumer = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-${tag}` }).consumer({
    groupId: `test-${p.id}-${tag}-${randomUUID()}`,
  });
  await consumer.connect();
  await consumer.subscribe({ topic: p.topics.audit, fromBeginning: true });
  const seen: { key: string; headers: Record<string, string>; value: any }[] = [];
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.push({
        key: message.key!.toString(),
        headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
        value: JSON.parse(message.value!.toString()),
      });
    },
  });
  return { seen, stop: () => consumer.disconnect() };
}

describe('outbox relay (D5)', () => {
  it('publishes every product log as an audit event keyed by shop, with CloudEvents headers and a derived id', async () => {
    const shop = `audit-${randomUUID().slice(0, 6)}.example`;
    await ingest(shop, [{ barcode: 'AU', product_name: 'Audited' }]);
    const { seen, stop } = await readAudit('audit');
    try {
      const mine = await waitFor(async () => seen.find((m) => m.key === shop), 20000, 'audit event');
      const { rows } = await p.db.query(`SELECT log_id, command_id FROM public.product_update_logs WHERE shop = $1`, [shop]);
      expect(mine.value).toMatchObject({
        event_type: 'audit_record',
        schema_version: 1,
        shop,
        log_table: 'product_update_logs',
        change_type: 'created',
        log_id: rows[0].log_id,
      });
      expect(mine.headers).toMatchObject({
        ce_specversion: '1.0',
        ce_id: mine.value.event_id,
        ce_type: 'com.retail-ingestion.audit_record.v1',
        // D28: the shared secret is the platform's
        ce_actor: 'platform',
      });
      // Read with the CloudEvents SDK, its data valid against the schema its dataschema names, served by the gateway.
      const event = await expectServedCloudEvent(p.url(), mine);
      expect(event.dataschema).toBe(`${TEST_PUBLIC_BASE_URL}/schemas/events/audit-record.json`);
      // One outbox row per (command, log table) stands for its records; published once they all went out.
      // The relay marks it after Kafka acknowledged the records, so a consumer may see them first.
      const outboxRows = () =>
        p.db.query(`SELECT published_at, log_table FROM agent_runtime.outbox WHERE command_id = $1`, [mine.value.command_id]);
      await waitFor(async () => (await outboxRows()).rows[0]?.published_at != null, 10_000, 'the outbox row marked published');
      const outbox = await outboxRows();
      expect(outbox.rows).toHaveLength(1);
      expect(outbox.rows[0].log_table).toBe('product_update_logs');
      expect(mine.value.record).toMatchObject({ log_id: rows[0].log_id, barcode: 'AU', change_type: 'created', log_seq: 0 });
    } finally {
      await stop();
    }
  });

  it("D28: an audit event names its command's actor in the ce_actor extension, a valid CloudEvent", async () => {
    const shop = `actor-${randomUUID().slice(0, 6)}.example`;
    const key = 'key_0123456789abcdef';
    const command = {
      command_id: uuidv7(),
      kind: 'products.upsert' as const,
      shop,
      received_at: new Date().toISOString(),
      source: { endpoint: '/api/ingest/products' },
      actor: key,
      payload: { response: 'ingest' as const, items: [{ product: { barcode: 'KEY', product_name: 'By key' } }] },
    };
    // Appended again if an ack is late on a loaded machine, as the gateway does: the projector's
    // claim (D4) applies one command id once, however many copies reach the log.
    await retry(() => createCommandLog(sink, p.topics.commands).appendCommand(command), {
      classify: () => 'late ack',
      backoff: (n) => (n < 3 ? 500 : null),
    });
    const { seen, stop } = await readAudit('actor');
    try {
      const mine = await waitFor(async () => seen.find((m) => m.key === shop), 20000, 'audit event');
      expect(mine.headers['ce_actor']).toBe(key);
      expect(mine.value.record).toMatchObject({ barcode: 'KEY', actor: key });
      const event = await expectServedCloudEvent(p.url(), mine);
      expect(event['actor']).toBe(key);
    } finally {
      await stop();
    }
  });
});
