// Process kills: a projector of two in one group, a gateway of two with requests in flight.
import { runUntilRecovered, sleep, toTarget } from '../harness.ts';
import { metric, type Scenario, startAll, startLoad, WARM_MS } from './common.ts';

export const projectorKill: Scenario = {
  name: 'projector-kill',
  what: 'two projectors in one group under load; kill -9 one; its partitions must move (<= ~10 s); restart it',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    const p2 = await ctx.projector('projector-2');
    await startAll([gw, p1, p2]);
    const { load, shops } = await startLoad(ctx, gw);
    await sleep(WARM_MS);
    const leader = (await metric(p1, 'relay_leader')) === 1 ? 'projector-1' : 'projector-2';
    ctx.note(`kill -9 projector-1 (relay leader: ${leader})`);
    const reference = Date.now();
    await p1.kill9();
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 12_000, maxMs: 35_000 });
    ctx.note('restarting projector-1');
    await p1.start();
    await sleep(3000);
    return {
      reference,
      recoveryS,
      recoveryLimitS: 15,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: gw,
      shops,
      info: [`relay leader at the kill: ${leader}`],
    };
  },
};

export const gatewayKill: Scenario = {
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
