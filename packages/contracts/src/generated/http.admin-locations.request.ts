// Generated from schemas/http/admin-locations.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/admin/locations (D14).
 */
export interface RegisterLocationsRequest {
  /**
   * Shop domain
   */
  shop: string;
  /**
   * @minItems 1
   * @maxItems 1000
   */
  locations: [LocationInput, ...LocationInput[]];
}
export interface LocationInput {
  location_id?: string;
  name: string;
  /**
   * @maxItems 100
   */
  identifiers?: ExternalLocationRef[];
}
/**
 * An external identifier of a location. At most 200 characters each: (shop, type, value) is indexed and an index row must fit.
 */
export interface ExternalLocationRef {
  identifier_type: string;
  identifier_value: string;
}
