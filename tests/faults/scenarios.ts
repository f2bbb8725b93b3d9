// The fault scenarios. Each starts real processes, runs open-loop load, injects its fault while the
// load goes on, and hands the harness what to verify. Every wait is bounded.
import { spawn } from 'node:child_process';
import { v7 as uuidv7 } from 'uuid';
import { REPO_ROOT } from '@ingest/devstack';
import { partitionOf, post, runUntilRecovered, sleep, toTarget, type Ctx, type Outcome } from './harness.ts';
import type { Service } from './procs.ts';
import { getCommand } from './verify.ts';

const WARM_MS = Number(process.env['FAULTS_WARM_MS'] ?? 5000);

export interface Scenario {
  name: string;
  what: string;
  run(ctx: Ctx): Promise<Outcome>;
}

/** Sum of a Prometheus counter's samples whose labels contain every `match` pair. */
async function metric(svc: Service, name: string, match: Record<string, string> = {}): Promise<number | null> {
  try {
    const text = await (await fetch(svc.url('/metrics'), { signal: AbortSignal.timeout(3000) })).text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const m = /^([a-z_]+)(\{[^}]*\})?\s+([0-9.e+-]+)$/.exec(line);
      if (!m || m[1] !== name) continue;
      if (Object.entries(match).every(([k, v]) => (m[2] ?? '').includes(`${k}="${v}"`))) sum += Number(m[3]);
    }
    return sum;
  } catch {
    return null;
  }
}

async function startAll(services: Service[]): Promise<void> {
  await Promise.all(services.map((s) => s.start()));
}

/** Waits for a process to die on its configured failpoint. */
async function awaitFailpoint(ctx: Ctx, svc: Service, point: string, timeoutMs: number, failures: string[]): Promise<number | null> {
  const exit = await svc.waitExit(timeoutMs);
  if (!exit) {
    failures.push(`failpoint ${point} never fired within ${timeoutMs / 1000} s (is it wired in this build?)`);
    ctx.note(`failpoint ${point} did not fire`);
    return null;
  }
  ctx.note(`${svc.name} died at failpoint ${point} (${exit.signal ?? exit.code})`);
  return exit.at;
}

const projectorKill: Scenario = {
  name: 'projector-kill',
  what: 'two projectors in one group under load; kill -9 one; its partitions must move (<= ~10 s); restart it',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    const p2 = await ctx.projector('projector-2');
    await startAll([gw, p1, p2]);
    const shops = await ctx.setupShops(gw, ctx.shopNames());
    const load = ctx.newLoad(shops, [gw]);
    load.start();
    ctx.note('load started');
    await sleep(WARM_MS);
    const leader = (await metric(p1, 'relay_leader')) === 1 ? 'projector-1' : 'projector-2';
    ctx.note(`kill -9 projector-1 (relay leader: ${leader})`);
    const reference = Date.now();
    await p1.kill9();
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 12_000, maxMs: 35_000 });
    ctx.note('restarting projector-1');
    await p1.start();
    await sleep(3000);
    return { reference, recoveryS, recoveryLimitS: 15, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops, info: [`relay leader at the kill: ${leader}`] };
  },
};

const gatewayKill: Scenario = {
  name: 'gateway-kill',
  what: 'two gateways under load; kill -9 one with requests in flight; clients move to the other; restart it',
  run: async (ctx) => {
    const g1 = await ctx.gateway('gateway-1');
    const g2 = await ctx.gateway('gateway-2');
    const p1 = await ctx.projector('projector-1');
    await startAll([g1, g2, p1]);
    const shops = await ctx.setupShops(g2, ctx.shopNames());
    const load = ctx.newLoad(shops, [g1, g2]);
    load.start();
    ctx.note('load started');
    await sleep(WARM_MS);
    // Kill it with requests in flight: a burst of writes to it, 50 ms (parsed, recorded, some
    // appended and waiting for their reply) before the kill.
    const kinds = ['products', 'delta', 'bulk', 'async', 'products', 'delta', 'products', 'products'] as const;
    const burst = kinds.map((k, i) => load.send(k, shops[i % shops.length]!, toTarget(g1)));
    await sleep(50);
    const inFlight = load.records.filter((r) => r.gateway === g1.name && r.endAt === null).length;
    ctx.note(`kill -9 gateway-1 (${inFlight} requests in flight on it)`);
    const reference = Date.now();
    await g1.kill9();
    await Promise.all(burst);
    await sleep(1000); // the load balancer's health check notices
    load.setTargets([toTarget(g2)]);
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 6000, maxMs: 30_000, ignoreConnErrors: true });
    await g1.start();
    load.setTargets([toTarget(g1), toTarget(g2)]);
    ctx.note('gateway-1 back in the rotation');
    await sleep(4000);
    return {
      reference,
      recoveryS,
      recoveryLimitS: 10,
      load,
      connectionErrorsExpected: true,
      gatewayForChecks: g2,
      shops,
      info: [`${inFlight} requests were in flight on gateway-1 when it was killed`],
    };
  },
};

