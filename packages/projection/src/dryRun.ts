import type { SchemaRegistry } from '@ingest/contracts';
import { classifyDbError, lockShop, parkedCommands, type Pool, type PoolClient } from '@ingest/db';
import type { OutboxEvent, Reply } from '@ingest/domain';
import { createCommandDecoder } from './decodeCommand.ts';
import { projectCommand } from './applyCommand.ts';

/**
 * What a command would do if it were applied now (D22). `projected`: the reply and the
 * outbox events of the real projection. `parked`: the live projector would park it, behind the
 * shop's open parked command or for its own failure. `as_of` is the instant the state
 * was read: after the shop lock, so no write of that shop lands between it and the answer.
 */
export type DryRunOutcome =
  | { outcome: 'projected'; reply: Reply; events: OutboxEvent[]; as_of: string }
  | { outcome: 'parked'; error: string; waiting_behind: string | null; as_of: string };

export interface DryRunner {
  /** Projects a command message (the JSON the gateway would append) and rolls everything back. */
  run(message: string): Promise<DryRunOutcome>;
}

export interface DryRunnerDeps {
  /** A pool on the live schemas with the service role, as the projector's. */
  pool: Pool;
  schemas: SchemaRegistry;
  /** Bound of each statement, the shop lock's wait included (DRY_RUN_STATEMENT_TIMEOUT). */
  statementTimeoutMs: number;
}

/**
 * The projector's real projection (projectCommand, the one applyCommand runs) inside a READ
 * COMMITTED transaction that is always rolled back: no row, claim, stored reply, outbox row or
 * NOTIFY survives it, and the answer equals the live one by construction. The message is decoded
 * as the live consumer decodes it from the log.
 */
export function createDryRunner(deps: DryRunnerDeps): DryRunner {
  const decode = createCommandDecoder(deps.schemas);
  const timeout = Math.max(1, Math.trunc(deps.statementTimeoutMs));
  return {
    run: async (message) => {
      const decoded = decode(Buffer.from(message, 'utf8'));
      const client = await deps.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
        await client.query(`SET LOCAL statement_timeout = ${timeout}`);
        if (!decoded.ok) return { outcome: 'parked', error: decoded.error, waiting_behind: null, as_of: await now(client) };
        const c = decoded.command;
        await lockShop(client, c.shop);
        const asOf = await now(client);
        const behind = await parkedCommands.firstOpen(client, c.shop);
        if (behind) return { outcome: 'parked', error: `waiting behind parked command ${behind}`, waiting_behind: behind, as_of: asOf };
        try {
          const { reply, events } = await projectCommand(client, c);
          return { outcome: 'projected', reply, events, as_of: asOf };
        } catch (err) {
          // A failure a retry will not fix parks the live command; anything else is the caller's 503.
          if (classifyDbError(err) !== 'permanent') throw err;
          return { outcome: 'parked', error: errorText(err), waiting_behind: null, as_of: asOf };
        }
      } finally {
        await client.query('ROLLBACK').catch((err: unknown) => {
          // A client that cannot even roll back has lost its connection: do not hand it out again.
          broken = err instanceof Error ? err : new Error(String(err));
        });
        client.release(broken);
      }
    },
  };
}

async function now(client: PoolClient): Promise<string> {
  const { rows } = await client.query<{ at: Date }>('SELECT clock_timestamp() AS at');
  return (rows[0] as { at: Date }).at.toISOString();
}

/** As the live projector records a parked command's error. */
function errorText(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
}
