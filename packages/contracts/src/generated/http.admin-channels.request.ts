// Generated from schemas/http/admin-channels.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/admin/channels (D14).
 */
export interface RegisterChannelsRequest {
  /**
   * Shop domain
   */
  shop: string;
  /**
   * @minItems 1
   * @maxItems 1000
   */
  channels: [ChannelInput, ...ChannelInput[]];
}
export interface ChannelInput {
  channel_id?: string;
  name: string;
}
