import type { Request, Response } from 'express';
import { v7 as uuidv7 } from 'uuid';
import type { Pool } from '@ingest/db';
import type { CommandKind } from '@ingest/domain';
import { classifyKafkaError, type CommandLog } from '@ingest/kafka';
import type { Logger } from '@ingest/runtime';
import { ApiError, badRequest, unavailable } from './errors.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { ReplyWaiter } from './replies.ts';

export interface SubmitDeps {
  commandLog: CommandLog;
  replies: ReplyWaiter;
  pool: Pool;
  log: Logger;
  metrics: GatewayMetrics;
  replyTimeoutMs: number;
  now: () => Date;
  newId: () => string;
}

export const defaultIds = { now: () => new Date(), newId: () => uuidv7() };

function prefersAsync(req: Request): boolean {
  const prefer = req.headers['prefer'];
  return (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '')).toLowerCase().includes('respond-async');
}

/**
 * The one way in (D1): builds the command envelope (id and time decided here, D3), appends it to
 * Kafka, and answers with the projector's result, or 202 when it is late or async was asked (D6).
 */
export async function submitCommand(
  deps: SubmitDeps,
  req: Request,
  res: Response,
  c: { kind: CommandKind; shop: string; payload: Record<string, unknown>; meta?: Record<string, unknown>; receivedAt?: Date },
): Promise<void> {
  const command = {
    command_id: deps.newId(),
    kind: c.kind,
    shop: c.shop,
    received_at: (c.receivedAt ?? deps.now()).toISOString(),
    source: { endpoint: req.path },
    ...c.meta,
    payload: c.payload,
  };
  const log = deps.log.child({ command_id: command.command_id, shop: c.shop, kind: c.kind });
  const asyncWanted = prefersAsync(req);
  const pending = asyncWanted ? null : deps.replies.register(command.command_id);

  const produceStarted = performance.now();
  try {
    await deps.commandLog.appendCommand(command);
  } catch (err) {
    pending?.cancel();
    // JSON.parse takes any depth, JSON.stringify overflows near 5,000 levels: that is the client's body.
    if (err instanceof RangeError) throw badRequest('invalid JSON body: nested too deeply');
    const failure = classifyKafkaError(err);
    log.warn({ failure }, 'command not appended');
    if (failure.code === 'message_too_large') throw new ApiError(413, { ok: false, error: 'request too large for the command log' });
    throw unavailable('command log unavailable; retry later', 5);
  } finally {
    deps.metrics.produce.observe((performance.now() - produceStarted) / 1000);
  }

  // Lets any gateway instance answer GET /api/commands/{id} while the command is pending.
  const recorded = deps.pool
    .query('INSERT INTO agent_runtime.command_requests (command_id, shop, kind, received_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [
      command.command_id,
      c.shop,
      c.kind,
      command.received_at,
    ])
    .then(
      () => true,
      (err: unknown) => {
        log.warn({ err }, 'could not record the pending command');
        return false;
      },
    );

  const waitStarted = performance.now();
  const reply = pending ? await pending.wait(deps.replyTimeoutMs) : null;
  if (reply) {
    deps.metrics.replyWait.observe({ outcome: 'replied' }, (performance.now() - waitStarted) / 1000);
    res.status(reply.status).json(reply.body);
    return;
  }
  deps.metrics.replyWait.observe({ outcome: 'async' }, (performance.now() - waitStarted) / 1000);
  await recorded;
  if (asyncWanted) res.set('Preference-Applied', 'respond-async');
  res.status(202).json({
    ok: true,
    status: 'accepted',
    command_id: command.command_id,
    result_url: `/api/commands/${command.command_id}`,
  });
}
