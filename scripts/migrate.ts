// `npm run migrate`: create the database if missing and apply every pending migration (DATABASE_URL).
// The same tool as the image's `node services/operator/src/cli/migrate.ts`.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { migrateTool } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

settingsAtStart({ roles: ['tools'], name: 'npm run migrate', usage: 'usage: npm run migrate [-- --help]', checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await migrateTool(process.env, (msg) => console.error(`[migrate] ${msg}`));
