import { Router } from 'express';
import { commandRequests, projectorCheckpoints, prunedSpan, type Pool } from '@ingest/db';
import { isUuid } from '@ingest/domain';
import type { LogPositions } from '@ingest/kafka';
import { requireAccess, type AccessConfig } from '../edge/auth.ts';
import { ApiError, notFound } from '../errors/catalog.ts';
import { fetchReplies, sendReply } from '../commands/replies.ts';

/** The creation time a UUIDv7 carries (its first 48 bits, in ms), or null for another version. */
export function uuidv7Time(id: string): number | null {
  if (id[14] !== '7') return null;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** True when the id is a UUIDv7 from the span of command times whose records were pruned. */
async function wasPruned(pool: Pool, id: string): Promise<boolean> {
  const created = uuidv7Time(id);
  if (created === null) return false;
  return prunedSpan.covers(pool, created);
}

/** Where a pending command stands on its partition. */
export interface PendingPosition {
  partition: number;
  /** Commands appended to its partition before it and not applied yet (from the offset of its receive time). */
  commands_ahead: number;
  /** Commands of its partition not applied yet, itself and any appended after it included. */
  partition_backlog: number;
  /** Seconds since the gateway received it. */
  waiting_seconds: number;
  /** When the projector last applied a command of this partition (null: never). */
  partition_applied_at: string | null;
}

/**
 * How far a pending command is from being applied, from what is already kept: its partition is
 * computed from its shop (the producer's partitioner), the projector's applied position is its
 * checkpoint row (one primary-key read), the log's end offsets are cached by `positions`, and the
 * command's own offset is found from its receive time. Nothing is written. Null when Kafka does not
 * answer in time: the status is still given, without a position.
 */
export async function pendingPosition(
  pool: Pool,
  positions: LogPositions,
  command: { shop: string; received_at: Date },
  now: Date,
): Promise<PendingPosition | null> {
  const partition = await positions.partitionOf(command.shop);
  if (partition === null) return null;
  const [end, mine, row] = await Promise.all([
    positions.endOffset(partition),
    positions.offsetAt(partition, command.received_at.getTime()),
    projectorCheckpoints.liveRow(pool, positions.topic, partition),
  ]);
  if (end === null) return null;
  const applied = Number(row?.next_offset ?? 0);
  return {
    partition,
    commands_ahead: Math.max(0, Math.min(mine ?? end, end) - applied),
    partition_backlog: Math.max(0, end - applied),
    waiting_seconds: Math.max(0, Math.round((now.getTime() - command.received_at.getTime()) / 100) / 10),
    partition_applied_at: row ? new Date(row.updated_at).toISOString() : null,
  };
}

const formatWindow = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${Math.round(ms / 1000)}s`;

/**
 * GET /api/commands/{id} (D6): the stored result with the status and body the synchronous answer
 * would have had, 202 pending, or 202 parked. Any gateway instance can answer: all live
 * in PostgreSQL, and a command is recorded there before its 202 is given. Results are kept for
 * `resultRetentionMs`; an id from the span of pruned commands answers 410 `expired`, not 404.
 * Accepts the ingest secret, the cron secret with the command's shop in x-shop, or a key with
 * `commands:read`; another shop's command is 404 to the latter two (its existence is not revealed, D28).
 */
export function commandRoutes(deps: {
  pool: Pool;
  access: AccessConfig;
  resultRetentionMs: number;
  /** The command log's positions; without it a pending answer has no `position`. */
  positions?: LogPositions | undefined;
  now?: () => Date;
}): Router {
  const now = deps.now ?? (() => new Date());
  const router = Router();
  const access = requireAccess(deps.access, { platform: 'ingest-or-cron', scope: 'commands:read', retailer: true });
  router.get('/api/commands/:id', access, async (req, res) => {
    // The x-shop of the cron secret or the shop of a key; the ingest secret sees every shop.
    const shopFilter = typeof res.locals['shop'] === 'string' ? res.locals['shop'] : null;
    // A uuid is case-insensitive (RFC 9562); stored ids are lower case.
    const id = String(req.params['id']).toLowerCase();
    if (!isUuid(id)) throw notFound('command not found');
    const visible = (shop: string) => shopFilter === null || shopFilter === shop;

    const reply = (await fetchReplies(deps.pool, [id])).get(id);
    if (reply && visible(reply.shop)) {
      // A command the producer gave up on after its 202 (commands/submit.ts): send it again, after a pause.
      if (reply.status === 503) res.set('Retry-After', '5');
      sendReply(res, reply.status, reply.body);
      return;
    }
    if (!reply) {
      const pending = await commandRequests.find(deps.pool, id);
      if (pending && visible(pending.shop)) {
        const position = deps.positions
          ? await pendingPosition(deps.pool, deps.positions, { shop: pending.shop, received_at: new Date(pending.received_at) }, now())
          : null;
        res.status(202).json({ ok: true, status: 'pending', command_id: id, ...(position ? { position } : {}) });
        return;
      }
      if (!pending && (await wasPruned(deps.pool, id))) {
        throw new ApiError(410, 'expired', {
          ok: false,
          status: 'expired',
          command_id: id,
          error: `command result expired: results are kept for ${formatWindow(deps.resultRetentionMs)}`,
        });
      }
    }
    throw notFound('command not found');
  });
  return router;
}
