import { processedCommands, projectorCheckpoints, withTransaction, type Pool, type PoolClient } from '@ingest/db';
import { READ_MODEL_TABLES } from './compareReadModels.ts';

/**
 * What an in-place rebuild (D26) replaces: the claims, and the tables `verify` compares (the read
 * model and the projection state that decides later commands: idempotency keys, daily runs).
 * Outbox, stored replies, command requests and checkpoints stay: they belong to the live
 * pipeline, not to the projection.
 */
export const REBUILT_TABLES: ReadonlyArray<{ schema: string; table: string }> = [
  { schema: processedCommands.TABLE.schema, table: processedCommands.TABLE.name },
  ...READ_MODEL_TABLES.map(({ table }) => {
    const [schema = '', name = ''] = table.split('.');
    return { schema, table: name };
  }),
];

/** The rebuild's own position, beside its tables; dropped with the shadow schema. */
const SHADOW_ONLY = [{ schema: projectorCheckpoints.TABLE.schema, table: projectorCheckpoints.TABLE.name }];

export const SHADOW_SCHEMA = 'rebuild';

const q = (ident: string) => `"${ident.replaceAll('"', '""')}"`;
const qualified = (schema: string, table: string) => `${q(schema)}.${q(table)}`;

/** The partitions of a partitioned table, with their bounds as PostgreSQL prints them (FOR VALUES … or DEFAULT). */
async function partitionsOf(client: PoolClient, schema: string, table: string): Promise<Array<{ name: string; bound: string }>> {
  const { rows } = await client.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [qualified(schema, table)],
  );
  return rows;
}

export async function shadowSchemaExists(client: PoolClient, shadow = SHADOW_SCHEMA): Promise<boolean> {
  const { rows } = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [shadow]);
  return rows.length > 0;
}

/**
 * Creates the shadow schema: an empty twin of every rebuilt table with the live table's columns,
 * defaults, checks, keys, indexes and foreign keys under the same names, and the same grants, so
 * that moving it into the live schema later changes nothing but the rows. The projection SQL names
 * tables without a schema, so a session whose search path is only the shadow schema writes here.
 */
