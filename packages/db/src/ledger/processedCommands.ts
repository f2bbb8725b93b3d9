import type { Queryable } from '../pool.ts';
import { pruneTarget } from './prune.ts';
import { advanceSql, LIVE_PROJECTOR } from './projectorCheckpoints.ts';
import type { CommandPosition, LedgerTable, ReceivedCommand } from './types.ts';

/**
 * agent_runtime.processed_commands: the claims (D4), one per command applied (or skipped by an
 * operator). An in-place rebuild (D26) replaces this table with the one it rebuilt, so the claim and
 * its undo name it without a schema: they resolve through the search path, to the shadow schema
 * during a rebuild.
 */
export const TABLE: LedgerTable = { schema: 'agent_runtime', name: 'processed_commands', key: ['command_id'] };

/** The claim (D4): parameters $1..$7 as claimParams gives them. */
const CLAIM_SQL = `INSERT INTO processed_commands (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, received_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (command_id) DO NOTHING`;

const claimParams = (c: ReceivedCommand, at: CommandPosition): unknown[] => [
  c.command_id,
  c.shop,
  c.kind,
  at.topic,
  at.partition,
  at.offset,
  c.received_at,
];

/**
 * Claims the command for this transaction (D4). False when it was already processed: the
 * unique key also makes a concurrent duplicate wait for the first and then see it done.
 */
export async function claim(q: Queryable, c: ReceivedCommand, at: CommandPosition): Promise<boolean> {
  const r = await q.query(CLAIM_SQL, claimParams(c, at));
  return r.rowCount === 1;
}

/**
 * The start of a live command's transaction in one statement (it was three round trips, each a
 * wait for a core on a busy machine: B7): claims the command (claim, D4), moves its partition's
 * position past it when `checkpoint` (projectorCheckpoints.advance) and, only when both say the
 * command is new, locks its shop (lockShop). True: apply it; false: a duplicate. The lock is
 * taken after the claim, as before (the claims table is locked first, see applyCommand); what
 * must see the state after the lock (the parked check, the loads) runs in later statements.
 */
export async function claimAndLock(q: Queryable, c: ReceivedCommand, at: CommandPosition, checkpoint: boolean): Promise<boolean> {
  const { rows } = await q.query<{ go: boolean }>(
    `WITH claim AS (${CLAIM_SQL} RETURNING 1),
     position AS (${advanceSql({ projector: '$8', topic: '$4', partition: '$5', offset: '$6', commandId: '$1' }, '$9::boolean')} RETURNING 1),
     go AS (
       SELECT EXISTS (SELECT 1 FROM claim) AND (NOT $9::boolean OR EXISTS (SELECT 1 FROM position)) AS go
     )
     SELECT go.go, (SELECT count(*) FROM (SELECT pg_advisory_xact_lock(${shopLockKey('$2')}) WHERE go.go) l) AS locked FROM go`,
    [...claimParams(c, at), LIVE_PROJECTOR, checkpoint],
  );
  return rows[0]?.go === true;
}

/** A command of a group as claimGroup reads it: the command and its offset on the group's partition. */
export interface GroupClaim {
  c: ReceivedCommand;
  offset: string;
}

/**
 * claimAndLock for a run of commands of ONE partition, in log order, in one statement (it was one
 * per command): what running claimAndLock on each in turn would say, per command. A command is new
 * when its claim is (a second record of the same command in the run is a duplicate, as it would be
 * one by one) and, with `checkpoint`, when the partition's position was not past it before the run;
 * the position moves past the last command once. The shops of the new commands are locked in the
 * order of their lock keys, so that two transactions never take the same two locks in opposite order.
 */
export async function claimGroup(
  q: Queryable,
  at: Omit<CommandPosition, 'offset'>,
  group: readonly GroupClaim[],
  checkpoint: boolean,
): Promise<boolean[]> {
  const last = group[group.length - 1];
  if (!last) return [];
  const { rows } = await q.query<{ ord: string }>(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bigint[], $5::timestamptz[])
         WITH ORDINALITY AS x(command_id, shop, kind, kafka_offset, received_at, ord)),
     firsts AS (SELECT DISTINCT ON (command_id) * FROM input ORDER BY command_id, ord),
     before AS (
       SELECT next_offset FROM agent_runtime.projector_checkpoints
        WHERE $9::boolean AND projector = $8 AND kafka_topic = $6 AND kafka_partition = $7 FOR UPDATE),
     claim AS (
       INSERT INTO processed_commands (command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, received_at)
       SELECT command_id, shop, kind, $6, $7, kafka_offset, received_at FROM firsts ORDER BY ord
       ON CONFLICT (command_id) DO NOTHING RETURNING command_id),
     position AS (${advanceSql({ projector: '$8', topic: '$6', partition: '$7', offset: '$10', commandId: '$11' }, '$9::boolean')} RETURNING 1),
     go AS (
       SELECT f.ord, f.shop FROM firsts f JOIN claim USING (command_id)
        WHERE f.kafka_offset >= coalesce((SELECT next_offset FROM before), 0)),
     locked AS (
       SELECT count(pg_advisory_xact_lock(k)) AS n
         FROM (SELECT DISTINCT ${shopLockKey('shop')} AS k FROM go ORDER BY 1) keys)
     SELECT go.ord FROM go, locked, (SELECT count(*) FROM position) moved ORDER BY go.ord`,
    [
      group.map((g) => g.c.command_id),
      group.map((g) => g.c.shop),
      group.map((g) => g.c.kind),
      group.map((g) => g.offset),
      group.map((g) => g.c.received_at),
      at.topic,
      at.partition,
      LIVE_PROJECTOR,
      checkpoint,
      last.offset,
      last.c.command_id,
    ],
  );
  const go = new Set(rows.map((r) => Number(r.ord)));
  return group.map((_, i) => go.has(i + 1));
}

/** Takes the claim back within its transaction: the command is parked, not applied, and retrying it later applies it. */
export async function unclaim(q: Queryable, commandId: string): Promise<void> {
  await q.query('DELETE FROM processed_commands WHERE command_id = $1', [commandId]);
}

/**
 * The swap's first lock (D26): every live projector transaction starts with a claim, so holding
 * this table means none is half way through. Readers never touch it.
 */
export async function lockForSwap(q: Queryable): Promise<void> {
  await q.query('LOCK TABLE agent_runtime.processed_commands IN ACCESS EXCLUSIVE MODE');
}

/** Claims older than the marker window: exactly-once rests on the checkpoint after that. */
export const prune = pruneTarget(TABLE, "processed_at < now() - $1 * interval '1 millisecond'");

/** The advisory lock key of the shop in SQL parameter `param`, in the current schema (lockShop). */
export const shopLockKey = (param: string): string => `hashtextextended(current_schema() || '/' || ${param}, 0)`;

/**
 * Serialises the transactions that write one shop's rows, for the rest of this transaction. The
 * shop's commands share a partition and are claimed in order, so this only matters when they do
 * not (the topic was repartitioned, or a second projector group runs by mistake); one lock instead
 * of FOR UPDATE on every loaded row, which wrote a lock into each of a snapshot's 10,000 tuples.
 * Keyed by the schema as well, so a rebuild in a shadow schema (D26) never waits for live.
 */
export async function lockShop(q: Queryable, shop: string): Promise<void> {
  await q.query(`SELECT pg_advisory_xact_lock(${shopLockKey('$1')})`, [shop]);
}
