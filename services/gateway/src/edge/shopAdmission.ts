import type { Request, RequestHandler, Response } from 'express';
import { tooManyRequests, type ApiError } from '../errors/catalog.ts';

/**
 * The cluster-wide side of the lines/s budget: every gateway leases lines from one bucket per shop
 * (agent_runtime.shop_rate_buckets), so a shop's rate does not grow with the number of replicas.
 */
export interface SharedRateBuckets {
  /** Takes up to `want` lines from the shop's bucket: what was granted (0 when it is empty) and what is left there. */
  lease(shop: string, want: number): Promise<{ granted: number; left: number }>;
}

/** A shop's leased lines (or debt) are kept this long after its last request (a minute of quiet forgives one body of debt at most). */
const SHARED_IDLE_MS = 60_000;

/** A lease asks for about this long of the shop's rate (at least the request's own lines): one round trip per second of a busy shop's traffic. */
const LEASE_SECONDS = 1;

/** Per-shop budgets of one gateway instance (docs/api.md#fair-admission-per-shop). */
export interface ShopBudgets {
  /** Body bytes a shop's admitted requests may hold at once (a shop that holds nothing is always admitted). */
  maxInflightBytes: number;
  /** Requests of one shop admitted and not answered yet. */
  maxInflightRequests: number;
  /** Lines (items, rows) per second a shop's token bucket refills with; 0: no lines/s budget. */
  rateLinesPerS: number;
  /** The bucket's size: lines a shop may gather while idle (what it sends at once after a pause). */
  burstLines: number;
}

export type ShopAdmission = RequestHandler & {
  /** What a shop holds now (for tests and metrics); undefined for a shop that holds nothing. */
  held(shop: string): { bytes: number; requests: number } | undefined;
  /**
   * The refusal of a body not parsed yet, when its shop is certain from the raw bytes (the cron
   * route's x-shop header, or firstShop) and over budget; else null and the body is parsed. The same
   * decision the handler takes after parsing: a refused shop is refused here at a fraction of the cost.
   */
  refusalBeforeParsing(res: Response, raw: Buffer): ApiError | null;
  /** A shop was refused within the last second: refusals are going on (arms intake.ts's shedShop). */
  refusingLately(): boolean;
};

/** How long after a refusal the shop budgets count as refusing (intake.ts's shedShop reads bodies early meanwhile). */
const REFUSING_FOR_MS = 1000;

interface ShopState {
  bytes: number;
  requests: number;
  /** Lines the shop may still send: the local bucket, or with a shared one the lines leased and not spent (negative: debt). */
  tokens: number;
  /** When `tokens` was last brought up to date (ms, monotonic). */
  at: number;
  /** Shared bucket: what it had left at the last lease, until when it is known empty, and the lease in flight. */
  sharedLeft: number;
  emptyUntil: number;
  leasing: Promise<void> | null;
}

/** The x-shop header of the cron route (auth.ts), when there is one. */
function headerShop(locals: Record<string, unknown>): string | null {
  const fromHeader = locals['shop'];
  return typeof fromHeader === 'string' && fromHeader ? fromHeader : null;
}

/** The shop of a parsed request: the x-shop header of the cron route, else the body's `shop`. */
function shopOf(req: Request, locals: Record<string, unknown>): string | null {
  const fromHeader = headerShop(locals);
  if (fromHeader) return fromHeader;
  const body = req.body as Record<string, unknown> | undefined;
  const s = body?.['shop'];
  return typeof s === 'string' && s.trim() && s.length <= MAX_SHOP_LENGTH ? s : null;
}

/** What a request costs in lines: its largest top-level array (products, lines, rows, locations), at least 1. */
export function linesOf(body: unknown): number {
  let most = 0;
  if (body !== null && typeof body === 'object') for (const v of Object.values(body)) if (Array.isArray(v)) most = Math.max(most, v.length);
  return Math.max(1, most);
}

/**
 * Fair admission per shop: once the body names the shop and before anything is
 * recorded or appended, a shop over its own budget is answered 429 with Retry-After, whatever the
 * other shops do. Three budgets: requests in flight, body bytes in flight (both released when the
 * answer is sent or the connection closes: success, error, client abort, reply timeout alike), and
 * a token bucket of lines per second: a shop is admitted while its bucket is not empty, and what it
 * sends is taken from the bucket, into debt when the body is larger than what is left (so the
 * decision needs no line count, and a refusal can be taken on the raw bytes: refusalBeforeParsing,
 * which body.ts asks before JSON.parse, so a shop sending far past its budget costs little more than
 * reading its bytes). The global in-flight bound (D13, intake.ts) still runs before this one, as
 * the last line for everyone.
 *
 * The requests and bytes in flight are budgets of each gateway instance: they protect its own memory
 * and event loop. The lines/s budget is the shop's across the cluster when `shared` is given (the
 * service gives it): each gateway leases about a second of the shop's rate at a time from the shop's
 * bucket in PostgreSQL and spends it locally, so a shop gets its rate however many replicas serve it,
 * at one round trip per lease instead of one per request; a gateway's unspent lease (at most about
 * a second of the rate) is what the cluster can lose when traffic moves elsewhere. If the lease
 * fails (PostgreSQL down), the request is admitted: the budget is fairness, and the request's own
 * record then meets the outage and answers 503. Without `shared` (tests), each instance has its own.
 *
 * Every admitted answer carries the shop's RateLimit-Policy and RateLimit fields (rateLimitHeaders, below),
 * and so does a 429 of these budgets, beside its Retry-After.
 */
