import { setTimeout as sleep } from 'node:timers/promises';
import type { Request, Response } from 'express';
import { v7 as uuidv7 } from 'uuid';
import { classifyDbError, commandRequests, commandResults, requestKeys, type Pool } from '@ingest/db';
import { COMMAND_VERSION, type Command, type CommandKind, type InventoryMeta, type OutboxEvent, type Reply } from '@ingest/domain';
import { classifyKafkaError, KafkaPortError, MAX_MESSAGE_BYTES, type CommandEnvelopeLike, type CommandLog } from '@ingest/kafka';
import { failpoint, retry, type Logger } from '@ingest/runtime';
import { ApiError, badRequest, DEPENDENCY_RETRY_AFTER_S, unavailable } from '../errors/catalog.ts';
import { principalOf } from '../edge/auth.ts';
import { fingerprintOf, idempotencyKeyOf, inFlight, LEASE_MARGIN_MS, mismatch, replay, type KeyScope } from './idempotency.ts';
import type { GatewayMetrics } from '../metrics.ts';
import { fetchReplies, sendReply, type ReplyWaiter } from './replies.ts';

export interface SubmitDeps {
  commandLog: CommandLog;
  replies: ReplyWaiter;
  pool: Pool;
  log: Logger;
  metrics: GatewayMetrics;
  replyTimeoutMs: number;
  /** How long an accepted command whose append failed is appended again before its result says 503. */
  resendWindowMs: number;
  /** How long an Idempotency-Key header's answer is kept. */
  idempotencyKeyTtlMs: number;
  now: () => Date;
  newId: () => string;
  /** Where a dry run goes instead of the command log (D22). */
  dryRunner: DryRunner;
}

/**
 * Appends an accepted command whose first append the producer gave up on, for the resend window:
 * the first resend 1 s after that, then twice as long after each failed one, at most 30 s apart.
 */
async function resendUntilAppended(deps: SubmitDeps, command: CommandEnvelopeLike, log: Logger): Promise<void> {
  const deadline = Date.now() + deps.resendWindowMs;
  if (Date.now() < deadline) {
    await sleep(1000);
    const outcome = await retry(() => resendOnce(deps.commandLog, command), {
      classify: () => 'not_appended',
      backoff: (n) => (Date.now() < deadline ? Math.min(30_000, 1000 * 2 ** n) : null),
      onRetry: ({ err }) => log.warn({ failure: classifyKafkaError(err) }, 'accepted command not appended yet; resending'),
    }).catch(() => null);
    if (outcome === 'appended') log.info('accepted command appended on resend');
    if (outcome) return;
  }
  log.error('accepted command could not be appended within the resend window: its result says so');
  // Its result tells the client, who was given 202, to send it again.
  await commandResults
    .storeNotAppended(deps.pool, command, { ok: false, error: 'command log unavailable: the command was not appended; send it again' })
    .catch((e: unknown) => log.error({ err: e }, 'could not record that the command was not appended'));
}

/**
 * One resend: `appended`; or `acked` when it was not acknowledged in time again but its outcome,
 * waited for rather than piling up copies, says it is in the log.
 */
async function resendOnce(commandLog: CommandLog, command: CommandEnvelopeLike): Promise<'appended' | 'acked'> {
  try {
    await commandLog.appendCommand(command);
    return 'appended';
  } catch (err) {
    if (
      err instanceof KafkaPortError &&
      err.outcome &&
      (await err.outcome.then(
        () => true,
        () => false,
      ))
    )
      return 'acked';
    throw err;
  }
}

export const defaultIds = { now: () => new Date(), newId: () => uuidv7() };

function prefersAsync(req: Request): boolean {
  const prefer = req.headers['prefer'];
  return (Array.isArray(prefer) ? prefer.join(',') : (prefer ?? '')).toLowerCase().includes('respond-async');
}

/** What a route hands over: a command's kind with that kind's payload (schemas/commands), and its shop. */
type CommandInput = { [K in CommandKind]: { kind: K; payload: Extract<Command, { kind: K }>['payload'] } }[CommandKind] & {
  shop: string;
  /** Inventory commands' envelope fields (schemas/commands/envelope.json). */
  meta?: Pick<InventoryMeta, 'source_system' | 'inventory_as_of' | 'idempotency_key' | 'payload_hash'>;
  receivedAt?: Date;
  /** The endpoint's own dry-run body flag (order lines); `?dry_run=true` works on every endpoint. */
  dryRun?: boolean;
};
type Envelope = ReturnType<typeof envelope>;

