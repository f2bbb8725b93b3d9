// What a refused request costs the gateway (fair admission per shop): `node scripts/bootstrap.mjs bench/refusal-cost.ts`.
// The gateway alone in its process (b6-server.ts `gateway`), with a lines/s budget of 1 per shop: every
// request of the one shop after its first is a 429. Beside it, in the same run, the floor: Node's bare
// http server reading the same body and answering the same 429 (refusal-floor.ts). Rounds alternate
// (gateway, floor, ...) because the machine is shared and what else runs on it changes over minutes;
// each sends RC_SECONDS (5) of 100-line snapshots at RC_RATE (1,000) a second over up to 256
// connections (b7-noisy.ts, B7's noisy shop), and the server's CPU per request is read from the
// process itself. The first round of each is a warm-up. RC_PROF=<dir>: a CPU profile of the gateway.
import { fileURLToPath } from 'node:url';
import { fork } from 'node:child_process';
import { join } from 'node:path';
import { acquireKafka, REPO_ROOT } from '@ingest/devstack';
import { createKafka, ensureTopics, topicPlan } from '@ingest/kafka';
import { SECRET, SNAPSHOT } from './b6-e2e.ts';
import { createBenchDatabase, prepareTemplate } from './lib/db.ts';
import { ServerProcess } from './lib/serverProcess.ts';
import type { NoisyReport, NoisyRun } from './b7-noisy.ts';
import { median, say, sleep } from './lib/util.ts';

const env = process.env;
const rate = Number(env['RC_RATE'] ?? 1000);
const seconds = Number(env['RC_SECONDS'] ?? 5);
const rounds = Math.max(4, Number(env['RC_ROUNDS'] ?? 10));

const kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka-bench'), log: (m) => say(`kafka: ${m}`) });
const id = String(Date.now());
const topics = {
  commands: `bench.${id}.rc.commands`,
  audit: `bench.${id}.rc.audit`,
  stockZero: `bench.${id}.rc.stock-zero`,
  stockRestored: `bench.${id}.rc.stock-restored`,
};
const admin = createKafka({ brokers: kafka.brokers, clientId: 'ingest-bench-rc' });
await ensureTopics(admin, topicPlan(topics, 6));
await prepareTemplate();
const url = await createBenchDatabase('ingest_bench_rc');
const serverEnv = {
  DATABASE_URL: url,
  KAFKA_BROKERS: kafka.brokers.join(','),
  COMMANDS_TOPIC: topics.commands,
  AUDIT_TOPIC: topics.audit,
  STOCK_ZERO_TOPIC: topics.stockZero,
  STOCK_RESTORED_TOPIC: topics.stockRestored,
  INGEST_SECRET: SECRET,
  PORT: '0',
  HOST: '127.0.0.1',
  SHOP_RATE_LINES_PER_S: '1',
  SHOP_BURST_LINES: '100',
  // The shop's first request is admitted and no projector answers it: a 202 soon.
  REPLY_TIMEOUT_MS: '1000',
};
const prof = env['RC_PROF'];
const servers = {
  gateway: await ServerProcess.start(
    fileURLToPath(new URL('./b6-server.ts', import.meta.url)),
    ['gateway'],
    serverEnv,
    prof ? ['--cpu-prof', '--cpu-prof-dir', prof, '--cpu-prof-interval', '500'] : [],
  ),
  floor: await ServerProcess.start(fileURLToPath(new URL('./refusal-floor.ts', import.meta.url)), [], serverEnv),
};
const shop = 'bench-rc-0.myshop.example';
const body = JSON.stringify({
  shop,
  source_system: 'bench-wms',
  location_id: '00000000-0000-4000-8000-000000000001',
  lines: Array.from({ length: 100 }, (_, k) => ({ barcode: `48000${String(k).padStart(8, '0')}`, on_hand_qty: k + 1, available_qty: k })),
});

const cost: Record<keyof typeof servers, number[]> = { gateway: [], floor: [] };
for (let round = 0; round < rounds; round++) {
  const which = round % 2 ? 'floor' : 'gateway';
  const server = servers[which];
  const child = fork(fileURLToPath(new URL('./b7-noisy.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const run: NoisyRun = {
    type: 'run',
    port: server.port,
    path: SNAPSHOT,
    bodies: [body],
    intervalMs: 1000 / rate,
    seconds,
    maxSockets: 256,
  };
  await new Promise<void>((resolve) => {
    child.once('message', () => resolve());
    child.send(run);
  });
  const done = new Promise<NoisyReport>((resolve) => child.once('message', (m: NoisyReport) => resolve(m)));
  await server.ask('reset');
  child.send({ type: 'go' });
  const report = await done;
  const stats = await server.ask<{ cpu_ms: number }>('stats');
  const statuses: Record<string, number> = {};
  for (const x of report.samples) statuses[x.status] = (statuses[x.status] ?? 0) + 1;
  const us = Math.round((stats.cpu_ms * 1000) / report.samples.length);
  if (round >= 2) cost[which].push(us);
  say(
    `round ${round + 1} ${which}: ${report.samples.length} requests ${JSON.stringify(statuses)}; server ${us} µs of CPU each, client ${Math.round((report.cpu_ms * 1000) / report.samples.length)} µs`,
  );
  await sleep(500);
}
say(
  `refused request, server CPU: gateway median ${median(cost.gateway)} µs (${cost.gateway.join(', ')}), floor median ${median(cost.floor)} µs (${cost.floor.join(', ')}); gateway / floor ${(median(cost.gateway) / median(cost.floor)).toFixed(2)}`,
);
await servers.gateway.stop();
await servers.floor.stop();
await kafka.release();
process.exit(0);
