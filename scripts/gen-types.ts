// Generates TypeScript types from schemas/ (the single source, STYLE.md).
//   node scripts/gen-types.ts          write packages/contracts/src/generated/*.ts
//   node scripts/gen-types.ts --check  fail when the generated files are stale (run by npm test)
import { readdirSync, readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileFromFile } from 'json-schema-to-typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'packages/contracts/src/generated');
const check = process.argv.includes('--check');
let stale = 0;

mkdirSync(outDir, { recursive: true });
for (const group of ['http', 'commands', 'events']) {
  const dir = join(root, 'schemas', group);
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const ts = await compileFromFile(join(dir, file), {
      cwd: dir,
      bannerComment: `// Generated from schemas/${group}/${file} by scripts/gen-types.ts. Do not edit.`,
      declareExternallyReferenced: true,
      additionalProperties: false,
      strictIndexSignatures: true,
      format: true,
      style: { singleQuote: true, printWidth: 120 },
    });
    const target = join(outDir, `${group}.${basename(file, '.json')}.ts`);
    const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (current === ts) continue;
    if (check) {
      stale++;
      console.error(`stale: ${target} (run: npm run gen)`);
    } else {
      writeFileSync(target, ts);
      console.log(`wrote ${target}`);
    }
  }
}
if (stale) process.exit(1);
