export interface GatewayConfig {
  /** Accepted x-ingest-secret values (comma-separated setting, D9); empty = not configured. */
  ingestSecrets: string[];
  /** Accepted x-cron-secret values (D8, D9). */
  cronSecrets: string[];
  /** How long a request waits for its projector result before answering 202 (D6). */
  replyTimeoutMs: number;
  /** Largest request body (D11: default 32 MiB, more -> 413). */
  bodyLimitBytes: number;
  /** Body bytes received by requests in flight before answering 429 (D13); one connection holds at most a quarter. */
  maxInflightBytes: number;
  /** How long a request body may take to arrive before it is cut with 408 (BODY_TIMEOUT, issue 12). */
  bodyTimeoutMs: number;
  /** Commands waiting for the projector before answering 429 (D13). */
  maxConsumerLag: number;
  /** IANA zone of the business day (D16: daily snapshot dates). */
  businessTimezone: string;
  /** How long results are kept (RESULT_RETENTION): older ids answer 410 `expired` (issue 11). */
  resultRetentionMs: number;
  /** An accepted command whose append failed is appended again for this long (10 min). */
  resendWindowMs: number;
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
};
