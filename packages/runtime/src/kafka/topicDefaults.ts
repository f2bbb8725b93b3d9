/** Topic names (D18 names the event topics). Kept here so config needs no Kafka client. */
export const DEFAULT_TOPICS_NAMES = {
  commands: 'ingest.commands.v1',
  audit: 'ingest.audit.v1',
  stockZero: 'inventory.stock-zero.v1',
  stockRestored: 'inventory.stock-restored.v1',
} as const;
