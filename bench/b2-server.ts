// B2 server process (forked by b2-gateway.ts): the gateway app with stub ports, or the parse floor.
// It measures its own event-loop delay; the load generator runs in the parent process.
import { createServer, type Server } from 'node:http';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool } from '@ingest/db';
import { buildApp, DEFAULT_GATEWAY_CONFIG, type ReplyWaiter } from '@ingest/gateway';
import { createCommandLog, createKafka, createMessageSink, readKafkaSecurity, type CommandLog, type MessageSink } from '@ingest/kafka';
import { createRegistry } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { serveBench } from './lib/serverProcess.ts';

// The same TLS/SASL settings as the services, for a KAFKA_BROKERS cluster that needs them.
const kafkaSecurity = readKafkaSecurity(process.env);

export const INGEST_SECRET = 'bench-ingest-secret';
const mode = process.argv[2] ?? 'bare';
const env = process.env;

/** Answers at once, as if the projector had already stored the result. */
const instantReplies: ReplyWaiter = {
  register: () => ({
    wait: async () => ({ status: 200, body: { ok: true, bench: 'stub reply' }, shop: '', parked: false }),
    cancel: () => {},
  }),
  close: async () => {},
};

let sink: MessageSink | null = null;
let closePool = async () => {};
let server: Server;
if (mode === 'bare') {
  // The floor: read the body and JSON.parse it, nothing else.
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { lines?: unknown[] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, lines: body.lines?.length ?? 0 }));
    });
  });
} else {
  const pool = createPool({
    connectionString: env['BENCH_DATABASE_URL']!,
    role: 'ingest_service',
    max: 10,
    applicationName: 'ingest-bench-gateway',
  });
  closePool = () => pool.end();
  let commandLog: CommandLog = { appendCommand: async () => {} };
  if (mode === 'gateway-kafka') {
    sink = await createMessageSink(
      createKafka({ brokers: env['BENCH_KAFKA_BROKERS']!.split(','), security: kafkaSecurity, clientId: 'ingest-bench-gateway' }),
    );
    commandLog = createCommandLog(sink, env['BENCH_COMMANDS_TOPIC']!);
  }
  const app = buildApp({
    config: { ...DEFAULT_GATEWAY_CONFIG, ingestSecrets: [INGEST_SECRET], cronSecrets: [] },
    schemas: new SchemaRegistry(),
    commandLog,
    replies: instantReplies,
    dryRunner: { run: () => Promise.reject(new Error('no dry runs in the B2 bench')) },
    pool,
    log: silentLogger(),
    registry: createRegistry(),
  });
  server = createServer(app);
}
server.keepAliveTimeout = 65_000;

const port = await new Promise<number>((resolve) =>
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    resolve(typeof a === 'object' && a ? a.port : 0);
  }),
);
await serveBench(port, async () => {
  server.close();
  server.closeAllConnections();
  await sink?.close();
  await closePool();
});
