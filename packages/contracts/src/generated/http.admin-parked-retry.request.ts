// Generated from schemas/http/admin-parked-retry.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/admin/parked/{command_id}/retry (docs/api.md "Operator API"): apply the shop's parked commands in log order. The body is optional.
 */
export interface RetryParkedRequest {
  /**
   * Why (recorded with the action).
   */
  reason?: string;
}
