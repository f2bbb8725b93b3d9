// Outages of what the services depend on: the Kafka broker (kill -9, restart) and PostgreSQL
// (through the TCP proxy: refused, or a black hole).
import { runUntilRecovered, sleep } from '../harness.ts';
import { metric, type Scenario, startAll, startLoad, waitUntil, WARM_MS } from './common.ts';

export const brokerKill: Scenario = {
  name: 'broker-kill',
  what: "kill -9 the suite's own Kafka broker under load, restart it after 5 s",
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const { load, shops } = await startLoad(ctx, gw);
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
    return {
      reference,
      recoveryS,
      recoveryLimitS: 30,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: gw,
      shops,
      failures,
      info: [`broker restart took ${(ms / 1000).toFixed(1)} s`],
    };
  },
};

export const databaseOutage: Scenario = {
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
    const publishedBefore =
      ((await metric(p1, 'relay_events_published_total')) ?? 0) + ((await metric(p2, 'relay_events_published_total')) ?? 0);
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
    const publishedAfter =
      ((await metric(p1, 'relay_events_published_total')) ?? 0) + ((await metric(p2, 'relay_events_published_total')) ?? 0);
    return {
      reference,
      recoveryS,
      recoveryLimitS: 20,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: g1,
      shops,
      failures,
      info: [
        `relay_leader after: projector-1 ${leaders[0]}, projector-2 ${leaders[1]}; events published during the run ${publishedAfter - publishedBefore}`,
      ],
    };
  },
};

export const databaseBlackhole: Scenario = {
  name: 'db-blackhole',
  what: 'PostgreSQL silent for 10 s under load (proxy: sockets reset, new connections accepted but never answered)',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const { load, shops } = await startLoad(ctx, gw);
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
