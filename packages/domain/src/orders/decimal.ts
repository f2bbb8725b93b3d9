/**
 * Exact decimal arithmetic for the amount checks (D20a): a JSON number is read from its shortest
 * decimal form into a BigInt mantissa and a scale, so 100.00 - 0.00 vs 99.99 is exactly 0.01.
 */
export interface Decimal {
  units: bigint;
  scale: number;
}

export function toDecimal(n: number): Decimal | null {
  if (!Number.isFinite(n)) return null;
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(String(n));
  if (!m) return null;
  const [, sign, whole, frac = '', exp = '0'] = m;
  let digits = `${whole}${frac}`;
  let scale = frac.length - Number(exp);
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  return { units: BigInt(`${sign}${digits}`), scale };
}

function align(a: Decimal, scale: number): bigint {
  return a.units * 10n ** BigInt(scale - a.scale);
}

/** |a - b - c| <= tolerance, exactly. */
export function withinTolerance(a: Decimal, b: Decimal, c: Decimal, tolerance: Decimal): boolean {
  const scale = Math.max(a.scale, b.scale, c.scale, tolerance.scale);
  const diff = align(a, scale) - align(b, scale) - align(c, scale);
  const abs = diff < 0n ? -diff : diff;
  return abs <= align(tolerance, scale);
}

/** a - b as a plain number, for messages. */
export function formatDifference(a: number, b: number): string {
  const x = toDecimal(a);
  const y = toDecimal(b);
  if (!x || !y) return String(a - b);
  const scale = Math.max(x.scale, y.scale);
  const d = align(x, scale) - align(y, scale);
  const neg = d < 0n;
  const s = (neg ? -d : d).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${scale ? `${s.slice(0, -scale)}.${s.slice(-scale)}` : s}`;
}
