// Generated from schemas/http/admin-daily-snapshot.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/admin/daily-snapshot: run the D16 daily copy for one shop now (operators, backfills). snapshot_date defaults to the current business date.
 */
export interface DailySnapshotRequest {
  /**
   * Shop domain
   */
  shop: string;
  snapshot_date?: string;
}
