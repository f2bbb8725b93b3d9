import express, { type Request, type RequestHandler, type Response } from 'express';
import { ApiError, badRequest, sendError } from '../errors/catalog.ts';
import { inexactNumbers, mayHoldInexactNumbers, type InexactNumber } from './exactNumbers.ts';

interface RawBody {
  rawBodyLength?: number;
  hasEscapes?: boolean;
  /** Kept only when a number in it may have lost precision. */
  risky?: { buf: Buffer; encoding: string };
}

const inexact = new WeakMap<Request, InexactNumber[]>();

/** The body's numbers that JSON parsing did not keep exactly; each route refuses them in its own style. */
export function inexactNumbersOf(req: Request): InexactNumber[] {
  return inexact.get(req) ?? [];
}

/** A refusal decided on the raw bytes, carried out of body-parser's verify step (which aborts the parse by throwing). */
class RefusedBeforeParsing extends Error {
  readonly answer: ApiError;
  constructor(answer: ApiError) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(answer.message);
    Error.stackTraceLimit = limit;
    this.answer = answer;
  }
}

/** Asked with the whole raw body before it is decoded and parsed; an answer refuses the request as it is. */
export type RefuseBeforeParsing = (res: Response, raw: Buffer) => ApiError | null;

/**
 * JSON body parsing after auth (a request without credentials is refused before its body is
 * read). Any content type is parsed as JSON; the root must be an object (D11). `refuseEarly`
 * (docs/api.md#fair-admission-per-shop) may refuse a UTF-8 body on its raw bytes, before the
 * exact-numbers scan, the decoding and JSON.parse.
 */
export function parseJsonObject(limitBytes: number, refuseEarly?: RefuseBeforeParsing): RequestHandler[] {
  const json = express.json({
    limit: limitBytes,
    strict: false,
    type: () => true,
    // PostgreSQL text cannot hold NUL; refuse it here rather than fail later in the projector.
    verify: (req, res, buf, encoding) => {
      const raw = req as RawBody;
      raw.rawBodyLength = buf.length;
      const utf8 = /^utf-?8$/i.test(encoding);
      const early = utf8 && refuseEarly ? refuseEarly(res as Response, buf) : null;
      if (early) throw new RefusedBeforeParsing(early);
      // NUL and lone surrogates can only arrive as \u escapes (raw bytes decode to U+FFFD); in
      // UTF-16 the bytes of `\u` differ, so such bodies are always checked.
      raw.hasEscapes = !utf8 || buf.includes('\\u');
      if (!utf8 || mayHoldInexactNumbers(buf)) raw.risky = { buf, encoding };
    },
  });
  return [
    // A refusal on the raw bytes is answered here: passed on with next(err), it walked every later
    // layer of every router to reach the error handler, a good part of its cost
    // (bench/refusal-cost.ts). As there, nothing is sent twice (a body cut while it arrived has
    // its answer).
    (req, res, next) =>
      json(req, res, (err?: unknown) => {
        if (!(err instanceof RefusedBeforeParsing)) return next(err);
        if (!res.headersSent) sendError(res, err.answer);
      }),
    (req, res, next) => {
      // Cut while it arrived (over the budget, too slow): answered already, the route must not run.
      if (res.headersSent) return;
      const b: unknown = req.body;
      const raw = req as RawBody;
      // An empty body parses to {} in body-parser; it is not a JSON object all the same (D11).
      if (!raw.rawBodyLength) return next(badRequest('invalid JSON body', 'invalid_json'));
      if (b === null || typeof b !== 'object' || Array.isArray(b)) return next(badRequest('invalid JSON body', 'invalid_json'));
      const bad = raw.hasEscapes ? unstorableText(b) : null;
      if (bad) return next(badRequest(bad));
      if (raw.risky) {
        const { buf, encoding } = raw.risky;
        raw.risky = undefined;
        const text = decode(buf, encoding);
        // UTF-32 and UTF-7, which body-parser reads and TextDecoder does not: JSON is UTF-8 (RFC 8259).
        if (text === null) return next(new ApiError(415, 'unsupported_encoding', { ok: false, error: 'unsupported content encoding' }));
        try {
          inexact.set(req, inexactNumbers(text));
        } catch (err) {
          // Reading the numbers' source recurses; a body this deep is no valid request anyway.
          return next(badRequest(err instanceof RangeError ? 'invalid JSON body: nested too deeply' : 'invalid JSON body', 'invalid_json'));
        }
      }
      next();
    },
  ];
}

/** The body as body-parser decoded it (its `utf-16` picks the byte order by BOM, else by the first character). */
function decode(buf: Buffer, encoding: string): string | null {
  let label = encoding.toLowerCase();
  if (label === 'utf-16' || label === 'utf16')
    label = (buf[0] === 0xfe && buf[1] === 0xff) || (buf[0] === 0 && buf[1] !== 0) ? 'utf-16be' : 'utf-16le';
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
