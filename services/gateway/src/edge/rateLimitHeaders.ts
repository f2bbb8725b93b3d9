/**
 * A shop's admission budgets as the IETF RateLimit header fields say them
 * (draft-ietf-httpapi-ratelimit-headers: Structured Fields lists of policy items). Two policies:
 *
 *   "inflight": requests of the shop in flight at once (`qu="concurrency"`, a unit of the draft's
 *               registry), with `r` what is left once this request is counted;
 *   "lines":    the lines/s token bucket, when SHOP_RATE_LINES_PER_S sets one: `q` lines (the burst)
 *               refilled over `w` seconds; a line (product, inventory line, order row, location) is
 *               this service's own unit, so `qu="line"` says so instead of leaving the draft's default
 *               of requests, which would overstate the budget by the lines a request carries.
 *               `r` is what the shop has left (this gateway's leased lines plus what the cluster-wide
 *               bucket had at its last lease), `t` the seconds until it is full again.
 *
 * The bytes-in-flight budget has no unit in the draft (content-bytes counts bytes over a window, not
 * at once) and is not advertised; a 429 names it in its error.
 */
export interface RateLimitState {
  maxInflightRequests: number;
  inflight: number;
  lines: { ratePerS: number; burst: number; remaining: number } | null;
}

export function rateLimitPolicy(s: Pick<RateLimitState, 'maxInflightRequests' | 'lines'>): string {
  const inflight = `"inflight";q=${s.maxInflightRequests};qu="concurrency"`;
  if (!s.lines) return inflight;
  return `${inflight}, "lines";q=${Math.floor(s.lines.burst)};w=${Math.max(1, Math.ceil(s.lines.burst / s.lines.ratePerS))};qu="line"`;
}

export function rateLimit(s: RateLimitState): string {
  const inflight = `"inflight";r=${Math.max(0, s.maxInflightRequests - s.inflight)}`;
  if (!s.lines) return inflight;
  const remaining = Math.max(0, Math.min(s.lines.burst, Math.floor(s.lines.remaining)));
  const full = Math.max(0, Math.ceil((s.lines.burst - remaining) / s.lines.ratePerS));
  return `${inflight}, "lines";r=${remaining};t=${full}`;
}

/** Both fields, for an answer. */
export const rateLimitHeaders = (s: RateLimitState): Record<string, string> => ({
  'RateLimit-Policy': rateLimitPolicy(s),
  RateLimit: rateLimit(s),
});
