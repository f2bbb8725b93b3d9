import type { Response } from 'express';
import { commandResults, type Listener, type Pool } from '@ingest/db';
import type { Logger } from '@ingest/runtime';
import { ERROR_CODE_HEADER, replyErrorCode } from '../errors/catalog.ts';

export interface StoredReply {
  status: number;
  body: Record<string, unknown>;
  shop: string;
  /** The command is parked (docs/operations.md#parked-commands): accepted and kept, waiting for an operator. */
  parked: boolean;
}

/** Sends a decider's or a stored reply as JSON, with its X-Error-Code when it is an error. */
export function sendReply(res: Response, status: number, body: Record<string, unknown>): void {
  const code = replyErrorCode(status, body);
  if (code) res.set(ERROR_CODE_HEADER, code);
  res.status(status).json(body);
}

export interface ReplyWaiter {
  /** Register before appending the command, so no result can slip past. */
  register(commandId: string): { wait(timeoutMs: number): Promise<StoredReply | null>; cancel(): void };
  close(): Promise<void>;
}

/**
 * The stored answers for these commands: the projector's result, or for a parked command its
 * parked state (202, since it is accepted and will be applied or skipped by an operator).
 */
export async function fetchReplies(pool: Pool, ids: string[]): Promise<Map<string, StoredReply>> {
  const rows = await commandResults.answers(pool, ids);
  return new Map(rows.map((r) => [r.command_id, { status: r.status_code, body: r.body, shop: r.shop, parked: r.parked }]));
}

export const REPLY_CHANNEL = commandResults.CHANNEL;

/**
 * Waits for projector results (D6). Every gateway instance LISTENs on `command_results` through
 * the process's one listener; the projector NOTIFYs on commit and each instance wakes only its own
 * waiters. After every (re)connect, and on a slow sweep, pending ids are read again, so a
 * notification lost while the connection was down still resolves.
 */
export function createReplyWaiter(opts: { pool: Pool; listener: Listener; log: Logger; sweepMs?: number }): ReplyWaiter {
  const { pool, log } = opts;
  const waiting = new Map<string, (r: StoredReply | null) => void>();

  const resolveIds = async (ids: string[]): Promise<void> => {
    const found = await fetchReplies(pool, ids);
    for (const [id, reply] of found) {
      waiting.get(id)?.(reply);
      waiting.delete(id);
    }
  };
  const sweep = (): void => {
    if (waiting.size) void resolveIds([...waiting.keys()]).catch((err: unknown) => log.debug({ err }, 'reply sweep failed'));
  };

  const unsubscribe = opts.listener.subscribe(REPLY_CHANNEL, (id) => {
    if (waiting.has(id)) void resolveIds([id]).catch((err: unknown) => log.warn({ err }, 'reply fetch failed'));
  });
  const unhook = opts.listener.onConnect(sweep);
  const timer = setInterval(sweep, opts.sweepMs ?? 2000);
  timer.unref();

  return {
    register(commandId) {
      let resolveFn: (r: StoredReply | null) => void = () => {};
      const result = new Promise<StoredReply | null>((resolve) => (resolveFn = resolve));
      waiting.set(commandId, (r) => resolveFn(r));
      return {
        wait: async (timeoutMs) => {
          const t = setTimeout(() => resolveFn(null), timeoutMs);
          const r = await result;
          clearTimeout(t);
          waiting.delete(commandId);
          return r;
        },
        cancel: () => {
          waiting.delete(commandId);
          resolveFn(null);
        },
      };
    },
    close: async () => {
      clearInterval(timer);
      unsubscribe();
      unhook();
      // Callers still waiting get 202 with their command id: the command is in the log and will be applied.
      for (const resolve of waiting.values()) resolve(null);
      waiting.clear();
    },
  };
}
