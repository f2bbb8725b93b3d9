// `topics --check | --apply | --plan`: the topic plan as code against the cluster
// (docs/operations.md "Kafka in production"); the setup Job runs --apply.
import { KAFKA_SETTINGS_CHECKS, runTopicsCommand } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';

const usage = 'usage: node services/operator/src/cli/topics.ts --check | --apply | --plan';
settingsAtStart({ roles: ['tools'], name: 'topics', usage, checks: KAFKA_SETTINGS_CHECKS });
try {
  process.exitCode = await runTopicsCommand(process.argv.slice(2), process.env, (line) => console.log(line));
} catch (err) {
  console.error(`[topics] ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
