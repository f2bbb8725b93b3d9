import type { PoolClient } from '@ingest/db';
import {
  decideRegisterChannels,
  decideRegisterLocations,
  type RegisterChannelsCommand,
  type RegisterLocationsCommand,
  type RegistryPlan,
  type RegistryState,
} from '@ingest/domain';
import type { Projection } from '../projection.ts';

async function loadOwners(tx: PoolClient, table: 'locations' | 'channels', idColumn: string, ids: string[]): Promise<RegistryState> {
  const { rows } = await tx.query<{ id: string; shop: string; created_at: Date }>(
    `SELECT ${idColumn} AS id, shop, created_at FROM ${table} WHERE ${idColumn} = ANY($1::uuid[]) FOR UPDATE`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, { shop: r.shop, created_at: r.created_at.toISOString() }]));
}

/** One statement for all the registry rows of a command (locations or channels). */
async function upsertRegistryRows(
  tx: PoolClient,
  table: 'locations' | 'channels',
  idColumn: string,
  plan: RegistryPlan,
  commandId: string,
): Promise<void> {
  await tx.query(
    `INSERT INTO ${table} (${idColumn}, shop, name, created_at, updated_at, last_command_id)
     SELECT id, shop, name, created_at, updated_at, $2::uuid
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, shop text, name text, created_at timestamptz, updated_at timestamptz)
     ON CONFLICT (${idColumn}) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at, last_command_id = EXCLUDED.last_command_id`,
    [JSON.stringify(plan.rows), commandId],
  );
}

export async function projectRegisterLocations(tx: PoolClient, c: RegisterLocationsCommand): Promise<Projection> {
  const state = await loadOwners(
    tx,
    'locations',
    'location_id',
    c.payload.locations.map((l) => l.location_id),
  );
  const plan = decideRegisterLocations(state, c);
  if (plan.rows.length) {
    await upsertRegistryRows(tx, 'locations', 'location_id', plan, c.command_id);
    // The identifier set of a registered location is replaced as a whole.
    await tx.query('DELETE FROM location_identifiers WHERE location_id = ANY($1::uuid[])', [plan.rows.map((r) => r.id)]);
    await tx.query(
      `INSERT INTO location_identifiers (location_id, shop, identifier_type, identifier_value)
       SELECT location_id, shop, identifier_type, identifier_value
         FROM jsonb_to_recordset($1::jsonb) AS x(location_id uuid, shop text, identifier_type text, identifier_value text)`,
      [JSON.stringify(plan.identifiers)],
    );
  }
  return { reply: plan.reply, events: [] };
}

export async function projectRegisterChannels(tx: PoolClient, c: RegisterChannelsCommand): Promise<Projection> {
  const state = await loadOwners(
    tx,
    'channels',
    'channel_id',
    c.payload.channels.map((ch) => ch.channel_id),
  );
  const plan = decideRegisterChannels(state, c);
  if (plan.rows.length) await upsertRegistryRows(tx, 'channels', 'channel_id', plan, c.command_id);
  return { reply: plan.reply, events: [] };
}
