// Generated from schemas/events/audit-record.json by scripts/gen-types.ts. Do not edit.

/**
 * An update-log record published on ingest.audit.v1 by the outbox relay (D5). key = shop.
 */
export interface AuditRecord {
  event_id: string;
  event_type: 'audit_record';
  schema_version: 1;
  shop: string;
  log_table: 'product_update_logs' | 'inventory_update_logs' | 'order_line_master_update_logs';
  log_id: string;
  change_type: string;
  command_id: string;
  occurred_at: string;
  /**
   * The log row as stored
   */
  record: {};
}
