import type { Server } from 'node:http';
import { SchemaRegistry } from '@ingest/contracts';
import { createListener, createPool, type Listener } from '@ingest/db';
import { createCommandLog, createKafka, createMessageSink, startLagMonitor, startLogPositions, topicPlan } from '@ingest/kafka';
import { createDryRunner } from '@ingest/projector';
import {
  ConfigError,
  isTimeZone,
  createRegistry,
  envDuration,
  envInt,
  envList,
  envString,
  publicBaseUrl,
  registerPoolMetrics,
  readCommonConfig,
  setFailpoints,
  type Logger,
  type Registry,
} from '@ingest/runtime';
import { buildApp } from './app.ts';
import { answerClientError } from './clientError.ts';
import { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from './config.ts';
import { createReplyWaiter } from './replies.ts';

export interface RunningGateway {
  port: number;
  stop(): Promise<void>;
}

export function readGatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig & { port: number; host: string; dryRunStatementTimeoutMs: number } {
  return {
    resultRetentionMs: readCommonConfig(env).resultRetentionMs,
    resendWindowMs: DEFAULT_GATEWAY_CONFIG.resendWindowMs,
    idempotencyKeyTtlMs: readCommonConfig(env).idempotencyKeyTtlMs,
    ingestSecrets: envList(env, 'INGEST_SECRET'),
    cronSecrets: envList(env, 'CRON_SECRET'),
    replyTimeoutMs: envInt(env, 'REPLY_TIMEOUT_MS', DEFAULT_GATEWAY_CONFIG.replyTimeoutMs, 1),
    bodyLimitBytes: envInt(env, 'BODY_LIMIT_BYTES', DEFAULT_GATEWAY_CONFIG.bodyLimitBytes, 1024),
    maxInflightBytes: envInt(env, 'MAX_INFLIGHT_BYTES', DEFAULT_GATEWAY_CONFIG.maxInflightBytes, 1024),
    bodyTimeoutMs: envDuration(env, 'BODY_TIMEOUT', `${DEFAULT_GATEWAY_CONFIG.bodyTimeoutMs}ms`, 100),
    maxConsumerLag: envInt(env, 'MAX_CONSUMER_LAG', DEFAULT_GATEWAY_CONFIG.maxConsumerLag, 1),
    businessTimezone: businessTimezone(env),
    dryRunStatementTimeoutMs: envDuration(env, 'DRY_RUN_STATEMENT_TIMEOUT', '10s', 100),
    shopMaxInflightBytes: envInt(env, 'SHOP_MAX_INFLIGHT_BYTES', DEFAULT_GATEWAY_CONFIG.shopMaxInflightBytes, 1024),
    shopMaxInflightRequests: envInt(env, 'SHOP_MAX_INFLIGHT_REQUESTS', DEFAULT_GATEWAY_CONFIG.shopMaxInflightRequests, 1),
    shopRateLinesPerS: envInt(env, 'SHOP_RATE_LINES_PER_S', DEFAULT_GATEWAY_CONFIG.shopRateLinesPerS, 0),
    shopBurstLines: envInt(env, 'SHOP_BURST_LINES', DEFAULT_GATEWAY_CONFIG.shopBurstLines, 1),
    positionCacheMs: envDuration(env, 'POSITION_CACHE', `${DEFAULT_GATEWAY_CONFIG.positionCacheMs}ms`, 0),
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
  opts: {
    registry?: Registry;
    /** The process's one LISTEN connection, when shared with a projector. */
    listener?: Listener;
    /** More readiness checks, prefixed by name: a process that also runs the projector is ready when it is (`npm start`). */
    alsoReady?: Record<string, () => Promise<Record<string, boolean>>>;
  } = {},
): Promise<RunningGateway> {
  const common = readCommonConfig(env);
  const config = readGatewayConfig(env);
  setFailpoints(common.failpoints);
  // PUBLIC_BASE_URL is checked now; its default is the listen address, known once listening (PORT=0).
  publicBaseUrl(env);
  const listening: { port?: number } = {};
  const [commandsTopic, auditTopic, stockZeroTopic, stockRestoredTopic] = topicPlan(common.topics, common.kafkaPartitions);
  if (!commandsTopic || !auditTopic || !stockZeroTopic || !stockRestoredTopic) throw new Error('topicPlan lists four topics');
  const role = common.dbRole || undefined;
  const pool = createPool({
    connectionString: common.databaseUrl,
    role,
    max: 10,
    applicationName: 'ingest-gateway',
    onError: (err) => log.warn({ err }, 'database connection lost'),
  });
  // Dry runs (issue 16) hold a connection for a whole projection: their own few, so that a burst
  // of them never starves the write path's request records.
  const dryRunPool = createPool({
    connectionString: common.databaseUrl,
    role,
    max: 4,
    applicationName: 'ingest-gateway-dry-run',
    onError: (err) => log.warn({ err }, 'database connection lost'),
  });
  const listener =
    opts.listener ?? createListener({ connectionString: common.databaseUrl, role, applicationName: 'ingest-gateway-listen', log: log.child({ component: 'listen' }) });
  const registry = opts.registry ?? createRegistry({ defaultMetrics: true });
  registerPoolMetrics(registry, 'gateway', pool);
  const kafka = createKafka({ brokers: common.kafkaBrokers, security: common.kafkaSecurity, clientId: 'ingest-gateway', log: log.child({ component: 'kafka' }) });
  const sink = await createMessageSink(kafka);
  const replies = createReplyWaiter({ pool, listener, log });
  const backlog = await startLagMonitor(kafka, {
    groupId: envString(env, 'PROJECTOR_GROUP_ID', 'ingest-projector'),
    topic: common.topics.commands,
    onError: (err) => log.warn({ err }, 'could not read the projector backlog'),
  });
  const positions = await startLogPositions(kafka, {
    topic: common.topics.commands,
    cacheMs: config.positionCacheMs,
    onError: (err) => log.warn({ err }, 'could not read the command log positions'),
  });
  if (config.ingestSecrets.length === 0) log.warn('INGEST_SECRET is not set: ingest endpoints answer 503');
  if (config.cronSecrets.length === 0) log.warn('CRON_SECRET is not set: /api/products/bulk-upsert answers 503');

  const schemas = new SchemaRegistry();
  const app = buildApp({
    config,
    schemas,
    commandLog: createCommandLog(sink, common.topics.commands),
    replies,
    dryRunner: createDryRunner({ pool: dryRunPool, schemas, statementTimeoutMs: config.dryRunStatementTimeoutMs }),
    pool,
    log,
    registry,
    backlog,
    docs: {
      publicBaseUrl: () => publicBaseUrl(env, listening.port),
      topics: { commands: commandsTopic, audit: auditTopic, stockZero: stockZeroTopic, stockRestored: stockRestoredTopic },
    },
    positions,
    // Ready (issue 15 item 7): PostgreSQL answers, the LISTEN connection for replies is up, and the
    // broker answered one of the last three polls of the lag monitor (the producer's brokers).
    isReady: async () => {
      const [database, ...others] = await Promise.all([
        pool.query('SELECT 1').then(() => true, () => false),
        ...Object.entries(opts.alsoReady ?? {}).map(async ([name, checks]) =>
          Object.fromEntries(Object.entries(await checks().catch(() => ({ ready: false }))).map(([k, v]) => [`${name}_${k}`, v])),
        ),
      ]);
      const more = Object.assign({}, ...others) as Record<string, boolean>;
      return { database: database === true, listen: listener.connected(), kafka: backlog.healthy(), ...more };
    },
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
  listening.port = port;
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
      await positions.stop();
      await sink.close();
      await pool.end();
      await dryRunPool.end();
    },
  };
}
