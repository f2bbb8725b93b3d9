// Bench diagnostics (BENCH_TRACE=1 in a bench server): every ended span kept with its times, so the
// bench can lay a slow request's time out step by step (HTTP, append to Kafka, fetch, apply, reply).
// Tracing costs CPU itself: a traced run is for finding where time goes, not for the figures.
import { startTracing } from '@ingest/runtime';

type Exporter = NonNullable<Parameters<typeof startTracing>[1]['exporter']>;
type Spans = Parameters<Exporter['export']>[0];

export interface TimedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** The span ids this span links to (a command's apply links to its group's transaction). */
  links: string[];
  /** Epoch milliseconds. */
  start: number;
  end: number;
  commandId?: string;
  groupCommands?: number;
}

const ms = (t: [number, number]): number => t[0] * 1000 + t[1] / 1e6;

export async function startSpanLog(serviceName: string): Promise<{ take(): TimedSpan[] }> {
  let kept: TimedSpan[] = [];
  const exporter: Exporter = {
    export: (spans: Spans, done) => {
      for (const s of spans) {
        const a = s.attributes;
        kept.push({
          name: s.name,
          traceId: s.spanContext().traceId,
          spanId: s.spanContext().spanId,
          links: s.links.map((l) => l.context.spanId),
          start: ms(s.startTime),
          end: ms(s.endTime),
          ...(typeof a['ingest.command_id'] === 'string' ? { commandId: a['ingest.command_id'] } : {}),
          ...(typeof a['ingest.group_commands'] === 'number' ? { groupCommands: a['ingest.group_commands'] } : {}),
        });
      }
      done({ code: 0 });
    },
    shutdown: async () => {},
  };
  await startTracing({}, { serviceName, exporter });
  return {
    take: () => {
      const out = kept;
      kept = [];
      return out;
    },
  };
}
