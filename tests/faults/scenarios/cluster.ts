// On the suite's own three-node cluster (`npm run test:faults -- --cluster`): kill -9 the
// broker that leads most command partitions under load, bring it back, and check that nothing
// accepted was lost or applied twice, that every stock event (D18) reached its topic in per-level
// order, and that clients saw only 503 with Retry-After while the partitions elected new leaders.
import { post, runUntilRecovered, sleep, type Ctx } from '../harness.ts';
import { INGEST_SECRET, type Shop } from '../load.ts';
import type { Service } from '../procs.ts';
import { readTopicsToEnd } from '../verify.ts';
import { type Scenario, startAll, waitUntil, WARM_MS } from './common.ts';

interface Read {
  topic: string;
  partition: number;
  value: { shop: string; barcode: string; seq: number; event_type: string };
}

interface Flip {
  shop: string;
  qty: number;
  status: number | null;
  retryAfter: string | null;
  error: string | null;
  text: string;
}

export const leaderKill: Scenario = {
  name: 'leader-kill',
  what: 'three brokers (replication 3, min ISR 2): kill -9 the leader of the busiest command partitions under load; restart it after 10 s',
  needsCluster: true,
  run: async (ctx) => {
    const nodes = ctx.suite.broker.nodes;
    if (!nodes || nodes.length < 3)
      throw new Error('leader-kill needs the three-node cluster: npm run test:faults -- --cluster leader-kill');
    const g1 = await ctx.gateway('gateway-1');
    const g2 = await ctx.gateway('gateway-2');
    const p1 = await ctx.projector('projector-1');
    const p2 = await ctx.projector('projector-2');
    await startAll([g1, g2, p1, p2]);
    const shops = await ctx.setupShops(g1, ctx.shopNames());
    await Promise.all(shops.map((s) => setupZeroLevel(g1, s)));
    const load = ctx.newLoad(shops, [g1, g2]);
    load.start();
    const flipper = startFlipper(shops, [g1, g2]);
    ctx.note('load and stock flipper started');
    await sleep(WARM_MS);

    const leaders = await partitionLeaders(ctx, ctx.stack.topics.commands);
    const byNode = new Map<number, number[]>();
    for (const [partition, leader] of leaders) byNode.set(leader, [...(byNode.get(leader) ?? []), partition]);
    const [victimId, led] = [...byNode.entries()].sort((a, b) => b[1].length - a[1].length || a[0] - b[0])[0]!;
    const victim = nodes.find((n) => n.nodeId === victimId)!;
    ctx.note(`kill -9 broker ${victimId} (pid ${victim.pid()}), leader of command partitions ${led.join(',')}`);
    const reference = Date.now();
    await victim.kill9();

    // New leaders for every partition it led, elected by the controller quorum of the two left.
    const elected = await waitUntil(30_000, async () => {
      const now = await partitionLeaders(ctx, ctx.stack.topics.commands).catch(() => null);
      return now && led.every((p) => now.has(p) && now.get(p) !== victimId) ? Date.now() : null;
    });
    const failures: string[] = [];
    if (elected === null) failures.push(`partitions ${led.join(',')} had no new leader 30 s after the kill`);
    ctx.note(
      elected === null ? 'no new leaders within 30 s' : `new leaders elected ${((elected - reference) / 1000).toFixed(1)} s after the kill`,
    );
    await sleep(Math.max(0, reference + 10_000 - Date.now()));
    ctx.note(`restarting broker ${victimId}`);
    const restartMs = await victim.restart();
    ctx.note(`broker ${victimId} serving again after ${(restartMs / 1000).toFixed(1)} s`);
    const recoveryS = await runUntilRecovered(ctx, load, reference, { minMs: 15_000, maxMs: 60_000 });
    const flips = await flipper.stop();
    failures.push(...checkFlips(flips));
    const accepted = flips.filter((f) => f.status === 200 || f.status === 202).length;
    return {
      reference,
      recoveryS,
      recoveryLimitS: 30,
      load,
      connectionErrorsExpected: false,
      gatewayForChecks: g1,
      shops,
      failures,
      info: [
        `killed broker ${victimId}, leader of ${led.length} of ${leaders.size} command partitions`,
        `leaders re-elected after ${elected === null ? 'never' : `${((elected - reference) / 1000).toFixed(1)} s`}; the broker's restart took ${(restartMs / 1000).toFixed(1)} s`,
        `stock flips: ${flips.length} sent, ${accepted} accepted, ${flips.filter((f) => f.status === 503).length} answered 503`,
      ],
      afterQuiescence: () => checkStockEvents(ctx, shops),
    };
  },
};

