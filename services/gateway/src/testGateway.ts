import type { AddressInfo } from 'node:net';
import { SchemaRegistry } from '@ingest/contracts';
import type { Pool } from '@ingest/db';
import type { CommandLog } from '@ingest/kafka';
import { createRegistry, silentLogger, type Registry } from '@ingest/runtime';
import { buildApp } from './app.ts';
import { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from './config.ts';
import type { ReplyWaiter } from './replies.ts';

export type AppendedCommand = Parameters<CommandLog['appendCommand']>[0];

export interface TestGateway {
  url: string;
  port: number;
  /** Every command the gateway appended, in order. */
  appended: AppendedCommand[];
  registry: Registry;
  close(): Promise<void>;
}

export const TEST_INGEST_SECRET = 's';
export const TEST_CRON_SECRET = 'c';

/**
 * The gateway built by buildApp (STYLE.md) with in-memory ports, for unit tests of the HTTP edge:
 * the command log records what is appended, no projector ever answers (every accepted command
 * is 202), and PostgreSQL answers every query with no rows.
 */
export async function startTestGateway(config: Partial<GatewayConfig> = {}, ports: { pool?: Pool; commandLog?: CommandLog } = {}): Promise<TestGateway> {
  const appended: AppendedCommand[] = [];
  const replies: ReplyWaiter = { register: () => ({ wait: async () => null, cancel: () => {} }), close: async () => {} };
  const registry = createRegistry();
  const app = buildApp({
    config: { ...DEFAULT_GATEWAY_CONFIG, ingestSecrets: [TEST_INGEST_SECRET], cronSecrets: [TEST_CRON_SECRET], replyTimeoutMs: 10, ...config },
    schemas: new SchemaRegistry(),
    commandLog: ports.commandLog ?? { appendCommand: async (c) => void appended.push(structuredClone(c)) },
    replies,
    pool: ports.pool ?? ({ query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Pool),
    log: silentLogger(),
    registry,
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    appended,
    registry,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