export function shopAdmission(
  budgets: ShopBudgets,
  clock: () => number = () => performance.now(),
  sharedBuckets?: SharedRateBuckets,
): ShopAdmission {
  const shops = new Map<string, ShopState>();
  const rated = budgets.rateLinesPerS > 0;
  // Without a lines/s budget there is nothing to share: the shop's state is only what it holds.
  const shared = rated ? sharedBuckets : undefined;
  const leaseChunk = Math.min(budgets.burstLines, Math.max(1, Math.ceil(budgets.rateLinesPerS * LEASE_SECONDS)));
  const fresh = (now: number): ShopState => ({
    bytes: 0,
    requests: 0,
    tokens: shared ? 0 : budgets.burstLines,
    at: now,
    sharedLeft: budgets.burstLines,
    emptyUntil: -Infinity,
    leasing: null,
  });
  const refill = (s: ShopState, now: number): void => {
    // Leased lines do not refill here: the shared bucket does, in PostgreSQL.
    if (!shared) s.tokens = Math.min(budgets.burstLines, s.tokens + ((now - s.at) / 1000) * budgets.rateLinesPerS);
    s.at = now;
  };
  // An idle shop with a full bucket holds nothing worth remembering. With a shared bucket, a shop's
  // state is its lease or its debt (a body admitted past what was leased, paid by the next lease):
  // forgetting it would forgive the debt, so it is forgotten only after a minute without requests.
  const forgetIfIdle = (shop: string, s: ShopState): void => {
    const spent = shared
      ? s.leasing === null && clock() - s.at > SHARED_IDLE_MS && clock() >= s.emptyUntil
      : s.tokens >= budgets.burstLines;
    if (s.requests === 0 && s.bytes === 0 && spent) shops.delete(shop);
  };
  const headersOf = (s: ShopState, inflight: number): Record<string, string> =>
    rateLimitHeaders({
      maxInflightRequests: budgets.maxInflightRequests,
      inflight,
      lines: rated
        ? {
            ratePerS: budgets.rateLinesPerS,
            burst: budgets.burstLines,
            remaining: Math.max(0, s.tokens) + (shared ? s.sharedLeft : 0),
          }
        : null,
    });
  /** One lease at a time per shop; concurrent requests of the shop wait for the same one. */
  const leaseFor = (shop: string, s: ShopState, lines: number): Promise<void> =>
    (s.leasing ??= (async () => {
      const want = Math.min(budgets.burstLines, Math.max(leaseChunk, lines)) + Math.max(0, -s.tokens);
      try {
        const { granted, left } = await shared!.lease(shop, want);
        s.tokens += granted;
        s.sharedLeft = left;
        // Empty: nobody of this shop asks again before the bucket has refilled what was asked.
        if (granted <= 0) s.emptyUntil = clock() + (1000 * want) / budgets.rateLinesPerS;
      } catch {
        // Fail open (above): this request's lines are admitted locally.
        s.tokens += lines;
      } finally {
        s.leasing = null;
      }
    })());
  // Entries of shops that went quiet are swept now and then (at most once a minute), so the map
  // holds only the shops active lately.
  let swept = clock();
  const sweep = (now: number): void => {
    if (now - swept < 60_000) return;
    swept = now;
    for (const [shop, s] of shops) {
      refill(s, now);
      forgetIfIdle(shop, s);
    }
  };
  let lastRefusal = -Infinity;
  const refuse = (shop: string, s: ShopState, why: string, retryAfterS: number) => {
    lastRefusal = clock();
    return tooManyRequests(
      `too many requests for shop ${shop} (${why}; the limit is per shop); retry later`,
      Math.max(1, Math.ceil(retryAfterS)),
      'shop_over_budget',
      headersOf(s, s.requests),
    );
  };

  /** The one decision, before or after parsing: a refusal, null to admit, or `lease` (ask the shared bucket first). */
  const decide = (shop: string, s: ShopState, bytes: number, now: number): ApiError | null | 'lease' => {
    if (s.requests >= budgets.maxInflightRequests) return refuse(shop, s, `${s.requests} requests in flight`, 1);
    if (s.bytes > 0 && s.bytes + bytes > budgets.maxInflightBytes) return refuse(shop, s, 'too many bytes in flight', 1);
    if (!rated || s.tokens > 0) return null;
    const over = `over ${budgets.rateLinesPerS} lines/s`;
    if (!shared) return refuse(shop, s, over, -s.tokens / budgets.rateLinesPerS);
    return now < s.emptyUntil ? refuse(shop, s, over, (s.emptyUntil - now) / 1000) : 'lease';
  };

  const refusalBeforeParsing = (res: Response, raw: Buffer): ApiError | null => {
    const fromHeader = headerShop(res.locals);
    const first = fromHeader === null ? firstShop(raw) : { shop: fromHeader, certain: () => true };
    const s = first && shops.get(first.shop);
    // A shop that holds nothing and has a full bucket is admitted: it is not remembered.
    if (!first || !s) return null;
    const now = clock();
    refill(s, now);
    const refusal = decide(first.shop, s, raw.length, now);
    // The scans that make the shop certain run only for a refusal: an admitted body is parsed anyway.
    return refusal && refusal !== 'lease' && first.certain() ? refusal : null;
  };

  const handler: RequestHandler = async (req, res, next) => {
    if (res.headersSent) return;
    const shop = shopOf(req, res.locals);
    // No shop yet: the route's validation answers 400 without appending anything.
    if (shop === null) return next();
    let now = clock();
    sweep(now);
    const s = shops.get(shop) ?? fresh(now);
    shops.set(shop, s);
    refill(s, now);
    const bytes = Number((req as { rawBodyLength?: number }).rawBodyLength ?? 0);
    const lines = linesOf(req.body);
    let verdict = decide(shop, s, bytes, now);
    if (verdict === 'lease') {
      await leaseFor(shop, s, lines);
      if (res.headersSent || res.destroyed) return;
      now = clock();
      verdict = decide(shop, s, bytes, now);
      // Still nothing to spend (others of this shop took the lease): refused as the bucket is empty.
      if (verdict === 'lease') verdict = refuse(shop, s, `over ${budgets.rateLinesPerS} lines/s`, lines / budgets.rateLinesPerS);
    }
    if (verdict) {
      forgetIfIdle(shop, s);
      return next(verdict);
    }
    // Taken from the bucket, into debt when the body is larger than what is left.
    if (rated) s.tokens -= lines;
    s.requests += 1;
    s.bytes += bytes;
    res.set(headersOf(s, s.requests));
    // Running low: the next lease is asked for now, so the shop's next request need not wait for it.
    if (shared && rated && s.tokens < leaseChunk / 2 && now >= s.emptyUntil) void leaseFor(shop, s, 0);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      s.requests -= 1;
      s.bytes -= bytes;
      refill(s, clock());
      forgetIfIdle(shop, s);
    };
    res.once('finish', release);
    res.once('close', release);
    next();
  };
  return Object.assign(handler, {
    refusalBeforeParsing,
    refusingLately: () => clock() - lastRefusal < REFUSING_FOR_MS,
    held: (shop: string) => {
      const s = shops.get(shop);
      return s && (s.requests > 0 || s.bytes > 0) ? { bytes: s.bytes, requests: s.requests } : undefined;
    },
  });
}

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

