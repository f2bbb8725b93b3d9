import type { OutboxEvent, Reply } from '@ingest/domain';

/** What projecting one command yields besides its rows: the caller's reply and the outbox events. */
export interface Projection {
  reply: Reply;
  events: OutboxEvent[];
}
