// A poison command on a shop's partition: parked with its shop's later commands, others flow;
// the operator skips it and the shop resumes, its later commands applied in order (npm run parked).
import { spawn } from 'node:child_process';
import { v7 as uuidv7 } from 'uuid';
import { REPO_ROOT } from '@ingest/devstack';
import { partitionOf, post, sleep, type Ctx } from '../harness.ts';
import { getCommand } from '../verify.ts';
import { startAll, waitUntil, type Scenario } from './common.ts';

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

export const poison: Scenario = {
  name: 'poison',
  what: "a command PostgreSQL rejects on shop A's partition: A parks in order, others (same partition too) flow; a skip resumes A",
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
          value: JSON.stringify({
            command_id: poisonId,
            kind: 'inventory.daily_snapshot',
            shop: a,
            received_at: new Date().toISOString(),
            source: { endpoint: '/faults/poison' },
            payload: { snapshot_date: '0000-01-01' },
          }),
          headers: { command_id: poisonId, kind: 'inventory.daily_snapshot' },
        },
      ],
    });
    await producer.disconnect();
    const tPoison = Date.now();
    ctx.note(`poison ${poisonId} produced for ${a}`);
    const parkedPoison = await waitUntil(
      20_000,
      async () => (await ctx.stack.db.query('SELECT error FROM agent_runtime.parked_commands WHERE command_id = $1', [poisonId])).rows[0],
    );
    if (!parkedPoison) failures.push(`the poison ${poisonId} was not parked within 20 s`);
    else ctx.note(`poison parked: ${JSON.stringify(parkedPoison)}`);

    // Shop A's next commands: one product, its price moved 1 -> 4 by four commands in order.
    const aIds: string[] = [];
    const first = await post(gw.port, '/api/ingest/products', {
      shop: a,
      products: [{ barcode: 'PA', product_name: 'Parked item', current_price: 1 }],
    });
    ctx.note(`A #1 (sync) -> ${first.status} ${first.text.slice(0, 200)}`);
    if (first.status !== 202 || first.body?.status !== 'parked')
      failures.push(
        `A's first command after the poison answered ${first.status} ${first.text.slice(0, 200)}, expected 202 status "parked"`,
      );
    if (typeof first.body?.command_id === 'string') aIds.push(first.body.command_id);
    for (let price = 2; price <= 4; price++) {
      const r = await post(
        gw.port,
        '/api/ingest/products',
        { shop: a, products: [{ barcode: 'PA', product_name: 'Parked item', current_price: price }] },
        { prefer: 'respond-async' },
      );
      if (r.status !== 202 || typeof r.body?.command_id !== 'string')
        failures.push(`A's command (price ${price}) answered ${r.status} ${r.text.slice(0, 200)}`);
      else aIds.push(r.body.command_id);
    }
    const allParked = await waitUntil(20_000, async () => {
      const { rows } = await ctx.stack.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM agent_runtime.parked_commands WHERE command_id = ANY($1) AND resolved_at IS NULL',
        [aIds],
      );
      return (rows[0]?.n ?? 0) === aIds.length;
    });
    if (!allParked) failures.push(`A's ${aIds.length} later commands were not all parked behind the poison within 20 s`);
    for (const id of aIds) {
      const g = await getCommand(gw.port, id);
      if (g.status !== 202 || g.body?.status !== 'parked')
        failures.push(`GET ${id} (A, behind the poison) answered ${g.status} ${JSON.stringify(g.body).slice(0, 200)}, expected 202 parked`);
    }
    const early = await ctx.stack.db.query("SELECT 1 FROM public.products WHERE shop = $1 AND barcode = 'PA'", [a]);
    if (early.rowCount) failures.push("shop A's product was applied past the parked poison (per-shop order broken)");

    // Other shops (the neighbour on A's partition included) kept flowing meanwhile.
    const othersAfter = load.records.filter((r) => r.sentAt >= tPoison && r.kind !== 'get' && r.endAt !== null);
    const slow = othersAfter.filter((r) => r.status !== (r.kind === 'async' ? 202 : 200) || r.endAt! - r.sentAt > 3000);
    const neighbourN = othersAfter.filter((r) => r.shop === neighbour).length;
    info.push(
      `${othersAfter.length} writes of other shops after the poison (${neighbourN} of the neighbour), ${slow.length} not 200 within 3 s`,
    );
    if (slow.length)
      failures.push(
        `other shops held up by A's poison: ${slow
          .slice(0, 5)
          .map((r) => `#${r.seq} ${r.shop} ${r.error ?? r.status} ${((r.endAt! - r.sentAt) / 1000).toFixed(1)}s`)
          .join('; ')}`,
      );

    // The operator: list, then skip the poison; the skip resumes the shop, applying the rest in order.
    await parkedCli(ctx, ['list']);
    const tSkip = Date.now();
    const skip = await parkedCli(ctx, ['skip', poisonId, '--reason', 'the fault suite poison: a date PostgreSQL cannot store']);
    if (skip.code !== 0) failures.push(`npm run parked -- skip failed (exit ${skip.code}): ${skip.out}`);
    const gp = await getCommand(gw.port, poisonId);
    ctx.note(`GET poison -> ${gp.status} ${JSON.stringify(gp.body).slice(0, 200)}`);
    if (gp.status >= 500 || gp.status === 404 || gp.status === 200)
      failures.push(`GET of the skipped poison answered ${gp.status} ${JSON.stringify(gp.body).slice(0, 200)}`);
    for (const id of aIds) {
      const g = await waitUntil(10_000, async () => {
        const r = await getCommand(gw.port, id);
        return r.status === 200 ? r : null;
      });
      if (!g)
        failures.push(
          `A's command ${id} not answered 200 after the skip: ${JSON.stringify((await getCommand(gw.port, id)).body).slice(0, 200)}`,
        );
    }
    const chain = await ctx.stack.db.query<{ change_type: string; before: number | null; after: number }>(
      `SELECT change_type, (before_data->>'current_price')::numeric AS before, (after_data->>'current_price')::numeric AS after
         FROM public.product_update_logs WHERE shop = $1 AND barcode = 'PA' ORDER BY created_at, log_seq`,
      [a],
    );
    const pairs = chain.rows.map((r) => `${r.change_type}:${r.before ?? '-'}->${r.after}`).join(', ');
    const expected = 'created:-->1, price_change:1->2, price_change:2->3, price_change:3->4';
    if (pairs !== expected)
      failures.push(`shop A's commands were not applied once each in order: logs ${pairs || '(none)'}; expected ${expected}`);
    ctx.note(`A's update logs after the skip: ${pairs}`);

    // Shop A flows live again.
    const live = await post(gw.port, '/api/ingest/products', {
      shop: a,
      products: [{ barcode: 'PA', product_name: 'Parked item', current_price: 5 }],
    });
    const recoveryS = (Date.now() - tSkip) / 1000;
    ctx.note(`A live again -> ${live.status} ${live.text.slice(0, 200)}`);
    if (live.status !== 200 || live.body?.updated !== 1)
      failures.push(`shop A's next command after the skip answered ${live.status} ${live.text.slice(0, 200)}, expected 200 updated 1`);
    const openA = await ctx.stack.db.query('SELECT command_id FROM agent_runtime.parked_commands WHERE shop = $1 AND resolved_at IS NULL', [
      a,
    ]);
    if (openA.rowCount) failures.push(`${openA.rowCount} command(s) of shop A still parked after the skip`);
    await sleep(1000);
    return {
      reference: tSkip,
      recoveryS,
      recoveryLimitS: 30,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: gw,
      shops: [...others, shopA],
      failures,
      info,
    };
  },
};
