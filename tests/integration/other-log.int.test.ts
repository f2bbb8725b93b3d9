import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_SECRET, post, startPipeline, type TestPipeline } from '../support/pipeline.ts';

// Found on a fresh clone: the README's `npm start` starts a new broker (a new, empty command log)
// but reuses the machine's database, whose stored positions came from the old log. Skipping by
// those positions lost the first commands of the new log (answered 202, never applied).
let p: TestPipeline;

beforeAll(async () => {
  p = await startPipeline({ projector: false });
});
afterAll(async () => {
  await p.stop();
});

describe('a stored position from another log (bounded state)', () => {
  it('is forgotten, and the new log is applied in full', async () => {
    for (const partition of [0, 1, 2])
      await p.db.query(
        `INSERT INTO agent_runtime.projector_checkpoints (projector, kafka_topic, kafka_partition, next_offset, last_command_id)
         VALUES ('live', $1, $2, 1000, $3)`,
        [p.topics.commands, partition, randomUUID()],
      );
    await p.startProjector();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        post(
          `${p.url()}/api/ingest/products`,
          { shop: `other-log-${i}.example`, products: [{ barcode: 'X', product_name: 'x' }] },
          { 'x-ingest-secret': INGEST_SECRET },
        ),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const { rows } = await p.db.query(
      `SELECT kafka_partition, next_offset FROM agent_runtime.projector_checkpoints WHERE kafka_topic = $1`,
      [p.topics.commands],
    );
    for (const r of rows) expect(Number(r.next_offset)).toBeLessThan(1000);
  });
});
