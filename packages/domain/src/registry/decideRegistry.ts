import type { ExternalLocationRef, RegisterChannelsPayload, RegisterLocationsPayload } from '@ingest/contracts/types';
import type { CommandMeta, Reply } from '../commandMeta.ts';

/** An external identifier of a location (schemas/http/inventory-common.json). */
export type LocationIdentifier = ExternalLocationRef;

export interface RegisterLocationsCommand extends CommandMeta {
  kind: 'locations.register';
  /** location_id is always set: chosen by the gateway when the client omitted it (D3, D14). */
  payload: RegisterLocationsPayload;
}

export interface RegisterChannelsCommand extends CommandMeta {
  kind: 'channels.register';
  payload: RegisterChannelsPayload;
}

export interface RegistryRow {
  id: string;
  shop: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface RegistryPlan {
  rows: RegistryRow[];
  /** Locations only: the full identifier set of each registered location (replaces the stored one). */
  identifiers: Array<{ location_id: string; shop: string } & LocationIdentifier>;
  reply: Reply;
}

/** Stored owner shop and created_at of the ids the command names. */
export type RegistryState = ReadonlyMap<string, { shop: string; created_at: string }>;

function foreignId(state: RegistryState, shop: string, ids: string[]): string | undefined {
  return ids.find((id) => {
    const owner = state.get(id);
    return owner !== undefined && owner.shop !== shop;
  });
}

function refuse(what: string, id: string): RegistryPlan {
  return {
    rows: [],
    identifiers: [],
    reply: { status: 422, body: { ok: false, error_kind: 'invalid_payload', error: `${what} ${id} belongs to another shop` } },
  };
}

/** D14: registering a location again (same id) renames it and replaces its identifiers. */
export function decideRegisterLocations(state: RegistryState, c: RegisterLocationsCommand): RegistryPlan {
  const foreign = foreignId(
    state,
    c.shop,
    c.payload.locations.map((l) => l.location_id),
  );
  if (foreign) return refuse('location_id', foreign);
  const final = new Map(c.payload.locations.map((l) => [l.location_id, l]));
  const identifiers = [...final.values()].flatMap((l) => {
    const seen = new Set<string>();
    return l.identifiers
      .filter((i) => {
        const k = `${i.identifier_type}\0${i.identifier_value}`;
        return seen.has(k) ? false : (seen.add(k), true);
      })
      .map((i) => ({ location_id: l.location_id, shop: c.shop, identifier_type: i.identifier_type, identifier_value: i.identifier_value }));
  });
  return {
    rows: [...final.values()].map((l) => row(state, c, l.location_id, l.name)),
    identifiers,
    reply: {
      status: 200,
      body: {
        ok: true,
        shop: c.shop,
        locations: c.payload.locations.map((l) => ({
          location_id: l.location_id,
          name: l.name,
          identifiers: identifiers
            .filter((i) => i.location_id === l.location_id)
            .map((i) => ({ identifier_type: i.identifier_type, identifier_value: i.identifier_value })),
        })),
      },
    },
  };
}

export function decideRegisterChannels(state: RegistryState, c: RegisterChannelsCommand): RegistryPlan {
  const foreign = foreignId(
    state,
    c.shop,
    c.payload.channels.map((ch) => ch.channel_id),
  );
  if (foreign) return refuse('channel_id', foreign);
  const final = new Map(c.payload.channels.map((ch) => [ch.channel_id, ch]));
  return {
    rows: [...final.values()].map((ch) => row(state, c, ch.channel_id, ch.name)),
    identifiers: [],
    reply: {
      status: 200,
      body: { ok: true, shop: c.shop, channels: c.payload.channels.map((ch) => ({ channel_id: ch.channel_id, name: ch.name })) },
    },
  };
}

function row(state: RegistryState, c: CommandMeta, id: string, name: string): RegistryRow {
  return { id, shop: c.shop, name, created_at: state.get(id)?.created_at ?? c.received_at, updated_at: c.received_at };
}
