// `npm run keys -- create <shop> --scopes … | list [shop] | revoke <key_id>`: per-shop API keys
// (D28, docs/operations.md "Per-shop API keys"). The same tool as the image's `node services/operator/src/cli/keys.ts`.
import { KEYS_VERBS, keysTool } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

const usage = `usage: npm run keys -- ${KEYS_VERBS}`;
settingsAtStart({ roles: ['tools'], name: 'npm run keys', usage });
process.exitCode = await keysTool(process.argv.slice(2), process.env, { print: console.log, error: console.error, usage });
