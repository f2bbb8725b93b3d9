// Deterministic crash points (FAILPOINTS): the process SIGKILLs itself at the step that matters.
import { runUntilRecovered, sleep, toTarget } from '../harness.ts';
import { awaitFailpoint, metric, type Scenario, startLoad } from './common.ts';

export const failpointProjector: Scenario = {
  name: 'fp-projector-ack',
  what: 'FAILPOINTS projector.after-commit-before-ack=exit@80 under load (DB committed, offset not); restart it',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await gw.start();
    p1.expectExit('failpoint projector.after-commit-before-ack');
    await p1.start({ FAILPOINTS: 'projector.after-commit-before-ack=exit@80' });
    const { load, shops } = await startLoad(ctx, gw);
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

export const failpointGateway: Scenario = {
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

export const failpointRelay: Scenario = {
  name: 'fp-relay-mark',
  what: 'FAILPOINTS relay.after-publish-before-mark=exit@15 (events sent, rows not marked); restart: no event missing',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await gw.start();
    p1.expectExit('failpoint relay.after-publish-before-mark');
    await p1.start({ FAILPOINTS: 'relay.after-publish-before-mark=exit@15' });
    const { load, shops } = await startLoad(ctx, gw);
    const failures: string[] = [];
    const reference = (await awaitFailpoint(ctx, p1, 'relay.after-publish-before-mark', 30_000, failures)) ?? Date.now();
    if (!p1.running()) await p1.start();
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 6000, maxMs: 30_000 });
    return { reference, recoveryS, recoveryLimitS: 20, load, connectionErrorsExpected: false, gatewayForChecks: gw, shops, failures };
  },
};