export async function createShadowSchema(pool: Pool, shadow = SHADOW_SCHEMA): Promise<void> {
  await withTransaction(pool, async (client) => {
    // Definitions come out schema-qualified when nothing but pg_catalog is on the path.
    await client.query('SET LOCAL search_path = pg_catalog');
    await client.query(`DROP SCHEMA IF EXISTS ${q(shadow)} CASCADE`);
    await client.query(`CREATE SCHEMA ${q(shadow)}`);
    const tables = [...REBUILT_TABLES, ...SHADOW_ONLY];
    for (const t of tables) {
      // A partitioned table (the update logs) gets a partitioned twin with the live partitions' names
      // and bounds: replayed rows of past months land in their months, not all in the default.
      const { rows } = await client.query<{ key: string | null }>('SELECT pg_get_partkeydef($1::regclass) AS key', [
        qualified(t.schema, t.table),
      ]);
      const key = rows[0]?.key;
      await client.query(
        `CREATE TABLE ${qualified(shadow, t.table)} (LIKE ${qualified(t.schema, t.table)} INCLUDING ALL EXCLUDING INDEXES)${key ? ` PARTITION BY ${key}` : ''}`,
      );
      for (const p of key ? await partitionsOf(client, t.schema, t.table) : []) {
        await client.query(`CREATE TABLE ${qualified(shadow, p.name)} PARTITION OF ${qualified(shadow, t.table)} ${p.bound}`);
      }
    }
    // Storage parameters (fillfactor) are not part of LIKE.
    const reloptions = await client.query<{ table: string; options: string[] }>(
      `SELECT c.relname AS table, c.reloptions AS options FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.reloptions IS NOT NULL AND (n.nspname, c.relname) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [tables.map((t) => t.schema), tables.map((t) => t.table)],
    );
    for (const r of reloptions.rows) await client.query(`ALTER TABLE ${qualified(shadow, r.table)} SET (${r.options.join(', ')})`);
    const rebuilt = new Map(tables.map((t) => [`${t.schema}.${t.table}`, t.table]));
    // Keys and foreign keys under their live names; a foreign key to a rebuilt table points at its twin.
    const constraints = await client.query<{ schema: string; table: string; name: string; def: string; contype: string }>(
      `SELECT n.nspname AS schema, c.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS def, k.contype
         FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE k.contype IN ('p', 'u', 'x', 'f') AND (n.nspname, c.relname) IN (SELECT * FROM unnest($1::text[], $2::text[]))
        ORDER BY k.contype <> 'p', k.contype = 'f', k.conname`,
      [tables.map((t) => t.schema), tables.map((t) => t.table)],
    );
    for (const k of constraints.rows) {
      const def = k.def.replace(/REFERENCES ([a-z_]+)\.([a-z_]+)\(/, (whole, schema: string, table: string) =>
        rebuilt.has(`${schema}.${table}`) ? `REFERENCES ${qualified(shadow, table)}(` : whole,
      );
      await client.query(`ALTER TABLE ${qualified(shadow, k.table)} ADD CONSTRAINT ${q(k.name)} ${def}`);
    }
    // The other indexes, by their live definitions.
    const indexes = await client.query<{ schema: string; table: string; def: string }>(
      `SELECT n.nspname AS schema, c.relname AS table, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE (n.nspname, c.relname) IN (SELECT * FROM unnest($1::text[], $2::text[]))
          AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
      [tables.map((t) => t.schema), tables.map((t) => t.table)],
    );
    for (const ix of indexes.rows) {
      // A partitioned table's index reads ON ONLY (that table alone); on the empty twin, plain ON makes each partition's index too.
      const on = [` ON ${ix.schema}.${ix.table} `, ` ON ONLY ${ix.schema}.${ix.table} `].find((o) => ix.def.includes(o));
      if (!on) throw new Error(`unexpected index definition: ${ix.def}`);
      await client.query(ix.def.replace(on, ` ON ${qualified(shadow, ix.table)} `));
    }
    // The live tables' grants (the service role writes them, D25).
    const grants = await client.query<{ table: string; grantee: string; privilege: string }>(
      `SELECT c.relname AS table, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS grantee, a.privilege_type AS privilege
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         CROSS JOIN LATERAL aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
        WHERE (n.nspname, c.relname) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND a.grantee <> c.relowner`,
      [tables.map((t) => t.schema), tables.map((t) => t.table)],
    );
    for (const g of grants.rows) await client.query(`GRANT ${g.privilege} ON ${qualified(shadow, g.table)} TO ${g.grantee}`);
  });
}

/**
 * Names the rebuilt tables whose columns differ from their live twins: a migration ran after the
 * shadow schema was made (a resumed rebuild), and swapping would install the old shape.
 */
export async function shapeDrift(client: PoolClient, shadow = SHADOW_SCHEMA): Promise<string[]> {
  const { rows } = await client.query<{ table: string }>(
    `WITH cols AS (
       SELECT n.nspname AS nsp, c.relname AS tbl,
              string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull, ', ' ORDER BY a.attnum) AS shape
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p')
        GROUP BY 1, 2)
     SELECT t.nsp || '.' || t.tbl AS table
       FROM unnest($1::text[], $2::text[]) AS t(nsp, tbl)
       LEFT JOIN cols l ON l.nsp = t.nsp AND l.tbl = t.tbl
       LEFT JOIN cols s ON s.nsp = $3 AND s.tbl = t.tbl
      WHERE l.shape IS DISTINCT FROM s.shape`,
    [REBUILT_TABLES.map((t) => t.schema), REBUILT_TABLES.map((t) => t.table), shadow],
  );
  return rows.map((r) => r.table);
}

/** One rebuild per database at a time: a session advisory lock, held by `client` until released. */
export async function tryLockRebuild(client: PoolClient): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext('ingest.rebuild')) AS ok`);
  return rows[0]?.ok === true;
}

export interface SwapOptions {
  /** Brings the shadow tables to `target` (committed) while the live tables are locked; false if it could not. */
  catchUp: (target: Map<number, number>) => Promise<boolean>;
  topic: string;
  shadow?: string;
  /** Where the replaced tables go; kept for inspection when `keepRetired`, else dropped after the swap. */
  retired: string;
  lockTimeoutMs?: number;
  /** Called with every lock held, just before the tables move (progress output; tests). */
  onLocked?: () => Promise<void> | void;
}

/** The rebuild did not catch up with the live projection while the swap held its locks: rolled back, nothing moved. */
export class NotCaughtUp extends Error {
  readonly lockedMs: number;
  constructor(lockedMs: number) {
    super('the rebuild did not catch up while locked');
    this.lockedMs = lockedMs;
  }
}

/**
 * The swap (D26). In one transaction: lock the claims table first (every live projector
 * transaction starts there, so none can be half way through), then the read views and the other
 * tables, backing off rather than deadlocking a reader (a lock conflict error: retry); read where the live projection stands and let the
 * rebuild catch up to exactly there (else NotCaughtUp); move the live tables out and the rebuilt
 * ones in; point every view over them at the rebuilt tables. Readers wait on the locks and then
 * read the rebuilt tables: they never see an empty or half-built view. The live projector's next
 * transaction resolves the table names again and carries on in the rebuilt tables from where it stood.
 */
export async function swapShadowIn(pool: Pool, opts: SwapOptions): Promise<{ lockedMs: number }> {
  const shadow = opts.shadow ?? SHADOW_SCHEMA;
  const live = REBUILT_TABLES.map((t) => qualified(t.schema, t.table));
  const lockedAt = await withTransaction(pool, async (client) => {
    await client.query('SET LOCAL search_path = pg_catalog');
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.trunc(opts.lockTimeoutMs ?? 10_000))}`);
    const views = await client.query<{ oid: number; name: string }>(
      `SELECT DISTINCT v.oid::int AS oid, v.oid::regclass::text AS name
         FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid JOIN pg_class v ON v.oid = r.ev_class
        WHERE d.refobjid = ANY($1::regclass[]) AND v.relkind = 'v' AND v.oid <> d.refobjid
        ORDER BY 2`,
      [live],
    );
    // Readers never touch the claims: waiting here for a live projector transaction is harmless.
    await processedCommands.lockForSwap(client);
    // A reader may hold one view while it waits for another this swap already holds. Taking the
    // rest in one statement that gives up well before any reader's deadlock check fires means a
    // cycle always ends with the swap backing off (and retrying), never with a reader's error.
    const deadlock = await client.query<{ ms: number }>(`SELECT setting::int AS ms FROM pg_settings WHERE name = 'deadlock_timeout'`);
    const budget = Math.max(10, Math.floor((deadlock.rows[0]?.ms ?? 1000) / 2));
    await client.query(`SET LOCAL statement_timeout = ${budget}`);
    await client.query(`LOCK TABLE ${[...views.rows.map((v) => v.name), ...live].join(', ')} IN ACCESS EXCLUSIVE MODE`);
    await client.query('SET LOCAL statement_timeout = 0');
    const lockedAt = performance.now();

    const target = await projectorCheckpoints.livePositions(client, opts.topic);
    if (!(await opts.catchUp(target))) throw new NotCaughtUp(performance.now() - lockedAt);
    const defs: Array<{ name: string; def: string }> = [];
    for (const v of views.rows) {
      const { rows } = await client.query<{ def: string }>('SELECT pg_get_viewdef($1::oid) AS def', [v.oid]);
      defs.push({ name: v.name, def: rows[0]?.def ?? '' });
    }
    await opts.onLocked?.();
    await client.query(`CREATE SCHEMA ${q(opts.retired)}`);
    // A partitioned table's partitions are tables of their own that SET SCHEMA does not carry: each moves with its parent.
    const moving = async (schema: string, table: string) => [table, ...(await partitionsOf(client, schema, table)).map((p) => p.name)];
    for (const t of REBUILT_TABLES) {
      for (const name of await moving(t.schema, t.table)) {
        await client.query(`ALTER TABLE ${qualified(t.schema, name)} SET SCHEMA ${q(opts.retired)}`);
      }
    }
    for (const t of REBUILT_TABLES) {
      for (const name of await moving(shadow, t.table))
        await client.query(`ALTER TABLE ${qualified(shadow, name)} SET SCHEMA ${q(t.schema)}`);
    }
    for (const v of defs) await client.query(`CREATE OR REPLACE VIEW ${v.name} AS ${v.def}`);
    return lockedAt;
  });
  // Until the commit: the locks are held to its end.
  return { lockedMs: performance.now() - lockedAt };
}

/** Drops the replaced tables (refuses, and keeps them, if anything else still depends on them). */
export async function dropRetired(client: PoolClient, retired: string): Promise<void> {
  await client.query(`DROP TABLE ${REBUILT_TABLES.map((t) => qualified(retired, t.table)).join(', ')}`);
  await client.query(`DROP SCHEMA ${q(retired)}`);
}

export async function dropShadowSchema(client: PoolClient, shadow = SHADOW_SCHEMA): Promise<void> {
  await client.query(`DROP SCHEMA IF EXISTS ${q(shadow)} CASCADE`);
}
