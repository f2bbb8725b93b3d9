/**
 * The error catalog's codes (docs/api.md#error-codes): every error answer of the API names one in the
 * `X-Error-Code` header, so a client branches on a stable word rather than on a message meant for
 * people. The body keeps the spec's shape (`{ ok: false, error }`, `error_kind` for 422s, the text
 * `unauthorized` for 401): the code is beside it, not in it. A 422 from a decider carries its
 * `error_kind` as its code. New codes may be added; a code is never renamed or reused.
 */
export const ERROR_CODE_HEADER = 'X-Error-Code';

export const ERROR_CODES = {
  unauthorized: {
    status: 401,
    meaning:
      'The x-ingest-secret (or x-cron-secret) header is missing or is not one of the configured secrets (D9), or the `Authorization: Bearer` key is missing, unknown, expired or revoked (D28); the answer carries `WWW-Authenticate: Bearer`.',
  },
  forbidden_shop: {
    status: 403,
    meaning: 'The per-shop key names another shop than its own, in the body `shop` or the `x-shop` header (D28).',
  },
  missing_scope: { status: 403, meaning: 'The per-shop key lacks the scope the endpoint requires; the error names it (D28).' },
  platform_only: {
    status: 403,
    meaning: 'A per-shop key on an endpoint only the platform credential may use: the daily snapshot and the keys endpoints (D28).',
  },
  not_configured: {
    status: 503,
    meaning: 'INGEST_SECRET (or CRON_SECRET, or for the keys endpoints API_KEY_PEPPER) is not set on this gateway: the endpoint is closed.',
  },
  invalid_json: { status: 400, meaning: 'The body is not JSON, not a JSON object, or nested too deeply.' },
  invalid_request: {
    status: 400,
    meaning:
      "The body does not match the endpoint's schema (a required field missing, a wrong type, an unknown field, D27); `error` names the field.",
  },
  invalid_header: {
    status: 400,
    meaning:
      'A header or query parameter is malformed: x-shop, Idempotency-Key, dry_run, or those of the operator API (shop, status, limit, cursor).',
  },
  malformed_url: { status: 400, meaning: 'The URL cannot be decoded.' },
  invalid_compressed_body: { status: 400, meaning: 'Content-Encoding says the body is compressed, and it does not decompress.' },
  request_aborted: { status: 400, meaning: 'The client closed the request before its body arrived.' },
  bad_request: { status: 400, meaning: 'The HTTP request itself is malformed (refused by the HTTP parser); the connection is closed.' },
  not_found: { status: 404, meaning: 'No such route, command, schema or documentation file.' },
  method_not_allowed: {
    status: 405,
    meaning: 'The path exists but does not answer this method; the `Allow` header lists the methods it does (RFC 9110 §15.5.6).',
  },
  body_timeout: { status: 408, meaning: 'The body did not arrive within BODY_TIMEOUT; the connection is closed.' },
  idempotency_key_in_flight: {
    status: 409,
    meaning: 'A request with this Idempotency-Key is still being answered; retry after Retry-After.',
  },
  expired: { status: 410, meaning: "The command's result was pruned after RESULT_RETENTION." },
  removed: { status: 410, meaning: 'The endpoint was removed.' },
  body_too_large: {
    status: 413,
    meaning:
      "The body is over BODY_LIMIT_BYTES (D11), over one connection's share of the in-flight budget, or too large for one command log record.",
  },
  unsupported_encoding: { status: 415, meaning: 'The Content-Encoding or charset is not supported.' },
  invalid_payload: {
    status: 422,
    meaning: 'The request is well-formed but refused by a rule of the spec (`error_kind: invalid_payload`).',
  },
  location_unresolved: { status: 422, meaning: 'A location external identifier maps to no location (`error_kind: location_unresolved`).' },
  location_ambiguous: {
    status: 422,
    meaning: 'A location external identifier maps to several locations (`error_kind: location_ambiguous`).',
  },
  idempotency_key_reused: { status: 422, meaning: 'The Idempotency-Key was used before for a different request.' },
  skipped: {
    status: 422,
    meaning: 'An operator skipped this parked command (`npm run parked -- skip`, or the operator API); it was never applied.',
  },
  client_error: { status: 400, meaning: 'Another 4xx of the HTTP stack (status as answered).' },
  too_many_requests: {
    status: 429,
    meaning: "The gateway's in-flight budget or the projection backlog is full (D13); retry after Retry-After.",
  },
  shop_over_budget: {
    status: 429,
    meaning: 'This shop is over its own budget (requests, bytes or lines per second); other shops are served; retry after Retry-After.',
  },
  dependency_unavailable: {
    status: 503,
    meaning: 'PostgreSQL or Kafka is unreachable, or a dry run timed out; nothing was accepted; retry after Retry-After.',
  },
  internal_error: { status: 500, meaning: 'A fault of the gateway; the detail is in its log.' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
