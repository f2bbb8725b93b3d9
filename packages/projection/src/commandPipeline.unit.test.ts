import { describe, expect, it } from 'vitest';
import type { BatchContext, IncomingMessage } from '@ingest/kafka';
import { processBatch, type PipelinePolicy } from './commandPipeline.ts';
import type { DecodeResult } from './decodeCommand.ts';

const msg = (offset: number): IncomingMessage => ({
  topic: 't',
  partition: 2,
  offset: String(offset),
  key: 'shop',
  value: Buffer.from(String(offset)),
  headers: {},
});

function fakeCtx(messages: IncomingMessage[], running = () => true) {
  const resolved: string[] = [];
  let heartbeats = 0;
  const ctx: BatchContext = {
    resolveOffset: (o) => void resolved.push(o),
    heartbeat: async () => void (heartbeats += 1),
    isRunning: running,
    lag: () => 7,
    batchMessages: () => messages,
    highWatermark: () => 100,
  };
  return { ctx, resolved, heartbeats: () => heartbeats };
}

const decodeCounting = () => {
  const seen: string[] = [];
  const decode = (v: Buffer | null): DecodeResult => {
    seen.push(v?.toString() ?? '');
    return { ok: false, error: `not a command: ${v?.toString()}` };
  };
  return { decode, seen };
};

describe('the consumer pipeline (one path for live and replay)', () => {
  it('passes the applied prefix without applying it, applies runs in order, resolves each run only after it, heartbeats between runs', async () => {
    const messages = [10, 11, 12, 13, 14, 15].map(msg);
    const { ctx, resolved, heartbeats } = fakeCtx(messages);
    const applied: string[][] = [];
    let ended: [number, number | null, number] | null = null;
    const policy: PipelinePolicy = {
      window: async () => ({ skip: 2, take: 3 }),
      apply: async (run, from) => {
        const n = Math.min(2, run.messages.length - from);
        applied.push(run.messages.slice(from, from + n).map((m) => m.offset));
        expect(resolved.at(-1)).toBe(from === 0 ? '11' : run.message(from - 1).offset); // nothing of this run resolved yet
        return n;
      },
      batchEnded: (partition, lag, leftOver) => void (ended = [partition, lag, leftOver]),
    };
    const { decode } = decodeCounting();
    await processBatch(messages, ctx, decode, policy);
    expect(applied).toEqual([['12', '13'], ['14']]);
    expect(resolved).toEqual(['11', '13', '14']);
    expect(heartbeats()).toBe(2);
    expect(ended).toEqual([2, 7, 1]); // offset 15 lay past the window
  });

  it('an apply that answers 0 stops the batch with its run unresolved (consumed again by whoever holds the partition)', async () => {
    const messages = [0, 1, 2].map(msg);
    const { ctx, resolved } = fakeCtx(messages);
    let calls = 0;
    const { decode } = decodeCounting();
    await processBatch(messages, ctx, decode, {
      window: async (ms) => ({ skip: 0, take: ms.length }),
      apply: async () => (++calls === 1 ? 1 : 0),
    });
    expect(calls).toBe(2);
    expect(resolved).toEqual(['0']);
  });

  it('decodes a command once, when it is reached, however often the policy reads it', async () => {
    const messages = [0, 1, 2].map(msg);
    const { ctx } = fakeCtx(messages);
    const { decode, seen } = decodeCounting();
    await processBatch(messages, ctx, decode, {
      window: async (ms) => ({ skip: 0, take: ms.length }),
      apply: async (run, from) => {
        run.decoded(from);
        run.decoded(from);
        if (from === 0) run.decoded(1); // a group looks ahead
        return 1;
      },
    });
    expect(seen).toEqual(['0', '1', '2']);
  });

  it('stops between runs when halted or no longer running, and does nothing for a window of null', async () => {
    const messages = [0, 1, 2].map(msg);
    let halted = false;
    const { ctx, resolved } = fakeCtx(messages);
    const { decode } = decodeCounting();
    await processBatch(messages, ctx, decode, {
      halted: () => halted,
      window: async (ms) => ({ skip: 0, take: ms.length }),
      apply: async () => ((halted = true), 1),
    });
    expect(resolved).toEqual(['0']);

    let running = true;
    const stopping = fakeCtx(messages, () => running);
    await processBatch(messages, stopping.ctx, decode, {
      window: async (ms) => ({ skip: 0, take: ms.length }),
      apply: async () => ((running = false), 1),
    });
    expect(stopping.resolved).toEqual(['0']);

    const none = fakeCtx(messages);
    let applies = 0;
    await processBatch(messages, none.ctx, decode, { window: async () => null, apply: async () => ++applies });
    expect([applies, none.resolved]).toEqual([0, []]);
  });
});
