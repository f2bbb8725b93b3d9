import type { SchemaRegistry } from '@ingest/contracts';
import { withTransaction, type Pool } from '@ingest/db';
import { runConsumer, type IncomingMessage, type Kafka, type RunningConsumer, type TopicNames } from '@ingest/kafka';
import { Counter, Gauge, Histogram, type Logger, type Registry } from '@ingest/runtime';
import { createCommandDecoder } from './decodeCommand.ts';
import { applyCommand, isDeterministicDbError } from './applyCommand.ts';
import { claimCommand, storeResult, type CommandPosition } from './runtimeStore.ts';

export interface ProjectorDeps {
  pool: Pool;
  kafka: Kafka;
  schemas: SchemaRegistry;
  topics: TopicNames;
  groupId: string;
  log: Logger;
  registry: Registry;
  partitionsConsumedConcurrently?: number;
}

export interface Projector {
  stop(): Promise<void>;
}


/**
 * The projector shell (STYLE.md): per command one transaction with claim (D4), load -> decide ->
 * apply, stored result (D6) and outbox rows (D5); the Kafka offset is committed after the commit.
 */
export async function startProjector(deps: ProjectorDeps): Promise<Projector> {
  const { pool, log } = deps;
  const decode = createCommandDecoder(deps.schemas);
  const applied = new Counter({
    name: 'projector_commands_total',
    help: 'Commands consumed, by kind and outcome',
    labelNames: ['kind', 'outcome'],
    registers: [deps.registry],
  });
  const duration = new Histogram({
    name: 'projector_command_seconds',
    help: 'Time to project one command (one transaction)',
    labelNames: ['kind'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [deps.registry],
  });
  const lagOffsets = new Gauge({
    name: 'projector_lag_offsets',
    help: 'Commands not yet projected, per partition',
    labelNames: ['partition'],
    registers: [deps.registry],
  });
  const lagSeconds = new Gauge({
    name: 'projector_lag_seconds',
    help: 'Age of the last projected command when it was projected',
    registers: [deps.registry],
  });

  const handle = async (m: IncomingMessage): Promise<void> => {
    const at: CommandPosition = { topic: m.topic, partition: m.partition, offset: m.offset };
    const decoded = decode(m.value);
    if (!decoded.ok) {
      // A malformed command can never succeed; answer its caller (if known) and move on.
      log.error({ ...at, error: decoded.error }, 'undecodable command skipped');
      applied.inc({ kind: 'unknown', outcome: 'rejected' });
      if (decoded.commandId && decoded.shop !== undefined) await recordFailure(decoded.commandId, decoded.shop, 'unknown', at, 'internal error');
      return;
    }
    const c = decoded.command;
    const started = performance.now();
    try {
      const done = await withTransaction(pool, (tx) => applyCommand(tx, c, at, { topics: deps.topics }));
      applied.inc({ kind: c.kind, outcome: done ? 'applied' : 'duplicate' });
      if (!done) log.info({ command_id: c.command_id, ...at }, 'duplicate command skipped (D4)');
    } catch (err) {
      if (!isDeterministicDbError(err)) throw err; // transient: kafkajs redelivers, the claim keeps it exactly-once
      log.error({ err, command_id: c.command_id, shop: c.shop }, 'command failed deterministically');
      applied.inc({ kind: c.kind, outcome: 'failed' });
      await recordFailure(c.command_id, c.shop, c.kind, at, 'internal error');
    } finally {
      duration.observe({ kind: c.kind }, (performance.now() - started) / 1000);
      lagSeconds.set(Math.max(0, (Date.now() - Date.parse(c.received_at)) / 1000));
    }
  };

  // Answers the waiting caller of a command that cannot be applied. It must never throw on the
  // command's own data: a poison message that cannot even be recorded is logged and skipped, so
  // it cannot stall the other shops of its partition.
  const recordFailure = async (commandId: string, shop: string, kind: string, at: CommandPosition, error: string) => {
    try {
      await withTransaction(pool, async (tx) => {
        const c = { command_id: commandId, shop, kind, received_at: new Date().toISOString() };
        if (!(await claimCommand(tx, c, at))) return;
        await storeResult(tx, c, { status: 500, body: { ok: false, error } });
      });
    } catch (err) {
      if (!isDeterministicDbError(err)) throw err;
      log.error({ err, ...at, command_id: commandId }, 'poison command skipped: its failure could not be recorded');
    }
  };

  const consumer: RunningConsumer = await runConsumer(deps.kafka, {
    groupId: deps.groupId,
    topics: [deps.topics.commands],
    fromBeginning: true,
    partitionsConsumedConcurrently: deps.partitionsConsumedConcurrently ?? 3,
    eachBatch: async (messages, ctx) => {
      for (const m of messages) {
        if (!ctx.isRunning()) break;
        await handle(m);
        ctx.resolveOffset(m.offset);
        await ctx.heartbeat();
      }
      const first = messages[0];
      if (first) lagOffsets.set({ partition: String(first.partition) }, ctx.lag());
    },
  });
  log.info({ groupId: deps.groupId, topic: deps.topics.commands }, 'projector consuming');
  return { stop: () => consumer.stop() };
}
