// Generated from schemas/commands/order-lines-upsert.json by scripts/gen-types.ts. Do not edit.

export interface OrderLinesUpsertPayload {
  /**
   * The rows as received; each is checked by the decider (D20)
   */
  rows: unknown[];
  dry_run: boolean;
  change_source: string;
  ingest_run_id: string | null;
  idempotency_key: string | null;
  changed_by_user_id: string | null;
  /**
   * How the decider treats a row field the spec does not define: reject the row with code unknown_field (D27, set by every gateway since D27), or ignore it (commands appended before D27, which carry no value: replays project them as they were)
   */
  unknown_fields?: 'reject' | 'ignore';
  /**
   * Problems the gateway found in rows when it received them (a number JSON parsing would round, a time outside the business range). Each rejects its row and is listed with the decider's own; commands appended before carry none, so replays project them as they were (D3, D26)
   */
  row_problems?: {
    row_index: number;
    field: string;
    code: string;
    message: string;
  }[];
}