const brokerKill: Scenario = {
  name: 'broker-kill',
  what: "kill -9 the suite's own Kafka broker under load, restart it after 5 s",
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const shops = await ctx.setupShops(gw, ctx.shopNames());
    const load = ctx.newLoad(shops, [gw]);
    load.start();
    ctx.note('load started');
    await sleep(WARM_MS);
    ctx.note(`kill -9 the broker (pid ${ctx.suite.broker.pid()})`);
    const killedAt = Date.now();
    await ctx.suite.broker.kill9();
    const failures: string[] = [];
    // /readyz must turn 503 while the broker is gone (the gateway notices within ~7 s, README)
    const notReady = await waitUntil(12_000, async () => ((await gw.readyStatus(2000)) === 200 ? null : Date.now()));
    if (notReady === null) failures.push('gateway /readyz kept answering 200 for 12 s with the broker down');
    ctx.note(`gateway /readyz ${notReady === null ? 'still 200 after 12 s' : `503 after ${((notReady - killedAt) / 1000).toFixed(1)} s`}`);
    await sleep(Math.max(0, killedAt + 5000 - Date.now()));
    ctx.note('restarting the broker');
    const ms = await ctx.suite.broker.restart();
    const reference = Date.now();
    ctx.note(`broker serving again after ${(ms / 1000).toFixed(1)} s`);
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 8000, maxMs: 45_000 });
    return { reference, recoveryS, recoveryLimitS: 30, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops, failures, info: [`broker restart took ${(ms / 1000).toFixed(1)} s`] };
  },
};

const databaseOutage: Scenario = {
  name: 'db-outage',
  what: 'PostgreSQL unreachable for 12 s under load (proxy: every socket reset, new ones refused); 2 gateways, 2 projectors',
  run: async (ctx) => {
    const g1 = await ctx.gateway('gateway-1');
    const g2 = await ctx.gateway('gateway-2');
    const p1 = await ctx.projector('projector-1');
    const p2 = await ctx.projector('projector-2');
    await startAll([g1, g2, p1, p2]);
    const shops = await ctx.setupShops(g1, ctx.shopNames());
    const load = ctx.newLoad(shops, [g1, g2]);
    load.start();
    ctx.note('load started');
    await sleep(WARM_MS);
    const publishedBefore = ((await metric(p1, 'relay_events_published_total')) ?? 0) + ((await metric(p2, 'relay_events_published_total')) ?? 0);
    ctx.note('database outage begins (proxy cut: reset + refuse)');
    await ctx.stack.proxy.cut('refuse');
    await sleep(6000);
    const failures: string[] = [];
    const during = await Promise.all([g1, g2, p1, p2].map(async (s) => [s.name, await s.readyStatus(8000)] as const));
    for (const [n, st] of during) if (st === 200) failures.push(`${n} /readyz answered 200 during the database outage`);
    ctx.note(`/readyz during the outage: ${during.map(([n, st]) => `${n} ${st}`).join(', ')}`);
    await sleep(Math.max(0, 12_000 - 6000 - 0));
    await ctx.stack.proxy.restore();
    const reference = Date.now();
    ctx.note('database reachable again');
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 8000, maxMs: 40_000 });
    const after = await Promise.all([g1, g2, p1, p2].map(async (s) => [s.name, await s.readyStatus(8000)] as const));
    for (const [n, st] of after) if (st !== 200) failures.push(`${n} /readyz answered ${st} after the outage ended and writes recovered`);
    const leaders = await Promise.all([p1, p2].map((p) => metric(p, 'relay_leader')));
    const publishedAfter = ((await metric(p1, 'relay_events_published_total')) ?? 0) + ((await metric(p2, 'relay_events_published_total')) ?? 0);
    return {
      reference,
      recoveryS,
      recoveryLimitS: 20,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: g1,
      shops,
      failures,
      info: [`relay_leader after: projector-1 ${leaders[0]}, projector-2 ${leaders[1]}; events published during the run ${publishedAfter - publishedBefore}`],
    };
  },
};

