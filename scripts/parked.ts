// `npm run parked -- list | retry <command_id> [--reason ..] | skip <command_id> --reason .. [--hold]`: resolve parked commands
// (docs/operations.md "Parked commands"). The same tool as the image's `node services/operator/src/cli/parked.ts`.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { PARKED_VERBS, parkedTool } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

const usage = `usage: npm run parked -- ${PARKED_VERBS}`;
settingsAtStart({ roles: ['tools'], name: 'npm run parked', usage, checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await parkedTool(process.argv.slice(2), process.env, { print: console.log, error: console.error, usage });
