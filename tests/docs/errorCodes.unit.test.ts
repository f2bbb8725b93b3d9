// docs/api.md's table of error codes is the catalog's (packages/contracts/src/errorCodes.ts):
// every code with its status, and no code the catalog does not have.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@ingest/contracts';

const API_DOC = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'docs/api.md');

describe('docs/api.md error codes', () => {
  it('lists every code of the catalog with its status, and nothing else', () => {
    const documented = [...readFileSync(API_DOC, 'utf8').matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| /gm)].map((m) => [m[1], Number(m[2])]);
    const catalog = Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]);
    expect(documented).toEqual(catalog);
  });
});
