import { afterEach, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import { KafkaPortError } from '@ingest/kafka';
import { TEST_CRON_SECRET, TEST_INGEST_SECRET, startTestGateway, type TestGateway } from '../../testing/testGateway.ts';

// Outages (docs/operations.md "Faults and outages") at the HTTP edge: PostgreSQL unreachable is
// 503 with Retry-After, and a write is refused before it is appended (so no 202 can be followed
// by a 404).
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const downPool = { query: async () => Promise.reject(refused) } as unknown as Pool;
let gw: TestGateway;
afterEach(() => gw.close());

describe('while PostgreSQL is down', () => {
  it('a write answers 503 with Retry-After and nothing is appended', async () => {
    gw = await startTestGateway({}, { pool: downPool });
    const r = await fetch(`${gw.url}/api/ingest/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ingest-secret': TEST_INGEST_SECRET, prefer: 'respond-async' },
      body: JSON.stringify({ shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] }),
    });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    expect(await r.json()).toEqual({ ok: false, error: 'database unavailable; retry later' });
    expect(gw.appended).toEqual([]);
  });

  it('GET /api/commands/{id} answers 503 with Retry-After, for either secret', async () => {
    gw = await startTestGateway({}, { pool: downPool });
    const id = '0190f5e2-8c1a-7b3c-9d4e-5f6a7b8c9d0e';
    for (const headers of [{ 'x-ingest-secret': TEST_INGEST_SECRET }, { 'x-cron-secret': TEST_CRON_SECRET, 'x-shop': 'a.example' }]) {
      const r = await fetch(`${gw.url}/api/commands/${id}`, { headers });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('5');
    }
  });

  it('a request the client got wrong is still its 4xx, not a 503', async () => {
    gw = await startTestGateway({}, { pool: downPool });
    const r = await fetch(`${gw.url}/api/ingest/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ingest-secret': TEST_INGEST_SECRET },
      body: '{"shop":',
    });
    expect(r.status).toBe(400);
  });
});

describe('while Kafka does not acknowledge', () => {
  const recordingPool = () => {
    const statements: string[] = [];
    const pool = { query: async (sql: string) => (statements.push(sql), { rows: [], rowCount: 1 }) } as unknown as Pool;
    return { pool, statements };
  };
  const post = (url: string) =>
    fetch(`${url}/api/ingest/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-ingest-secret': TEST_INGEST_SECRET },
      body: JSON.stringify({ shop: 'a.example', products: [{ barcode: '1', product_name: 'x' }] }),
    });

  it('a command never handed to the broker is 503 with Retry-After and its request row is removed', async () => {
    const { pool, statements } = recordingPool();
    const commandLog = {
      appendCommand: async () => Promise.reject(new KafkaPortError({ code: 'kafka_timeout', retriable: true, message: 'not sent' })),
    };
    gw = await startTestGateway({}, { pool, commandLog });
    const r = await post(gw.url);
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statements.some((s) => s.startsWith('DELETE FROM agent_runtime.command_requests'))).toBe(true);
  });

  const unknownOutcome = (outcome: Promise<void>) =>
    Promise.reject(new KafkaPortError({ code: 'kafka_unknown_outcome', retriable: false, message: 'sent, no ack' }, { outcome }));

  it('a command handed to the broker without an ack is 202 (a retry could apply it twice); if the producer gives up, it is appended again', async () => {
    const { pool, statements } = recordingPool();
    const appends: string[] = [];
    let fail: (e: Error) => void = () => {};
    const first = new Promise<void>((_, reject) => (fail = reject));
    const commandLog = {
      appendCommand: async (c: { command_id: string }) => {
        appends.push(c.command_id);
        return appends.length === 1 ? unknownOutcome(first) : undefined;
      },
    };
    gw = await startTestGateway({}, { pool, commandLog });
    const r = await post(gw.url);
    expect(r.status).toBe(202);
    const body = (await r.json()) as { status: string; command_id: string };
    expect(body.status).toBe('accepted');
    expect(statements.some((s) => s.startsWith('DELETE'))).toBe(false);
    fail(new Error('producer gave up'));
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(appends).toEqual([body.command_id, body.command_id]); // the projector's claim applies it once (D4)
    expect(statements.some((s) => s.includes('INSERT INTO agent_runtime.command_results'))).toBe(false);
  });

  it('an accepted command that cannot be appended for the whole resend window gets a 503 result, which its GET shows', async () => {
    const { pool, statements } = recordingPool();
    const commandLog = { appendCommand: async () => unknownOutcome(Promise.reject(new Error('producer gave up'))) };
    gw = await startTestGateway({ resendWindowMs: 500 }, { pool, commandLog });
    expect((await post(gw.url)).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(statements.some((s) => s.includes('INSERT INTO agent_runtime.command_results') && s.includes('503'))).toBe(true);
  });
});
