import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createKeyService, type KeyService } from '@ingest/access';
import { memoryKeyRows } from '@ingest/access/testing';
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import type { CommandLog, LogPositions } from '@ingest/kafka';
import { createRegistry, type Logger, type Registry } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { buildApp, type GatewayDeps } from '../src/app.ts';
import { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from '../src/config.ts';
import type { ReplyWaiter } from '../src/commands/replies.ts';
import type { DryRunner } from '../src/commands/submit.ts';

// One schema registry for every test gateway of a test file, as a process has one: its validators
// are compiled once (ajv compiling the schemas anew for each gateway was most of a gateway's start).
let schemas: SchemaRegistry | null = null;
const sharedSchemas = (): SchemaRegistry => (schemas ??= new SchemaRegistry());

export type AppendedCommand = Parameters<CommandLog['appendCommand']>[0];

export interface TestGateway {
  url: string;
  port: number;
  /** Every command the gateway appended, in order. */
  appended: AppendedCommand[];
  /** Every command the gateway sent to the dry runner instead, in order (D22). */
  dryRuns: AppendedCommand[];
  registry: Registry;
  /** Its per-shop keys (D28), kept in memory: mint them with `keys.create`, or through the API. */
  keys: KeyService;
  close(): Promise<void>;
}

export const TEST_INGEST_SECRET = 's';
export const TEST_CRON_SECRET = 'c';
/** API_KEY_PEPPER of the test gateways. */
export const TEST_PEPPER = 'test-pepper-of-at-least-thirty-two-characters';
/** The `as_of` the in-memory dry runner answers. */
export const TEST_AS_OF = '2026-11-23T00:00:00.000Z';

/**
 * The gateway built by buildApp (STYLE.md) with in-memory ports, for unit tests of the HTTP edge:
 * the command log records what is appended, no projector ever answers (every accepted command
 * is 202), and PostgreSQL answers every query with no rows.
 */
export async function startTestGateway(
  config: Partial<GatewayConfig> = {},
  ports: {
    pool?: Pool;
    commandLog?: CommandLog;
    dryRunner?: DryRunner;
    positions?: LogPositions;
    isReady?: GatewayDeps['isReady'];
    readiness?: GatewayDeps['readiness'];
    metricsOnApiPort?: boolean;
    /** Per-shop keys; default: in memory (the rules are the service's, the rows a Map). */
    keys?: KeyService;
    /** Default: a logger that writes nothing. */
    log?: Logger;
    /** The shops' lines/s buckets shared across gateways; default: none (each gateway its own). */
    rateBuckets?: GatewayDeps['rateBuckets'];
  } = {},
): Promise<TestGateway> {
  const keys = ports.keys ?? createKeyService({ rows: memoryKeyRows(), pepper: TEST_PEPPER });
  const appended: AppendedCommand[] = [];
  const dryRuns: AppendedCommand[] = [];
  // The in-memory dry runner records the command message and answers a fixed projection.
  const dryRunner: DryRunner = {
    run: async (message) => {
      dryRuns.push(JSON.parse(message) as AppendedCommand);
      return { outcome: 'projected', reply: { status: 200, body: { ok: true, projected: true } }, events: [], as_of: TEST_AS_OF };
    },
  };
  const replies: ReplyWaiter = { register: () => ({ wait: async () => null, cancel: () => {} }), close: async () => {} };
  const registry = createRegistry();
  const app = buildApp({
    config: {
      ...DEFAULT_GATEWAY_CONFIG,
      ingestSecrets: [TEST_INGEST_SECRET],
      cronSecrets: [TEST_CRON_SECRET],
      replyTimeoutMs: 10,
      ...config,
    },
    schemas: sharedSchemas(),
    commandLog: ports.commandLog ?? { appendCommand: async (c) => void appended.push(structuredClone(c)) },
    replies,
    dryRunner: ports.dryRunner ?? dryRunner,
    pool: ports.pool ?? ({ query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Pool),
    log: ports.log ?? silentLogger(),
    ...(ports.rateBuckets ? { rateBuckets: ports.rateBuckets } : {}),
    registry,
    keys,
    ...(ports.positions ? { positions: ports.positions } : {}),
    ...(ports.isReady ? { isReady: ports.isReady } : {}),
    ...(ports.readiness ? { readiness: ports.readiness } : {}),
    ...(ports.metricsOnApiPort === undefined ? {} : { metricsOnApiPort: ports.metricsOnApiPort }),
  });
  const server = app.listen(0, '127.0.0.1');
  // As runGateway.ts: a client's idle keep-alive connection is not closed under it between two requests.
  server.keepAliveTimeout = 65_000;
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    appended,
    dryRuns,
    registry,
    keys,
    close: async () => {
      // A key service handed in is its owner's to close.
      if (!ports.keys) await keys.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

/** An error answer that shows a stack frame, a source location or SQL leaks internals (D11: messages only). */
export function leaksInternals(text: string): boolean {
  return (
    /^\s*at\s/m.test(text) || // stack frame lines
    /\bat .+\(.+:\d+:\d+\)/.test(text) ||
    /\.(ts|js|mjs):\d+/.test(text) ||
    /\b(SELECT|INSERT|UPDATE|DELETE)\b[\s\S]*\b(FROM|INTO|SET|WHERE)\b/i.test(text) ||
    /\b(relation|column) "[^"]+"/i.test(text) ||
    /syntax error at or near|violates (unique|foreign key|check) constraint|duplicate key value/i.test(text)
  );
}

/**
 * One gateway for a whole test file: started before its tests, closed after them, its appended
 * commands cleared before each test. The answer stands for that gateway from `beforeAll` on.
 */
export function useTestGateway(config: Partial<GatewayConfig> = {}): TestGateway {
  let current: TestGateway | undefined;
  beforeAll(async () => {
    current = await startTestGateway(config);
  });
  afterAll(async () => current?.close());
  beforeEach(() => {
    if (current) current.appended.length = 0;
  });
  return new Proxy({} as TestGateway, {
    get: (_, key) => {
      if (!current) throw new Error('the test gateway is used before beforeAll started it');
      return Reflect.get(current, key) as unknown;
    },
  });
}

/** An HTTP answer as the tests read it: status, body text, the JSON (undefined when the body is not JSON) and headers. */
export interface HttpAnswer {
  status: number;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- whatever the endpoint answered
  headers: Headers;
}

/** fetch, read whole: one reader for the unit and integration tests' requests. */
export async function fetchAnswer(url: string, init: RequestInit = {}): Promise<HttpAnswer> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

/** POST a JSON body (or a raw string, sent as it is) with `content-type: application/json`. */
export const postJson = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> =>
  fetchAnswer(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

export const getAnswer = (url: string, headers: Record<string, string> = {}): Promise<HttpAnswer> => fetchAnswer(url, { headers });
