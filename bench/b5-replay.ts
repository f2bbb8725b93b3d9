// B5 replay: the same command log projected live (startProjector, as runProjector wires it) and
// replayed (replayCommandLog) into a fresh database; commands/s from first to last command each.
import { SchemaRegistry } from '@ingest/contracts';
import { createPool, type Pool } from '@ingest/db';
import type { Command } from '@ingest/domain';
import {
  createCommandLog,
  createKafka,
  createMessageSink,
  ensureTopics,
  readKafkaSecurity,
  topicPlan,
  type CommandEnvelopeLike,
  type TopicNames,
} from '@ingest/kafka';
import { compareReadModels, replayCommandLog } from '@ingest/operator';
import { startProjector } from '@ingest/projector';
import { createRegistry } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { B5_MIX, mixedCommands, take } from './lib/commandMix.ts';
import { createBenchDatabase, observedPool, type ObservedPool } from './lib/db.ts';
import { round, say, sleep } from './lib/util.ts';

// The same TLS/SASL settings as the services, for a KAFKA_BROKERS cluster that needs them.
const kafkaSecurity = readKafkaSecurity(process.env);

export interface B5Settings {
  commands: number;
  shops: number;
  partitions: number;
  live_partitions_concurrently: number;
  replay_batch_size: number;
}

/** Where the time of a consumer went: SQL statement time by phase per command (summed over concurrent transactions). */
export interface B5Profile {
  statements_per_command: number;
  sql_ms_per_command: Record<string, number>;
  sql_ms_per_command_total: number;
  /** seconds / commands, for comparison with the SQL total. */
  wall_ms_per_command: number;
}

function profileOf(p: ObservedPool, commands: number, seconds: number): B5Profile {
  const sql = p.sqlMs();
  const per = Object.fromEntries(
    Object.entries(sql)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, round(v / commands, 3)]),
  );
  return {
    statements_per_command: round(p.statements() / commands, 2),
    sql_ms_per_command: per,
    sql_ms_per_command_total: round(Object.values(sql).reduce((a, b) => a + b, 0) / commands, 3),
    wall_ms_per_command: round((1000 * seconds) / commands, 3),
  };
}

export interface B5Result {
  settings: B5Settings;
  mix: Record<string, number>;
  live: {
    commands: number;
    seconds: number;
    commands_per_s: number;
    wall_seconds_incl_group_join: number;
    statuses: Record<string, number>;
    transactions: number;
    profile: B5Profile;
  };
  replay: {
    commands: number;
    seconds: number;
    commands_per_s: number;
    replayer_reported_seconds: number;
    replayer_reported_commands_per_s: number;
    transactions: number;
    profile: B5Profile;
  };
  ratio: number;
  read_models_identical: boolean;
  differing_tables: string[];
}

/** A small mixed log (bench/lib/commandMix.ts): per shop its registry and catalogue, then the endpoints' commands in turn. */
const buildLog = (s: B5Settings): Command[] => take(mixedCommands({ ...B5_MIX, shops: s.shops }), s.commands);

/** The command as the gateway hands it to the command log. */
const envelope = (c: Command) => c as unknown as CommandEnvelopeLike;

async function waitForCount(pool: Pool, sql: string, want: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const n = (await pool.query<{ n: number }>(sql)).rows[0]!.n;
    if (n >= want) return;
    if (Date.now() > deadline) throw new Error(`timed out: ${n} of ${want} (${sql})`);
    await sleep(50);
  }
}

