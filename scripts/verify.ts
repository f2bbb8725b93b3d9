// `npm run verify`: compares the live read model (DATABASE_URL) with the scratch rebuild (D26).
// The same tool as the image's `node services/operator/src/cli/verify.ts`.
import { verifyTool } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

settingsAtStart({ roles: ['replay'], name: 'npm run verify', usage: 'usage: npm run verify [-- --help]' });
process.exitCode = await verifyTool(process.env, console.log);
