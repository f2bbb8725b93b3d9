// Generated from schemas/commands/locations-register.json by scripts/gen-types.ts. Do not edit.

export interface RegisterLocationsPayload {
  locations: {
    location_id: string;
    name: string;
    identifiers: ExternalLocationRef[];
  }[];
}
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
