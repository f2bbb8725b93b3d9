import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import { logContextFields } from './logContext.ts';

export type { Logger };

/** Secrets and headers never reach the log (STYLE.md). */
export const REDACT_PATHS = [
  'req.headers',
  'headers',
  '*.headers',
  'config.ingestSecrets',
  'config.cronSecrets',
  'config.databaseUrl',
  '*.password',
  'password',
];

/** Fields the log context adds to every line (request id, trace); a line's own fields win. */
const CONTEXT_KEYS = ['request_id', 'trace_id', 'span_id'] as const;

export interface LoggerOptions {
  level?: string;
  name: string;
  /** Human-readable lines (pino-pretty). Default: stdout is a terminal and NODE_ENV is not production. */
  pretty?: boolean;
  /** Where the lines go (tests); default stdout. */
  destination?: DestinationStream;
}

/** Pretty lines only for a person at a terminal; a pipe, a file or production gets JSON. */
export function wantsPrettyLogs(env: NodeJS.ProcessEnv, stdoutIsTTY: boolean): boolean {
  const format = env['LOG_FORMAT'];
  if (format === 'json') return false;
  if (format === 'pretty') return true;
  return stdoutIsTTY && env['NODE_ENV'] !== 'production';
}

export function createLogger(opts: LoggerOptions): Logger {
  const pretty = opts.pretty ?? wantsPrettyLogs(process.env, process.stdout.isTTY === true);
  const options = {
    name: opts.name,
    level: opts.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: opts.name },
    // The request id and the trace of the work in progress, on every line written inside it.
    mixin: (_obj: object, _level: number, logger: Logger): Record<string, string> => {
      const fields = logContextFields();
      if (!fields) return {};
      const bound = (logger as LoggerWithBound)[BOUND];
      if (bound) for (const key of CONTEXT_KEYS) if (bound.has(key)) delete fields[key];
      return fields;
    },
  };
  const destination = opts.destination ?? (pretty ? prettyStream() : undefined);
  const logger = destination ? pino(options, destination) : pino(options);
  return withMergingChildren(logger);
}

function prettyStream(): DestinationStream {
  // Loaded only for a terminal: JSON output never pays for it.
  const require = createRequire(import.meta.url);
  const pinoPretty = require('pino-pretty') as (o: object) => DestinationStream;
  return pinoPretty({
    colorize: true,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    // One line a message: "12:00:01.123 INFO: projector/relay: relayed 3 events [req 9f2c...]".
    messageFormat: '{if component}{component}: {end}{msg}{if request_id} [req {request_id}]{end}',
    ignore: 'pid,hostname,service,name,component,request_id',
  });
}

const BOUND = Symbol('ingest.boundKeys');
type LoggerWithBound = Logger & { [BOUND]?: Set<string> };

/**
 * pino appends a child's bindings to its parent's, so `log.child({ component: 'relay' })` of a logger
 * already bound to `component: 'projector'` wrote the key twice (`npm start`). Here a child
 * that binds a key its parent has replaces it; `component` nests instead ("projector/relay").
 */
function withMergingChildren(root: Logger): Logger {
  const pinoChild = root.child;
  const chindings = pino.symbols.chindingsSym;
  const childOf = function (this: LoggerWithBound, bindings: Record<string, unknown>, options?: object): Logger {
    const serialized = (this as unknown as Record<PropertyKey, unknown>)[chindings];
    const parentBindings = JSON.parse(`{${typeof serialized === 'string' ? serialized.slice(1) : ''}}`) as Record<string, unknown>;
    const merged: Record<string, unknown> = { ...parentBindings, ...bindings };
    const prior = parentBindings['component'];
    const next = bindings['component'];
    if (typeof prior === 'string' && typeof next === 'string' && prior !== next) merged['component'] = `${prior}/${next}`;
    const clash = Object.keys(bindings).some((k) => k in parentBindings);
    let child: LoggerWithBound;
    if (clash) {
      // The parent's bindings are already one serialized string: the child gets the merged set instead.
      child = pinoChild.call(this, {}, options) as unknown as LoggerWithBound;
      (child as unknown as Record<PropertyKey, unknown>)[chindings] = Object.entries(merged)
        .map(([k, v]) => `,${JSON.stringify(k)}:${JSON.stringify(v)}`)
        .join('');
    } else {
      child = pinoChild.call(this, bindings, options) as unknown as LoggerWithBound;
    }
    const bound = new Set([...(this[BOUND] ?? []), ...Object.keys(bindings)]);
    child[BOUND] = bound;
    return child;
  };
  // pino children are created with Object.create(parent), so they inherit this `child` too.
  (root as unknown as { child: unknown }).child = childOf;
  return root;
}
