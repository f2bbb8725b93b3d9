import type { Queryable } from '../pool.ts';
import type { CommandPosition, LedgerTable } from './types.ts';

/**
 * agent_runtime.projector_checkpoints: each projection's position per partition, the next offset
 * to apply (checkpoint-in-transaction, docs/operations.md#retention), keyed by `projector`: the
 * live projection's rows (LIVE_PROJECTOR) and a replay's (REPLAY_PROJECTOR, D26). A replay's rows
 * live beside the tables it rebuilds: its statements name the table without a schema, so they
 * resolve through the search path to the shadow schema's twin of this table (or a scratch
 * database's own); the live ones name agent_runtime.
 */
export const TABLE: LedgerTable = {
  schema: 'agent_runtime',
  name: 'projector_checkpoints',
  key: ['projector', 'kafka_topic', 'kafka_partition'],
};

/** The live projection's position: its checkpoint rows carry this projector name. */
export const LIVE_PROJECTOR = 'live';
/** A replay's position (D26), committed with the rows it rebuilt. */
export const REPLAY_PROJECTOR = 'replay';

/**
 * Moves a partition's position past the command at `offset` unless it is there already (the
 * parameters' SQL names given; `when`: a condition for moving it at all). A fragment:
 * processedCommands.claimAndLock runs it in the claim's statement.
 */
export const advanceSql = (
  p: { projector: string; topic: string; partition: string; offset: string; commandId: string },
  when = 'true',
): string =>
  `INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset, last_command_id, updated_at)
   SELECT ${p.projector}, ${p.topic}, ${p.partition}, ${p.offset}::bigint + 1, ${p.commandId}, now() WHERE ${when}
   ON CONFLICT (projector, kafka_topic, kafka_partition) DO UPDATE
     SET next_offset = EXCLUDED.next_offset, last_command_id = EXCLUDED.last_command_id, updated_at = EXCLUDED.updated_at
     WHERE projector_checkpoints.next_offset <= ${p.offset}::bigint`;

/**
 * Moves the partition's applied position past this command, in the command's transaction
 * (checkpoint-in-transaction, docs/operations.md#retention): exactly-once rests on it, not on
 * keeping every marker. False when the position is already past it: the command was applied (or
 * parked) before, and this is a redelivery, a rebalance, or a consumer group reset to the
 * earliest offset.
 */
export async function advance(q: Queryable, at: CommandPosition, commandId: string | null): Promise<boolean> {
  const r = await q.query(advanceSql({ projector: '$1', topic: '$2', partition: '$3', offset: '$4', commandId: '$5' }), [
    LIVE_PROJECTOR,
    at.topic,
    at.partition,
    at.offset,
    commandId,
  ]);
  return r.rowCount === 1;
}

/** The next offset to apply on this partition (0 when nothing was applied yet), and the command just before it. */
export async function load(q: Queryable, topic: string, partition: number): Promise<{ next: number; lastCommandId: string | null }> {
  const { rows } = await q.query<{ next_offset: number; last_command_id: string | null }>(
    'SELECT next_offset, last_command_id FROM agent_runtime.projector_checkpoints WHERE projector = $1 AND kafka_topic = $2 AND kafka_partition = $3',
    [LIVE_PROJECTOR, topic, partition],
  );
  return { next: Number(rows[0]?.next_offset ?? 0), lastCommandId: rows[0]?.last_command_id ?? null };
}

/** Forgets a position that belongs to another log: from here on the markers keep the commands exactly-once. */
export async function reset(q: Queryable, topic: string, partition: number): Promise<void> {
  await q.query(
    `UPDATE agent_runtime.projector_checkpoints SET next_offset = 0, last_command_id = NULL, updated_at = now()
      WHERE projector = $1 AND kafka_topic = $2 AND kafka_partition = $3`,
    [LIVE_PROJECTOR, topic, partition],
  );
}

/**
 * Live position of the projection: the next offset per partition, as the live projector stores it
 * with every command it applies (checkpoint-in-transaction; claims are pruned after a window).
 */
export async function livePositions(q: Queryable, topic: string): Promise<Map<number, number>> {
  const { rows } = await q.query<{ partition: number; next: number }>(
    `SELECT kafka_partition AS partition, next_offset AS next FROM agent_runtime.projector_checkpoints
      WHERE projector = $1 AND kafka_topic = $2`,
    [LIVE_PROJECTOR, topic],
  );
  return new Map(rows.map((r) => [r.partition, Number(r.next)]));
}

/** One partition's live position and when it last moved (a pending command's position); null before its first command. */
export async function liveRow(q: Queryable, topic: string, partition: number): Promise<{ next_offset: string; updated_at: Date } | null> {
  const { rows } = await q.query<{ next_offset: string; updated_at: Date }>(
    `SELECT next_offset, updated_at FROM agent_runtime.projector_checkpoints WHERE projector = 'live' AND kafka_topic = $1 AND kafka_partition = $2`,
    [topic, partition],
  );
  return rows[0] ?? null;
}

/** A replay's positions (next offset per partition) in the tables it rebuilds; empty on a fresh run. */
export async function loadReplay(q: Queryable, topic: string): Promise<Map<number, number>> {
  const { rows } = await q.query<{ kafka_partition: number; next_offset: number }>(
    'SELECT kafka_partition, next_offset FROM projector_checkpoints WHERE projector = $1 AND kafka_topic = $2',
    [REPLAY_PROJECTOR, topic],
  );
  return new Map(rows.map((r) => [r.kafka_partition, r.next_offset]));
}

/** Records a replay's position, in the transaction of the batch it replayed (D26: a stopped run resumes there). */
export async function saveReplay(q: Queryable, topic: string, partition: number, nextOffset: number): Promise<void> {
  await q.query(
    `INSERT INTO projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset, updated_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (projector, kafka_topic, kafka_partition) DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = now()`,
    [REPLAY_PROJECTOR, topic, partition, nextOffset],
  );
}
