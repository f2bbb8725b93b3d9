import { describe, expect, it } from 'vitest';
import { formatDifference, toDecimal, withinTolerance } from './decimal.ts';

// D20a: the amount identities are compared exactly, in decimals read from the number's shortest
// form. JavaScript writes a number below 1e-6 or from 1e21 on with an exponent (1e-7, 1.5e+21).

describe('toDecimal', () => {
  it('reads the digits and the scale of a plain number', () => {
    expect(toDecimal(123.45)).toEqual({ units: 12345n, scale: 2 });
    expect(toDecimal(-0.5)).toEqual({ units: -5n, scale: 1 });
    expect(toDecimal(1100)).toEqual({ units: 1100n, scale: 0 });
  });

  it('reads a number JavaScript writes with a negative exponent (1e-7, 1.5e-7, -2.5e-8)', () => {
    expect(toDecimal(1e-7)).toEqual({ units: 1n, scale: 7 });
    expect(toDecimal(1.5e-7)).toEqual({ units: 15n, scale: 8 });
    expect(toDecimal(-2.5e-8)).toEqual({ units: -25n, scale: 9 });
    expect(toDecimal(1.5e-10)).toEqual({ units: 15n, scale: 11 });
  });

  it('reads a number JavaScript writes with a positive exponent (1e21, 1.5e21) as a whole number', () => {
    expect(toDecimal(1e21)).toEqual({ units: 10n ** 21n, scale: 0 });
    expect(toDecimal(1.5e21)).toEqual({ units: 15n * 10n ** 20n, scale: 0 });
  });

  it('has no decimal for what is not a finite number', () => {
    expect(toDecimal(Number.NaN)).toBeNull();
    expect(toDecimal(Number.POSITIVE_INFINITY)).toBeNull();
  });
});

describe('withinTolerance: |a - b - c| <= tolerance, inclusive, exactly (D20a)', () => {
  const d = (n: number) => toDecimal(n)!;
  const cent = d(0.01);

  it('a difference of exactly 0.01 either way is within; 0.0100001 is not', () => {
    expect(withinTolerance(d(100), d(0), d(99.99), cent)).toBe(true);
    expect(withinTolerance(d(100), d(0), d(100.01), cent)).toBe(true);
    expect(withinTolerance(d(100), d(0), d(99.9899999), cent)).toBe(false);
    expect(withinTolerance(d(100), d(0), d(100.0100001), cent)).toBe(false);
  });

  it('amounts written with an exponent take part exactly', () => {
    expect(withinTolerance(d(0.01), d(1e-7), d(0), cent)).toBe(true);
    expect(withinTolerance(d(0.02), d(1e-7), d(0), cent)).toBe(false);
    expect(withinTolerance(d(1e21), d(0), d(1e21), cent)).toBe(true);
    expect(withinTolerance(d(1e21), d(0), d(0), cent)).toBe(false);
  });
});

describe('formatDifference: a - b as the message prints it (amount_mismatch, tax_mismatch)', () => {
  it('prints as many decimals as the operands have, with a leading zero', () => {
    expect(formatDifference(1100, 100)).toBe('1000');
    expect(formatDifference(0.3, 0.1)).toBe('0.2');
    expect(formatDifference(1.005, 0.005)).toBe('1.000');
    expect(formatDifference(100, 0.01)).toBe('99.99');
  });

  it('prints a negative difference with its sign, and zero without one', () => {
    expect(formatDifference(0.05, 0.1)).toBe('-0.05');
    expect(formatDifference(3, 5)).toBe('-2');
    expect(formatDifference(1, 1)).toBe('0');
  });

  it('prints amounts written with an exponent in plain digits', () => {
    expect(formatDifference(0.02, 1e-7)).toBe('0.0199999');
    expect(formatDifference(1e21, 1)).toBe('999999999999999999999');
  });

  it('falls back to JavaScript arithmetic for what is not a finite number', () => {
    expect(formatDifference(Number.POSITIVE_INFINITY, 1)).toBe('Infinity');
    expect(formatDifference(1, Number.POSITIVE_INFINITY)).toBe('-Infinity');
  });
});
