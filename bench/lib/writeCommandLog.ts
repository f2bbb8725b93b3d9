// A large command log written straight to topics as the gateway writes it (the command log port:
// key = shop, the envelope's JSON, its headers), from the command-mix generator: B9's log and B10's.
import type { Kafka } from '@ingest/kafka';
import { createCommandLog, createMessageSink } from '@ingest/kafka';
import { linesOf, mixedCommands, type MixShape } from './commandMix.ts';
import { round, say } from './util.ts';

export interface WrittenLog {
  commands: number;
  lines: number;
  bytes: number;
  write_seconds: number;
  mix: Record<string, number>;
  /** Lines of the first `count` commands of each extra topic. */
  extra_lines: number[];
}

/**
 * Writes `commands` mixed commands to `topic`, and the first `extra[i].count` of them to
 * `extra[i].topic` too; 5,000 appends in flight (registry and catalogue first, in order: later
 * commands refer to them). `tag` prefixes the progress lines.
 */
export async function writeCommandLog(
  kafka: Kafka,
  opts: { topic: string; commands: number; shape: MixShape; extra?: Array<{ topic: string; count: number }>; tag: string },
): Promise<WrittenLog> {
  say(`${opts.tag}: writing ${opts.commands.toLocaleString('en-US')} commands to ${opts.topic}`);
  const sink = await createMessageSink(kafka, { sendTimeoutMs: 60_000 });
  const main = createCommandLog(sink, opts.topic);
  const extra = (opts.extra ?? []).map((x) => ({ ...x, log: createCommandLog(sink, x.topic), lines: 0 }));
  const mix: Record<string, number> = {};
  let lines = 0;
  let bytes = 0;
  const started = performance.now();
  const commands = mixedCommands(opts.shape);
  let inFlight: Array<Promise<void>> = [];
  try {
    for (let i = 0; i < opts.commands; i++) {
      const c = commands.next().value!;
      mix[c.kind] = (mix[c.kind] ?? 0) + 1;
      const n = linesOf(c);
      lines += n;
      bytes += Buffer.byteLength(JSON.stringify(c));
      const envelope = c as unknown as Parameters<typeof main.appendCommand>[0];
      inFlight.push(main.appendCommand(envelope));
      for (const x of extra)
        if (i < x.count) {
          x.lines += n;
          inFlight.push(x.log.appendCommand(envelope));
        }
      if (i < 3 * opts.shape.shops || inFlight.length >= 5_000) {
        await Promise.all(inFlight);
        inFlight = [];
      }
      if ((i + 1) % 100_000 === 0)
        say(`${opts.tag}: ${(i + 1).toLocaleString('en-US')} written (${round((performance.now() - started) / 1000, 1)} s)`);
    }
    await Promise.all(inFlight);
  } finally {
    await sink.close();
  }
  const seconds = (performance.now() - started) / 1000;
  say(
    `${opts.tag}: log written in ${seconds.toFixed(1)} s: ${lines.toLocaleString('en-US')} lines, ${(bytes / 2 ** 20).toFixed(0)} MiB of JSON`,
  );
  return { commands: opts.commands, lines, bytes, write_seconds: round(seconds, 1), mix, extra_lines: extra.map((x) => x.lines) };
}
