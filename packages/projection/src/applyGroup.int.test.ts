import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withTransaction, type Pool } from '@ingest/db';
import type { Command, RegisterLocationsCommand } from '@ingest/domain';
import { DEFAULT_TOPICS } from '@ingest/kafka';
import {
  addSecondShop,
  body,
  command,
  commandOfSecondShop,
  PROPERTY_TIMEOUT,
  reset,
  rows,
  RUNS,
  SEED,
  SHOP,
  twoDatabases,
  type Body,
} from '../testing/inventoryEquivalence.ts';
import { applyCommand, applyGroup, type ApplyOutcome } from './applyCommand.ts';

// applyGroup (a live group transaction: the run's claims, parked check, locations and outcomes
// loaded or stored once for the whole run, runs of snapshots in one statement) against
// applyCommand one command at a time: random runs of inventory writes of every kind for two shops
// interleaved, with the same command twice and a locations.register in the middle that gives a ref
// used before and after it a location, must give the same outcomes, rows, stored replies (byte for
// byte) and outbox rows in the same order. applyCommand projects each command as the deciders do
// (the *.equivalence.int.test.ts properties).
const dbs = twoDatabases('apply_group');
const TOPIC = 'ingest.commands.v1';
const LOC3 = '01900000-0000-7000-8000-0000000000a3';

type Step = { body: Body; second: boolean } | { register: true } | { again: number };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ body, second: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ register: true as const }) },
  { weight: 1, arbitrary: fc.nat({ max: 10 }).map((n) => ({ again: n })) },
);

function commandsOf(steps: Step[]): Command[] {
  const out: Command[] = [];
  for (const [i, s] of steps.entries()) {
    if ('again' in s) {
      const earlier = out[s.again % Math.max(out.length, 1)];
      if (earlier) out.push(earlier);
    } else if ('register' in s) {
      const c = command(
        {
          kind: 'inventory.snapshot',
          asOf: '2026-11-02T00:00:00.000Z',
          payload: { location: { location_id: LOC3 }, snapshot_date: '', lines: [] },
        },
        i + 1,
      );
      const register: RegisterLocationsCommand = {
        command_id: c.command_id,
        kind: 'locations.register',
        shop: SHOP,
        received_at: c.received_at,
        source: { endpoint: '/property' },
        actor: 'platform',
        payload: { locations: [{ location_id: LOC3, name: 'late', identifiers: [{ identifier_type: 'code', identifier_value: 'late' }] }] },
      };
      out.push(register);
    } else out.push(s.second ? commandOfSecondShop(s.body, i + 1) : command(s.body, i + 1));
  }
  return out;
}

async function resetAll(pool: Pool): Promise<void> {
  await reset(pool);
  await addSecondShop(pool);
  await pool.query(
    'TRUNCATE agent_runtime.processed_commands, agent_runtime.command_results, agent_runtime.outbox, agent_runtime.projector_checkpoints',
  );
}

async function stateOf(pool: Pool) {
  return {
    rows: await rows(pool),
    locations: (await pool.query('SELECT t::text AS r FROM sot.location_identifiers t ORDER BY 1')).rows,
    results: (await pool.query('SELECT command_id, status_code, body::text FROM agent_runtime.command_results ORDER BY command_id')).rows,
    outbox: (
      await pool.query('SELECT event_id, topic, message_key, headers, payload, command_id, log_table FROM agent_runtime.outbox ORDER BY id')
    ).rows,
    claims: (await pool.query('SELECT command_id, kafka_offset::text FROM agent_runtime.processed_commands ORDER BY command_id')).rows,
  };
}

describe('applyGroup', () => {
  it(
    'gives what applyCommand gives command by command: outcomes, rows, replies and events',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 12 }), async (steps) => {
          const commands = commandsOf(steps);
          const at = (i: number) => ({ topic: TOPIC, partition: 0, offset: String(100 + i) });
          await resetAll(dbs.decider);
          await resetAll(dbs.setBased);
          const oneByOne: ApplyOutcome[] = [];
          for (const [i, c] of commands.entries())
            oneByOne.push(
              await withTransaction(dbs.decider, (tx) =>
                applyCommand(tx, c, at(i), {
                  sideEffects: { topics: DEFAULT_TOPICS },
                  checkpoint: true,
                  parkBehind: { message: Buffer.from('{}') },
                }),
              ),
            );
          const grouped = await withTransaction(dbs.setBased, (tx) =>
            applyGroup(
              tx,
              commands.map((c, i) => ({ c, at: at(i), message: Buffer.from('{}') })),
              { sideEffects: { topics: DEFAULT_TOPICS }, checkpoint: true, parkBehind: true },
            ),
          );
          expect(grouped).toEqual(oneByOne);
          expect(await stateOf(dbs.setBased)).toEqual(await stateOf(dbs.decider));
        }),
        { numRuns: RUNS, seed: SEED },
      );
    },
    PROPERTY_TIMEOUT,
  );
});
