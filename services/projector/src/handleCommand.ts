import type { PoolClient } from '@ingest/db';
import type { Command, OutboxEvent, Reply } from '@ingest/domain';
import { projectProductsUpsert } from './products/projectProductsUpsert.ts';

export interface Projection {
  reply: Reply;
  events: OutboxEvent[];
}

/** Dispatches a claimed command to its projection; runs inside the command's transaction. */
export async function projectCommand(tx: PoolClient, command: Command): Promise<Projection> {
  const kind = command.kind;
  switch (kind) {
    case 'products.upsert':
      return projectProductsUpsert(tx, command);
    default: {
      const _exhaustive: never = kind;
      throw new Error(`unknown command kind ${String(_exhaustive)}`);
    }
  }
}
