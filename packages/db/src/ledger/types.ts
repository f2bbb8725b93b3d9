/** An `agent_runtime` table: where it is and its primary key (migrations/). */
export interface LedgerTable {
  schema: 'agent_runtime';
  name: string;
  key: readonly string[];
}

/** `schema.name`, as statements that name the live table spell it. */
export const qualified = (t: LedgerTable): string => `${t.schema}.${t.name}`;

/** Where a command was read from the command log. */
export interface CommandPosition {
  topic: string;
  partition: number;
  offset: string;
}

/** A command as the bookkeeping tables record it. */
export interface CommandRef {
  command_id: string;
  shop: string;
  kind: string;
}

export interface ReceivedCommand extends CommandRef {
  received_at: string;
}

/** A command's answer (D6): an HTTP status and the body, stored as `json` so its key order is kept. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}
