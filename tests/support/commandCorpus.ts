// The frozen command corpus (tests/fixtures/command-log/README.md): its records, their replay through
// the projection (decode + apply, as the replay CLI does, without Kafka), and the digest of the read
// model they produce.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sha256Hex, type FileLock } from '@ingest/contracts';
import { processedCommands, withTransaction, type Pool } from '@ingest/db';
import { DEFAULT_TOPICS } from '@ingest/kafka';
import { READ_MODEL_TABLES } from '@ingest/operator';
import { applyCommand, isDeterministicDbError, type Decode } from '@ingest/projection';

export const CORPUS_DIR = fileURLToPath(new URL('../fixtures/command-log', import.meta.url));

/** The corpus files that never change (the commands); each version's read-model.json does, with the projection. */
export const CORPUS_LOCK: FileLock = { dir: CORPUS_DIR, lock: 'released.sha256', covers: (p) => /^v\d+\/.*\.jsonl$/.test(p) };

/** One record as the gateway's producer sent it (tests/fixtures/command-log/generate.ts). */
export interface CorpusRecord {
  key: string;
  value: string;
  headers: Record<string, string>;
}

export function readCorpus(version: string): CorpusRecord[] {
  return readFileSync(join(CORPUS_DIR, version, 'commands.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as CorpusRecord);
}

export interface ReplayCounts {
  commands: number;
  applied: number;
  /** Already claimed: a record written twice (D4). */
  duplicates: number;
  /** Failed in PostgreSQL for a reason that does not change (parked live; passed over by a replay). */
  failed: number;
  undecodable: string[];
}

/**
 * Applies the records in order, as one partition of the log, the way a replay does (services/operator
 * replayer.ts): many to a transaction, each under a savepoint, no outbox rows and no stored replies.
 */
export async function replayCorpus(pool: Pool, records: CorpusRecord[], decode: Decode, batch = 100): Promise<ReplayCounts> {
  const counts: ReplayCounts = { commands: records.length, applied: 0, duplicates: 0, failed: 0, undecodable: [] };
  for (let from = 0; from < records.length; from += batch) {
    await withTransaction(pool, async (tx) => {
      for (let i = from; i < Math.min(records.length, from + batch); i++) {
        const decoded = decode(Buffer.from((records[i] as CorpusRecord).value, 'utf8'));
        if (!decoded.ok) {
          counts.undecodable.push(`record ${i}: ${decoded.error}`);
          continue;
        }
        const at = { topic: DEFAULT_TOPICS.commands, partition: 0, offset: String(i) };
        await tx.query('SAVEPOINT command');
        try {
          if ((await applyCommand(tx, decoded.command, at, { sideEffects: null })) === 'applied') counts.applied++;
          else counts.duplicates++;
          await tx.query('RELEASE SAVEPOINT command');
        } catch (err) {
          if (!isDeterministicDbError(err)) throw err;
          await tx.query('ROLLBACK TO SAVEPOINT command');
          await processedCommands.claim(tx, decoded.command, at);
          counts.failed++;
        }
      }
    });
  }
  return counts;
}

export type ReadModelDigest = Record<string, { rows: number; sha256: string }>;

/**
 * Per read-model table (the tables `npm run verify` compares, D26): its row count and the sha256 of
 * its rows as PostgreSQL prints them (every column; fixed time zone, date style and float digits),
 * sorted here (UTF-16 order), so no collation of the server changes the order.
 */
export async function readModelDigest(pool: Pool): Promise<ReadModelDigest> {
  const client = await pool.connect();
  try {
    await client.query("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 3");
    const out: ReadModelDigest = {};
    for (const { table } of READ_MODEL_TABLES) {
      const { rows } = await client.query<{ r: string }>(`SELECT t::text AS r FROM ${table} t`);
      const text = rows.map((x) => x.r).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      out[table] = { rows: text.length, sha256: sha256Hex(text.join('\n')) };
    }
    return out;
  } finally {
    client.release();
  }
}
