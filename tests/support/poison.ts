import { v7 as uuidv7 } from 'uuid';
import { createCommandLog, type MessageSink } from '@ingest/kafka';

/**
 * Appends a poison command for `shop` straight to the command log: well-formed (the gateway would
 * refuse its date first), but PostgreSQL cannot store its `snapshot_date`, so the projector fails it
 * the same way every time and parks it (docs/operations.md "Parked commands"). Returns its id.
 */
export async function appendPoison(sink: MessageSink, topic: string, shop: string): Promise<string> {
  const id = uuidv7();
  await createCommandLog(sink, topic).appendCommand({
    command_id: id,
    kind: 'inventory.daily_snapshot',
    shop,
    received_at: new Date().toISOString(),
    source: { endpoint: 'test' },
    payload: { snapshot_date: '0000-01-01' },
  });
  return id;
}
