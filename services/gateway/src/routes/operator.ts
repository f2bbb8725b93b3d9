import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import type { RetryParkedRequest, SkipParkedRequest } from '@ingest/contracts/types';
import { commandRequests, commandResults, parkedCommands, type Pool } from '@ingest/db';
import { isUuid } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { NotOpenParked, retryParked, skipParked, type ActionResult, type ParkedDeps } from '@ingest/projection';
import { forbiddenShop, keyShopOf, principalOf, requireAccess, type AccessConfig } from '../edge/auth.ts';
import { parseJsonObject } from '../edge/body.ts';
import { bodyDeadline, declaredSizeWithin } from '../edge/intake.ts';
import { badRequest, notFound } from '../errors/catalog.ts';
import { encodeCursor, parseCommandListQuery, type CommandListQuery, type Cursor } from './operatorQuery.ts';

export interface OperatorRoutesDeps {
  pool: Pool;
  schemas: SchemaRegistry;
  /** Where a retried command's outbox rows and the actions' audit events go. */
  topics: TopicNames;
  access: AccessConfig;
  bodyTimeoutMs: number;
  now?: () => Date;
}

/** An operator's body is a reason and a flag: a few KiB at most, whatever BODY_LIMIT_BYTES allows the writes. */
const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The operator API (docs/api.md "Operator API"): the commands that need an operator (parked,
 * failed, pending), and the retry and skip of a parked command through the same code as the CLI
 * (@ingest/projection), each recorded with its actor and reason (agent_runtime.operator_actions,
 * and an audit event). The platform credential acts on every shop; a per-shop key with the
 * `admin` scope (D28) on its own shop only: another shop in `?shop=` is 403, another shop's command 404.
 */
