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
