import { SETTINGS } from '@ingest/runtime';

/** Topic names when their settings are not given (D18 names the event topics): the catalog's defaults. */
export const DEFAULT_TOPICS_NAMES = {
  commands: SETTINGS.COMMANDS_TOPIC.default,
  audit: SETTINGS.AUDIT_TOPIC.default,
  stockZero: SETTINGS.STOCK_ZERO_TOPIC.default,
  stockRestored: SETTINGS.STOCK_RESTORED_TOPIC.default,
} as const;
