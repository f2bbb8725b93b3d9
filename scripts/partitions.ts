// `npm run partitions -- list | ensure | archive <partition> --to <dir> [--keep-table] | restore <manifest>`: the update logs'
// monthly partitions (docs/operations.md "Update log partitions"). The same tool as the image's `node services/operator/src/cli/partitions.ts`.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { PARTITIONS_VERBS, partitionsTool } from '@ingest/operator';
import { settingsAtStart } from '@ingest/runtime';

const usage = `usage: npm run partitions -- ${PARTITIONS_VERBS}`;
settingsAtStart({ roles: ['tools'], name: 'npm run partitions', usage, checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await partitionsTool(process.argv.slice(2), process.env, { print: console.log, error: console.error, usage });
