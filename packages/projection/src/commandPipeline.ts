// One consumer pipeline for the live projector and for replay: consume a
// partition's batch, pass over what is already applied, decode each command (once, when it is
// reached), hand runs of commands to the policy's apply (one transaction per run), resolve a run's
// offsets only once it committed, heartbeat, and stop between runs when asked. What differs is
// policy: live groups a few commands per transaction, retries, parks and writes outbox rows and
// replies (projector.ts); replay applies hundreds under savepoints and follows a target
// (replay/replayer.ts).
import type { SchemaRegistry } from '@ingest/contracts';
import {
  runConsumer,
  type BatchContext,
  type ConsumerOptions,
  type IncomingMessage,
  type Kafka,
  type RunningConsumer,
} from '@ingest/kafka';
import { createCommandDecoder, type DecodeResult } from './decodeCommand.ts';
import type { CommandPosition } from '@ingest/db';

/** The messages a batch hands to `apply`, decoded on first use and forgotten once applied. */
export interface CommandRun {
  readonly messages: readonly IncomingMessage[];
  message(i: number): IncomingMessage;
  decoded(i: number): DecodeResult;
  at(i: number): CommandPosition;
}

export interface PipelinePolicy {
  /**
   * How many leading messages of the batch are already applied (resolved without applying) and how
   * many after them to apply now; the rest is left for a later fetch. Null: leave the batch alone.
   */
  window(messages: IncomingMessage[], ctx: BatchContext): Promise<{ skip: number; take: number } | null>;
  /** Applies the run from `from` on, as one unit; answers how many it applied (0: stop, unresolved). */
  apply(run: CommandRun, from: number, ctx: BatchContext): Promise<number>;
  /** Stops between two units. */
  halted?(): boolean;
  batchStarted?(partition: number): void;
  /** After the batch: the partition's lag (null when the batch threw) and how many messages lay past the window. */
  batchEnded?(partition: number, lag: number | null, leftOver: number): Promise<void> | void;
}

export type Decode = (value: Buffer | null) => DecodeResult;

export async function processBatch(messages: IncomingMessage[], ctx: BatchContext, decode: Decode, policy: PipelinePolicy): Promise<void> {
  const first = messages[0];
  if (!first || policy.halted?.()) return;
  policy.batchStarted?.(first.partition);
  let lag: number | null = null;
  let leftOver = 0;
  try {
    const w = await policy.window(messages, ctx);
    if (!w) return;
    if (w.skip > 0) ctx.resolveOffset((messages[w.skip - 1] as IncomingMessage).offset);
    const taken = messages.slice(w.skip, w.skip + w.take);
    leftOver = messages.length - w.skip - taken.length;
    const decoded = new Map<number, DecodeResult>();
    const message = (i: number): IncomingMessage => {
      const m = taken[i];
      if (!m) throw new RangeError(`no message ${i} in a run of ${taken.length}`);
      return m;
    };
    const run: CommandRun = {
      messages: taken,
      message,
      decoded: (i) => {
        let d = decoded.get(i);
        if (!d) decoded.set(i, (d = decode(message(i).value)));
        return d;
      },
      at: (i) => {
        const m = message(i);
        return { topic: m.topic, partition: m.partition, offset: m.offset };
      },
    };
    for (let i = 0; i < taken.length && ctx.isRunning() && !policy.halted?.();) {
      const n = await policy.apply(run, i, ctx);
      if (n === 0) break; // not resolved: consumed again by whoever holds the partition
      for (let k = i; k < i + n; k++) decoded.delete(k);
      i += n;
      ctx.resolveOffset(message(i - 1).offset);
      await ctx.heartbeat();
    }
    lag = ctx.lag();
  } finally {
    await policy.batchEnded?.(first.partition, lag, leftOver);
  }
}

/** A consumer whose batches go through the pipeline with this policy. */
export function runCommandPipeline(
  kafka: Kafka,
  schemas: SchemaRegistry,
  consumer: Omit<ConsumerOptions, 'eachBatch'>,
  policy: PipelinePolicy,
): Promise<RunningConsumer> {
  const decode = createCommandDecoder(schemas);
  return runConsumer(kafka, { ...consumer, eachBatch: (messages, ctx) => processBatch(messages, ctx, decode, policy) });
}
