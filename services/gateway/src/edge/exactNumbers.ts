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
 * A cheap look at the raw UTF-8 body, with no copy: can any number in it lose precision? Only a
 * number token (after `:`, `,` or `[`) of 16 or more digits and points, or one with an exponent,
 * can; every other body skips the careful reading. Strings that merely look like one only cost it.
 */
export function mayHoldInexactNumbers(utf8: Buffer): boolean {
  let prev = 0; // the last byte outside a number token that is not JSON whitespace
  let run = -1; // digits and points of the number token being read; -1 outside one
  for (let i = 0, n = utf8.length; i < n; i++) {
    const c = utf8[i]!;
    const digitOrPoint = (c >= 0x30 && c <= 0x39) || c === 0x2e;
    if (run >= 0) {
      if (digitOrPoint) {
        if (++run >= 16) return true;
        continue;
      }
      if (c === 0x65 || c === 0x45) return true;
      run = -1;
    } else if ((digitOrPoint || c === 0x2d) && (prev === 0x3a || prev === 0x2c || prev === 0x5b)) {
      run = digitOrPoint ? 1 : 0;
      continue;
    }
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) prev = c;
  }
  return false;
}

/** The number tokens `mayHoldInexactNumbers` calls risky. */
const RISKY_TOKEN = /[:,[]\s*(-?(?:\d[\d.]{15,}(?:[eE][+-]?\d+)?|\d[\d.]*[eE][+-]?\d+))/g;

/** Whether any risky number token of the text is not kept exactly (a token in a string only costs a look). */
function anyInexactToken(text: string): boolean {
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
