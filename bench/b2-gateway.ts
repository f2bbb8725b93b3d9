// B2 gateway: max-size snapshot bodies through buildApp with stub ports (no Kafka, the reply at once)
// against a bare node:http handler that only reads and JSON.parses the body. The server runs in a
// forked process that measures its own event-loop delay; the load comes from this process.
import { Agent, request } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarizeProfile, type ProfileSummary } from './lib/cpuProfile.ts';
import { ServerProcess } from './lib/serverProcess.ts';
import { median, percentile, round, say, uuidv7 } from './lib/util.ts';

const INGEST_SECRET = 'bench-ingest-secret';
const PATH = '/api/ingest/inventory-snapshot';
type Mode = 'bare' | 'gateway' | 'gateway-kafka';

export interface B2Settings {
  lines: number;
  concurrency: number;
  seconds: number;
  single_seconds: number;
  warmup_requests: number;
  profile_seconds: number;
}

export interface LoadResult {
  concurrency: number;
  requests: number;
  non_200: number;
  requests_per_s: number;
  p50_ms: number;
  p99_ms: number;
  event_loop_delay_ms?: { p50: number; p99: number; max: number; mean: number };
  server_cpu_ms_per_request?: number;
}

export interface B2Result {
  settings: B2Settings & { body_bytes: number };
  bare_parse: { single: LoadResult; concurrent: LoadResult };
  gateway_stub: { single: LoadResult; concurrent: LoadResult };
  gateway_kafka?: { single: LoadResult; concurrent: LoadResult };
  ratio_stub: number;
  ratio_kafka?: number;
  event_loop_p99_ms: number;
  gateway_profile?: ProfileSummary;
}

export function snapshotBody(lines: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      shop: 'bench-gw.myshop.example',
      source_system: 'bench-wms',
      location_id: uuidv7(),
      lines: Array.from({ length: lines }, (_, k) => ({
        barcode: `49${String(k + 1).padStart(11, '0')}`,
        on_hand_qty: 100 + (k % 37),
        available_qty: 90 + (k % 37),
        reserved_qty: k % 5,
      })),
    }),
  );
}

function post(agent: Agent, port: number, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: PATH,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length, 'x-ingest-secret': INGEST_SECRET },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `concurrency` clients, each sending the next body when its answer arrives, for `seconds` (or `count` requests). */
async function load(port: number, body: Buffer, concurrency: number, limit: { seconds?: number; count?: number }): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let non200 = 0;
  let issued = 0;
  const started = performance.now();
  const end = started + (limit.seconds ?? 1e9) * 1000;
  let last = started;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end && (limit.count === undefined || issued < limit.count)) {
        issued++;
        const t0 = performance.now();
        const status = await post(agent, port, body);
        last = performance.now();
        latencies.push(last - t0);
        if (status !== 200) non200++;
      }
    }),
  );
  agent.destroy();
  return {
    concurrency,
    requests: latencies.length,
    non_200: non200,
    requests_per_s: round(latencies.length / ((last - started) / 1000), 1),
    p50_ms: round(median(latencies), 1),
    p99_ms: round(percentile(latencies, 99), 1),
  };
}

/** The B2 server (b2-server.ts) in its own process. */
const startServer = (mode: Mode, env: NodeJS.ProcessEnv, execArgv: string[] = []) =>
  ServerProcess.start(fileURLToPath(new URL('./b2-server.ts', import.meta.url)), [mode], env, execArgv);

async function measureMode(
  mode: Mode,
  s: B2Settings,
  body: Buffer,
  env: NodeJS.ProcessEnv,
): Promise<{ single: LoadResult; concurrent: LoadResult }> {
  const server = await startServer(mode, env);
  try {
    await load(server.port, body, s.concurrency, { count: s.warmup_requests });
    const single = await load(server.port, body, 1, { seconds: s.single_seconds });
    await server.ask('reset');
    const concurrent = await load(server.port, body, s.concurrency, { seconds: s.seconds });
    const stats = await server.ask<{ event_loop_delay_ms: LoadResult['event_loop_delay_ms']; cpu_ms: number }>('stats');
    concurrent.event_loop_delay_ms = stats.event_loop_delay_ms;
    concurrent.server_cpu_ms_per_request = round(stats.cpu_ms / Math.max(1, concurrent.requests), 1);
    say(
      `B2 ${mode}: c=1 ${single.requests_per_s} req/s p50 ${single.p50_ms} ms; c=${s.concurrency} ${concurrent.requests_per_s} req/s ` +
        `p50 ${concurrent.p50_ms} p99 ${concurrent.p99_ms} ms, event-loop p99 ${concurrent.event_loop_delay_ms?.p99} ms, non-200 ${concurrent.non_200 + single.non_200}`,
    );
    return { single, concurrent };
  } finally {
    await server.stop();
  }
}

/** A CPU profile of the gateway process under the same concurrent load (not part of the timed runs). */
async function profileGateway(s: B2Settings, body: Buffer, env: NodeJS.ProcessEnv): Promise<ProfileSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-bench-prof-'));
  try {
    const server = await startServer('gateway', env, ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '500']);
    try {
      await load(server.port, body, s.concurrency, { count: s.warmup_requests });
      await load(server.port, body, s.concurrency, { seconds: s.profile_seconds });
    } finally {
      await server.stop();
    }
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('no CPU profile was written');
    return summarizeProfile(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runB2(s: B2Settings, databaseUrl: string, kafka: { brokers: string[]; topic: string } | null): Promise<B2Result> {
  const body = snapshotBody(s.lines);
  say(`B2: body of ${s.lines.toLocaleString('en-US')} lines = ${(body.length / 1024).toFixed(0)} KiB`);
  const env = {
    BENCH_DATABASE_URL: databaseUrl,
    ...(kafka ? { BENCH_KAFKA_BROKERS: kafka.brokers.join(','), BENCH_COMMANDS_TOPIC: kafka.topic } : {}),
  };
  const bare = await measureMode('bare', s, body, env);
  const stub = await measureMode('gateway', s, body, env);
  const viaKafka = kafka ? await measureMode('gateway-kafka', s, body, env) : undefined;
  say('B2: CPU profile of the gateway under load');
  const profile = await profileGateway(s, body, env).catch((err: unknown) => {
    say(`B2: profile failed: ${String(err)}`);
    return undefined;
  });
  return {
    settings: { ...s, body_bytes: body.length },
    bare_parse: bare,
    gateway_stub: stub,
    ...(viaKafka
      ? { gateway_kafka: viaKafka, ratio_kafka: round(viaKafka.concurrent.requests_per_s / bare.concurrent.requests_per_s, 3) }
      : {}),
    ratio_stub: round(stub.concurrent.requests_per_s / bare.concurrent.requests_per_s, 3),
    event_loop_p99_ms: stub.concurrent.event_loop_delay_ms?.p99 ?? -1,
    ...(profile ? { gateway_profile: profile } : {}),
  };
}
