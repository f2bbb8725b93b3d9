import type { Request, RequestHandler, Response } from 'express';
import { tooManyRequests, type ApiError } from '../errors/catalog.ts';
import { firstShop, MAX_SHOP_LENGTH } from './shopPeek.ts';

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
  /** A shop was refused within the last second: refusals are going on (arms shedShop.ts). */
  refusingLately(): boolean;
};

/** How long after a refusal the shop budgets count as refusing (shedShop.ts reads bodies early meanwhile). */
const REFUSING_FOR_MS = 1000;

interface ShopState {
  bytes: number;
  requests: number;
  tokens: number;
  /** When `tokens` was last brought up to date (ms, monotonic). */
  at: number;
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
 * reading its bytes). The global in-flight bound (D13, inflight.ts) still runs before this one, as
 * the last line for everyone.
 *
 * Per gateway instance: N instances admit up to N times these budgets for a shop.
 */
export function shopAdmission(budgets: ShopBudgets, clock: () => number = () => performance.now()): ShopAdmission {
  const shops = new Map<string, ShopState>();
  const refill = (s: ShopState, now: number): void => {
    s.tokens = Math.min(budgets.burstLines, s.tokens + ((now - s.at) / 1000) * budgets.rateLinesPerS);
    s.at = now;
  };
  // An idle shop with a full bucket holds nothing worth remembering.
  const forgetIfIdle = (shop: string, s: ShopState): void => {
    if (s.requests === 0 && s.bytes === 0 && s.tokens >= budgets.burstLines) shops.delete(shop);
  };
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
  const refuse = (shop: string, why: string, retryAfterS: number) => {
    lastRefusal = clock();
    return tooManyRequests(
      `too many requests for shop ${shop} (${why}; the limit is per shop); retry later`,
      Math.max(1, Math.ceil(retryAfterS)),
      'shop_over_budget',
    );
  };

  /** The one decision, before or after parsing: a refusal, or null to admit. */
  const decide = (shop: string, s: ShopState, bytes: number): ApiError | null => {
    if (s.requests >= budgets.maxInflightRequests) return refuse(shop, `${s.requests} requests in flight`, 1);
    if (s.bytes > 0 && s.bytes + bytes > budgets.maxInflightBytes) return refuse(shop, 'too many bytes in flight', 1);
    if (budgets.rateLinesPerS > 0 && s.tokens <= 0)
      return refuse(shop, `over ${budgets.rateLinesPerS} lines/s`, -s.tokens / budgets.rateLinesPerS);
    return null;
  };

  const refusalBeforeParsing = (res: Response, raw: Buffer): ApiError | null => {
    const fromHeader = headerShop(res.locals);
    const first = fromHeader === null ? firstShop(raw) : { shop: fromHeader, certain: () => true };
    const s = first && shops.get(first.shop);
    // A shop that holds nothing and has a full bucket is admitted: it is not remembered.
    if (!first || !s) return null;
    refill(s, clock());
    const refusal = decide(first.shop, s, raw.length);
    // The scans that make the shop certain run only for a refusal: an admitted body is parsed anyway.
    return refusal && first.certain() ? refusal : null;
  };

  const handler: RequestHandler = (req, res, next) => {
    if (res.headersSent) return;
    const shop = shopOf(req, res.locals);
    // No shop yet: the route's validation answers 400 without appending anything.
    if (shop === null) return next();
    const now = clock();
    sweep(now);
    const s = shops.get(shop) ?? { bytes: 0, requests: 0, tokens: budgets.burstLines, at: now };
    refill(s, now);
    const bytes = Number((req as { rawBodyLength?: number }).rawBodyLength ?? 0);
    const refusal = decide(shop, s, bytes);
    if (refusal) {
      shops.set(shop, s);
      forgetIfIdle(shop, s);
      return next(refusal);
    }
    // Taken from the bucket, into debt when the body is larger than what is left.
    if (budgets.rateLinesPerS > 0) s.tokens -= linesOf(req.body);
    s.requests += 1;
    s.bytes += bytes;
    shops.set(shop, s);
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
