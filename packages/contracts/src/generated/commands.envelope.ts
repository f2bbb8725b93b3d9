// Generated from schemas/commands/envelope.json by scripts/gen-types.ts. Do not edit.

/**
 * A command on the commands topic (key = shop, D2). Everything time- or random-dependent is decided by the gateway and carried here (D3).
 */
export interface CommandEnvelope {
  /**
   * UUIDv7 chosen by the gateway
   */
  command_id: string;
  kind: 'products.upsert';
  shop: string;
  received_at: string;
  source: {
    /**
     * The HTTP route that accepted the command
     */
    endpoint: string;
  };
  payload: {};
}
