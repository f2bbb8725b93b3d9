// The topic plan as code against the live cluster (docs/operations.md "Kafka in production"):
//   npm run topics -- --check   print the drift (partitions, replication, configs); exit 1 on drift
//   npm run topics -- --apply   create what is missing, add partitions, set configs; say what it cannot
//   npm run topics -- --plan    print the plan
// The same tool as the image's `node services/operator/src/cli/topics.ts`, with the repository's .env.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';
import { KAFKA_SETTINGS_CHECKS, runTopicsCommand, TOPICS_USAGE } from '@ingest/kafka';
import { settingsAtStart } from '@ingest/runtime';

if (existsSync(join(REPO_ROOT, '.env'))) process.loadEnvFile(join(REPO_ROOT, '.env'));
settingsAtStart({ roles: ['tools'], name: 'npm run topics', usage: TOPICS_USAGE, checks: KAFKA_SETTINGS_CHECKS });
try {
  process.exitCode = await runTopicsCommand(process.argv.slice(2), process.env, (line) => console.log(line));
} catch (err) {
  console.error(`[topics] ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
