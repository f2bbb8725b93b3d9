// Resolve parked commands (docs/operations.md "Parked commands"):
//   list                 open parked commands by shop, in the order they will be applied
//   retry <command_id>   applies that command's shop's parked commands in log order (D2), until none is left
//   skip <command_id>    never applies that one command (its caller's answer becomes 422 `skipped`)
import { SchemaRegistry } from '@ingest/contracts';
import { createPool } from '@ingest/db';
import { readCommonConfig } from '@ingest/runtime';
import { listParked, retryParked, skipParked } from '../parked.ts';

export const PARKED_VERBS = 'list | retry <command_id> | skip <command_id>';

export async function parkedTool(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  out: { print: (line: string) => void; error: (line: string) => void; usage: string },
): Promise<number> {
  const [verb, id] = args;
  if (!(verb === 'list' || ((verb === 'retry' || verb === 'skip') && id))) {
    out.error(out.usage);
    return 2;
  }
  const common = readCommonConfig(env);
  const pool = createPool({
    connectionString: common.databaseUrl,
    role: common.dbRole || undefined,
    max: 2,
    applicationName: 'ingest-parked',
  });
  try {
    if (verb === 'list') {
      const rows = await listParked(pool);
      if (rows.length === 0) out.print('no parked commands');
      for (const r of rows)
        out.print(
          [
            r.command_id,
            r.shop,
            r.kind,
            `p${r.kafka_partition}@${r.kafka_offset}`,
            r.parked_at.toISOString(),
            r.behind ? `behind ${r.behind}` : `failed: ${r.error}`,
          ].join('  '),
        );
      return 0;
    }
    if (verb === 'retry') {
      const r = await retryParked(pool, new SchemaRegistry(), common.topics, id!);
      for (const a of r.applied) out.print(`applied ${a}`);
      if (r.failed) {
        out.error(`failed again: ${r.failed.command_id}: ${r.failed.error}\nit stays parked; fix the cause and retry, or skip it`);
        return 1;
      }
      out.print(`${r.applied.length} command(s) applied; nothing of this shop is parked now`);
      return 0;
    }
    const r = await skipParked(pool, id!);
    out.print(`skipped ${id}; ${r.remaining} more parked for its shop${r.remaining ? ' (parked retry <id> applies them)' : ''}`);
    return 0;
  } catch (err) {
    out.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await pool.end();
  }
}
