import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import { createDatabaseFromTemplate, createPool, dropDatabase, type Pool } from '../src/index.ts';

/**
 * A database copied from the migrated template for the calling test file (the integration tier's
 * global setup makes the template), with a pool of `max` connections; dropped after the file.
 * `pool` is set from `beforeAll` on.
 */
export function scratchDatabase(prefix: string, max = 1): { pool: Pool } {
  const db = {} as { pool: Pool };
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    db.pool = createPool({
      connectionString: await createDatabaseFromTemplate(inject('adminDatabaseUrl'), name, inject('templateDatabase')),
      max,
    });
  });
  afterAll(async () => {
    await db.pool?.end();
    await dropDatabase(inject('adminDatabaseUrl'), name);
  });
  return db;
}
