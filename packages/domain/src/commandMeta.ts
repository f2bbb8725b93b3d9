// The base of every command and every decider's answer. Its own module so that the per-kind command
// types (inventory/, orders/, registry/) and the Command union in commands.ts import it without a
// cycle (issue 17).

/** Fields every command carries; decided by the gateway (D3). */
export interface CommandMeta {
  command_id: string;
  shop: string;
  received_at: string;
  source: { endpoint: string };
}

/** What a decider returns to the caller: an HTTP status and the spec's body (D6). */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
}
