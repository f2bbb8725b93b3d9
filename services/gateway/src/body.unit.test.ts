import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, nestedDeeperThan, unstorableText } from './body.ts';

describe('unstorableText (no 500 for anything a client can send)', () => {
  it('accepts ordinary bodies, including astral characters as proper surrogate pairs', () => {
    expect(unstorableText({ shop: 'a.example', products: [{ barcode: '1', product_name: 'Tea 🍵' }] })).toBeNull();
  });
  it('refuses NUL in values and in keys', () => {
    expect(unstorableText({ a: ['x\u0000y'] })).toMatch(/NUL/);
    expect(unstorableText({ ['k\u0000']: 1 })).toMatch(/NUL/);
  });
  it('refuses an unpaired surrogate', () => {
    expect(unstorableText({ name: 'Store \ud800' })).toMatch(/unpaired surrogate/);
  });
  it('refuses nesting deeper than any request of the spec, counting brackets outside strings only', () => {
    const deep = Buffer.from(`{"rows":[{"customer_id":${'['.repeat(100)}${']'.repeat(100)}}]}`);
    expect(nestedDeeperThan(deep, MAX_DEPTH)).toBe(true);
    const brackets = Buffer.from(JSON.stringify({ rows: [{ note: '[[[[{{{{'.repeat(50), q: 'a\\"[[[' }] }));
    expect(nestedDeeperThan(brackets, MAX_DEPTH)).toBe(false);
    expect(nestedDeeperThan(Buffer.from(JSON.stringify({ a: [{ b: [{ c: 1 }] }] })), 5)).toBe(false);
  });
});
