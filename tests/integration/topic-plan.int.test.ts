import { randomUUID } from 'node:crypto';
import { ConfigResourceTypes } from 'kafkajs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createKafka, ensureTopics, fitReplication, runTopicsCommand, topicPlanFromEnv } from '@ingest/kafka';
import { waitFor } from '../support/pipeline.ts';

// The topic plan as code (docs/operations.md "Topic plan as code"). `npm run topics -- --check`
// against a test-specific topic set on the shared broker: drift when missing, none after ensure,
// the drift of a config changed by hand, `--apply` fixes it and says what it cannot (fewer
// partitions).
const id = randomUUID().slice(0, 8);
const brokers = inject('kafkaBrokers');
const env: NodeJS.ProcessEnv = {
  KAFKA_BROKERS: brokers.join(','),
  KAFKA_REPLICATION_FACTOR: '1',
  KAFKA_MIN_INSYNC_REPLICAS: '1',
  KAFKA_PARTITIONS: '2',
  COMMANDS_TOPIC: `test.${id}.plan.commands`,
  AUDIT_TOPIC: `test.${id}.plan.audit`,
  STOCK_ZERO_TOPIC: `test.${id}.plan.stock-zero`,
  STOCK_RESTORED_TOPIC: `test.${id}.plan.stock-restored`,
};
const kafka = createKafka({ brokers, clientId: `test-${id}-topics` });

async function topics(mode: string): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await runTopicsCommand([mode], env, (line) => out.push(line));
  return { code, out };
}

afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: topicPlanFromEnv(env).map((t) => t.topic) }).catch(() => {});
  await admin.disconnect();
});

describe('npm run topics', () => {
  it('shows missing topics, no drift after ensure, a config altered by hand, and --apply fixes what Kafka allows', async () => {
    const missing = await topics('--check');
    expect(missing.code).toBe(1);
    expect(missing.out.filter((l) => l.endsWith(': missing'))).toHaveLength(4);

    await ensureTopics(kafka, topicPlanFromEnv(env));
    expect(await topics('--check')).toEqual({ code: 0, out: [`no drift: 4 topics on ${brokers.join(',')} match the plan`] });

    // By hand, as an operator would: a week's retention on the command log, one more audit partition.
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.alterConfigs({
        validateOnly: false,
        resources: [
          { type: ConfigResourceTypes.TOPIC, name: env['COMMANDS_TOPIC']!, configEntries: [{ name: 'retention.ms', value: '604800000' }] },
        ],
      });
      await admin.createPartitions({ topicPartitions: [{ topic: env['AUDIT_TOPIC']!, count: 3 }] });
    } finally {
      await admin.disconnect();
    }
    // Both changes reach what --check describes a moment after the admin calls return (the metadata
    // propagates; a run on Kafka 4.4 read 2 audit partitions once right after createPartitions).
    const drift = await waitFor(
      async () => {
        const r = await topics('--check');
        return r.out.filter((l) => l.startsWith('  ')).length === 2 ? r : null;
      },
      10_000,
      'both changes visible to --check',
    );
    expect(drift.code).toBe(1);
    expect(drift.out).toContain(`  ${env['COMMANDS_TOPIC']}: retention.ms=604800000, plan -1`);
    expect(drift.out.some((l) => l.includes(`${env['AUDIT_TOPIC']}: partitions 3, plan 2 (cannot fix`))).toBe(true);

    const applied = await topics('--apply');
    expect(applied.out).toContain(`applied: ${env['COMMANDS_TOPIC']}: retention.ms 604800000 -> -1`);
    expect(applied.out.some((l) => l.startsWith(`cannot:  ${env['AUDIT_TOPIC']}: partitions 3, plan 2`))).toBe(true);
    expect(applied.code).toBe(1);

    // A config change reaches the broker's described configs a moment after alterConfigs returns (its
    // metadata propagates): a CI run read the old retention once right after --apply. Read until it shows.
    const drifted = (r: { out: string[] }) => r.out.filter((l) => l.startsWith('  '));
    const after = await waitFor(
      async () => {
        const r = await topics('--check');
        return drifted(r).length === 1 ? r : null;
      },
      10_000,
      'the applied retention visible to --check',
    );
    expect(drifted(after)).toEqual([expect.stringContaining(`${env['AUDIT_TOPIC']}: partitions 3, plan 2`)]);
  });
});

describe('default replication on a small cluster', () => {
  it('is fitted to the cluster with a note; an explicit KAFKA_REPLICATION_FACTOR is kept', async () => {
    const fitted = await fitReplication(kafka, { replicationFactor: 3, minInsyncReplicas: 2, explicit: false });
    expect(fitted.replication).toEqual({ replicationFactor: 1, minInsyncReplicas: 1, explicit: false });
    expect(fitted.note).toMatch(/1 broker\(s\): new topics get replication 1 and min.insync.replicas 1 instead of 3 and 2/);
    const kept = await fitReplication(kafka, { replicationFactor: 3, minInsyncReplicas: 2, explicit: true });
    expect(kept).toEqual({ replication: { replicationFactor: 3, minInsyncReplicas: 2, explicit: true } });
  });
});
