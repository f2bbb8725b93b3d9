import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.ts';
import { publicBaseUrl } from './publicUrl.ts';

// The base of the served schemas' $ids and of every event's dataschema.
describe('publicBaseUrl (PUBLIC_BASE_URL)', () => {
  it('is the setting without a trailing slash', () => {
    expect(publicBaseUrl({ PUBLIC_BASE_URL: 'https://ingest.example.com/' })).toBe('https://ingest.example.com');
    expect(publicBaseUrl({ PUBLIC_BASE_URL: ' https://example.com/ingest ' })).toBe('https://example.com/ingest');
  });

  it('defaults to the listen address: a wildcard host reads as 127.0.0.1, the bound port wins over PORT', () => {
    expect(publicBaseUrl({})).toBe('http://127.0.0.1:8080');
    expect(publicBaseUrl({ HOST: '0.0.0.0', PORT: '9000' })).toBe('http://127.0.0.1:9000');
    expect(publicBaseUrl({ HOST: 'gw.internal', PORT: '0' }, 41234)).toBe('http://gw.internal:41234');
    expect(publicBaseUrl({ HOST: '::1' }, 8080)).toBe('http://[::1]:8080');
    expect(publicBaseUrl({ PUBLIC_BASE_URL: 'http://x.test' }, 41234)).toBe('http://x.test');
  });

  it('refuses what is not an absolute http(s) URL, or carries a query', () => {
    for (const bad of ['ingest.example.com', 'ftp://x.test', 'http://x.test/?a=1', 'http://x.test/#f'])
      expect(() => publicBaseUrl({ PUBLIC_BASE_URL: bad }), bad).toThrow(ConfigError);
  });
});