/** The longest shop the schemas accept: a longer one is the route's 400 and is not looked at here. */
export const MAX_SHOP_LENGTH = 255;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SHOP_KEY = Buffer.from('"shop"');

function skipWhitespace(buf: Buffer, i: number): number {
  while (i < buf.length) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/**
 * The shop of a UTF-8 JSON body read without parsing it (so that a shop over its budget is refused
 * before its body is parsed), in O(length of the shop): the value of a leading `"shop"` key (the body
 * opens with `{"shop":"<value>"`, whitespace allowed between tokens), or null for anything else or a
 * value that is empty, blank, too long or holds a control or replacement character. `certain()` (two
 * scans of the whole body, run only when it matters) says whether that reading is the one JSON.parse
 * would give: the body holds no backslash at all (so no key can be spelled `"\u0073hop"` and the value
 * has no escape), and `"shop"` occurs nowhere else in it (so no later duplicate key can override it).
 */
export function firstShop(buf: Buffer): { shop: string; certain(): boolean } | null {
  let i = skipWhitespace(buf, 0);
  if (buf[i] !== 0x7b) return null;
  i = skipWhitespace(buf, i + 1);
  if (!buf.subarray(i, i + SHOP_KEY.length).equals(SHOP_KEY)) return null;
  const keyAt = i;
  i = skipWhitespace(buf, i + SHOP_KEY.length);
  if (buf[i] !== 0x3a) return null;
  i = skipWhitespace(buf, i + 1);
  if (buf[i] !== QUOTE) return null;
  const from = i + 1;
  const to = buf.indexOf(QUOTE, from);
  // A UTF-8 character is at most 4 bytes: a longer value cannot be a shop the schemas accept.
  if (to < 0 || to - from > 4 * MAX_SHOP_LENGTH) return null;
  const shop = buf.toString('utf8', from, to);
  // Control characters are invalid in a JSON string; U+FFFD may stand for bytes that were not UTF-8.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\ufffd]/.test(shop) || !shop.trim() || shop.length > MAX_SHOP_LENGTH) return null;
  return { shop, certain: () => !buf.includes(BACKSLASH) && buf.indexOf(SHOP_KEY, keyAt + SHOP_KEY.length) < 0 };
}
