// `migrate`: create the database if missing and apply pending migrations (the setup Job's first step).
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';
import { migrateTool } from '../tools/migrateTool.ts';

settingsAtStart({
  roles: ['tools'],
  name: 'migrate',
  usage: 'usage: node services/operator/src/cli/migrate.ts [--help]',
  checks: KAFKA_SETTINGS_CHECKS,
});
process.exitCode = await migrateTool(process.env, (msg) => console.error(`[migrate] ${msg}`));