const databaseBlackhole: Scenario = {
  name: 'db-blackhole',
  what: 'PostgreSQL silent for 10 s under load (proxy: sockets reset, new connections accepted but never answered)',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const shops = await ctx.setupShops(gw, ctx.shopNames());
    const load = ctx.newLoad(shops, [gw]);
    load.start();
    ctx.note('load started');
    await sleep(WARM_MS);
    ctx.note('database black hole begins');
    await ctx.stack.proxy.cut('blackhole');
    await sleep(10_000);
    await ctx.stack.proxy.restore();
    const reference = Date.now();
    ctx.note('database answering again');
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 8000, maxMs: 40_000 });
    return { reference, recoveryS, recoveryLimitS: 20, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops };
  },
};

/** Resets the group to the earliest offsets; answers how many tries it took and the last refusal. */
async function resetToEarliest(ctx: Ctx, groupId: string, topic: string): Promise<string> {
  const admin = ctx.stack.kafka.admin();
  await admin.connect();
  try {
    const deadline = Date.now() + 20_000;
    let lastErr = '';
    for (let tries = 1; ; tries++) {
      try {
        await admin.resetOffsets({ groupId, topic, earliest: true });
        return tries === 1 ? 'at the first try' : `after ${tries} tries (last refusal: ${lastErr})`;
      } catch (err) {
        // the group must be empty: the stopped member may still be leaving
        lastErr = err instanceof Error ? err.message : String(err);
        if (Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
  } finally {
    await admin.disconnect();
  }
}

const groupReset: Scenario = {
  name: 'group-reset',
  what: 'stop the projector, reset its group to earliest, restart under load; then a brand-new group id',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const shops = await ctx.setupShops(gw, ctx.shopNames());
    const load = ctx.newLoad(shops, [gw]);
    load.start();
    ctx.note('load started');
    await sleep(WARM_MS + 2000);
    const info: string[] = [];
    await p1.stop();
    ctx.note('projector stopped (SIGTERM)');
    const how = await resetToEarliest(ctx, ctx.groupId, ctx.stack.topics.commands);
    ctx.note(`group ${ctx.groupId} reset to earliest ${how}`);
    await p1.start();
    const reference = Date.now();
    const r1 = await runUntilRecovered(ctx, load, reference, { minMs: 5000, maxMs: 30_000 });
    info.push(
      `after the reset: ${await metric(p1, 'projector_commands_total', { outcome: 'skipped' })} skipped below the stored position, ${await metric(p1, 'projector_commands_total', { outcome: 'duplicate' })} duplicates, ${await metric(p1, 'projector_commands_total', { outcome: 'applied' })} applied`,
    );
    await p1.stop();
    const newGroup = `${ctx.groupId}-new`;
    ctx.groupId = newGroup;
    await p1.start({ PROJECTOR_GROUP_ID: newGroup });
    const reference2 = Date.now();
    ctx.note(`projector restarted with a new group ${newGroup}`);
    const r2 = await runUntilRecovered(ctx, load, reference2, { minMs: 5000, maxMs: 30_000 });
    info.push(
      `new group: ${await metric(p1, 'projector_commands_total', { outcome: 'skipped' })} skipped, ${await metric(p1, 'projector_commands_total', { outcome: 'duplicate' })} duplicates, ${await metric(p1, 'projector_commands_total', { outcome: 'applied' })} applied`,
    );
    const recoveryS = r1 === null || r2 === null ? null : Math.max(r1, r2);
    return { reference, recoveryS, recoveryLimitS: 20, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops, info };
  },
};

/** `npm run parked -- <args>` against the scenario's database and topics. */
function parkedCli(ctx: Ctx, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const env = { ...ctx.stack.env, DATABASE_URL: ctx.stack.directUrl };
    const child = spawn('npm', ['run', '--silent', 'parked', '--', ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(t);
      ctx.note(`npm run parked -- ${args.join(' ')} -> exit ${code}: ${out.trim().replace(/\n/g, ' | ')}`);
      resolve({ code, out: out.trim() });
    });
  });
}

