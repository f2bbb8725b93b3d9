// Generated from schemas/http/admin-parked-skip.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/admin/parked/{command_id}/skip (docs/api.md "Operator API"): never apply this parked command. At the head of its shop's queue, the commands behind it are then applied in log order, unless `hold`.
 */
export interface SkipParkedRequest {
  /**
   * Why it is skipped (recorded with the action).
   */
  reason: string;
  /**
   * Keep the commands behind it parked (default false: the shop resumes).
   */
  hold?: boolean;
}
