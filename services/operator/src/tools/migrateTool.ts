// Create the database if missing and apply every pending migration (DATABASE_URL). The connecting
// user must be able to create schemas and roles (D25); the services then act as ingest_service.
import { ensureDatabase, migrate } from '@ingest/db';
import { readCommonConfig } from '@ingest/runtime';

export async function migrateTool(env: NodeJS.ProcessEnv, log: (msg: string) => void): Promise<number> {
  const { databaseUrl } = readCommonConfig(env);
  if ((await ensureDatabase(databaseUrl)) === 'created') log(`created database ${new URL(databaseUrl).pathname.slice(1)}`);
  const applied = await migrate(databaseUrl, log);
  log(applied.length ? `applied ${applied.length} migration(s)` : 'database is up to date');
  return 0;
}
