import { describe, expect, it } from 'vitest';
import { unstorableText } from './body.ts';

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
});
