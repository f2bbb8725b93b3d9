// The consumer group reset to earliest, then a brand-new group: nothing may be applied twice.
import { runUntilRecovered, sleep, type Ctx } from '../harness.ts';
import { metric, type Scenario, startAll, startLoad, WARM_MS } from './common.ts';

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

export const groupReset: Scenario = {
  name: 'group-reset',
  what: 'stop the projector, reset its group to earliest, restart under load; then a brand-new group id',
  run: async (ctx) => {
    const gw = await ctx.gateway('gateway-1');
    const p1 = await ctx.projector('projector-1');
    await startAll([gw, p1]);
    const { load, shops } = await startLoad(ctx, gw);
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
