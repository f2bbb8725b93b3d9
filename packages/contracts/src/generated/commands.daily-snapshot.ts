// Generated from schemas/commands/daily-snapshot.json by scripts/gen-types.ts. Do not edit.

export interface DailySnapshotPayload {
  snapshot_date: string;
}
