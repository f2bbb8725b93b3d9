import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { anyInexactToken, formatPath, inexactNumbers, mayHoldInexactNumbers, RISKY_TOKEN, sameDecimal } from './body.ts';

// A JSON number is accepted only if parsing keeps exactly the decimal that was written.
describe('sameDecimal', () => {
  it.each([
    ['0.1', 0.1],
    ['1.50', 1.5],
    ['15e-1', 1.5],
    ['-0', -0],
    ['0e999999', 0],
    ['1E21', 1e21],
    ['9007199254740992', 2 ** 53],
    ['0.0000001', 1e-7],
    ['5e-324', 5e-324],
  ])('%s is exactly %d', (written, parsed) => expect(sameDecimal(written, parsed)).toBe(true));

  it.each([
    ['9007199254740993', 9007199254740992],
    ['0.1000000000000000000001', 0.1],
    ['1e400', Infinity],
    ['1e-400', 0],
    ['-1e-400', -0],
  ])('%s is not %d', (written, parsed) => expect(sameDecimal(written, parsed)).toBe(false));

  it('property: what JSON.stringify writes for any finite double reads back exactly', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) =>
        sameDecimal(JSON.stringify(d), JSON.parse(JSON.stringify(d)) as number),
      ),
    );
  });

  it('property: any decimal of at most 15 significant digits reads back exactly', () => {
    const decimal = fc
      .tuple(fc.bigInt({ min: -(10n ** 15n) + 1n, max: 10n ** 15n - 1n }), fc.integer({ min: -300, max: 290 }))
      .map(([m, e]) => `${m}e${e}`);
    fc.assert(fc.property(decimal, (text) => sameDecimal(text, Number(text))));
  });
});

describe('inexactNumbers and the cheap look before it', () => {
  it('names every number that parsing changed, by path', () => {
    const text = '{"products":[{"p":1.5},{"p":9007199254740993,"q":[1e400,2]}],"x":{"y":0.30000000000000000001}}';
    expect(anyInexactToken(text)).toBe(true);
    expect(inexactNumbers(text).map((n) => [formatPath(n.path), n.written, n.parsed])).toEqual([
      ['products[1].p', '9007199254740993', 9007199254740992],
      ['products[1].q[0]', '1e400', Infinity],
      ['x.y', '0.30000000000000000001', 0.3],
    ]);
  });

  it('a long number in a string is no number', () => {
    const text = '{"barcode":"x:90071992547409931234","n":1}';
    expect(inexactNumbers(text)).toEqual([]);
  });

  it('property: a body the cheap look passes has no inexact number (numbers written in any form, strings anywhere)', () => {
    const numberText = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.nat(25)).map(([m, f]) => {
        const s = (m < 0n ? -m : m).toString().padStart(f + 1, '0');
        return `${m < 0n ? '-' : ''}${f ? `${s.slice(0, -f)}.${s.slice(-f)}` : s}`;
      }),
      fc.tuple(fc.integer({ min: -999, max: 999 }), fc.integer({ min: -400, max: 400 })).map(([m, e]) => `${m}e${e}`),
    );
    const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        numberText,
        fc.string().map((s) => JSON.stringify(s)),
        fc.array(tie('v'), { maxLength: 4 }).map((xs) => `[ ${xs.join(' , ')} ]`),
        fc
          .array(fc.tuple(fc.string(), tie('v')), { maxLength: 4 })
          .map((kvs) => `{${kvs.map(([k, v]) => `${JSON.stringify(k)}:\n ${v}`).join(',')}}`),
      ),
    })).v;
    fc.assert(
      fc.property(value, (text) => {
        const body = `{"a":${text}}`;
        // The truth, from every number's source: what the cheap look lets pass must be exact.
        let exact = true;
        JSON.parse(body, (_k, v: unknown, context?: { source?: string }) => {
          if (typeof v === 'number' && context?.source !== undefined && !sameDecimal(context.source, v)) exact = false;
          return v;
        });
        if (!anyInexactToken(body)) expect(exact, body).toBe(true);
        expect(inexactNumbers(body).length === 0, body).toBe(exact);
      }),
      { numRuns: 300 },
    );
  });
});

describe('the cheap look needs no careful reading for ordinary bodies', () => {
  it('a max-size snapshot of short numbers, barcodes and a uuid passes it', () => {
    const lines = Array.from({ length: 10_000 }, (_, k) => ({
      barcode: `49${String(k).padStart(11, '0')}`,
      on_hand_qty: k,
      reserved_qty: 0.5,
    }));
    expect(anyInexactToken(JSON.stringify({ location_id: '0193e4a2-7b3c-7def-8a12-3456789abcde', lines }))).toBe(false);
  });
  it('a risky token that is exact is no finding (16 digits that a double holds, an exponent)', () => {
    expect(anyInexactToken('{"a":1234567890123456,"b":[15e-1]}')).toBe(false);
    expect(anyInexactToken('{"a":12345678901234567}')).toBe(true);
  });
});

describe('mayHoldInexactNumbers: the cheap look never misses a risky token', () => {
  const risky = new RegExp(RISKY_TOKEN.source);
  it('property: false only when the risky-token regex finds nothing, on any text of number-ish characters', () => {
    const unit = fc.constantFrom(...'0123456789.eE+-:,[ \n"a'.split(''), '1234567890123456', '9.99999999999999999');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 80 }), (text) => {
        if (!mayHoldInexactNumbers(text)) expect(risky.test(text), text).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });
  it('finds a long number wherever it lies against the positions it looks at', () => {
    for (let pad = 0; pad < 40; pad++) {
      const text = `{"${'k'.repeat(pad)}":${'1'.repeat(16)}}`;
      expect(mayHoldInexactNumbers(text), text).toBe(true);
      expect(mayHoldInexactNumbers(`{"${'k'.repeat(pad)}":-1.5e-3}`)).toBe(true);
      expect(mayHoldInexactNumbers(`{"${'k'.repeat(pad)}":"${'1'.repeat(16)}"}`)).toBe(false);
    }
  });
});
