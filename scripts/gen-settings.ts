// Writes the settings table of docs/operations.md ("Configuration") from packages/runtime/src/config/catalog.ts
//   node scripts/gen-settings.ts   (part of `npm run gen`; a unit test fails on a stale table)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withSettingsTable } from '@ingest/runtime';

const doc = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'docs', 'operations.md');
const before = readFileSync(doc, 'utf8');
const after = withSettingsTable(before);
if (after === null) {
  console.error('docs/operations.md has no settings table markers');
  process.exit(1);
}
if (after !== before) writeFileSync(doc, after);
console.log(after === before ? 'docs/operations.md settings table is up to date' : 'wrote the settings table of docs/operations.md');
