import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPool, type PoolClient } from '../index.ts';
import { scratchDatabase } from '../../testing/scratchDatabase.ts';
import { outbox, parkedCommands, processedCommands } from './index.ts';

// The statements of a group transaction (applyGroup) say, for the whole run, what the one-command
// statements say command by command: the same claims, positions, parked commands and stored
// outcomes, on a real PostgreSQL. Each side runs in a transaction that is rolled back.
const db = scratchDatabase('ingest_group');

const TOPIC = 'ingest.commands.v1';
const PARTITION = 3;

async function rolledBack<T>(fn: (tx: PoolClient) => Promise<T>): Promise<T> {
  const tx = await db.pool.connect();
  try {
    await tx.query('BEGIN');
    return await fn(tx);
  } finally {
    await tx.query('ROLLBACK');
    tx.release();
  }
}

interface Scenario {
  /** Index into `ids` per command, in log order: a repeated index is the same command twice. */
  picks: number[];
  gaps: number[];
  preClaimed: boolean[];
  /** The stored position before the run: none, or an offset near the run's. */
  position: number | null;
  checkpoint: boolean;
}

const scenario = fc.integer({ min: 1, max: 10 }).chain((n) =>
  fc.record({
    picks: fc.array(fc.integer({ min: 0, max: n + 2 }), { minLength: 1, maxLength: 12 }),
    gaps: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 12, maxLength: 12 }),
    preClaimed: fc.array(fc.boolean(), { minLength: n + 3, maxLength: n + 3 }),
    position: fc.option(fc.integer({ min: 95, max: 140 }), { nil: null }),
    checkpoint: fc.boolean(),
  }),
);

function commandsOf(s: Scenario) {
  const ids = s.preClaimed.map(() => randomUUID());
  let offset = 100;
  return {
    ids,
    run: s.picks.map((p, i) => {
      offset += s.gaps[i] ?? 1;
      const id = ids[p] as string;
      return {
        c: { command_id: id, shop: `shop-${p % 3}`, kind: 'products.upsert', received_at: '2026-11-26T10:00:00Z' },
        offset: String(offset),
      };
    }),
  };
}

async function setUp(tx: PoolClient, s: Scenario, ids: string[]): Promise<void> {
  for (const [i, id] of ids.entries())
    if (s.preClaimed[i])
      await processedCommands.claim(
        tx,
        { command_id: id, shop: 'x', kind: 'products.upsert', received_at: '2026-11-26T09:00:00Z' },
        { topic: TOPIC, partition: PARTITION, offset: String(10 + i) },
      );
  if (s.position !== null)
    await tx.query(
      `INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset, last_command_id, updated_at)
       VALUES ('live', $1, $2, $3, NULL, now())
       ON CONFLICT (projector, kafka_topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`,
      [TOPIC, PARTITION, s.position],
    );
}

async function stateOf(tx: PoolClient, ids: string[]) {
  const claims = await tx.query(
    'SELECT command_id, kafka_offset::text FROM processed_commands WHERE command_id = ANY($1) ORDER BY command_id',
    [ids],
  );
  const position = await tx.query(
    `SELECT next_offset::text, last_command_id FROM agent_runtime.projector_checkpoints WHERE kafka_topic = $1 AND kafka_partition = $2`,
    [TOPIC, PARTITION],
  );
  return { claims: claims.rows, position: position.rows };
}

