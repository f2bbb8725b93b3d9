import type { Request, RequestHandler } from 'express';
import { tooManyRequests } from './errors.ts';

/** Per-shop budgets of one gateway instance (issue 16 item 3). */
export interface ShopBudgets {
  /** Body bytes a shop's admitted requests may hold at once (a shop that holds nothing is always admitted). */
  maxInflightBytes: number;
  /** Requests of one shop admitted and not answered yet. */
  maxInflightRequests: number;
  /** Lines (items, rows) per second a shop's token bucket refills with; 0: no lines/s budget. */
  rateLinesPerS: number;
  /** The bucket's size: lines a shop may send at once after being idle. */
  burstLines: number;
}

export type ShopAdmission = RequestHandler & {
  /** What a shop holds now (for tests and metrics); undefined for a shop that holds nothing. */
  held(shop: string): { bytes: number; requests: number } | undefined;
};

interface ShopState {
  bytes: number;
  requests: number;
  tokens: number;
  /** When `tokens` was last brought up to date (ms, monotonic). */
  at: number;
}

/** The longest shop the schemas accept: a longer one is the route's 400 and is not remembered here. */
const MAX_SHOP_LENGTH = 255;

/** The shop of a parsed request: the x-shop header of the cron route (auth.ts), else the body's `shop`. */
function shopOf(req: Request, locals: Record<string, unknown>): string | null {
  const fromHeader = locals['shop'];
  if (typeof fromHeader === 'string' && fromHeader) return fromHeader;
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
 * Fair admission per shop (issue 16 item 3): right after the body is parsed (the shop is known only
 * then) and before anything is recorded or appended, a shop over its own budget is answered 429
 * with Retry-After, whatever the other shops do. Three budgets: requests in flight, body bytes in
 * flight (both released when the answer is sent or the connection closes: success, error, client
 * abort, reply timeout alike), and a token bucket of lines per second with a burst. The global
 * in-flight bound (D13, inflight.ts) still runs before this one, as the last line for everyone.
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
  const refuse = (shop: string, why: string, retryAfterS: number) =>
    tooManyRequests(
      `too many requests for shop ${shop} (${why}; the limit is per shop); retry later`,
      Math.max(1, Math.ceil(retryAfterS)),
      'shop_over_budget',
    );

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
    const lines = linesOf(req.body);
    const needed = Math.min(lines, budgets.burstLines);
    let refusal = null;
    if (s.requests >= budgets.maxInflightRequests) refusal = refuse(shop, `${s.requests} requests in flight`, 1);
    else if (s.bytes > 0 && s.bytes + bytes > budgets.maxInflightBytes) refusal = refuse(shop, 'too many bytes in flight', 1);
    else if (budgets.rateLinesPerS > 0 && s.tokens < needed)
      refusal = refuse(shop, `over ${budgets.rateLinesPerS} lines/s`, (needed - s.tokens) / budgets.rateLinesPerS);
    if (refusal) {
      shops.set(shop, s);
      forgetIfIdle(shop, s);
      return next(refusal);
    }
    // A body larger than the burst is admitted on a full bucket and leaves it in debt.
    if (budgets.rateLinesPerS > 0) s.tokens -= lines;
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
    held: (shop: string) => {
      const s = shops.get(shop);
      return s && (s.requests > 0 || s.bytes > 0) ? { bytes: s.bytes, requests: s.requests } : undefined;
    },
  });
}
