import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withTransaction } from '@ingest/db';
import type { InventoryCommand, LocationRef } from '@ingest/domain';
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
  twoDatabases,
  type Body,
} from '../../../testing/inventoryEquivalence.ts';
import type { Projection } from '../../projection.ts';
import { projectInventory } from '../projectInventory.ts';
import { loadLocationMatchesOf } from '../store/index.ts';
import { projectSnapshotRun } from './snapshotRun.ts';
import { snapshotRunFrom } from './snapshotRuns.ts';

// Runs of snapshots in ONE statement (projectSnapshotRun, taken as applyGroup takes them,
// snapshotRunFrom) against the deciders one command at a time: random sequences of two shops
// interleaved, mostly snapshots, with the other inventory kinds between them (which hold their
// shop's later snapshots back, not the other shop's), snapshots sent again, repeated barcodes,
// unknown barcodes and locations, stale and late as-of times (D15b), zero crossings (D18) and two
// business days (D16b), where later commands see what earlier ones of the run wrote. Every reply,
// event and row must be identical.
const dbs = twoDatabases('setb_snap_run');
const snapshot = body.filter((b) => b.kind === 'inventory.snapshot');
// A snapshot, another inventory write, or an earlier one sent again as a new command (unchanged
// levels: D15's narrow writes).
type Step = { b: Body; second: boolean } | { again: number };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ b: snapshot, second: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ b: body, second: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ again: fc.nat({ max: 7 }) }) },
);

function commandsOf(steps: Step[]): InventoryCommand[] {
  const sent: Array<{ b: Body; second: boolean }> = [];
  return steps.flatMap((s, i) => {
    const one = 'again' in s ? sent[s.again % Math.max(sent.length, 1)] : s;
    if (!one) return [];
    sent.push(one);
    return [one.second ? commandOfSecondShop(one.b, i + 1) : command(one.b, i + 1)];
  });
}

describe('runs of snapshots in one statement equal the deciders command by command', () => {
  it(
    'random sequences of two shops give identical replies, events and rows',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 10 }), async (steps) => {
          const commands = commandsOf(steps);
          for (const pool of [dbs.decider, dbs.setBased]) {
            await reset(pool);
            await addSecondShop(pool);
          }
          const expected: Projection[] = [];
          for (const c of commands) expected.push(await withTransaction(dbs.decider, (tx) => projectInventory(tx, c, { setBased: false })));
          const actual = await withTransaction(dbs.setBased, async (tx) => {
            const refs = new Map<string, LocationRef[]>();
            for (const c of commands)
              if (c.kind === 'inventory.snapshot') refs.set(c.shop, [...(refs.get(c.shop) ?? []), c.payload.location]);
            const loaded = await loadLocationMatchesOf(tx, refs);
            // As applyGroup: a run's statement writes its snapshots ahead of their turn; any other
            // command goes alone, by the decider.
            const ahead = new Map<number, Projection>();
            const out: Projection[] = [];
            for (const [i, c] of commands.entries()) {
              if (!ahead.has(i)) {
                const run = snapshotRunFrom(commands, i, (k) => !ahead.has(k), loaded);
                if (run.items.length > 0) (await projectSnapshotRun(tx, run.items)).forEach((p, j) => ahead.set(run.indexes[j]!, p));
              }
              out.push(ahead.get(i) ?? (await projectInventory(tx, c, { setBased: false })));
            }
            return out;
          });
          for (const [i, e] of expected.entries()) {
            expect(actual[i]!.reply, `reply of command ${i + 1}`).toEqual(e.reply);
            expect(JSON.stringify(actual[i]!.reply.body), 'key order of the stored reply').toBe(JSON.stringify(e.reply.body));
            expect(actual[i]!.events, `events of command ${i + 1}`).toEqual(e.events);
          }
          expect(await rows(dbs.setBased)).toEqual(await rows(dbs.decider));
        }),
        { numRuns: RUNS, seed: SEED },
      );
    },
    PROPERTY_TIMEOUT,
  );
});
