// Generated from schemas/commands/locations-register.json by scripts/gen-types.ts. Do not edit.

export interface RegisterLocationsPayload {
  locations: {
    location_id: string;
    name: string;
    identifiers: ExternalLocationRef[];
  }[];
}
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
