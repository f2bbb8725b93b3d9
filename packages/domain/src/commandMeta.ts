// The base of every command and every decider's answer. Its own module so that the per-kind command
// types (inventory/, orders/, registry/) and the Command union in commands.ts import it without a
// cycle (.dependency-cruiser.cjs forbids them).

import type { CommandEnvelope } from '@ingest/contracts/types';

/** D28: the actor of the shared secrets, the daily scheduler, and every command appended before D28. */
export const PLATFORM_ACTOR = 'platform';

/**
 * Fields every command carries (schemas/commands/envelope.json); decided by the gateway (D3). `actor`
 * is optional in the envelope, so that the log written before D28 replays unchanged, and always set
 * on a decoded command (PLATFORM_ACTOR when absent).
 */
export type CommandMeta = Pick<CommandEnvelope, 'command_id' | 'shop' | 'received_at' | 'source'> &
  Required<Pick<CommandEnvelope, 'actor'>>;

/** What a decider returns to the caller: an HTTP status and the spec's body (D6). */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
}