function envelope(req: Request, res: Response, c: CommandInput, id: { command_id: string; received_at: string }) {
  return {
    // The schema version it is written in: every later projector and replay reads it as that version (D26).
    v: COMMAND_VERSION,
    command_id: id.command_id,
    kind: c.kind,
    shop: c.shop,
    received_at: id.received_at,
    // D28: who sent it (the key id, or `platform`), carried to the update logs and the events.
    actor: principalOf(res).actor,
    source: { endpoint: req.path },
    ...c.meta,
    payload: c.payload,
  };
}

/**
 * The one way in (D1): builds the command envelope (id and time decided here, D3), appends it to
 * Kafka, and answers with the projector's result, or 202 when it is late or async was asked (D6).
 * With an `Idempotency-Key` header the answer is kept for the key (idempotency.ts).
 */
export async function submitCommand(deps: SubmitDeps, req: Request, res: Response, c: CommandInput): Promise<void> {
  const fresh = () => ({ command_id: deps.newId(), received_at: (c.receivedAt ?? deps.now()).toISOString() });
  // The key is read first: a malformed one is refused the same way with or without a dry run (a dry
  // run answers what the real request would, its 400 included).
  const key = idempotencyKeyOf(req);
  // The same command, projected and rolled back instead of appended: the answer is the real one's.
  // A dry run writes nothing, an Idempotency-Key included (D22).
  if (dryRunRequested(req, c.dryRun)) return answerDryRun(deps.dryRunner, res, envelope(req, res, c, fresh()));
  if (key === null) return appendAndAnswer(deps, req, res, envelope(req, res, c, fresh()), null, false);
  await submitKeyed(deps, req, res, c, { credential: String(res.locals['credential'] ?? ''), shop: c.shop, key }, fresh);
}

/**
 * With an Idempotency-Key (docs/api.md "Idempotency-Key header"): the key and the command id are
 * recorded in one statement with the command's request row, before the append (the one extra
 * indexed write of a keyed request). A retry then finds: the command's result (the stored
 * answer, replayed); a 202 already given (the 202 again); the first request still within its
 * lease (409); or, after the lease (its gateway crashed between recording and answering), the
 * same command, which this request appends again with the same id: if the first append did reach
 * the log, the projector's claim (D4) applies it once.
 */
async function submitKeyed(
  deps: SubmitDeps,
  req: Request,
  res: Response,
  c: CommandInput,
  scope: KeyScope,
  fresh: () => { command_id: string; received_at: string },
): Promise<void> {
  const fingerprint = fingerprintOf(req, scope);
  const leaseMs = deps.replyTimeoutMs + LEASE_MARGIN_MS;
  // A key freed in between (pruned, released after a failed append) is claimed again: at most twice.
  for (let attempt = 0; attempt < 2; attempt++) {
    const command = envelope(req, res, c, fresh());
    if (await requestKeys.claim(deps.pool, scope, fingerprint, command, leaseMs, deps.idempotencyKeyTtlMs))
      return appendAndAnswer(deps, req, res, command, scope, true);
    const stored = await requestKeys.read(deps.pool, scope, deps.idempotencyKeyTtlMs);
    if (!stored) continue;
    if (stored.fingerprint !== fingerprint) throw mismatch();
    const reply = (await fetchReplies(deps.pool, [stored.command_id])).get(stored.command_id);
    if (reply && reply.status === 503 && !reply.parked) {
      // Its result says it was never appended, send it again: the key did nothing, it is free.
      await requestKeys.release(deps.pool, scope, stored.command_id);
      continue;
    }
    if (reply) return replay(res, reply.status, reply.body);
    if (stored.answered) return replay(res, 202, accepted(stored.command_id));
    // The first request answers within its reply timeout (then a retry gets that answer): wait no longer than that.
    if (!stored.lapsed) throw inFlight(Math.min(stored.wait_s, Math.max(1, Math.ceil(deps.replyTimeoutMs / 1000))));
    if (!(await requestKeys.takeOver(deps.pool, scope, stored.command_id, leaseMs))) throw inFlight(1);
    deps.log.warn({ command_id: stored.command_id, shop: c.shop }, 'idempotency key lease lapsed: the same command is sent again');
    return appendAndAnswer(deps, req, res, envelope(req, res, c, stored), scope, false);
  }
  throw inFlight(1);
}

