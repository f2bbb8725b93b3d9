// `npm run verify`: compares the live read model (DATABASE_URL) with the scratch rebuild
// (REPLAY_DATABASE_URL, default `<live>_replay`) table by table by checksum (D26); lists the
// differing rows; exits 0 only when every table is identical.
import { withDatabase } from '@ingest/db';
import { compareReadModels } from '@ingest/projector';
import { readCommonConfig, setting, settingsAtStart } from '@ingest/runtime';

settingsAtStart({ roles: ['replay'], name: 'npm run verify', usage: 'usage: npm run verify [-- --help]' });

const { databaseUrl } = readCommonConfig(process.env);
const scratchUrl =
  setting(process.env, 'REPLAY_DATABASE_URL') ?? withDatabase(databaseUrl, `${new URL(databaseUrl).pathname.slice(1)}_replay`);
const tables = await compareReadModels(databaseUrl, scratchUrl);
let differing = 0;
for (const t of tables) {
  console.log(`${t.identical ? 'identical' : 'DIFFERENT'}  ${t.table}  live ${t.liveRows} rows, scratch ${t.scratchRows} rows`);
  if (t.identical) continue;
  differing++;
  for (const k of t.onlyLive) console.log(`    only in live:    ${k}`);
  for (const k of t.onlyScratch) console.log(`    only in scratch: ${k}`);
  for (const k of t.different) console.log(`    different:       ${k}`);
}
console.log(differing ? `\n${differing} table(s) differ` : '\nevery table is identical');
process.exit(differing ? 1 : 0);
