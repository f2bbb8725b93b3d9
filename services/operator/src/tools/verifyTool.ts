// Compares the live read model (DATABASE_URL) with the scratch rebuild (REPLAY_DATABASE_URL,
// default `<live>_replay`) table by table by checksum (D26); lists the differing rows. 0 only when
// every table is identical.
import { withDatabase } from '@ingest/db';
import { readCommonConfig, setting } from '@ingest/runtime';
import { compareReadModels } from '../replay/compareReadModels.ts';

export async function verifyTool(env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<number> {
  const { databaseUrl } = readCommonConfig(env);
  const scratchUrl = setting(env, 'REPLAY_DATABASE_URL') ?? withDatabase(databaseUrl, `${new URL(databaseUrl).pathname.slice(1)}_replay`);
  const tables = await compareReadModels(databaseUrl, scratchUrl);
  let differing = 0;
  for (const t of tables) {
    print(`${t.identical ? 'identical' : 'DIFFERENT'}  ${t.table}  live ${t.liveRows} rows, scratch ${t.scratchRows} rows`);
    if (t.identical) continue;
    differing++;
    for (const k of t.onlyLive) print(`    only in live:    ${k}`);
    for (const k of t.onlyScratch) print(`    only in scratch: ${k}`);
    for (const k of t.different) print(`    different:       ${k}`);
  }
  print(differing ? `\n${differing} table(s) differ` : '\nevery table is identical');
  return differing ? 1 : 0;
}
