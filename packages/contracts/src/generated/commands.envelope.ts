// Generated from schemas/commands/envelope.json by scripts/gen-types.ts. Do not edit.

/**
 * A command on the commands topic (key = shop, D2). Everything time- or random-dependent is decided by the gateway and carried here (D3).
 */
export interface CommandEnvelope {
  /**
   * The version of the command schemas the command was written in: this envelope and its kind's payload as released in schemas/commands/v<v>/. The gateway writes the current one; a command without it was appended before commands carried a version and is version 1 (docs/replay.md#command-versions).
   */
  v?: number;
  /**
   * UUIDv7 chosen by the gateway
   */
  command_id: string;
  kind:
    | 'products.upsert'
    | 'locations.register'
    | 'channels.register'
    | 'inventory.snapshot'
    | 'inventory.available'
    | 'inventory.levels'
    | 'inventory.daily_snapshot'
    | 'order_lines.upsert';
  shop: string;
  received_at: string;
  source: {
    /**
     * The HTTP route that accepted the command
     */
    endpoint: string;
  };
  payload: {};
  /**
   * Inventory commands: the request source_system
   */
  source_system?: string;
  /**
   * Inventory commands: the request value or the gateway receive time (D3)
   */
  inventory_as_of?: string;
  idempotency_key?: string;
  /**
   * sha256 of the request payload, for the D19 reuse warning
   */
  payload_hash?: string;
  /**
   * Who wrote the command (D28): the per-shop API key's id, or platform for the shared secrets and the daily scheduler. Optional: a command without it (appended before D28) is applied as platform.
   */
  actor?: string;
}
