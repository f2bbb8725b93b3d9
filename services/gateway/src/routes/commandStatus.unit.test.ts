import { afterEach, describe, expect, it } from 'vitest';
import type { Pool } from '@ingest/db';
import { partitionForKey, type LogPositions } from '@ingest/kafka';
import { startTestGateway, TEST_INGEST_SECRET, type TestGateway } from '../../testing/testGateway.ts';

// GET /api/commands/{id} of a pending command says how far it is from being
// applied, from its receive time, the projector's checkpoint and the log's offsets; it writes nothing.
const ID = '019abcde-0000-7000-8000-000000000001';
const RECEIVED = new Date('2026-11-23T10:00:00.000Z');
const gateways: TestGateway[] = [];
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((g) => g.close()));
});

/** A pool that knows one pending command of shop.example and a checkpoint of partition 2 at offset 40. */
function pool(queries: string[]): Pool {
  return {
    query: async (sql: string, params: unknown[] = []) => {
      queries.push(sql);
      if (sql.includes('FROM agent_runtime.command_requests'))
        return { rows: params[0] === ID ? [{ shop: 'shop.example', received_at: RECEIVED }] : [], rowCount: 1 };
      if (sql.includes('FROM agent_runtime.projector_checkpoints')) {
        expect(params).toEqual(['commands.topic', 2]);
        return { rows: [{ next_offset: '40', updated_at: new Date('2026-11-23T10:00:03.000Z') }], rowCount: 1 };
      }
      return { rows: [], rowCount: 0 };
    },
  } as unknown as Pool;
}

function positions(over: Partial<LogPositions> = {}): LogPositions & { asked: number[] } {
  const asked: number[] = [];
  return {
    topic: 'commands.topic',
    partitionOf: async (key) => (key === 'shop.example' ? 2 : 0),
    endOffset: async () => 50,
    offsetAt: async (_p, at) => {
      asked.push(at);
      return 45;
    },
    stop: async () => {},
    asked,
    ...over,
  };
}

const status = (gw: TestGateway) => fetch(`${gw.url}/api/commands/${ID}`, { headers: { 'x-ingest-secret': TEST_INGEST_SECRET } });

describe('status with position', () => {
  it('a pending command answers 202 with its partition, the commands ahead of it, the backlog and its wait; nothing is written', async () => {
    const queries: string[] = [];
    const pos = positions();
    const gw = await startTestGateway({}, { pool: pool(queries), positions: pos });
    gateways.push(gw);
    const before = Date.now();
    const res = await status(gw);
    expect(res.status).toBe(202);
    const body = (await res.json()) as { position: { waiting_seconds: number } };
    expect(body).toEqual({
      ok: true,
      status: 'pending',
      command_id: ID,
      position: {
        partition: 2,
        // Offsets 40..44 were appended before it and are not applied yet; 45 is (about) itself.
        commands_ahead: 5,
        partition_backlog: 10,
        waiting_seconds: expect.any(Number),
        partition_applied_at: '2026-11-23T10:00:03.000Z',
      },
    });
    expect(body.position.waiting_seconds).toBeCloseTo((before - RECEIVED.getTime()) / 1000, -1);
    expect(pos.asked).toEqual([RECEIVED.getTime()]);
    expect(queries.filter((q) => /\b(INSERT|UPDATE|DELETE)\b/i.test(q))).toEqual([]);
  });

  it('a command not in the log yet counts everything unapplied as ahead of it', async () => {
    const gw = await startTestGateway({}, { pool: pool([]), positions: positions({ offsetAt: async () => 50 }) });
    gateways.push(gw);
    const body = (await (await status(gw)).json()) as { position: Record<string, unknown> };
    expect(body.position).toMatchObject({ commands_ahead: 10, partition_backlog: 10 });
  });

  it('Kafka not answering: still 202 pending, without a position', async () => {
    const gw = await startTestGateway({}, { pool: pool([]), positions: positions({ partitionOf: async () => null }) });
    gateways.push(gw);
    const res = await status(gw);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ ok: true, status: 'pending', command_id: ID });
  });

  it("partitionForKey is the producer's default partitioner: stable, in range, spreading shops", () => {
    const parts = Array.from({ length: 60 }, (_, i) => partitionForKey(`shop-${i}.example`, 6));
    expect(parts.every((p) => Number.isInteger(p) && p >= 0 && p < 6)).toBe(true);
    expect(new Set(parts).size).toBe(6);
    expect(partitionForKey('shop-1.example', 6)).toBe(parts[1]);
  });
});
