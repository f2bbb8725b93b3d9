import { describe, expect, it } from 'vitest';
import { isUuid } from './ids.ts';

// The canonical uuid text a PostgreSQL uuid column and our derived ids use (order rows' channel_id
// and location_id are checked with it, D20): nothing before it, nothing after it.
describe('isUuid', () => {
  const ID = '0190a000-0000-7000-8000-0000000000a1';

  it('accepts the canonical text in either case', () => {
    expect(isUuid(ID)).toBe(true);
    expect(isUuid(ID.toUpperCase())).toBe(true);
  });

  it('refuses `urn:uuid:`, braces and anything before or after the 36 characters', () => {
    expect(isUuid(`urn:uuid:${ID}`)).toBe(false);
    expect(isUuid(`{${ID}}`)).toBe(false);
    expect(isUuid(`x${ID}`)).toBe(false);
    expect(isUuid(`${ID}0`)).toBe(false);
    expect(isUuid(ID.replaceAll('-', ''))).toBe(false);
  });
});