async function partitionLeaders(ctx: Ctx, topic: string): Promise<Map<number, number>> {
  const admin = ctx.stack.kafka.admin();
  await admin.connect();
  try {
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    return new Map(md.topics[0]!.partitions.filter((p) => p.leader >= 0).map((p) => [p.partitionId, p.leader]));
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

async function setupZeroLevel(via: Service, s: Shop): Promise<void> {
  const prod = await post(via.port, '/api/ingest/products', {
    shop: s.shop,
    products: [{ barcode: 'ZERO', product_name: 'Stock-out probe' }],
  });
  if (prod.status !== 200) throw new Error(`setup: ZERO product for ${s.shop}: ${prod.status} ${prod.text}`);
  const lvl = await post(via.port, '/api/ingest/inventory-available', zeroBody(s, 5));
  if (lvl.status !== 200) throw new Error(`setup: ZERO level for ${s.shop}: ${lvl.status} ${lvl.text}`);
}

const zeroBody = (s: Shop, qty: number) => ({
  shop: s.shop,
  source_system: 'faults-flip',
  mode: 'absolute',
  location_id: s.locationId,
  lines: [{ barcode: 'ZERO', available_qty: qty }],
});

/** Per shop, one request at a time: the ZERO level goes 5 → 0 → 5 …, each applied flip a stock event. */
function startFlipper(shops: Shop[], via: Service[]): { stop(): Promise<Flip[]> } {
  const flips: Flip[] = [];
  let running = true;
  const loops = shops.map(async (s, i) => {
    for (let n = 0; running; n++) {
      const qty = n % 2 === 0 ? 0 : 5;
      const gw = via[(i + n) % via.length]!;
      const f: Flip = { shop: s.shop, qty, status: null, retryAfter: null, error: null, text: '' };
      try {
        const res = await fetch(`http://127.0.0.1:${gw.port}/api/ingest/inventory-available`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-ingest-secret': INGEST_SECRET },
          body: JSON.stringify(zeroBody(s, qty)),
          signal: AbortSignal.timeout(30_000),
        });
        f.status = res.status;
        f.retryAfter = res.headers.get('retry-after');
        f.text = (await res.text()).slice(0, 300);
      } catch (err) {
        f.error = String(err);
      }
      flips.push(f);
      await sleep(250);
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return flips;
    },
  };
}

function checkFlips(flips: Flip[]): string[] {
  const out: string[] = [];
  for (const f of flips) {
    if (f.status === 200 || f.status === 202) continue;
    if (f.status === 503 && f.retryAfter) continue;
    out.push(`stock flip of ${f.shop} to ${f.qty}: ${f.error ?? `${f.status}${f.status === 503 ? ' without Retry-After' : ''} ${f.text}`}`);
  }
  return out;
}

/**
 * Every level's stock events 1..stock_event_seq are on the topics (at least once, D5), none beyond,
 * kinds alternating as the level crossed zero, and per topic partition in seq order (D18).
 */
async function checkStockEvents(ctx: Ctx, shops: Shop[]): Promise<{ failures: string[]; info: string[] }> {
  const failures: string[] = [];
  const { rows } = await ctx.stack.db.query<{ shop: string; seq: number }>(
    `SELECT shop, stock_event_seq AS seq FROM sot.inventory_levels WHERE barcode = 'ZERO' AND shop = ANY($1)`,
    [shops.map((s) => s.shop)],
  );
  const messages: Read[] = [];
  let unparseable = 0;
  const events = await readTopicsToEnd(ctx.stack, [ctx.stack.topics.stockZero, ctx.stack.topics.stockRestored], 30_000, (m) => {
    if (m.value !== null && typeof m.value === 'object') messages.push(m as Read);
    else unparseable += 1;
  });
  if (unparseable) failures.push(`${unparseable} stock event(s) whose value is not a JSON object`);
  if (!events.complete) failures.push('the read of the stock topics made no progress for 30 s before their end');
  let expected = 0;
  let duplicates = 0;
  for (const r of rows) {
    expected += r.seq;
    const mine = messages.filter((m) => m.value.shop === r.shop && m.value.barcode === 'ZERO');
    const seen = new Map<number, string>();
    for (const m of mine) {
      if (seen.has(m.value.seq)) duplicates += 1;
      seen.set(m.value.seq, m.value.event_type);
    }
    for (let k = 1; k <= r.seq; k++)
      if (!seen.has(k)) failures.push(`stock event ${k} of ${r.shop}/ZERO never published (level at seq ${r.seq})`);
    for (const k of seen.keys())
      if (k > r.seq) failures.push(`stock event ${k} of ${r.shop}/ZERO published beyond the level's seq ${r.seq}`);
    // 5 → 0 first: odd seqs are stock_zero, even ones stock_restored
    for (const [k, type] of seen)
      if (type !== (k % 2 === 1 ? 'stock_zero' : 'stock_restored')) failures.push(`stock event ${k} of ${r.shop}/ZERO is ${type}`);
    const byPartition = new Map<string, number>();
    for (const m of mine) {
      const key = `${m.topic}/${m.partition}`;
      const last = byPartition.get(key) ?? 0;
      if (m.value.seq < last) failures.push(`stock events of ${r.shop}/ZERO out of order on ${key}: ${m.value.seq} after ${last}`);
      byPartition.set(key, Math.max(last, m.value.seq));
    }
  }
  return {
    failures: failures.slice(0, 50),
    info: [`stock events: ${expected} expected from the levels' seq, ${messages.length} read, ${duplicates} duplicate(s)`],
  };
}
