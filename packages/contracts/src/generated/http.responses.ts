// Generated from schemas/http/responses.json by scripts/gen-types.ts. Do not edit.

/**
 * Response bodies of the HTTP API: what the deciders and the gateway answer. Open to added fields: a client ignores a field it does not know.
 */
export interface HttpResponses {
  [k: string]: unknown | undefined;
}
