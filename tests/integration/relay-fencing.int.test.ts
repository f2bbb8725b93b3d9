import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createListener, createPool, type Listener, type Pool } from '@ingest/db';
import { createKafka, createMessageSink, type MessageSink } from '@ingest/kafka';
import { startRelay, type Relay } from '@ingest/projector';
import { createLogger, createRegistry, type Logger } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// One publisher (docs/operations.md "Faults and outages"): after the session holding the leader
// lock was lost, the old relay kept publishing beside the new leader. Two relays on one
// database, no projector: outbox rows are written directly, and the topic is read back.
let p: TestPipeline;
let pool: Pool;
let listener: Listener;
let sink: MessageSink;
const relays: Relay[] = [];

beforeAll(async () => {
  p = await startPipeline({ gateway: false, projector: false });
  pool = createPool({ connectionString: p.databaseUrl, max: 4 });
  listener = createListener({ connectionString: p.databaseUrl });
  sink = await createMessageSink(createKafka({ brokers: p.brokers, clientId: `test-${p.id}-relay` }));
});
afterAll(async () => {
  for (const r of relays) await r.stop();
  await listener.close();
  await sink.close();
  await pool.end();
  await p.stop();
});

const relay = async (fenceMs: number, maxRecords?: number, log: Logger = silentLogger()): Promise<Relay> => {
  const r = await startRelay({
    pool,
    connectionString: p.databaseUrl,
    listener,
    sink,
    log,
    registry: createRegistry(),
    pollMs: 50,
    fenceMs,
    ...(maxRecords ? { maxRecords } : {}),
  });
  relays.push(r);
  return r;
};

/** Stock events of one level, as the projector writes them: one outbox row each, seq growing by one. */
async function writeEvents(level: string, from: number, n: number): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => ({
    event_id: randomUUID(),
    topic: p.topics.stockZero,
    message_key: level,
    payload: { level, seq: from + i },
    command_id: randomUUID(),
  }));
  await pool.query(
    `INSERT INTO agent_runtime.outbox (event_id, topic, message_key, payload, command_id)
     SELECT event_id, topic, message_key, payload, command_id FROM jsonb_to_recordset($1::jsonb)
       AS x(event_id uuid, topic text, message_key text, payload jsonb, command_id uuid)`,
    [JSON.stringify(rows)],
  );
}

async function readTopic(expected: number, level?: string): Promise<Array<{ level: string; seq: number }>> {
  const kafka = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-read` });
  const consumer = kafka.consumer({ groupId: `test-${p.id}-read-${randomUUID()}` });
  const seen: Array<{ level: string; seq: number }> = [];
  await consumer.connect();
  await consumer.subscribe({ topic: p.topics.stockZero, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push(JSON.parse(message.value!.toString())) });
  try {
    const mine = () => seen.filter((e) => level === undefined || e.level === level);
    await waitFor(async () => mine().length >= expected, 20_000, `${expected} events`);
    await new Promise((r) => setTimeout(r, 1000)); // anything published twice would show up by now
    return mine();
  } finally {
    await consumer.disconnect();
  }
}

const leaderPid = async (): Promise<number> =>
  (
    await p.db.query<{ pid: number }>(
      `SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
      WHERE l.locktype = 'advisory' AND l.objid = $1 AND l.granted AND d.datname = current_database()`,
      [0x6f7574626f78 & 0xffffffff],
    )
  ).rows[0]!.pid;

describe('one publisher', () => {
  it('a relay whose locked session is lost stops leading at once; the other takes over after the fence; each event leaves once, in seq order', async () => {
    // A's lines are kept: losing the lead is an event. Polling isLeader() could miss it, since A
    // opens a new session and, as the last holder (no fence for its own lease), may lead again
    // within one poll (the CI run of 2026-11-23 did miss it).
    const aLines: string[] = [];
    const aLog = createLogger({ name: 'relay-a', pretty: false, destination: { write: (line: string) => void aLines.push(line) } });
    const a = await relay(1500, undefined, aLog);
    await waitFor(async () => a.isLeader(), 10_000, 'relay A leading');
    const b = await relay(1500);
    await writeEvents('L1', 1, 10);
    await waitFor(
      async () => (await pool.query('SELECT 1 FROM agent_runtime.outbox WHERE published_at IS NULL')).rows.length === 0,
      10_000,
      'A published',
    );
    expect(b.isLeader()).toBe(false);

    // The database ends A's session (as a restart or a network fault would); A's process lives on.
    await p.db.query('SELECT pg_terminate_backend($1)', [await leaderPid()]);
    await waitFor(async () => aLines.some((l) => l.includes('outbox relay lost the lead')), 2000, 'A dropping the lead');
    await writeEvents('L1', 11, 10);
    await waitFor(async () => a.isLeader() || b.isLeader(), 15_000, 'a new leader');
    await waitFor(
      async () => (await pool.query('SELECT 1 FROM agent_runtime.outbox WHERE published_at IS NULL')).rows.length === 0,
      15_000,
      'all published',
    );
    expect([a.isLeader(), b.isLeader()].filter(Boolean)).toHaveLength(1);

    const events = await readTopic(20, 'L1');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});

describe('relay rounds', () => {
  it('are bounded by records, and still publish everything once, in order', async () => {
    for (const r of relays.splice(0)) await r.stop();
    const bounded = await relay(0, 7);
    await waitFor(async () => bounded.isLeader(), 10_000, 'the bounded relay leading');
    await writeEvents('L2', 1, 30);
    const events = await readTopic(30, 'L2');
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });
});
