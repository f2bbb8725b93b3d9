import type { Request, Response } from 'express';
import { classifyDbError } from '@ingest/db';
import type { OutboxEvent, Reply } from '@ingest/domain';
import { MAX_MESSAGE_BYTES } from '@ingest/kafka';
import { ApiError, badRequest, DEPENDENCY_RETRY_AFTER_S, unavailable } from '../errors/catalog.ts';
import { sendReply } from './replies.ts';

/**
 * What a command would do if it were applied now (D22): `projected` with the
 * projection's reply and outbox events, or `parked` when the live projector would park it. `as_of`
 * is when the state it was computed against was read.
 */
export type DryRunOutcome =
  | { outcome: 'projected'; reply: Reply; events: OutboxEvent[]; as_of: string }
  | { outcome: 'parked'; error: string; waiting_behind: string | null; as_of: string };

/**
 * The port a dry run goes through instead of the command log: it projects the command message the
 * gateway would have appended and writes nothing. Real: the projector's `createDryRunner`.
 */
export interface DryRunner {
  run(message: string): Promise<DryRunOutcome>;
}

/**
 * `?dry_run=true` asks for a dry run on every write endpoint, `?dry_run=false` (or none) for the
 * real thing; order lines also take the spec's body flag. Either one asking for it makes it a dry
 * run: a request that says "do not write" anywhere is never written.
 */
export function dryRunRequested(req: Request, bodyFlag?: boolean): boolean {
  const q = (req.query as Record<string, unknown>)['dry_run'];
  if (q !== undefined && q !== 'true' && q !== 'false') throw badRequest('dry_run must be true or false', 'invalid_header');
  return q === 'true' || bodyFlag === true;
}

/**
 * Answers a dry run in the endpoint's own shape plus `dry_run: true` and `as_of`. Nothing is
 * recorded, appended or applied: the request gets no command id to poll.
 */
export async function answerDryRun(dryRunner: DryRunner, res: Response, command: Record<string, unknown>): Promise<void> {
  let message: string;
  try {
    message = JSON.stringify(command);
  } catch (err) {
    // As the real path: JSON.parse takes any depth, JSON.stringify overflows near 5,000 levels.
    if (err instanceof RangeError) throw badRequest('invalid JSON body: nested too deeply', 'invalid_json');
    throw err;
  }
  // The real request would be refused by the command log (message_too_large).
  if (Buffer.byteLength(message, 'utf8') > MAX_MESSAGE_BYTES)
    throw new ApiError(413, 'body_too_large', { ok: false, error: 'request too large for the command log' });
  let out: DryRunOutcome;
  try {
    out = await dryRunner.run(message);
  } catch (err) {
    // 57014: the dry run's statement timeout (a long wait for the shop's lock, or a slow statement).
    if ((err as { code?: unknown }).code === '57014') throw unavailable('dry run timed out; retry later', DEPENDENCY_RETRY_AFTER_S);
    if (classifyDbError(err) !== 'permanent') throw unavailable('database unavailable; retry later', DEPENDENCY_RETRY_AFTER_S);
    throw err;
  }
  if (out.outcome === 'parked') {
    // What the real request's caller would be told: accepted, but parked.
    res
      .status(202)
      .json({ ok: true, status: 'parked', dry_run: true, as_of: out.as_of, error: out.error, waiting_behind: out.waiting_behind });
    return;
  }
  sendReply(res, out.reply.status, { ...out.reply.body, dry_run: true, as_of: out.as_of });
}
