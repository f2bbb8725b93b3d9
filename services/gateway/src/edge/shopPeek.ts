/** The longest shop the schemas accept: a longer one is the route's 400 and is not looked at here. */
export const MAX_SHOP_LENGTH = 255;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SHOP_KEY = Buffer.from('"shop"');

function skipWhitespace(buf: Buffer, i: number): number {
  while (i < buf.length) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/**
 * The shop of a UTF-8 JSON body read without parsing it (so that a shop over its budget is refused
 * before its body is parsed), in O(length of the shop): the value of a leading `"shop"` key (the body
 * opens with `{"shop":"<value>"`, whitespace allowed between tokens), or null for anything else or a
 * value that is empty, blank, too long or holds a control or replacement character. `certain()` (two
 * scans of the whole body, run only when it matters) says whether that reading is the one JSON.parse
 * would give: the body holds no backslash at all (so no key can be spelled `"\u0073hop"` and the value
 * has no escape), and `"shop"` occurs nowhere else in it (so no later duplicate key can override it).
 */
export function firstShop(buf: Buffer): { shop: string; certain(): boolean } | null {
  let i = skipWhitespace(buf, 0);
  if (buf[i] !== 0x7b) return null;
  i = skipWhitespace(buf, i + 1);
  if (!buf.subarray(i, i + SHOP_KEY.length).equals(SHOP_KEY)) return null;
  const keyAt = i;
  i = skipWhitespace(buf, i + SHOP_KEY.length);
  if (buf[i] !== 0x3a) return null;
  i = skipWhitespace(buf, i + 1);
  if (buf[i] !== QUOTE) return null;
  const from = i + 1;
  const to = buf.indexOf(QUOTE, from);
  // A UTF-8 character is at most 4 bytes: a longer value cannot be a shop the schemas accept.
  if (to < 0 || to - from > 4 * MAX_SHOP_LENGTH) return null;
  const shop = buf.toString('utf8', from, to);
  // Control characters are invalid in a JSON string; U+FFFD may stand for bytes that were not UTF-8.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\ufffd]/.test(shop) || !shop.trim() || shop.length > MAX_SHOP_LENGTH) return null;
  return { shop, certain: () => !buf.includes(BACKSLASH) && buf.indexOf(SHOP_KEY, keyAt + SHOP_KEY.length) < 0 };
}
