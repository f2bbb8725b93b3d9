// B6 server process (forked by b6-e2e.ts), one of:
// - pipeline: the project as `npm start` runs it (runProjector + runGateway in one process, one
//   LISTEN connection): HTTP -> gateway -> Kafka -> projector (with its relay) -> PostgreSQL -> reply.
// - peer: the same gateway app (buildApp) whose CommandLog applies the command at once with the
//   projector's applyCommand, in one transaction with its outbox rows and stored result, and whose
//   ReplyWaiter hands that result back; no Kafka in the request path. The project's relay runs
//   here too, so both publish the same events.
import type { Server } from 'node:http';
import { SchemaRegistry } from '@ingest/contracts';
import { createListener, createPool, startTableUpkeep, withTransaction } from '@ingest/db';
import { PLATFORM_ACTOR, type Command } from '@ingest/domain';
import { buildApp, DEFAULT_GATEWAY_CONFIG, runGateway, type ReplyWaiter } from '@ingest/gateway';
import { createKafka, createMessageSink, readKafkaSecurity, type CommandLog } from '@ingest/kafka';
import { runProjector, startRelay } from '@ingest/projector';
import { createLogger, createRegistry, readCommonConfig, setting } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { applyCommand } from '@ingest/projection';
import { serveBench } from './lib/serverProcess.ts';
import { startSpanLog } from './lib/spanLog.ts';

type StoredReply = Awaited<ReturnType<ReturnType<ReplyWaiter['register']>['wait']>>;

const mode = process.argv[2];
const env = process.env;
// BENCH_B6_LOG=warn (or info, debug) lets the server's own log through, on stderr.
const log = env['BENCH_B6_LOG']
  ? createLogger({ name: `bench-b6-${String(process.argv[2])}`, level: env['BENCH_B6_LOG'] })
  : silentLogger();
const common = readCommonConfig(env);
const role = common.dbRole || undefined;

if (mode === 'pipeline') {
  // BENCH_TRACE=1: every span kept with its times, handed to the bench on 'spans' (bench/lib/spanLog.ts).
  const spans = env['BENCH_TRACE'] === '1' ? await startSpanLog('bench-pipeline') : null;
  const registry = createRegistry();
  const listener = createListener({ connectionString: common.databaseUrl, role, log });
  const projector = await runProjector(env, log, { registry, listener });
  const gateway = await runGateway(env, log, { registry, listener });
  await serveBench(
    gateway.port,
    async () => {
      await gateway.stop();
      await projector.stop();
      await listener.close();
    },
    spans ? { spans: () => spans.take() } : {},
  );
} else if (mode === 'gateway' || mode === 'projector') {
  // As deployed (deploy/k8s): the gateway and the projector in processes of their own, each with its
  // own LISTEN connection. The projector's process answers the bench's protocol on port 0.
  const spans = env['BENCH_TRACE'] === '1' ? await startSpanLog(`bench-${mode}`) : null;
  const registry = createRegistry();
  const listener = createListener({ connectionString: common.databaseUrl, role, log });
  const running =
    mode === 'gateway' ? await runGateway(env, log, { registry, listener }) : await runProjector(env, log, { registry, listener });
  await serveBench(
    'port' in running ? running.port : 0,
    async () => {
      await running.stop();
      await listener.close();
    },
    spans ? { spans: () => spans.take() } : {},
  );
} else if (mode === 'peer') {
  const registry = createRegistry();
  const listener = createListener({ connectionString: common.databaseUrl, role, log });
  // As many connections as the pipeline's gateway and projector pools (10 each).
  const requests = createPool({ connectionString: common.databaseUrl, role, max: 10, applicationName: 'ingest-bench-peer-gateway' });
  const writes = createPool({ connectionString: common.databaseUrl, role, max: 10, applicationName: 'ingest-bench-peer-apply' });
  const sink = await createMessageSink(
    createKafka({ brokers: common.kafkaBrokers, security: readKafkaSecurity(env), clientId: 'ingest-bench-peer' }),
  );
  // The relay reads the log rows it expands on a pool of its own, as the pipeline's does (its
  // projector pool has one applier): on the request pool it queued behind 32 requests waiting for
  // the shop lock, fell thousands of rows behind in the window and published them after it.
  const relayPool = createPool({ connectionString: common.databaseUrl, role, max: 2, applicationName: 'ingest-bench-peer-relay' });
  const relay = await startRelay({
    pool: relayPool,
    connectionString: common.databaseUrl,
    role,
    listener,
    sink,
    log,
    registry,
    fenceMs: 0,
  });
  // The same table upkeep as the pipeline's projector (DB_UPKEEP): a direct-write design needs its statistics too.
  const upkeep = startTableUpkeep({
    connectionString: common.databaseUrl,
    mode: setting(env, 'DB_UPKEEP'),
    intervalMs: setting(env, 'DB_UPKEEP_INTERVAL'),
    log,
  });
  const replies = new Map<string, NonNullable<StoredReply>>();
  let offset = 0;
  // The direct-write design: the command is applied inside the request, exactly-once bookkeeping included (D4).
  const commandLog: CommandLog = {
    appendCommand: async (envelope) => {
      // Not decoded: the actor defaulted as the decoder defaults it (D28).
      const c = { actor: PLATFORM_ACTOR, ...envelope } as unknown as Command;
      const at = { topic: 'peer', partition: 0, offset: String(offset++) };
      const reply = await withTransaction(writes, async (tx) => {
        if ((await applyCommand(tx, c, at, { sideEffects: { topics: common.topics } })) !== 'applied')
          throw new Error(`${c.command_id} was not applied`);
        const { rows } = await tx.query<{ status_code: number; body: Record<string, unknown> }>(
          'SELECT status_code, body FROM agent_runtime.command_results WHERE command_id = $1',
          [c.command_id],
        );
        return rows[0]!;
      });
      replies.set(c.command_id, { status: reply.status_code, body: reply.body, shop: c.shop, parked: false });
    },
  };
  const instant: ReplyWaiter = {
    register: (id) => ({
      wait: async () => {
        const r = replies.get(id) ?? null;
        replies.delete(id);
        return r;
      },
      cancel: () => void replies.delete(id),
    }),
    close: async () => {},
  };
  const app = buildApp({
    config: { ...DEFAULT_GATEWAY_CONFIG, ingestSecrets: (env['INGEST_SECRET'] ?? '').split(','), cronSecrets: [] },
    schemas: new SchemaRegistry(),
    commandLog,
    replies: instant,
    dryRunner: { run: () => Promise.reject(new Error('no dry runs in the B6 bench')) },
    pool: requests,
    log,
    registry,
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;
  const a = server.address();
  await serveBench(typeof a === 'object' && a ? a.port : 0, async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await relay.stop();
    await upkeep.stop();
    await sink.close();
    await listener.close();
    await Promise.all([requests.end(), writes.end(), relayPool.end()]);
  });
} else {
  throw new Error(`unknown B6 server mode ${String(mode)}`);
}
