import { randomUUID } from 'node:crypto';
import type { Consumer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorActions } from '@ingest/db';
import { createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { expectServedCloudEvent, TEST_PUBLIC_BASE_URL } from '../support/cloudEvents.ts';
import { documentedAnswers } from '../support/openapi.ts';
import { appendPoison as appendPoisonTo } from '../support/poison.ts';
import { INGEST_SECRET, get, post, startPipeline, waitFor, type HttpResult, type TestPipeline } from '../support/pipeline.ts';

// The operator API (docs/api.md "Operator API") on the real broker and database: a skip at the
// head of a shop's parked queue resumes the commands behind it in log order, a held skip keeps
// them parked for a retry, every action lands in operator_actions and as an audit event, and the
// command lists page through with cursors.
let p: TestPipeline;
let sink: MessageSink;
let consumer: Consumer;
let documented: Awaited<ReturnType<typeof documentedAnswers>>;
const audit: Array<{ key: string; headers: Record<string, string>; value: any }> = [];

beforeAll(async () => {
  p = await startPipeline({
    env: {
      PROJECTOR_RETRY_BACKOFF: '10ms',
      DAILY_SNAPSHOT_CHECK_MS: '3600000',
      PUBLIC_BASE_URL: TEST_PUBLIC_BASE_URL,
      API_KEY_PEPPER: 'operator-api-pepper-0123456789abcdef0123456789',
    },
  });
  const kafka = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-operator` });
  sink = await createMessageSink(kafka);
  consumer = kafka.consumer({ groupId: `test-${p.id}-operator-audit-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic: p.topics.audit, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      audit.push({
        key: message.key!.toString(),
        headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
        value: JSON.parse(message.value!.toString()),
      });
    },
  });
  documented = await documentedAnswers(p.url());
});
afterAll(async () => {
  await consumer?.disconnect();
  await sink?.close();
  await p?.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };
const products = (shop: string, items: Array<{ barcode: string; product_name: string }>, headers: Record<string, string> = {}) =>
  post(`${p.url()}/api/ingest/products`, { shop, products: items }, { ...ING, ...headers });
const status = (commandId: string) => get(`${p.url()}/api/commands/${commandId}`, ING);
const act = async (verb: 'retry' | 'skip', commandId: string, body: unknown): Promise<HttpResult> => {
  const answer = await post(`${p.url()}/api/admin/parked/${commandId}/${verb}`, body, ING);
  expect(documented('post', `/api/admin/parked/{command_id}/${verb}`, answer)).toBeNull();
  return answer;
};
const list = async (query: string): Promise<HttpResult> => {
  const answer = await get(`${p.url()}/api/admin/commands?${query}`, ING);
  expect(documented('get', '/api/admin/commands', answer)).toBeNull();
  return answer;
};

/** Well-formed, but PostgreSQL cannot store its date: it fails the same way every time and is parked. */
async function appendPoison(shop: string): Promise<string> {
  const id = await appendPoisonTo(sink, p.topics.commands, shop);
  await waitFor(async () => (await status(id)).json?.status === 'parked', 15000, 'the poison parked');
  return id;
}

/** A shop halted by a poison command with `behind` product commands parked behind it, in log order. */
async function haltedShop(behind: string[][]): Promise<{ shop: string; poisonId: string; behindIds: string[] }> {
  const shop = `op-${randomUUID().slice(0, 6)}.example`;
  expect((await products(shop, [{ barcode: 'B0', product_name: 'before' }])).status).toBe(200);
  const poisonId = await appendPoison(shop);
  const behindIds: string[] = [];
  for (const names of behind) {
    const r = await products(
      shop,
      names.map((n) => ({ barcode: 'B1', product_name: n })),
    );
    expect(r.json).toMatchObject({ status: 'parked', waiting_behind: poisonId });
    behindIds.push(r.json.command_id as string);
  }
  return { shop, poisonId, behindIds };
}

/** The action's audit event, once the relay published it, checked as CloudEvents against its served schema. */
async function auditEventOf(actionId: string): Promise<any> {
  const m = await waitFor(async () => audit.find((e) => e.value.action_id === actionId), 20000, `audit event of ${actionId}`);
  const event = await expectServedCloudEvent(p.url(), m);
  expect(event.type).toBe('com.retail-ingestion.operator_action.v1');
  expect(event.dataschema).toBe(`${TEST_PUBLIC_BASE_URL}/schemas/events/operator-action.json`);
  return m;
}

describe('operator API', () => {
  it('with a per-shop key of the admin scope: its own shop only, acting as its key id (D28)', async () => {
    const own = await haltedShop([['resumed']]);
    const other = await haltedShop([['untouched']]);
    const minted = await post(`${p.url()}/api/admin/keys`, { shop: own.shop, scopes: ['admin'] }, ING);
    expect(minted.status).toBe(201);
    const key = { authorization: `Bearer ${minted.json.key as string}` };

    const listed = await get(`${p.url()}/api/admin/commands?status=parked`, key);
    expect(listed.status).toBe(200);
    expect(new Set(listed.json.commands.map((c: { shop: string }) => c.shop))).toEqual(new Set([own.shop]));
    expect((await get(`${p.url()}/api/admin/commands?status=parked&shop=${other.shop}`, key)).status).toBe(403);
    const foreign = await post(`${p.url()}/api/admin/parked/${other.poisonId}/skip`, { reason: 'not mine' }, key);
    expect(foreign.status).toBe(404);
    expect((await status(other.poisonId)).json).toMatchObject({ status: 'parked' });

    const skipped = await post(`${p.url()}/api/admin/parked/${own.poisonId}/skip`, { reason: 'bad date' }, key);
    expect(skipped.status).toBe(200);
    expect(skipped.json).toMatchObject({ actor: minted.json.key_id, applied: own.behindIds, remaining: 0 });
    const [recorded] = await operatorActions.ofCommand(p.db, own.poisonId);
    expect(recorded).toMatchObject({ actor: minted.json.key_id, reason: 'bad date' });
    const event = await auditEventOf(skipped.json.action_id as string);
    expect(event.headers['ce_actor']).toBe(minted.json.key_id);
    // The platform resolves the other shop as before.
    expect((await act('skip', other.poisonId, { reason: 'cleanup' })).status).toBe(200);
  });

  it('a skip at the head resumes the commands parked behind it, in log order, recorded with its actor and reason', async () => {
    const { shop, poisonId, behindIds } = await haltedShop([['first'], ['second']]);
    const reason = 'snapshot_date 0000-01-01 cannot be stored';

    const skipped = await act('skip', poisonId, { reason });
    expect(skipped.status).toBe(200);
    expect(skipped.json).toMatchObject({
      ok: true,
      action: 'skip',
      command_id: poisonId,
      shop,
      actor: 'platform',
      hold: false,
      applied: behindIds,
      failed: null,
      remaining: 0,
    });
    expect((await status(poisonId)).json).toMatchObject({ ok: false, error_kind: 'skipped' });
    for (const id of behindIds) expect((await status(id)).status).toBe(200);
    // In log order: the product was created by the first and renamed by the second.
    const logs = await p.db.query(
      `SELECT command_id, change_type FROM public.product_update_logs WHERE shop = $1 AND barcode = 'B1' ORDER BY created_at, log_seq`,
      [shop],
    );
    expect(logs.rows).toEqual([
      { command_id: behindIds[0], change_type: 'created' },
      { command_id: behindIds[1], change_type: 'name_change' },
    ]);
    expect((await p.db.query(`SELECT product_name FROM public.products WHERE shop = $1 AND barcode = 'B1'`, [shop])).rows).toEqual([
      { product_name: 'second' },
    ]);
    // The shop flows again.
    expect((await products(shop, [{ barcode: 'B2', product_name: 'after' }])).status).toBe(200);

    const [recorded] = await operatorActions.ofCommand(p.db, poisonId);
    expect(recorded).toMatchObject({
      action_id: skipped.json.action_id,
      action: 'skip',
      shop,
      actor: 'platform',
      reason,
      hold: false,
      outcome: { applied: behindIds, failed: null, remaining: 0 },
    });
    expect(recorded?.finished_at).toBeInstanceOf(Date);
    const event = await auditEventOf(skipped.json.action_id as string);
    expect(event.key).toBe(shop);
    expect(event.value).toMatchObject({
      event_type: 'operator_action',
      action: 'skip',
      command_id: poisonId,
      actor: 'platform',
      reason,
      outcome: { applied: behindIds, failed: null, remaining: 0 },
    });
  });

  it('a held skip keeps them parked; a retry that fails again says so; a retry applies them; each action is recorded', async () => {
    const { shop, poisonId, behindIds } = await haltedShop([['held']]);

    const positions = (
      await p.db.query(
        'SELECT command_id, kind, kafka_partition, kafka_offset, behind, parked_at FROM agent_runtime.parked_commands WHERE shop = $1 ORDER BY parked_at',
        [shop],
      )
    ).rows;
    const again = await act('retry', poisonId, {});
    expect(again.json, JSON.stringify({ again: again.json, positions })).toMatchObject({
      action: 'retry',
      applied: [],
      failed: { command_id: poisonId },
      remaining: 2,
    });
    expect(again.json.failed.error).toMatch(/out of range/);

    const held = await act('skip', poisonId, { reason: 'bad date', hold: true });
    expect(held.json).toMatchObject({ action: 'skip', hold: true, applied: [], failed: null, remaining: 1 });
    expect((await status(behindIds[0]!)).json).toMatchObject({ status: 'parked', waiting_behind: poisonId });
    // The skipped command is no longer open-parked.
    const twice = await post(`${p.url()}/api/admin/parked/${poisonId}/skip`, { reason: 'again' }, ING);
    expect([twice.status, twice.json]).toEqual([404, { ok: false, error: 'parked command not found' }]);
    expect(documented('post', '/api/admin/parked/{command_id}/skip', twice)).toBeNull();

    // With no body: the reason is optional for a retry.
    const retried = await post(`${p.url()}/api/admin/parked/${behindIds[0]}/retry`, undefined, ING);
    expect(retried.status).toBe(200);
    expect(retried.json).toMatchObject({ action: 'retry', command_id: behindIds[0], applied: behindIds, failed: null, remaining: 0 });
    expect((await status(behindIds[0]!)).status).toBe(200);

    const recorded = [...(await operatorActions.ofCommand(p.db, poisonId)), ...(await operatorActions.ofCommand(p.db, behindIds[0]!))];
    expect(recorded.map((a) => [a.action, a.hold, a.reason, a.outcome])).toEqual([
      ['retry', false, null, { applied: [], failed: { command_id: poisonId, error: again.json.failed.error }, remaining: 2 }],
      ['skip', true, 'bad date', { applied: [], failed: null, remaining: 1 }],
      ['retry', false, null, { applied: behindIds, failed: null, remaining: 0 }],
    ]);
    for (const r of [again, held, retried]) {
      const event = await auditEventOf(r.json.action_id as string);
      expect(event.value).toMatchObject({ action: r.json.action, shop, hold: r.json.hold, outcome: { remaining: r.json.remaining } });
    }
  });

  it('pages through parked, failed and pending commands with cursors', async () => {
    const { shop, poisonId, behindIds } = await haltedShop([['a'], ['b'], ['c'], ['d']]);
    const pages = async (query: string): Promise<string[][]> => {
      const out: string[][] = [];
      let cursor: string | null = null;
      do {
        const page: HttpResult = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status).toBe(200);
        out.push(page.json.commands.map((c: { command_id: string }) => c.command_id));
        cursor = page.json.next_cursor as string | null;
      } while (cursor);
      return out;
    };

    // Parked: in the order a retry applies them, the head first.
    expect(await pages(`shop=${shop}&status=parked&limit=2`)).toEqual([
      [poisonId, behindIds[0]],
      [behindIds[1], behindIds[2]],
      [behindIds[3]],
    ]);
    const head = (await list(`shop=${shop}&limit=1`)).json.commands[0];
    expect(head).toMatchObject({ command_id: poisonId, status: 'parked', waiting_behind: null, kind: 'inventory.daily_snapshot' });
    expect(head.position).toMatchObject({ topic: p.topics.commands, partition: expect.any(Number), offset: expect.any(Number) });

    // Failed: the skipped head, with its answer's status and kind, and where it was in the log.
    await act('skip', poisonId, { reason: 'bad date', hold: true });
    await act('skip', behindIds[0]!, { reason: 'superseded', hold: true });
    const failed = await list(`shop=${shop}&status=failed&limit=1`);
    expect(failed.json.commands).toEqual([
      expect.objectContaining({
        command_id: behindIds[0],
        status: 'failed',
        http_status: 422,
        error_kind: 'skipped',
        position: expect.objectContaining({ topic: p.topics.commands, partition: head.position.partition }),
      }),
    ]);
    expect(await pages(`shop=${shop}&status=failed&limit=1`)).toEqual([[behindIds[0]], [poisonId]]);

    // Pending: accepted while no projector runs, newest first.
    await p.stopProjector();
    const pending: string[] = [];
    try {
      for (const n of ['p1', 'p2', 'p3']) {
        const r = await products(`${shop}.pending`, [{ barcode: n, product_name: n }], { prefer: 'respond-async' });
        expect(r.status).toBe(202);
        pending.push(r.json.command_id as string);
      }
      expect(await pages(`shop=${shop}.pending&status=pending&limit=2`)).toEqual([[pending[2], pending[1]], [pending[0]]]);
    } finally {
      await p.startProjector();
    }
  });
});