async function waitUntil<T>(timeoutMs: number, fn: () => Promise<T | null | undefined | false>): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) return null;
    await sleep(250);
  }
}

const poison: Scenario = {
  name: 'poison',
  what: "a command PostgreSQL rejects on shop A's partition: A parks in order, others (same partition too) flow; skip + retry",
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const names = ctx.shopNames();
    const a = names[0]!;
    const neighbour = ctx.shopNames(1, partitionOf(a)).find((n) => n !== a) ?? ctx.shopNames(2, partitionOf(a))[1]!;
    const shops = await ctx.setupShops(gw, [...names, neighbour]);
    const shopA = shops.find((s) => s.shop === a)!;
    const others = shops.filter((s) => s.shop !== a);
    const failures: string[] = [];
    const info: string[] = [`shop A ${a} and its neighbour ${neighbour} share partition ${partitionOf(a)}`];
    const load = ctx.newLoad(others, [gw], { ratePerSec: 12 });
    load.start();
    ctx.note('load on the other shops started');
    await sleep(2000);

    // The poison: well-formed, valid against the schemas, rejected by PostgreSQL (year 0).
    const poisonId = uuidv7();
    const producer = ctx.stack.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: ctx.stack.topics.commands,
      messages: [
        {
          key: a,
          value: JSON.stringify({ command_id: poisonId, kind: 'inventory.daily_snapshot', shop: a, received_at: new Date().toISOString(), source: { endpoint: '/faults/poison' }, payload: { snapshot_date: '0000-01-01' } }),
          headers: { command_id: poisonId, kind: 'inventory.daily_snapshot' },
        },
      ],
    });
    await producer.disconnect();
    const tPoison = Date.now();
    ctx.note(`poison ${poisonId} produced for ${a}`);
    const parkedPoison = await waitUntil(20_000, async () => (await ctx.stack.db.query('SELECT error FROM agent_runtime.parked_commands WHERE command_id = $1', [poisonId])).rows[0]);
    if (!parkedPoison) failures.push(`the poison ${poisonId} was not parked within 20 s`);
    else ctx.note(`poison parked: ${JSON.stringify(parkedPoison)}`);

    // Shop A's next commands: one product, its price moved 1 -> 4 by four commands in order.
    const aIds: string[] = [];
    const first = await post(gw.port, '/api/ingest/products', { shop: a, products: [{ barcode: 'PA', product_name: 'Parked item', current_price: 1 }] });
    ctx.note(`A #1 (sync) -> ${first.status} ${first.text.slice(0, 200)}`);
    if (first.status !== 202 || first.body?.status !== 'parked') failures.push(`A's first command after the poison answered ${first.status} ${first.text.slice(0, 200)}, expected 202 status "parked"`);
    if (typeof first.body?.command_id === 'string') aIds.push(first.body.command_id);
    for (let price = 2; price <= 4; price++) {
      const r = await post(gw.port, '/api/ingest/products', { shop: a, products: [{ barcode: 'PA', product_name: 'Parked item', current_price: price }] }, { prefer: 'respond-async' });
      if (r.status !== 202 || typeof r.body?.command_id !== 'string') failures.push(`A's command (price ${price}) answered ${r.status} ${r.text.slice(0, 200)}`);
      else aIds.push(r.body.command_id);
    }
    const allParked = await waitUntil(20_000, async () => {
      const { rows } = await ctx.stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.parked_commands WHERE command_id = ANY($1) AND resolved_at IS NULL', [aIds]);
      return (rows[0]?.n ?? 0) === aIds.length;
    });
    if (!allParked) failures.push(`A's ${aIds.length} later commands were not all parked behind the poison within 20 s`);
    for (const id of aIds) {
      const g = await getCommand(gw.port, id);
      if (g.status !== 202 || g.body?.status !== 'parked') failures.push(`GET ${id} (A, behind the poison) answered ${g.status} ${JSON.stringify(g.body).slice(0, 200)}, expected 202 parked`);
    }
    const early = await ctx.stack.db.query("SELECT 1 FROM public.products WHERE shop = $1 AND barcode = 'PA'", [a]);
    if (early.rowCount) failures.push("shop A's product was applied past the parked poison (per-shop order broken)");

    // Other shops (the neighbour on A's partition included) kept flowing meanwhile.
    const othersAfter = load.records.filter((r) => r.sentAt >= tPoison && r.kind !== 'get' && r.endAt !== null);
    const slow = othersAfter.filter((r) => r.status !== (r.kind === 'async' ? 202 : 200) || r.endAt! - r.sentAt > 3000);
    const neighbourN = othersAfter.filter((r) => r.shop === neighbour).length;
    info.push(`${othersAfter.length} writes of other shops after the poison (${neighbourN} of the neighbour), ${slow.length} not 200 within 3 s`);
    if (slow.length) failures.push(`other shops held up by A's poison: ${slow.slice(0, 5).map((r) => `#${r.seq} ${r.shop} ${r.error ?? r.status} ${((r.endAt! - r.sentAt) / 1000).toFixed(1)}s`).join('; ')}`);

    // The operator: list, skip the poison, retry the rest in order.
    await parkedCli(ctx, ['list']);
    const tSkip = Date.now();
    const skip = await parkedCli(ctx, ['skip', poisonId]);
    if (skip.code !== 0) failures.push(`npm run parked -- skip failed (exit ${skip.code}): ${skip.out}`);
    const retry = aIds[0] ? await parkedCli(ctx, ['retry', aIds[0]]) : null;
    if (retry && retry.code !== 0) failures.push(`npm run parked -- retry failed (exit ${retry.code}): ${retry.out}`);
    const gp = await getCommand(gw.port, poisonId);
    ctx.note(`GET poison -> ${gp.status} ${JSON.stringify(gp.body).slice(0, 200)}`);
    if (gp.status >= 500 || gp.status === 404 || gp.status === 200) failures.push(`GET of the skipped poison answered ${gp.status} ${JSON.stringify(gp.body).slice(0, 200)}`);
    for (const id of aIds) {
      const g = await waitUntil(10_000, async () => {
        const r = await getCommand(gw.port, id);
        return r.status === 200 ? r : null;
      });
      if (!g) failures.push(`A's command ${id} not answered 200 after retry: ${JSON.stringify((await getCommand(gw.port, id)).body).slice(0, 200)}`);
    }
    const chain = await ctx.stack.db.query<{ change_type: string; before: number | null; after: number }>(
      `SELECT change_type, (before_data->>'current_price')::numeric AS before, (after_data->>'current_price')::numeric AS after
         FROM public.product_update_logs WHERE shop = $1 AND barcode = 'PA' ORDER BY created_at, log_seq`,
      [a],
    );
    const pairs = chain.rows.map((r) => `${r.change_type}:${r.before ?? '-'}->${r.after}`).join(', ');
    const expected = 'created:-->1, price_change:1->2, price_change:2->3, price_change:3->4';
    if (pairs !== expected) failures.push(`shop A's commands were not applied once each in order: logs ${pairs || '(none)'}; expected ${expected}`);
    ctx.note(`A's update logs after retry: ${pairs}`);

    // Shop A flows live again.
    const live = await post(gw.port, '/api/ingest/products', { shop: a, products: [{ barcode: 'PA', product_name: 'Parked item', current_price: 5 }] });
    const recoveryS = (Date.now() - tSkip) / 1000;
    ctx.note(`A live again -> ${live.status} ${live.text.slice(0, 200)}`);
    if (live.status !== 200 || live.body?.updated !== 1) failures.push(`shop A's next command after the retry answered ${live.status} ${live.text.slice(0, 200)}, expected 200 updated 1`);
    const openA = await ctx.stack.db.query('SELECT command_id FROM agent_runtime.parked_commands WHERE shop = $1 AND resolved_at IS NULL', [a]);
    if (openA.rowCount) failures.push(`${openA.rowCount} command(s) of shop A still parked after skip + retry`);
    await sleep(1000);
    return { reference: tSkip, recoveryS, recoveryLimitS: 30, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops: [...others, shopA], failures, info };
  },
};

