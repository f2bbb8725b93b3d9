// Generated from schemas/commands/channels-register.json by scripts/gen-types.ts. Do not edit.

export interface RegisterChannelsPayload {
  channels: {
    channel_id: string;
    name: string;
  }[];
}
