import express, { type Request, type RequestHandler, type Response } from 'express';
import { ApiError, badRequest, sendError } from '../errors/catalog.ts';
import { inexactNumbers, type InexactNumber } from './exactNumbers.ts';
import { inTurn } from './inTurn.ts';

const inexact = new WeakMap<Request, InexactNumber[]>();

/** The body's numbers that JSON parsing did not keep exactly; each route refuses them in its own style. */
export function inexactNumbersOf(req: Request): InexactNumber[] {
  return inexact.get(req) ?? [];
}

/** Asked with the whole raw body before it is decoded and parsed; an answer refuses the request as it is. */
export type RefuseBeforeParsing = (res: Response, raw: Buffer) => ApiError | null;

/** A body this large is decoded and parsed in a turn of the event loop of its own (inTurn.ts). */
const HEAVY_BYTES = 64 * 1024;

const unsupportedEncoding = () => new ApiError(415, 'unsupported_encoding', { ok: false, error: 'unsupported content encoding' });

/**
 * JSON body parsing after auth (a request without credentials is refused before its body is
 * read). Any content type is parsed as JSON; the root must be an object (D11). `refuseEarly`
 * (docs/api.md#fair-admission-per-shop) may refuse a UTF-8 body on its raw bytes, before it is
 * decoded and parsed.
 *
 * One pass over the body: body-parser's raw reader (limits, inflation, aborts, as before) reads it
 * into one Buffer; it is decoded once, and that one text is both JSON.parse'd and searched for
 * numbers that may not be kept exactly (exactNumbers.ts), with no byte scan of its own.
 */
export function parseJsonObject(limitBytes: number, refuseEarly?: RefuseBeforeParsing): RequestHandler[] {
  const raw = express.raw({ limit: limitBytes, type: () => true });
  return [
    // As body-parser's JSON reader did: a charset other than UTF-* is 415 before a byte is read.
    (req, _res, next) => (charsetOf(req).startsWith('utf-') ? next() : next(unsupportedEncoding())),
    raw,
    (req, res, next) => {
      // Cut while it arrived (over the budget, too slow): answered already, the route must not run.
      if (res.headersSent) return;
      const buf: unknown = req.body;
      req.body = undefined;
      // No body at all, or an empty one, is no JSON object (D11).
      if (!Buffer.isBuffer(buf) || buf.length === 0) return next(badRequest('invalid JSON body', 'invalid_json'));
      (req as { rawBodyLength?: number }).rawBodyLength = buf.length;
      const work = () => {
        if (res.headersSent || res.destroyed) return;
        const outcome = readJsonObject(req, res, buf, refuseEarly);
        if (outcome === 'answered') return;
        next(outcome ?? undefined);
      };
      // Parsing a max body holds the loop for milliseconds: one such body per turn, so that
      // timers and other sockets run between them (event-loop delay, B2).
      if (buf.length >= HEAVY_BYTES) inTurn(work, next);
      else work();
    },
  ];
}

/**
 * Decodes and parses the body into req.body and records its inexact numbers: null when it is a
 * storable JSON object, the refusal otherwise, or `answered` when refuseEarly answered it.
 */
function readJsonObject(req: Request, res: Response, buf: Buffer, refuseEarly?: RefuseBeforeParsing): ApiError | 'answered' | null {
  const encoding = charsetOf(req);
  const utf8 = encoding === 'utf-8';
  const early = utf8 && refuseEarly ? refuseEarly(res, buf) : null;
  if (early) {
    // Answered here: passed on with next(err), it walked every later layer of every router to
    // reach the error handler, a good part of its cost (bench/refusal-cost.ts).
    sendError(res, early);
    return 'answered';
  }
  const text = utf8 ? utf8Text(buf) : decode(buf, encoding);
  // UTF-32 and UTF-7: JSON is UTF-8 (RFC 8259), or UTF-16 as body-parser read it.
  if (text === null) return unsupportedEncoding();
  let b: unknown;
  try {
    b = JSON.parse(text);
  } catch {
    return badRequest('invalid JSON body', 'invalid_json');
  }
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return badRequest('invalid JSON body', 'invalid_json');
  req.body = b;
  // NUL and lone surrogates can only arrive as \u escapes (raw bytes decode to U+FFFD).
  const bad = text.includes('\\u') ? unstorableText(b) : null;
  if (bad) return badRequest(bad);
  try {
    inexact.set(req, inexactNumbers(text));
  } catch (err) {
    // Reading the numbers' source recurses; a body this deep is no valid request anyway.
    return badRequest(err instanceof RangeError ? 'invalid JSON body: nested too deeply' : 'invalid JSON body', 'invalid_json');
  }
  return null;
}

/** The request's charset, lower case, `utf-8` when it names none (as body-parser read it). */
function charsetOf(req: Request): string {
  const m = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '');
  const label = m?.[1]?.toLowerCase() ?? '';
  return label || 'utf-8';
}

/** UTF-8 text without its byte-order mark (iconv-lite, which body-parser decoded with, dropped it too). */
function utf8Text(buf: Buffer): string {
  const bom = buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
  return buf.toString('utf8', bom ? 3 : 0);
}

/** The body as body-parser decoded it (its `utf-16` picks the byte order by BOM, else by the first character). */
function decode(buf: Buffer, encoding: string): string | null {
  let label = encoding;
  if (label === 'utf-16') label = (buf[0] === 0xfe && buf[1] === 0xff) || (buf[0] === 0 && buf[1] !== 0) ? 'utf-16be' : 'utf-16le';
  try {
    return new TextDecoder(label).decode(buf);
  } catch {
    return null;
  }
}

/**
 * PostgreSQL text and jsonb cannot hold NUL or an unpaired UTF-16 surrogate (both are valid JSON
 * escapes): refuse them here with a clear 400 rather than fail downstream.
 */
export function unstorableText(value: unknown): string | null {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return 'invalid JSON body: strings must not contain NUL (\\u0000)';
      if (!v.isWellFormed()) return 'invalid JSON body: strings must be valid Unicode (unpaired surrogate)';
    } else if (Array.isArray(v)) {
      for (const x of v as unknown[]) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) stack.push(k, x);
    }
  }
  return null;
}
