import type { TestProject } from 'vitest/node';
import { createDatabaseFromTemplate, ensureDatabase, migrate, withDatabase } from '@ingest/db';
import { acquireKafka, REPO_ROOT } from '@ingest/devstack';
import { DEFAULT_DATABASE_URL } from '@ingest/runtime';
import { join } from 'node:path';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

/**
 * Real parts for the integration tier: the Kafka broker (KAFKA_BROKERS, one already running, or
 * the project's own) and a freshly migrated template database that each test file copies.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (msg: string) => process.stderr.write(`[int-setup] ${msg}\n`);
  const kafka = await acquireKafka({ dataDir: join(REPO_ROOT, '.data', 'kafka-test'), log });
  const adminUrl = process.env['DATABASE_URL'] ?? DEFAULT_DATABASE_URL;
  const template = `ingest_test_template_${process.pid}`;
  const scratch = `ingest_test_build_${process.pid}`;
  await ensureDatabase(withDatabase(adminUrl, 'postgres'));
  // Migrate a scratch database, then use it as the template (a template must have no connections).
  const buildUrl = await createDatabaseFromTemplate(adminUrl, scratch, 'template1');
  await migrate(buildUrl);
  await createDatabaseFromTemplate(adminUrl, template, scratch);
  project.provide('kafkaBrokers', kafka.brokers);
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);
  log(`kafka ${kafka.brokers.join(',')} (${kafka.source}); template database ${template}`);
  return async () => {
    const { dropDatabase } = await import('@ingest/db');
    await dropDatabase(adminUrl, template).catch(() => {});
    await dropDatabase(adminUrl, scratch).catch(() => {});
    await kafka.release();
  };
}