const accepted = (commandId: string) => ({ ok: true, status: 'accepted', command_id: commandId, result_url: `/api/commands/${commandId}` });

async function appendAndAnswer(
  deps: SubmitDeps,
  req: Request,
  res: Response,
  command: Envelope,
  scope: KeyScope | null,
  recorded: boolean,
): Promise<void> {
  const log = deps.log.child({ command_id: command.command_id, shop: command.shop, kind: command.kind });
  const asyncWanted = prefersAsync(req);

  // The command's status is recorded durably before it is appended: a client told 200 or 202 is
  // never told 404 later by any gateway instance. While PostgreSQL is down this fails first, and the
  // client gets 503 with Retry-After before anything reaches the log.
  if (!recorded) await commandRequests.record(deps.pool, command);

  const pending = asyncWanted ? null : deps.replies.register(command.command_id);
  const produceStarted = performance.now();
  let appended = true;
  try {
    await failpoint('gateway.before-append');
    await deps.commandLog.appendCommand(command);
  } catch (err) {
    // JSON.parse takes any depth, JSON.stringify overflows near 5,000 levels: that is the client's body.
    const failure = err instanceof RangeError ? null : classifyKafkaError(err);
    if (failure?.code === 'kafka_unknown_outcome' && err instanceof KafkaPortError && err.outcome) {
      // Handed to the broker but not acknowledged: it may well be appended, so "retry" would risk
      // applying it twice. The client gets 202 with its command id. If the producer finally gives
      // up, the gateway appends it again until the broker takes it (a copy in the log is harmless:
      // the projector's claim applies a command once, D4); only if that fails for the whole
      // resend window does its result say 503, which GET /api/commands/{id} tells the client.
      log.warn({ failure }, 'append outcome unknown: answered 202');
      appended = false;
      err.outcome.catch(() => void resendUntilAppended(deps, command, log));
    } else {
      pending?.cancel();
      // Not appended: the client is told to retry, so the row must not say "pending" for ever. Its id
      // was never given out; if the delete fails too, retention removes it.
      void commandRequests.forget(deps.pool, command.command_id).catch(() => {});
      // The key is free again (a retry is processed anew); if the delete fails, the lease lapses.
      if (scope) await requestKeys.release(deps.pool, scope, command.command_id).catch(() => {});
      if (!failure) throw badRequest('invalid JSON body: nested too deeply', 'invalid_json');
      log.warn({ failure }, 'command not appended');
      if (failure.code === 'message_too_large')
        throw new ApiError(413, 'body_too_large', { ok: false, error: 'request too large for the command log' });
      throw unavailable('command log unavailable; retry later', 5);
    }
  } finally {
    deps.metrics.produce.observe((performance.now() - produceStarted) / 1000);
  }
  await failpoint('gateway.after-append-before-reply');

  const waitStarted = performance.now();
  const reply = pending && appended ? await pending.wait(deps.replyTimeoutMs) : null;
  if (!appended) pending?.cancel();
  if (reply?.parked) {
    deps.metrics.replyWait.observe({ outcome: 'parked' }, (performance.now() - waitStarted) / 1000);
    res.status(202).json(reply.body);
    return;
  }
  if (reply) {
    deps.metrics.replyWait.observe({ outcome: 'replied' }, (performance.now() - waitStarted) / 1000);
    sendReply(res, reply.status, reply.body);
    return;
  }
  deps.metrics.replyWait.observe({ outcome: 'async' }, (performance.now() - waitStarted) / 1000);
  // A retry of this key answers this 202 again (or the result, once known), not 409.
  if (scope)
    await requestKeys
      .markAnswered(deps.pool, scope, command.command_id)
      .catch((err: unknown) => log.warn({ err }, 'could not record the 202 for its idempotency key'));
  if (asyncWanted) res.set('Preference-Applied', 'respond-async');
  res.status(202).json(accepted(command.command_id));
}

// --- Dry runs (D22): the same request answered without writing ---

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