export function operatorRoutes(deps: OperatorRoutesDeps): Router {
  const router = Router();
  const auth = requireAccess(deps.access, { platform: 'ingest', scope: 'admin', retailer: false });
  const retryBody = deps.schemas.validator<RetryParkedRequest>('http/admin-parked-retry.request.json');
  const skipBody = deps.schemas.validator<SkipParkedRequest>('http/admin-parked-skip.request.json');
  const body = [declaredSizeWithin(BODY_LIMIT_BYTES), bodyDeadline(deps.bodyTimeoutMs), ...parseJsonObject(BODY_LIMIT_BYTES)];
  const parked: ParkedDeps = { pool: deps.pool, schemas: deps.schemas, topics: deps.topics, ...(deps.now ? { now: deps.now } : {}) };

  router.get('/api/admin/commands', auth, async (req: Request, res: Response) => {
    // A key lists its own shop (D28): as if `?shop=` named it, so its cursors stay good.
    const keyShop = keyShopOf(res);
    if (keyShop !== null && req.query['shop'] !== undefined && req.query['shop'] !== keyShop) throw forbiddenShop();
    const q = parseCommandListQuery(keyShop === null ? req.query : { ...req.query, shop: keyShop });
    if (!q.ok) throw badRequest(q.error, 'invalid_header');
    const { commands, next } = await listCommands(deps.pool, q.value);
    res.json({ ok: true, status: q.value.status, shop: q.value.shop, commands, next_cursor: next ? encodeCursor(next) : null });
  });

  router.post('/api/admin/parked/:command_id/retry', auth, ...optional(body), async (req: Request, res: Response) => {
    const b = retryBody(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    await ownCommand(deps.pool, req, res);
    sendOutcome(res, await resolving(() => retryParked(parked, commandIdOf(req), { actor: actorOf(res), reason: b.value.reason ?? null })));
  });

  router.post('/api/admin/parked/:command_id/skip', auth, ...body, async (req: Request, res: Response) => {
    const b = skipBody(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    await ownCommand(deps.pool, req, res);
    const by = { actor: actorOf(res), reason: b.value.reason, hold: b.value.hold ?? false };
    sendOutcome(res, await resolving(() => skipParked(parked, commandIdOf(req), by)));
  });

  return router;
}

/** A uuid is case-insensitive (RFC 9562); stored ids are lower case. */
const commandIdOf = (req: Request): string => String(req.params['command_id']).toLowerCase();

/** Who acts: the key id (D28), or `platform` for the shared secret. */
const actorOf = (res: Response): string => principalOf(res).actor;

/** A key acts on its own shop's commands only; another shop's is 404, as one that is not parked (D28). */
async function ownCommand(pool: Pool, req: Request, res: Response): Promise<void> {
  const keyShop = keyShopOf(res);
  if (keyShop === null) return;
  const id = commandIdOf(req);
  if (!isUuid(id) || (await parkedCommands.shopOfOpen(pool, id)) !== keyShop) throw notFound('parked command not found');
}

/** A command that is not open-parked (never was, already resolved, not an id) is 404, as GET /api/commands/{id} answers. */
async function resolving(action: () => Promise<ActionResult>): Promise<ActionResult> {
  try {
    return await action();
  } catch (err) {
    if (err instanceof NotOpenParked) throw notFound('parked command not found');
    throw err;
  }
}

function sendOutcome(res: Response, r: ActionResult): void {
  res.json({ ok: true, ...r });
}

/** The body handlers, run only when a body was sent: without one, the body is `{}`. */
function optional(handlers: RequestHandler[]): RequestHandler[] {
  const hasBody = (req: Request): boolean =>
    req.headers['transfer-encoding'] !== undefined ||
    (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
  return [
    ...handlers.map(
      (h): RequestHandler =>
        (req, res, next) =>
          hasBody(req) ? h(req, res, next) : next(),
    ),
    (req, _res, next) => {
      if (!hasBody(req)) req.body = {};
      next();
    },
  ];
}

/** One page of the status asked for, and where the next one starts (null: this was the last). */
async function listCommands(pool: Pool, q: CommandListQuery): Promise<{ commands: object[]; next: Cursor | null }> {
  // One row more than asked tells whether there is a next page.
  const page = { shop: q.shop, limit: q.limit + 1 };
  if (q.status === 'parked') {
    const rows = await parkedCommands.openPage(pool, { ...page, after: q.after?.status === 'parked' ? q.after.key : null });
    const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
    return {
      commands: rows.slice(0, q.limit).map((r) => ({
        command_id: r.command_id,
        shop: r.shop,
        kind: r.kind,
        status: 'parked',
        error: r.error,
        position: { topic: r.kafka_topic, partition: r.kafka_partition, offset: r.kafka_offset },
        since: r.parked_at.toISOString(),
        waiting_behind: r.behind,
        attempts: r.attempts,
      })),
      next: last
        ? {
            status: 'parked',
            shop: q.shop,
            key: { shop: last.shop, kafka_topic: last.kafka_topic, kafka_partition: last.kafka_partition, kafka_offset: last.kafka_offset },
          }
        : null,
    };
  }
  const after = q.after && q.after.status !== 'parked' ? q.after.key : null;
  const rows =
    q.status === 'failed'
      ? (await commandResults.failedPage(pool, { ...page, after })).map((r) => ({
          command_id: r.command_id,
          shop: r.shop,
          kind: r.kind,
          status: 'failed',
          error: r.error,
          position: r.kafka_topic === null ? null : { topic: r.kafka_topic, partition: r.kafka_partition, offset: r.kafka_offset },
          since: r.at,
          http_status: r.status_code,
          error_kind: r.error_kind,
        }))
      : (await commandRequests.pendingPage(pool, { ...page, after })).map((r) => ({
          command_id: r.command_id,
          shop: r.shop,
          kind: r.kind,
          status: 'pending',
          error: null,
          position: null,
          since: r.at,
        }));
  const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
  return {
    commands: rows.slice(0, q.limit),
    next: last ? { status: q.status, shop: q.shop, key: { at: last.since, command_id: last.command_id } } : null,
  };
}
