import type { ProductsUpsertPayload } from '@ingest/contracts/types';

/** Fields every command carries; decided by the gateway (D3). */
export interface CommandMeta {
  command_id: string;
  shop: string;
  received_at: string;
  source: { endpoint: string };
}

export interface ProductsUpsertCommand extends CommandMeta {
  kind: 'products.upsert';
  payload: ProductsUpsertPayload;
}

export type Command = ProductsUpsertCommand;
export type CommandKind = Command['kind'];

/** What a decider returns to the caller: an HTTP status and the spec's body (D6). */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
}