describe('the statements of a group transaction', () => {
  it('claimGroup: the same claims, positions and answers as claimAndLock command by command', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const { ids, run } = commandsOf(s);
        const one = await rolledBack(async (tx) => {
          await setUp(tx, s, ids);
          const go: boolean[] = [];
          for (const { c, offset } of run)
            go.push(await processedCommands.claimAndLock(tx, c, { topic: TOPIC, partition: PARTITION, offset }, s.checkpoint));
          return { go, ...(await stateOf(tx, ids)) };
        });
        const group = await rolledBack(async (tx) => {
          await setUp(tx, s, ids);
          const go = await processedCommands.claimGroup(tx, { topic: TOPIC, partition: PARTITION }, run, s.checkpoint);
          return { go, ...(await stateOf(tx, ids)) };
        });
        expect(group).toEqual(one);
      }),
      { numRuns: 60 },
    );
  });

  it('claimGroup takes the shop locks of the commands it claims', async () => {
    await rolledBack(async (tx) => {
      const c = { command_id: randomUUID(), shop: 'locked.example', kind: 'products.upsert', received_at: '2026-11-26T10:00:00Z' };
      expect(await processedCommands.claimGroup(tx, { topic: TOPIC, partition: PARTITION }, [{ c, offset: '7' }], false)).toEqual([true]);
      const otherPool = createPool({ connectionString: db.pool.options.connectionString!, max: 1 });
      const other = await otherPool.connect();
      try {
        const { rows } = await other.query<{ got: boolean }>(
          `SELECT pg_try_advisory_xact_lock(hashtextextended(current_schema() || '/' || $1, 0)) AS got`,
          ['locked.example'],
        );
        expect(rows[0]?.got).toBe(false);
      } finally {
        other.release();
        await otherPool.end();
      }
    });
  });

  it('firstOpenOf: each shop first open parked command, as firstOpen says it shop by shop', async () => {
    await rolledBack(async (tx) => {
      const at = (offset: number) => ({ topic: TOPIC, partition: PARTITION, offset: String(offset) });
      const park = (shop: string, offset: number, resolved = false) => {
        const id = randomUUID();
        return parkedCommands
          .park(tx, {
            command_id: id,
            shop,
            kind: 'products.upsert',
            at: at(offset),
            message: Buffer.from('{}'),
            error: 'e',
            attempts: 1,
            behind: null,
          })
          .then(async () => {
            if (resolved)
              await tx.query("UPDATE agent_runtime.parked_commands SET resolved_at = now(), resolution = 'skipped' WHERE command_id = $1", [
                id,
              ]);
            return id;
          });
      };
      await park('a', 9, true);
      await park('a', 12);
      await park('a', 11);
      await park('b', 3, true);
      const shops = ['a', 'b', 'c'];
      const group = await parkedCommands.firstOpenOf(tx, shops);
      const oneByOne = new Map<string, string>();
      for (const shop of shops) {
        const first = await parkedCommands.firstOpen(tx, shop);
        if (first) oneByOne.set(shop, first);
      }
      expect(group).toEqual(oneByOne);
      expect(group.size).toBe(1);
    });
  });

  it('storeOutcomes: the replies (with their key order) and outbox rows (in order) of storeOutcome command by command', async () => {
    const commands = [0, 1, 2].map((i) => ({ command_id: randomUUID(), shop: `s${i}`, kind: 'inventory.snapshot' }));
    const outcomes = commands.map((c, i) => ({
      c,
      // Keys out of alphabetical order: a jsonb round trip would sort them.
      reply: { status: i === 1 ? 422 : 200, body: { ok: i !== 1, zeta: i, alpha: [i], shop: c.shop } },
      rows: Array.from({ length: i }, (_, j) => ({
        event_id: randomUUID(),
        topic: 'inventory.stock-zero.v1',
        message_key: `${c.shop}|${j}`,
        headers: { ce_id: String(j) },
        payload: { n: j },
        command_id: c.command_id,
        log_table: null,
      })),
    }));
    const read = async (tx: PoolClient) => ({
      results: (
        await tx.query(
          `SELECT command_id, shop, kind, status_code, body::text FROM agent_runtime.command_results WHERE command_id = ANY($1) ORDER BY shop`,
          [commands.map((c) => c.command_id)],
        )
      ).rows,
      outbox: (
        await tx.query(
          `SELECT event_id, topic, message_key, headers, payload, command_id FROM agent_runtime.outbox WHERE command_id = ANY($1) ORDER BY id`,
          [commands.map((c) => c.command_id)],
        )
      ).rows,
    });
    const one = await rolledBack(async (tx) => {
      for (const o of outcomes) await outbox.storeOutcome(tx, o.c, o.reply, o.rows);
      return read(tx);
    });
    const group = await rolledBack(async (tx) => {
      await outbox.storeOutcomes(tx, outcomes);
      return read(tx);
    });
    expect(group).toEqual(one);
    expect(group.results[0]?.body).toBe(JSON.stringify(outcomes[0]?.reply.body));
  });
});
