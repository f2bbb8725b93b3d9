// `npm run topics -- --check | --apply`: the live topics against the plan
// (docs/operations.md "Topic plan as code").
import { readCommonConfig } from '@ingest/runtime';
import { createKafka } from './client.ts';
import { readKafkaSecurity } from './kafkaSecurity.ts';
import { readTopicReplication, type TopicReplication } from './topicReplication.ts';
import { applyTopicPlan, canApply, checkTopics, describeDrift, fitReplication, topicPlan, type TopicPlan } from './topics.ts';

export const TOPICS_USAGE = 'usage: npm run topics -- --check | --apply | --plan';

/** The plan the environment asks for: topic names, KAFKA_PARTITIONS, replication (dev stack: 1/1). */
export function topicPlanFromEnv(env: NodeJS.ProcessEnv, replication: TopicReplication = readTopicReplication(env)): TopicPlan[] {
  const common = readCommonConfig(env);
  return topicPlan(common.topics, common.kafkaPartitions, replication);
}

/** Returns the exit code: 0 as planned, 1 drift (check) or drift left (apply), 2 usage. */
export async function runTopicsCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<number> {
  const mode = args.find((a) => a.startsWith('--')) ?? '--check';
  if (!['--check', '--apply', '--plan'].includes(mode) || args.length > 1) {
    print(TOPICS_USAGE);
    return 2;
  }
  const common = readCommonConfig(env);
  const security = readKafkaSecurity(env);
  if (mode === '--plan') {
    for (const t of topicPlanFromEnv(env))
      print(
        `${t.topic}: ${t.numPartitions} partitions, replication ${t.replicationFactor ?? 'broker default'}, ${Object.entries(t.configs)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')}`,
      );
    return 0;
  }
  const kafka = createKafka({ brokers: common.kafkaBrokers, security, clientId: 'ingest-topics' });
  const fitted = await fitReplication(kafka, readTopicReplication(env));
  if (fitted.note) print(fitted.note);
  const plan = topicPlanFromEnv(env, fitted.replication);
  const where = common.kafkaBrokers.join(',');
  if (mode === '--check') {
    const drift = await checkTopics(kafka, plan);
    if (drift.length === 0) {
      print(`no drift: ${plan.length} topics on ${where} match the plan`);
      return 0;
    }
    print(`drift on ${where} (${drift.length}):`);
    for (const d of drift) print(`  ${describeDrift(d)}`);
    if (drift.some(canApply)) print('`npm run topics -- --apply` fixes what Kafka allows to change');
    return 1;
  }
  const result = await applyTopicPlan(kafka, plan);
  for (const line of result.done) print(`applied: ${line}`);
  for (const d of result.cannot) print(`cannot:  ${describeDrift(d)}`);
  if (result.done.length === 0 && result.cannot.length === 0) print(`nothing to do: ${plan.length} topics on ${where} match the plan`);
  return result.cannot.length ? 1 : 0;
}
