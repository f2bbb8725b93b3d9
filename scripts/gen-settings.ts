// Writes the README's settings table from packages/runtime/src/settings/catalog.ts (issue 15 item 9).
//   node scripts/gen-settings.ts   (part of `npm run gen`; a unit test fails on a stale table)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withSettingsTable } from '@ingest/runtime';

const readme = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'README.md');
const before = readFileSync(readme, 'utf8');
const after = withSettingsTable(before);
if (after === null) {
  console.error('README.md has no settings table markers');
  process.exit(1);
}
if (after !== before) writeFileSync(readme, after);
console.log(after === before ? 'README settings table is up to date' : 'wrote the README settings table');
