// The update logs' monthly partitions (docs/operations.md "Update log partitions"):
//   list                                          every partition of the three logs: bounds, rows (estimate), size
//   ensure [--month YYYY-MM]                      creates the current and the next months' partitions now (the upkeep does it every
//                                                 round), or that one month's (its rows move out of the default)
//   archive <partition> --to <dir> [--keep-table] detaches a past month, writes <dir>/<partition>.ndjson.gz and its manifest, drops it
//   restore <manifest>                            loads an archived month back and attaches it
import { parseArgs } from 'node:util';
import { createPool, ensureLogPartitions, listLogPartitions } from '@ingest/db';
import { readCommonConfig } from '@ingest/runtime';
import { archivePartition } from '../partitions/archivePartition.ts';
import { restorePartition } from '../partitions/restorePartition.ts';

export const PARTITIONS_VERBS =
  'list | ensure | archive <schema.partition> --to <dir> [--keep-table] | restore <dir>/<partition>.ndjson.gz.manifest.json';

type Out = { print: (line: string) => void; error: (line: string) => void; usage: string };

type Request =
  | { verb: 'list' }
  | { verb: 'ensure'; month: Date | null }
  | { verb: 'archive'; partition: string; dir: string; keepTable: boolean }
  | { verb: 'restore'; manifest: string };

/** The command line as a request, or why it is not one (the usage follows it). */
export function parsePartitionsArgs(args: readonly string[]): { ok: true; request: Request } | { ok: false; error: string | null } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { to: { type: 'string' }, 'keep-table': { type: 'boolean' }, month: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  const [verb, target, ...extra] = parsed.positionals;
  const { to, 'keep-table': keepTable = false, month } = parsed.values;
  if (extra.length > 0) return { ok: false, error: `unexpected argument ${extra[0]}` };
  if (month !== undefined && verb !== 'ensure') return { ok: false, error: '--month is for ensure' };
  if (verb === 'list' || verb === 'ensure') {
    if (target !== undefined || to !== undefined || keepTable) return { ok: false, error: `${verb} takes no arguments` };
    if (verb === 'list') return { ok: true, request: { verb } };
    if (month !== undefined && !/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) return { ok: false, error: '--month is YYYY-MM' };
    return { ok: true, request: { verb, month: month === undefined ? null : new Date(`${month}-01T00:00:00Z`) } };
  }
  if (verb === 'archive') {
    if (!target || !to) return { ok: false, error: 'archive needs a partition and --to <dir>' };
    return { ok: true, request: { verb, partition: target, dir: to, keepTable } };
  }
  if (verb === 'restore') {
    if (!target || to !== undefined || keepTable) return { ok: false, error: 'restore takes the manifest file only' };
    return { ok: true, request: { verb, manifest: target } };
  }
  return { ok: false, error: null };
}

/** Runs as DATABASE_URL's user without SET ROLE: attaching, detaching and dropping partitions are the tables' owner's. */
export async function partitionsTool(args: readonly string[], env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  const parsed = parsePartitionsArgs(args);
  if (!parsed.ok) {
    if (parsed.error) out.error(parsed.error);
    out.error(out.usage);
    return 2;
  }
  const r = parsed.request;
  const pool = createPool({ connectionString: readCommonConfig(env).databaseUrl, max: 2, applicationName: 'ingest-partitions' });
  try {
    if (r.verb === 'list') {
      const sizes = await pool.query<{ name: string; rows: number; bytes: string }>(
        `SELECT n.nspname || '.' || c.relname AS name, greatest(c.reltuples, 0)::float8 AS rows, pg_size_pretty(pg_total_relation_size(c.oid)) AS bytes
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relispartition`,
      );
      const by = new Map(sizes.rows.map((s) => [s.name, s]));
      for (const p of await listLogPartitions(pool)) {
        const s = by.get(p.partition);
        const range = p.from && p.to ? `${p.from.toISOString()} .. ${p.to.toISOString()}` : 'DEFAULT';
        out.print([p.partition, range, `~${s?.rows ?? 0} rows`, s?.bytes ?? ''].join('  '));
      }
    } else if (r.verb === 'ensure') {
      const c = await pool.connect(); // its statements share one transaction: one session
      const made = await ensureLogPartitions(c, r.month ? { now: r.month, ahead: 0 } : {}).finally(() => c.release());
      out.print(
        made.length === 0
          ? 'every partition is there'
          : made.map((m) => `created ${m.partition} (${m.moved} rows moved from the default)`).join('\n'),
      );
    } else if (r.verb === 'archive') {
      const m = await archivePartition(pool, { partition: r.partition, dir: r.dir, keepTable: r.keepTable });
      out.print(`archived ${m.rows} rows of ${m.partition} (${m.from} .. ${m.to}) to ${r.dir}/${m.file}, sha256 ${m.sha256}`);
      out.print(r.keepTable ? `detached table ${m.partition} kept: DROP TABLE it once the file is stored` : `${m.partition} dropped`);
    } else if (r.verb === 'restore') {
      const m = await restorePartition(pool, r.manifest);
      out.print(`restored ${m.rows} rows into ${m.partition}, attached`);
    }
    return 0;
  } catch (err) {
    out.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await pool.end();
  }
}
