// Per-shop API keys from a shell (D28, docs/operations.md "Per-shop API keys"), the same code as
// the gateway's /api/admin/keys:
//   create <shop> --scopes a,b [--expires-in-days N] [--note text]   prints the key, once
//   list [shop]                                                        never the key
//   revoke <key_id>                                                    every gateway refuses it within 1 s
import { parseArgs } from 'node:util';
import { createKeyService, pgKeyRows, type CreateKey } from '@ingest/access';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool } from '@ingest/db';
import { readCommonConfig, setting } from '@ingest/runtime';

export const KEYS_VERBS = 'create <shop> --scopes <scope,...> [--expires-in-days N] [--note text] | list [shop] | revoke <key_id>';

export async function keysTool(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  out: { print: (line: string) => void; error: (line: string) => void; usage: string },
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { scopes: { type: 'string' }, 'expires-in-days': { type: 'string' }, note: { type: 'string' } },
    });
  } catch (err) {
    out.error(`${err instanceof Error ? err.message : String(err)}\n${out.usage}`);
    return 2;
  }
  const [verb, arg] = parsed.positionals;
  const o = parsed.values;
  if (!(verb === 'list' || ((verb === 'create' || verb === 'revoke') && arg))) {
    out.error(out.usage);
    return 2;
  }
  const request: Record<string, unknown> = { shop: arg, scopes: (o.scopes ?? '').split(',').filter(Boolean) };
  if (o['expires-in-days'] !== undefined) request['expires_in_days'] = Number(o['expires-in-days']);
  if (o.note !== undefined) request['note'] = o.note;
  // The API's own schema: the shell refuses what the API refuses, with the same words.
  const checked = verb === 'create' ? new SchemaRegistry().validator<CreateKey>('http/admin-keys.request.json')(request) : null;
  if (checked && !checked.ok) {
    out.error(checked.failure.message);
    return 2;
  }
  const pepper = setting(env, 'API_KEY_PEPPER');
  if (pepper === undefined) {
    out.error("API_KEY_PEPPER is not set: it must be the gateways' (API_KEY_PEPPER or API_KEY_PEPPER_FILE)");
    return 2;
  }
  const common = readCommonConfig(env);
  const pool = createPool({
    connectionString: common.databaseUrl,
    role: common.dbRole || undefined,
    max: 1,
    applicationName: 'ingest-keys',
  });
  const keys = createKeyService({ rows: pgKeyRows(pool, null), pepper });
  try {
    if (checked?.ok) {
      const k = await keys.create(checked.value);
      out.print(`key_id   ${k.key_id}\nshop     ${k.shop}\nscopes   ${k.scopes.join(',')}\nexpires  ${k.expires_at ?? 'never'}`);
      out.print(`key      ${k.key}\n(shown once: it is stored only as a hash)`);
      return 0;
    }
    if (verb === 'list') {
      const listed = await keys.list(arg ?? null);
      if (listed.length === 0) out.print('no keys');
      for (const k of listed)
        out.print(
          [
            k.key_id,
            k.shop,
            k.scopes.join(','),
            k.revoked_at ? `revoked ${k.revoked_at}` : k.expires_at ? `expires ${k.expires_at}` : 'no expiry',
            `last used ${k.last_used_at ?? 'never'}`,
            k.note ?? '',
          ].join('  '),
        );
      return 0;
    }
    const revoked = await keys.revoke(arg!);
    if (!revoked) {
      out.error(`no key ${arg}`);
      return 1;
    }
    out.print(`revoked ${revoked.key_id} (${revoked.shop}) at ${revoked.revoked_at}; every gateway refuses it within a second`);
    return 0;
  } catch (err) {
    out.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await keys.close();
    await pool.end();
  }
}
