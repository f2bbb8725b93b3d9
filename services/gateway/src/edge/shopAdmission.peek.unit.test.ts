import { describe, expect, it } from 'vitest';
import { firstShop } from './shopAdmission.ts';

// Fair admission per shop: a shop over its budget is refused on the raw body, so the shop read
// from the bytes must be the one JSON.parse gives, or nothing (then the body is parsed).
const peek = (text: string): string | null => {
  const first = firstShop(Buffer.from(text, 'utf8'));
  return first && first.certain() ? first.shop : null;
};

describe('firstShop, made certain', () => {
  it('reads the shop of a body that opens with it', () => {
    expect(peek('{"shop":"a.example","lines":[]}')).toBe('a.example');
    expect(peek(' \n{ "shop" :\t"a.example" , "lines": [] }')).toBe('a.example');
    expect(peek('{"shop":"Bücher Ümlaut","x":1}')).toBe('Bücher Ümlaut');
  });

  it('reads nothing where the bytes do not make the shop certain', () => {
    for (const text of [
      '{"lines":[],"shop":"a.example"}', // not the first key
      '{"shop":"a.example","shop":"b.example"}', // a later duplicate wins in JSON.parse
      '{"shop":"a.example","lines":[{"note":"\\"shop\\""}]}', // a backslash anywhere
      '{"shop":"a.exa\\u006dple"}', // an escape in the value
      '{"\\u0073hop":"b.example","shop":"a.example"}', // the key spelled with an escape
      '{"shop":"a.example","notes":"the \\"shop\\" key"}',
      '{"shop":"a.example","products":[{"product_name":"\\"shop\\""}]}',
      '{"shop":"","lines":[]}', // empty
      '{"shop":"   ","lines":[]}', // blank
      `{"shop":"${'x'.repeat(256)}"}`, // longer than the schemas accept
      '{"shop":"a\tb"}', // a control character: not valid JSON
      '{"shop":"a.example', // no closing quote
      '{"shop":1}',
      '["shop","a.example"]',
      '',
      '\ufeff{"shop":"a.example"}', // a byte-order mark
    ])
      expect(peek(text), text).toBeNull();
  });

  it('a shop it reads is the one JSON.parse reads, over many shapes of body', () => {
    const shops = ['a.example', 'Bücher', 'x y', 'ü'.repeat(255), '日本.example', '"', 'shop'];
    const tails = [
      '',
      ',"lines":[]',
      ',"lines":[{"barcode":"shop"}]',
      ',"products":[{"barcode":"1","product_name":"N"}]',
      ',"x":{"shop":"z"}',
    ];
    const spaces = ['', ' ', '\n\t '];
    let read = 0;
    for (const shop of shops)
      for (const tail of tails)
        for (const sp of spaces) {
          const text = `${sp}{${sp}${JSON.stringify('shop')}${sp}:${sp}${JSON.stringify(shop)}${tail}${sp}}`;
          const got = peek(text);
          if (got !== null) {
            read++;
            expect(got).toBe((JSON.parse(text) as { shop: string }).shop);
          }
        }
    // Most of them are read (the others hold `"shop"` again, or a quote escaped in the shop).
    expect(read).toBeGreaterThan(40);
  });
});
