import { describe, expect, it } from 'vitest';
import { secretMatches } from './auth.ts';

// D9: each secret setting is a list (rotation with two active at once); the header value is
// compared exactly, in constant time, against every configured secret.
describe('secretMatches (D9)', () => {
  it('matches the configured secret', () => {
    expect(secretMatches('s3cret', ['s3cret'])).toBe(true);
  });

  it('refuses a different value', () => {
    expect(secretMatches('other', ['s3cret'])).toBe(false);
    expect(secretMatches('S3CRET', ['s3cret'])).toBe(false);
  });

  it('accepts every secret of a list and nothing else', () => {
    const secrets = ['old', 'new'];
    expect(secretMatches('old', secrets)).toBe(true);
    expect(secretMatches('new', secrets)).toBe(true);
    expect(secretMatches('old,new', secrets)).toBe(false);
    expect(secretMatches('older', secrets)).toBe(false);
    expect(secretMatches('', secrets)).toBe(false);
  });

  it('a matching secret later in the list still matches (no early exit on the first mismatch)', () => {
    expect(secretMatches('c', ['a', 'b', 'c'])).toBe(true);
  });

  it('refuses a missing header', () => {
    expect(secretMatches(undefined, ['s3cret'])).toBe(false);
    expect(secretMatches(undefined, [])).toBe(false);
  });

  it('refuses everything when no secret is configured', () => {
    expect(secretMatches('s3cret', [])).toBe(false);
    expect(secretMatches('', [])).toBe(false);
  });

  it('a prefix of a secret does not match', () => {
    expect(secretMatches('s3cr', ['s3cret'])).toBe(false);
    expect(secretMatches('s', ['s3cret'])).toBe(false);
  });

  it('a secret that is a prefix of the provided value does not match', () => {
    expect(secretMatches('s3cret-and-more', ['s3cret'])).toBe(false);
    expect(secretMatches('s3cret ', ['s3cret'])).toBe(false);
  });
});
