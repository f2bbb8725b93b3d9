// `npm run migrate`: create the database if missing and apply every pending migration (DATABASE_URL).
// The connecting user must be able to create schemas and roles (D25); the services then act as ingest_service.
import { ensureDatabase, migrate } from '@ingest/db';
import { readCommonConfig, settingsAtStart } from '@ingest/runtime';

settingsAtStart({ roles: ['tools'], name: 'npm run migrate', usage: 'usage: npm run migrate [-- --help]' });

const { databaseUrl } = readCommonConfig(process.env);
const log = (msg: string) => console.error(`[migrate] ${msg}`);
if ((await ensureDatabase(databaseUrl)) === 'created') log(`created database ${new URL(databaseUrl).pathname.slice(1)}`);
const applied = await migrate(databaseUrl, log);
log(applied.length ? `applied ${applied.length} migration(s)` : 'database is up to date');
