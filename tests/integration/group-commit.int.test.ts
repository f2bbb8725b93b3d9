import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_SECRET, get, post, startPipeline, waitFor, type TestPipeline } from '../support/pipeline.ts';

// Group commit: a backlog of one busy shop is applied several commands per transaction,
// with per-shop order (D2) and one result and outbox row per command (D4, D5, D6) as one by one.
let p: TestPipeline;

beforeAll(async () => {
  p = await startPipeline();
});
afterAll(async () => {
  await p.stop();
});

const ING = { 'x-ingest-secret': INGEST_SECRET };

async function groupStats(): Promise<{ transactions: number; commands: number }> {
  const metric = await p.projector!.registry.getSingleMetric('projector_group_commands')!.get();
  const value = (suffix: string) =>
    metric.values.find((v) => (v as { metricName?: string }).metricName === `projector_group_commands_${suffix}`)?.value ?? 0;
  return { transactions: value('count'), commands: value('sum') };
}

describe('group commit', () => {
  it('applies a backlog several commands per transaction, in order, each with its own result and outbox row', async () => {
    const shop = `group-${randomUUID().slice(0, 6)}.example`;
    await p.stopProjector();
    const sent = [];
    for (let i = 0; i < 40; i++)
      sent.push(
        await post(
          `${p.url()}/api/ingest/products`,
          { shop, products: [{ barcode: 'G', product_name: 'Grouped', current_price: i }] },
          { ...ING, Prefer: 'respond-async' },
        ),
      );
    await p.startProjector();
    for (const r of sent) await waitFor(async () => (await get(`${p.url()}${r.json.result_url}`, ING)).status === 200, 20_000, 'applied');

    const stats = await groupStats();
    expect(stats.commands).toBeGreaterThanOrEqual(2 * stats.transactions - 1); // groups, not one by one
    expect(stats.transactions).toBeLessThan(40);
    // In order (D2): the last price wins, and every change is logged once, in command order.
    const product = await p.db.query('SELECT current_price FROM public.products WHERE shop = $1', [shop]);
    expect(product.rows[0].current_price).toBe(39);
    const logs = await p.db.query<{ change_type: string; price: number }>(
      `SELECT change_type, (after_data->>'current_price')::int AS price FROM public.product_update_logs WHERE shop = $1 ORDER BY command_id, log_seq`,
      [shop],
    );
    expect(logs.rows.map((r) => r.price)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(logs.rows[0]?.change_type).toBe('created');
    const perCommand = await p.db.query<{ results: number; outbox: number }>(
      `SELECT (SELECT count(*)::int FROM agent_runtime.command_results WHERE shop = $1) AS results,
              (SELECT count(*)::int FROM agent_runtime.outbox o WHERE o.command_id IN (SELECT command_id FROM agent_runtime.command_results WHERE shop = $1)) AS outbox`,
      [shop],
    );
    expect(perCommand.rows[0]).toEqual({ results: 40, outbox: 40 });
  });
});