const failpointProjector: Scenario = {
  name: 'fp-projector-ack',
  what: 'FAILPOINTS projector.after-commit-before-ack=exit@80 under load (DB committed, offset not); restart it',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await gw.start();
    p1.expectExit('failpoint projector.after-commit-before-ack');
    await p1.start({ FAILPOINTS: 'projector.after-commit-before-ack=exit@80' });
    const shops = await ctx.setupShops(gw, ctx.shopNames());
    const load = ctx.newLoad(shops, [gw]);
    load.start();
    ctx.note('load started');
    const failures: string[] = [];
    const reference = (await awaitFailpoint(ctx, p1, 'projector.after-commit-before-ack', 30_000, failures)) ?? Date.now();
    if (!p1.running()) await p1.start();
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 6000, maxMs: 30_000 });
    const dup = await metric(p1, 'projector_commands_total', { outcome: 'duplicate' });
    const skipped = await metric(p1, 'projector_commands_total', { outcome: 'skipped' });
    return {
      reference,
      recoveryS,
      recoveryLimitS: 20,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: gw,
      shops,
      failures,
      info: [`after the restart: ${skipped} redelivered command(s) skipped below the stored position, ${dup} found already claimed`],
    };
  },
};

const failpointGateway: Scenario = {
  name: 'fp-gateway-append',
  what: 'FAILPOINTS gateway.after-append-before-reply=exit@30 on one of two gateways (appended, no answer); restart it',
  run: async (ctx) => {
    const g1 = await ctx.gateway('gateway-1');
    const g2 = await ctx.gateway('gateway-2');
    const p1 = await ctx.projector('projector-1');
    g1.expectExit('failpoint gateway.after-append-before-reply');
    await Promise.all([g1.start({ FAILPOINTS: 'gateway.after-append-before-reply=exit@30' }), g2.start(), p1.start()]);
    const shops = await ctx.setupShops(g2, ctx.shopNames());
    const load = ctx.newLoad(shops, [g1, g2]);
    load.start();
    ctx.note('load started');
    const failures: string[] = [];
    const reference = (await awaitFailpoint(ctx, g1, 'gateway.after-append-before-reply', 30_000, failures)) ?? Date.now();
    await sleep(1000);
    load.setTargets([toTarget(g2)]);
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 5000, maxMs: 30_000, ignoreConnErrors: true });
    if (!g1.running()) await g1.start();
    load.setTargets([toTarget(g1), toTarget(g2)]);
    await sleep(3000);
    return { reference, recoveryS, recoveryLimitS: 10, load, connectionErrorsExpected: true, gatewayForChecks: g2, shops, failures };
  },
};

const failpointRelay: Scenario = {
  name: 'fp-relay-mark',
  what: 'FAILPOINTS relay.after-publish-before-mark=exit@15 (events sent, rows not marked); restart: no event missing',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await gw.start();
    p1.expectExit('failpoint relay.after-publish-before-mark');
    await p1.start({ FAILPOINTS: 'relay.after-publish-before-mark=exit@15' });
    const shops = await ctx.setupShops(gw, ctx.shopNames());
    const load = ctx.newLoad(shops, [gw]);
    load.start();
    ctx.note('load started');
    const failures: string[] = [];
    const reference = (await awaitFailpoint(ctx, p1, 'relay.after-publish-before-mark', 30_000, failures)) ?? Date.now();
    if (!p1.running()) await p1.start();
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 6000, maxMs: 30_000 });
    return { reference, recoveryS, recoveryLimitS: 20, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops, failures };
  },
};

export const SCENARIOS: Scenario[] = [projectorKill, gatewayKill, brokerKill, databaseOutage, databaseBlackhole, groupReset, poison, failpointProjector, failpointGateway, failpointRelay];