export async function runB5(s: B5Settings, brokers: string[], id: string): Promise<B5Result> {
  const topics: TopicNames = {
    commands: `bench.${id}.commands`,
    audit: `bench.${id}.audit`,
    stockZero: `bench.${id}.stock-zero`,
    stockRestored: `bench.${id}.stock-restored`,
  };
  const kafka = createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-${id}` });
  await ensureTopics(kafka, topicPlan(topics, s.partitions));
  const log = buildLog(s);
  const mix: Record<string, number> = {};
  for (const c of log) mix[c.kind] = (mix[c.kind] ?? 0) + 1;

  say(`B5: appending ${log.length} commands to ${topics.commands} (${s.partitions} partitions)`);
  const sink = await createMessageSink(kafka);
  const commandLog = createCommandLog(sink, topics.commands);
  const setupCount = 3 * s.shops;
  for (const c of log.slice(0, setupCount)) await commandLog.appendCommand(envelope(c));
  for (let i = setupCount; i < log.length; i += 200)
    await Promise.all(log.slice(i, i + 200).map((c) => commandLog.appendCommand(envelope(c))));
  await sink.close();

  const liveUrl = await createBenchDatabase('ingest_bench_b5_live');
  const replayUrl = await createBenchDatabase('ingest_bench_b5_replay');
  const liveAdmin = createPool({ connectionString: liveUrl, max: 1, applicationName: 'ingest-bench' });
  const livePool = observedPool(
    createPool({ connectionString: liveUrl, role: 'ingest_service', max: 10, applicationName: 'ingest-bench-projector' }),
  );
  say('B5: live projector (startProjector) on the log');
  const wallStart = performance.now();
  const projector = await startProjector({
    pool: livePool.pool,
    kafka: createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-projector-${id}` }),
    schemas: new SchemaRegistry(),
    topics,
    groupId: `bench-${id}-projector`,
    log: silentLogger(),
    registry: createRegistry(),
    members: s.live_partitions_concurrently,
  });
  let statuses: Record<string, number> = {};
  try {
    await waitForCount(liveAdmin, 'SELECT count(*)::int AS n FROM agent_runtime.command_results', log.length, 600_000);
    const wall = (performance.now() - wallStart) / 1000;
    const rows = (
      await liveAdmin.query<{ status_code: number; n: number }>(
        'SELECT status_code, count(*)::int AS n FROM agent_runtime.command_results GROUP BY 1',
      )
    ).rows;
    statuses = Object.fromEntries(rows.map((r) => [String(r.status_code), r.n]));
    say(`B5: live done in ${wall.toFixed(1)} s wall (statuses ${JSON.stringify(statuses)})`);
  } finally {
    await projector.stop();
    await livePool.pool.end();
    await liveAdmin.end();
  }
  const liveSeconds = (livePool.lastCommit()! - livePool.firstConnect()!) / 1000;
  const wallLive = (livePool.lastCommit()! - wallStart) / 1000;

  say('B5: replayCommandLog into a fresh database');
  const replayPool = observedPool(
    createPool({ connectionString: replayUrl, role: 'ingest_service', max: 4, applicationName: 'ingest-bench-replay' }),
  );
  let replayed;
  try {
    replayed = await replayCommandLog({
      pool: replayPool.pool,
      kafka: createKafka({ brokers, security: kafkaSecurity, clientId: `ingest-bench-replay-${id}` }),
      schemas: new SchemaRegistry(),
      topic: topics.commands,
      batchSize: s.replay_batch_size,
    });
  } finally {
    await replayPool.pool.end();
  }
  const replaySeconds = (replayPool.lastCommit()! - replayPool.firstConnect()!) / 1000;
  say(
    `B5: replay ${replayed.applied} applied, ${replayed.skipped} skipped; ${replaySeconds.toFixed(2)} s first to last commit (replayer says ${replayed.seconds.toFixed(2)} s)`,
  );

  const comparison = await compareReadModels(liveUrl, replayUrl);
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: Object.values(topics) }).catch(() => {});
  await admin.disconnect();

  const liveRate = log.length / liveSeconds;
  const replayRate = log.length / replaySeconds;
  return {
    settings: s,
    mix,
    live: {
      commands: log.length,
      seconds: round(liveSeconds, 2),
      commands_per_s: round(liveRate, 1),
      wall_seconds_incl_group_join: round(wallLive, 2),
      statuses,
      transactions: livePool.commits(),
      profile: profileOf(livePool, log.length, liveSeconds),
    },
    replay: {
      commands: replayed.applied + replayed.skipped,
      seconds: round(replaySeconds, 2),
      commands_per_s: round(replayRate, 1),
      replayer_reported_seconds: round(replayed.seconds, 2),
      replayer_reported_commands_per_s: round(replayed.commandsPerSecond, 1),
      transactions: replayPool.commits(),
      profile: profileOf(replayPool, log.length, replaySeconds),
    },
    ratio: round(replayRate / liveRate, 3),
    read_models_identical: comparison.every((t) => t.identical),
    differing_tables: comparison.filter((t) => !t.identical).map((t) => t.table),
  };
}
