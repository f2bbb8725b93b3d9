// `parked list | retry <command_id> [--reason ..] | skip <command_id> --reason .. [--hold]`: resolve parked commands.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';
import { PARKED_VERBS, parkedTool } from '../tools/parkedTool.ts';

const usage = `usage: node services/operator/src/cli/parked.ts ${PARKED_VERBS}`;
settingsAtStart({ roles: ['tools'], name: 'parked', usage, checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await parkedTool(process.argv.slice(2), process.env, { print: console.log, error: console.error, usage });
