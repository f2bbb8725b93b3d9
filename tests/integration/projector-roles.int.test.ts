import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '@ingest/kafka';
import { runProjector, type RunningProjector } from '@ingest/projector';
import { setting } from '@ingest/runtime';
import { silentLogger } from '@ingest/runtime/testing';
import { INGEST_SECRET, post, startPipeline, TEST_FETCH_WAIT_MS, waitFor, type TestPipeline } from '../support/pipeline.ts';

// PROJECTOR_ROLES splits what a projector process runs, so a deployment can scale
// the appliers apart from one process that relays, schedules and prunes.
let p: TestPipeline;
let others: RunningProjector | null = null;

beforeAll(async () => {
  p = await startPipeline({ env: { PROJECTOR_ROLES: 'apply' } });
});
afterAll(async () => {
  await others?.stop();
  await p.stop();
});

const unpublished = async (): Promise<number> =>
  (await p.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL')).rows[0]!.n;

describe('PROJECTOR_ROLES', () => {
  it('an apply-only process applies and answers but publishes nothing; a relay,scheduler,pruner process publishes and joins no group', async () => {
    expect(p.projector!.roles).toEqual(['apply']);
    expect(p.projector!.relay).toBeNull();
    expect(p.projector!.scheduler).toBeNull();
    expect(p.projector!.pruner).toBeNull();

    const r = await post(
      `${p.url()}/api/ingest/products`,
      { shop: 'roles.example', products: [{ barcode: 'R1', product_name: 'R1' }] },
      { 'x-ingest-secret': INGEST_SECRET },
    );
    expect(r.status).toBe(200);
    expect(await unpublished()).toBeGreaterThan(0); // the audit event waits for a relay
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await unpublished()).toBeGreaterThan(0);

    others = await runProjector({ ...p.env, PROJECTOR_ROLES: 'relay,scheduler,pruner' }, silentLogger(), {
      fetchWaitMs: TEST_FETCH_WAIT_MS,
    });
    expect(others.roles).toEqual(['relay', 'scheduler', 'pruner']);
    await waitFor(async () => (await unpublished()) === 0, 15_000, 'the relay-only process publishing the outbox');
    const ready = await others.readiness();
    expect(ready).not.toHaveProperty('consumer');
    expect(ready).toMatchObject({ database: true });

    const admin = createKafka({ brokers: p.brokers, clientId: `test-${p.id}-roles` }).admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([p.env['PROJECTOR_GROUP_ID']!]);
      // the apply-only process's members alone (PROJECTOR_CONCURRENCY of them); the other process joined none
      expect(groups[0]!.members).toHaveLength(setting(p.env, 'PROJECTOR_CONCURRENCY'));
    } finally {
      await admin.disconnect();
    }
  });
});
