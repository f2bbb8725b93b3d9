import type { Server } from 'node:http';
import { createKeyService, pgKeyRows } from '@ingest/access';
import { SchemaRegistry } from '@ingest/contracts';
import { createListener, createPool, shopRateBuckets, type Listener } from '@ingest/db';
import {
  createCommandLog,
  createKafka,
  createMessageSink,
  readKafkaSecurity,
  startLagMonitor,
  startLogPositions,
  topicPlan,
} from '@ingest/kafka';
import { createDryRunner } from '@ingest/projection';
import {
  setting,
  createMetricsServer,
  createRegistry,
  publicBaseUrl,
  registerPoolMetrics,
  readCommonConfig,
  setFailpoints,
  type Logger,
  type Registry,
} from '@ingest/runtime';
import { buildApp } from './app.ts';
import { answerClientError } from './edge/clientError.ts';
import { DEFAULT_GATEWAY_CONFIG, type GatewayConfig } from './config.ts';
import { drainableServer } from './edge/drain.ts';
import { createReplyWaiter } from './commands/replies.ts';

export interface RunningGateway {
  port: number;
  /** The port of `/metrics` when METRICS_PORT gives it a listener of its own. */
  metricsPort?: number;
  stop(): Promise<void>;
}

export function readGatewayConfig(env: NodeJS.ProcessEnv): GatewayConfig & {
  port: number;
  host: string;
  metricsPort: number | undefined;
  shutdownLingerMs: number;
  dryRunStatementTimeoutMs: number;
  apiKeyPepper: string | undefined;
} {
  return {
    resultRetentionMs: setting(env, 'RESULT_RETENTION'),
    resendWindowMs: DEFAULT_GATEWAY_CONFIG.resendWindowMs,
    idempotencyKeyTtlMs: setting(env, 'IDEMPOTENCY_KEY_TTL'),
    ingestSecrets: setting(env, 'INGEST_SECRET') ?? [],
    cronSecrets: setting(env, 'CRON_SECRET') ?? [],
    platformSecretsForRetailers: setting(env, 'PLATFORM_SECRETS_FOR_RETAILERS') === 'on',
    apiKeyPepper: setting(env, 'API_KEY_PEPPER'),
    replyTimeoutMs: setting(env, 'REPLY_TIMEOUT_MS'),
    bodyLimitBytes: setting(env, 'BODY_LIMIT_BYTES'),
    maxInflightBytes: setting(env, 'MAX_INFLIGHT_BYTES'),
    bodyTimeoutMs: setting(env, 'BODY_TIMEOUT'),
    maxConsumerLag: setting(env, 'MAX_CONSUMER_LAG'),
    businessTimezone: setting(env, 'BUSINESS_TIMEZONE'),
    dryRunStatementTimeoutMs: setting(env, 'DRY_RUN_STATEMENT_TIMEOUT'),
    shopMaxInflightBytes: setting(env, 'SHOP_MAX_INFLIGHT_BYTES'),
    shopMaxInflightRequests: setting(env, 'SHOP_MAX_INFLIGHT_REQUESTS'),
    shopRateLinesPerS: setting(env, 'SHOP_RATE_LINES_PER_S'),
    shopBurstLines: setting(env, 'SHOP_BURST_LINES'),
    positionCacheMs: setting(env, 'POSITION_CACHE'),
    port: setting(env, 'PORT'),
    host: setting(env, 'HOST'),
    metricsPort: setting(env, 'METRICS_PORT'),
    shutdownLingerMs: setting(env, 'SHUTDOWN_LINGER'),
  };
}

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
  const kafkaSecurity = readKafkaSecurity(env);
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
  // Dry runs (D22) hold a connection for a whole projection: their own few, so that a burst
  // of them never starves the write path's request records.
  const dryRunPool = createPool({
    connectionString: common.databaseUrl,
    role,
    max: 4,
    applicationName: 'ingest-gateway-dry-run',
    onError: (err) => log.warn({ err }, 'database connection lost'),
  });
  const listener =
    opts.listener ??
    createListener({
      connectionString: common.databaseUrl,
      role,
      applicationName: 'ingest-gateway-listen',
      log: log.child({ component: 'listen' }),
    });
  const registry = opts.registry ?? createRegistry({ defaultMetrics: true });
  registerPoolMetrics(registry, 'gateway', pool);
  const kafka = createKafka({
    brokers: common.kafkaBrokers,
    security: kafkaSecurity,
    clientId: 'ingest-gateway',
    log: log.child({ component: 'kafka' }),
  });
  const sink = await createMessageSink(kafka);
  const replies = createReplyWaiter({ pool, listener, log });
  const backlog = await startLagMonitor(kafka, {
    groupId: setting(env, 'PROJECTOR_GROUP_ID'),
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
  if (config.apiKeyPepper === undefined) log.warn('API_KEY_PEPPER is not set: per-shop keys are off (/api/admin/keys answers 503)');
  if (!config.platformSecretsForRetailers) log.info('PLATFORM_SECRETS_FOR_RETAILERS=off: retailer endpoints take per-shop keys only');
  const keys =
    config.apiKeyPepper === undefined
      ? null
      : createKeyService({
          rows: pgKeyRows(pool, listener),
          pepper: config.apiKeyPepper,
          onError: (err, what) => log.warn({ err }, what),
        });

  const schemas = new SchemaRegistry();
  const app = buildApp({
    config,
    schemas,
    commandLog: createCommandLog(sink, common.topics.commands),
    replies,
    dryRunner: createDryRunner({ pool: dryRunPool, schemas, statementTimeoutMs: config.dryRunStatementTimeoutMs }),
    pool,
    keys,
    rateBuckets: {
      lease: (shop, want) => shopRateBuckets.lease(pool, shop, want, { ratePerS: config.shopRateLinesPerS, burst: config.shopBurstLines }),
    },
    log,
    registry,
    backlog,
    docs: {
      publicBaseUrl: () => publicBaseUrl(env, listening.port),
      topics: { commands: commandsTopic, audit: auditTopic, stockZero: stockZeroTopic, stockRestored: stockRestoredTopic },
    },
    positions,
    topics: common.topics,
    metricsOnApiPort: config.metricsPort === undefined,
    // Ready (docs/operations.md "Observability"): PostgreSQL answers, the LISTEN connection for
    // replies is up, and the broker answered one of the last three polls of the lag monitor
    // (the producer's brokers).
    isReady: async () => {
      const [database, ...others] = await Promise.all([
        pool.query('SELECT 1').then(
          () => true,
          () => false,
        ),
        ...Object.entries(opts.alsoReady ?? {}).map(async ([name, checks]) =>
          Object.fromEntries(Object.entries(await checks().catch(() => ({ ready: false }))).map(([k, v]) => [`${name}_${k}`, v])),
        ),
      ]);
      const more = Object.assign({}, ...others) as Record<string, boolean>;
      return { database: database === true, listen: listener.connected(), kafka: backlog.healthy(), ...more };
    },
  });
  // Stopping ends clients' keep-alive connections after an answer instead of under a request (edge/drain.ts).
  const { server, drain } = drainableServer(app);
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  // Slow max-size uploads must not be cut off; keep-alive slightly above common LB idle timeouts.
  server.requestTimeout = 120_000;
  // Node's parser errors (bad headers or chunking) in the spec's JSON shape, not bare text.
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 65_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  listening.port = port;
  log.info({ port, host: config.host }, `gateway listening on http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`);
  const metricsServer = config.metricsPort === undefined ? null : await listenMetrics(registry, config.metricsPort, config.host);
  const metricsAddress = metricsServer?.address();
  const metricsPort = typeof metricsAddress === 'object' && metricsAddress ? metricsAddress.port : undefined;
  if (metricsPort !== undefined) log.info({ port: metricsPort }, `gateway metrics on port ${metricsPort} (/metrics)`);

  return {
    port,
    ...(metricsPort === undefined ? {} : { metricsPort }),
    stop: async () => {
      await drain(config.shutdownLingerMs);
      // Scraped until the API has drained, so the last requests' counts can still be read.
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
      await replies.close();
      await keys?.close();
      if (!opts.listener) await listener.close();
      await backlog.stop();
      await positions.stop();
      await sink.close();
      await pool.end();
      await dryRunPool.end();
    },
  };
}

function listenMetrics(registry: Registry, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createMetricsServer(registry);
    s.once('error', reject);
    s.listen(port, host, () => resolve(s));
  });
}
