import express, { type Request, type RequestHandler, type Response } from 'express';
import { ApiError, badRequest, sendError } from '../errors/catalog.ts';
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
 * numbers that may not be kept exactly (below), with no byte scan of its own.
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

// --- The exact-number rule, on the text read above ---

/**
 * JSON numbers are read as 64-bit floats, so a price of 9007199254740993 silently becomes
 * 9007199254740992 and 1e400 becomes Infinity. A number is accepted only if the value parsed is
 * exactly the decimal the client wrote (compared as decimals: `1.50` and `15e-1` are 1.5); anything
 * else is refused, never rounded. Up to 15 significant digits always pass.
 */

/** A JSON number that parsing did not keep exactly. */
export interface InexactNumber {
  /** Where it is in the body, e.g. `['products', 3, 'current_price']`. */
  path: Array<string | number>;
  /** The number as written (shortened for messages). */
  written: string;
  /** What parsing made of it. */
  parsed: number;
}

/**
 * The number tokens that can lose precision: one (after `:`, `,` or `[`) of 16 or more digits and
 * points, or one with an exponent; up to 15 significant digits always pass. Strings that merely
 * look like one only cost a closer look.
 */
export const RISKY_TOKEN = /[:,[]\s*(-?(?:\d[\d.]{15,}(?:[eE][+-]?\d+)?|\d[\d.]*[eE][+-]?\d+))/g;

const digitOrPoint = (c: number): boolean => (c >= 0x30 && c <= 0x39) || c === 0x2e;

/** Whether the run of digits and points that starts at `start` is a number token: `-`, blanks, then `:`, `,` or `[` before it. */
function startsNumberToken(text: string, start: number): boolean {
  let j = start - 1;
  if (text.charCodeAt(j) === 0x2d) j--;
  for (let c = text.charCodeAt(j); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(j)) j--;
  const c = text.charCodeAt(j);
  return c === 0x3a || c === 0x2c || c === 0x5b;
}

function runStart(text: string, i: number): number {
  let a = i;
  while (a > 0 && digitOrPoint(text.charCodeAt(a - 1))) a--;
  return a;
}

/** An `e` or `E` with digits after it, as an exponent is written. */
const EXPONENT = /[eE][+-]?\d/g;

/**
 * Whether the text may hold a token RISKY_TOKEN matches, at a fraction of its cost (the regex
 * tries every `:` and `,` of the body: a third of JSON.parse's time on a max body). A run of 16
 * digits and points covers one of every 16 positions, so only those are looked at; each `e` with
 * digits after it is looked at where it is. False only when RISKY_TOKEN finds nothing (tested).
 */
export function mayHoldInexactNumbers(text: string): boolean {
  const n = text.length;
  for (let i = 15; i < n; i += 16) {
    if (!digitOrPoint(text.charCodeAt(i))) continue;
    const a = runStart(text, i);
    let b = i;
    while (b + 1 < n && digitOrPoint(text.charCodeAt(b + 1))) b++;
    if (b - a + 1 >= 16 && startsNumberToken(text, a)) return true;
    // The next run starts after b + 1, so a run of 16 there holds position b + 16.
    i = b;
  }
  EXPONENT.lastIndex = 0;
  for (let m = EXPONENT.exec(text); m; m = EXPONENT.exec(text)) {
    if (digitOrPoint(text.charCodeAt(m.index - 1)) && startsNumberToken(text, runStart(text, m.index - 1))) return true;
  }
  return false;
}

/**
 * Whether any number of the text may not be kept exactly: the cheap look over the same text that
 * JSON.parse reads (no byte scan of its own), then each risky token compared as a decimal.
 */
export function anyInexactToken(text: string): boolean {
  if (!mayHoldInexactNumbers(text)) return false;
  for (const m of text.matchAll(RISKY_TOKEN)) {
    const token = m[1] ?? '';
    if (!sameDecimal(token, Number(token))) return true;
  }
  return false;
}

class Inexact {
  readonly written: string;
  readonly parsed: number;
  constructor(written: string, parsed: number) {
    this.written = written;
    this.parsed = parsed;
  }
}

type SourceReviver = (key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * Every number of a JSON text whose parsed value differs from what was written, with its path.
 * Throws what JSON.parse throws (a reviver recurses: a RangeError for very deep nesting).
 */
export function inexactNumbers(text: string): InexactNumber[] {
  // Reading every number's source is slow: only when some number is known to be inexact.
  if (!anyInexactToken(text)) return [];
  const reviver: SourceReviver = (_key, value, context) =>
    typeof value === 'number' && context?.source !== undefined && !sameDecimal(context.source, value)
      ? new Inexact(context.source, value)
      : value;
  const tree: unknown = JSON.parse(text, reviver);
  const found: InexactNumber[] = [];
  const stack: Array<[unknown, Array<string | number>]> = [[tree, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (v instanceof Inexact) found.push({ path, written: shorten(v.written), parsed: v.parsed });
    else if (Array.isArray(v)) v.forEach((x: unknown, i) => stack.push([x, [...path, i]]));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) stack.push([x, [...path, k]]);
  }
  return found.reverse();
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** `digits` x 10^`exponent` without leading or trailing zeros, or null when not a finite decimal. */
function normalDecimal(text: string): string | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  const all = `${whole}${fraction}`;
  const digits = all.replace(/^0+/, '').replace(/0+$/, '');
  if (!digits) return '0';
  const leading = all.length - all.replace(/^0+/, '').length;
  return `${sign}${digits}e${whole.length - leading + Number(exponent)}`;
}

/** Whether `written` and the shortest decimal form of `parsed` are the same number. */
export function sameDecimal(written: string, parsed: number): boolean {
  const a = normalDecimal(written);
  return a !== null && a === normalDecimal(String(parsed));
}

function shorten(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

/** `lines[3].on_hand_qty` from `['lines', 3, 'on_hand_qty']`. */
export function formatPath(path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The client-facing text: `current_price 9007199254740993 cannot be stored exactly (it would become 9007199254740992)`. */
export function inexactMessage(field: string, n: InexactNumber): string {
  return `${field} ${n.written} cannot be stored exactly (it would become ${String(n.parsed)})`;
}
