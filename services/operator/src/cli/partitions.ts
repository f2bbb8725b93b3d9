// `partitions list | ensure | archive <partition> --to <dir> [--keep-table] | restore <manifest>`: the update logs' monthly partitions.
import { KAFKA_SETTINGS_CHECKS } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';
import { PARTITIONS_VERBS, partitionsTool } from '../tools/partitionsTool.ts';

const usage = `usage: node services/operator/src/cli/partitions.ts ${PARTITIONS_VERBS}`;
settingsAtStart({ roles: ['tools'], name: 'partitions', usage, checks: KAFKA_SETTINGS_CHECKS });
process.exitCode = await partitionsTool(process.argv.slice(2), process.env, { print: console.log, error: console.error, usage });
