import type { Server } from 'node:http';
import { SchemaRegistry } from '@ingest/contracts';
import { createListener, createPool, type Listener } from '@ingest/db';
import { createCommandLog, createKafka, createMessageSink, startLagMonitor } from '@ingest/kafka';
import { ConfigError, isTimeZone, createRegistry, envDuration, envInt, envList, envString, readCommonConfig, setFailpoints, type Logger, type Registry } from '@ingest/runtime';
import { buildApp } from './app.ts';
import { answerClientError } from './clientError.ts';
import { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from './config.ts';
import { createReplyWaiter } from './replies.ts';

export interface RunningGateway {
  port: number;
  stop(): Promise<void>;
}

export function readGatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig & { port: number; host: string } {
  return {
    resultRetentionMs: readCommonConfig(env).resultRetentionMs,
    resendWindowMs: DEFAULT_GATEWAY_CONFIG.resendWindowMs,
    ingestSecrets: envList(env, 'INGEST_SECRET'),
    cronSecrets: envList(env, 'CRON_SECRET'),
    replyTimeoutMs: envInt(env, 'REPLY_TIMEOUT_MS', DEFAULT_GATEWAY_CONFIG.replyTimeoutMs, 1),
    bodyLimitBytes: envInt(env, 'BODY_LIMIT_BYTES', DEFAULT_GATEWAY_CONFIG.bodyLimitBytes, 1024),
    maxInflightBytes: envInt(env, 'MAX_INFLIGHT_BYTES', DEFAULT_GATEWAY_CONFIG.maxInflightBytes, 1024),
    bodyTimeoutMs: envDuration(env, 'BODY_TIMEOUT', `${DEFAULT_GATEWAY_CONFIG.bodyTimeoutMs}ms`, 100),
    maxConsumerLag: envInt(env, 'MAX_CONSUMER_LAG', DEFAULT_GATEWAY_CONFIG.maxConsumerLag, 1),
    businessTimezone: businessTimezone(env),
    port: envInt(env, 'PORT', 8080, 0),
    host: env['HOST'] || '0.0.0.0',
  };
}

function businessTimezone(env: NodeJS.ProcessEnv): string {
  const zone = envString(env, 'BUSINESS_TIMEZONE', DEFAULT_GATEWAY_CONFIG.businessTimezone);
  if (!isTimeZone(zone)) throw new ConfigError(`BUSINESS_TIMEZONE is not a known time zone: ${zone}`);
  return zone;
}

/** Wires the gateway's real parts from the environment and listens. */
export async function runGateway(
  env: NodeJS.ProcessEnv,
  log: Logger,
  opts: { registry?: Registry; /** The process's one LISTEN connection, when shared with a projector. */ listener?: Listener } = {},
): Promise<RunningGateway> {
  const common = readCommonConfig(env);
  const config = readGatewayConfig(env);
  setFailpoints(common.failpoints);
  const role = common.dbRole || undefined;
  const pool = createPool({
    connectionString: common.databaseUrl,
    role,
    max: 10,
    applicationName: 'ingest-gateway',
    onError: (err) => log.warn({ err }, 'database connection lost'),
  });
  const listener =
    opts.listener ?? createListener({ connectionString: common.databaseUrl, role, applicationName: 'ingest-gateway-listen', log: log.child({ component: 'listen' }) });
  const registry = opts.registry ?? createRegistry({ defaultMetrics: true });
  const kafka = createKafka({ brokers: common.kafkaBrokers, clientId: 'ingest-gateway', log: log.child({ component: 'kafka' }) });
  const sink = await createMessageSink(kafka);
  const replies = createReplyWaiter({ pool, listener, log });
  const backlog = await startLagMonitor(kafka, {
    groupId: envString(env, 'PROJECTOR_GROUP_ID', 'ingest-projector'),
    topic: common.topics.commands,
    onError: (err) => log.warn({ err }, 'could not read the projector backlog'),
  });
  if (config.ingestSecrets.length === 0) log.warn('INGEST_SECRET is not set: ingest endpoints answer 503');
  if (config.cronSecrets.length === 0) log.warn('CRON_SECRET is not set: /api/products/bulk-upsert answers 503');

  const app = buildApp({
    config,
    schemas: new SchemaRegistry(),
    commandLog: createCommandLog(sink, common.topics.commands),
    replies,
    pool,
    log,
    registry,
    backlog,
    isReady: async () => ({
      database: await pool.query('SELECT 1').then(() => true, () => false),
      listen: listener.connected(),
      kafka: backlog.healthy(),
    }),
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
  });
  // Slow max-size uploads must not be cut off; keep-alive slightly above common LB idle timeouts.
  server.requestTimeout = 120_000;
  // Node's parser errors (bad headers or chunking) in the spec's JSON shape, not bare text (issue 12).
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info({ port, host: config.host }, `gateway listening on http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`);

  return {
    port,
    stop: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await replies.close();
      if (!opts.listener) await listener.close();
      await backlog.stop();
      await sink.close();
      await pool.end();
    },
  };
}
