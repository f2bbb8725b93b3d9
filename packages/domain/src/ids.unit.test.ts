import fc from 'fast-check';
import { v5 as referenceV5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { EVENT_NS, LOG_NS, logId, namespaceBytes, ORDER_LINE_NS, PRODUCT_NS, productId, uuidv5 } from './ids.ts';

// D3: ids are derived, so a replay must derive exactly the ids the live projector did. The
// fast UUIDv5 must therefore agree with the reference implementation on every input.
const NAMESPACES = [PRODUCT_NS, LOG_NS, EVENT_NS, ORDER_LINE_NS];
const text = (ns: Buffer) => {
  const x = ns.toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
};

describe('uuidv5', () => {
  it('equals the uuid package for any name (ASCII, NUL separators, astral and combining characters)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.constantFrom(...NAMESPACES), (name, ns) => {
        expect(uuidv5(name, ns)).toBe(referenceV5(name, text(ns)));
      }),
      { numRuns: 2000 },
    );
  }, 30_000);

  it('keeps the ids already stored: known values', () => {
    expect(productId('shop.example', '4901234567894')).toBe(
      referenceV5('shop.example\u00004901234567894', '5b0f3c2e-8d7a-4c1e-9f3b-2a6d4e8c1b70'),
    );
    // RFC 9562, appendix A.4: "www.example.com" in the DNS namespace.
    expect(uuidv5('www.example.com', namespaceBytes('6ba7b810-9dad-11d1-80b4-00c04fd430c8'))).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });
});

describe('logId (D3, time-ordered)', () => {
  const cmd = '0190c2a4-1111-7000-8000-000000000001';
  it("is a UUIDv8 whose first 48 bits are the command id's time, then n, then bits of the UUIDv5 of (command_id, n)", () => {
    const id = logId(cmd, 7);
    expect(id).toMatch(/^0190c2a4-1111-8000-87[0-9a-f]{2}-[0-9a-f]{12}$/);
    const v5 = referenceV5(`${cmd}\u00007`, '9c1d7e4a-3b2f-4a6e-8d5c-7f0e1a2b3c4d').replaceAll('-', '');
    expect(id.replaceAll('-', '').slice(18)).toBe(v5.slice(18));
  });

  it('orders by n within a command and by time across commands', () => {
    const ids = Array.from({ length: 20_000 }, (_, n) => logId(cmd, n));
    expect([...ids].sort()).toEqual(ids);
    expect(logId('0190c2a4-1112-7000-8000-000000000001', 0) > logId(cmd, 19_999)).toBe(true);
  });

  it('never collides: two commands of the same millisecond, every n', () => {
    fc.assert(
      fc.property(fc.uuid({ version: 7 }), fc.uuid({ version: 7 }), fc.nat({ max: 300_000 }), fc.nat({ max: 300_000 }), (a, b, n, m) => {
        const sameMs = b.slice(0, 13) === a.slice(0, 13) ? b : a.slice(0, 13) + b.slice(13);
        fc.pre(sameMs !== a || n !== m);
        expect(logId(a, n)).not.toBe(logId(sameMs, m));
      }),
      { numRuns: 2000 },
    );
  });
});
