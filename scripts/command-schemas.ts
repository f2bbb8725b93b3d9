// Releases the command schemas (docs/replay.md#command-versions): writes today's schemas/commands/*.json
// as schemas/commands/v<COMMAND_VERSION>/, each self-contained (what it refers to under its $defs), and
// adds their sha256 to schemas/commands/released.sha256. A released version is never written again.
//   node scripts/command-schemas.ts release
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lockText, readLock, releasedCommandsLock, releasedForm, releasedText, SCHEMAS_DIR, sha256Hex } from '@ingest/contracts';
import { COMMAND_VERSION } from '@ingest/domain';

const [command] = process.argv.slice(2);
if (command !== 'release') {
  console.error('usage: node scripts/command-schemas.ts release   (releases schemas/commands/*.json as v<COMMAND_VERSION>)');
  process.exit(2);
}
const commands = join(SCHEMAS_DIR, 'commands');
const folder = join(commands, `v${COMMAND_VERSION}`);
if (existsSync(folder)) {
  console.error(
    `schemas/commands/v${COMMAND_VERSION}/ is released already, and a released version never changes. ` +
      `To change the command schemas, raise COMMAND_VERSION (packages/domain/src/versions/commandVersions.ts) first: ` +
      `docs/replay.md#how-to-add-a-command-version`,
  );
  process.exit(1);
}
mkdirSync(folder);
const lock = releasedCommandsLock();
const entries = readLock(lock);
for (const file of readdirSync(commands)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  const text = releasedText(releasedForm(file, COMMAND_VERSION));
  writeFileSync(join(folder, file), text);
  entries.set(`v${COMMAND_VERSION}/${file}`, sha256Hex(readFileSync(join(folder, file))));
  console.log(`wrote schemas/commands/v${COMMAND_VERSION}/${file}`);
}
writeFileSync(join(commands, lock.lock), lockText(entries));
console.log(`added them to schemas/commands/${lock.lock}`);
