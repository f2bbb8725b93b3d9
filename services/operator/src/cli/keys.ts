// `keys create <shop> --scopes … | list [shop] | revoke <key_id>`: per-shop API keys (D28).
import { settingsAtStart } from '@ingest/runtime';
import { KEYS_VERBS, keysTool } from '../tools/keysTool.ts';

const usage = `usage: node services/operator/src/cli/keys.ts ${KEYS_VERBS}`;
settingsAtStart({ roles: ['tools'], name: 'keys', usage });
process.exitCode = await keysTool(process.argv.slice(2), process.env, { print: console.log, error: console.error, usage });
