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

/**
 * Where a newest-first keyset page resumes: the last row's time, as PostgreSQL's microseconds in
 * UTC text (a JavaScript Date would round them off and skip or repeat rows), and its command id.
 */
export interface TimePageKey {
  at: string;
  command_id: string;
}

/** A timestamptz column as TimePageKey's `at` text. */
export const PAGE_TIME = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
