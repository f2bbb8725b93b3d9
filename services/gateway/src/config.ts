export interface GatewayConfig {
  /** Accepted x-ingest-secret values (comma-separated setting, D9); empty = not configured. */
  ingestSecrets: string[];
  /** Accepted x-cron-secret values (D8, D9). */
  cronSecrets: string[];
  /** PLATFORM_SECRETS_FOR_RETAILERS (D28): false refuses the shared secrets on the retailer endpoints. */
  platformSecretsForRetailers: boolean;
  /** How long a request waits for its projector result before answering 202 (D6). */
  replyTimeoutMs: number;
  /** Largest request body (D11: default 32 MiB, more -> 413). */
  bodyLimitBytes: number;
  /** Body bytes received by requests in flight before answering 429 (D13); one connection holds at most a quarter. */
  maxInflightBytes: number;
  /** How long a request body may take to arrive before it is cut with 408 (BODY_TIMEOUT). */
  bodyTimeoutMs: number;
  /** Commands waiting for the projector before answering 429 (D13). */
  maxConsumerLag: number;
  /** IANA zone of the business day (D16: daily snapshot dates). */
  businessTimezone: string;
  /** How long results are kept (RESULT_RETENTION): older ids answer 410 `expired` (docs/operations.md#retention). */
  resultRetentionMs: number;
  /** An accepted command whose append failed is appended again for this long (10 min). */
  resendWindowMs: number;
  /** Per-shop budgets of this gateway instance (docs/api.md#fair-admission-per-shop): 429 for that shop only. */
  shopMaxInflightBytes: number;
  shopMaxInflightRequests: number;
  shopRateLinesPerS: number;
  shopBurstLines: number;
  /** How long the command log's end offsets are reused by GET /api/commands/{id} (POSITION_CACHE). */
  positionCacheMs: number;
  /** How long an Idempotency-Key header's answer is kept (IDEMPOTENCY_KEY_TTL). */
  idempotencyKeyTtlMs: number;
}

export const DEFAULT_GATEWAY_CONFIG: Omit<GatewayConfig, 'ingestSecrets' | 'cronSecrets'> = {
  replyTimeoutMs: 15000,
  bodyLimitBytes: 32 * 1024 * 1024,
  maxInflightBytes: 512 * 1024 * 1024,
  bodyTimeoutMs: 60_000,
  maxConsumerLag: 100_000,
  businessTimezone: 'Asia/Tokyo',
  resultRetentionMs: 7 * 86_400_000,
  resendWindowMs: 10 * 60_000,
  // docs/api.md#fair-admission-per-shop: the defaults never refuse what one shop alone
  // could send before (no behaviour change without contention): a shop may hold half of the global
  // in-flight bytes and 256 requests, so one shop can never take the whole budget from the others;
  // the lines/s budget is off (0) unless an operator sets a quota per shop (bench B7 runs with one).
  shopMaxInflightBytes: 256 * 1024 * 1024,
  shopMaxInflightRequests: 256,
  shopRateLinesPerS: 0,
  shopBurstLines: 50_000,
  positionCacheMs: 1000,
  idempotencyKeyTtlMs: 86_400_000,
  platformSecretsForRetailers: true,
};
