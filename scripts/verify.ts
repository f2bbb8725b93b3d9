// `npm run verify`: compares the live read model (DATABASE_URL) with the scratch rebuild (D26).
// The same tool as the image's `node services/operator/src/cli/verify.ts`.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { verifyTool } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

settingsAtStart({ roles: ['replay'], name: 'npm run verify', usage: 'usage: npm run verify [-- --help]', checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await verifyTool(process.env, console.log);
