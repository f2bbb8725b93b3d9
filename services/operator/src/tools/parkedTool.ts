// Resolve parked commands (docs/operations.md "Parked commands"), through the same code as the
// gateway's operator API (@ingest/projection), every action recorded with who and why:
//   list                                       open parked commands by shop, in the order they will be applied
//   retry <command_id> [--reason ..]           applies that command's shop's parked commands in log order (D2)
//   skip <command_id> --reason .. [--hold]     never applies that one command (its caller's answer becomes 422
//                                              `skipped`); at the head of its shop, the shop then resumes unless --hold
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { SchemaRegistry } from '@ingest/contracts';
import { createPool } from '@ingest/db';
import { listParked, reasonProblem, retryParked, skipParked, type ActionResult, type ParkedDeps } from '@ingest/projection';
import { readCommonConfig } from '@ingest/runtime';

export const PARKED_VERBS = 'list | retry <command_id> [--reason "..."] | skip <command_id> --reason "..." [--hold]';

type Out = { print: (line: string) => void; error: (line: string) => void; usage: string };

interface Request {
  verb: 'list' | 'retry' | 'skip';
  id: string;
  reason: string | null;
  hold: boolean;
}

/** The command line as a request, or why it is not one (the usage follows it). */
export function parseParkedArgs(args: readonly string[]): { ok: true; request: Request } | { ok: false; error: string | null } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { reason: { type: 'string' }, hold: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  const [verb, id, ...extra] = parsed.positionals;
  const { reason = null, hold = false } = parsed.values;
  if (extra.length > 0) return { ok: false, error: `unexpected argument ${extra[0]}` };
  if (verb === 'list') {
    if (id !== undefined || reason !== null || hold) return { ok: false, error: 'list takes no arguments' };
    return { ok: true, request: { verb, id: '', reason, hold } };
  }
  if (verb !== 'retry' && verb !== 'skip') return { ok: false, error: null };
  if (!id) return { ok: false, error: `${verb} needs a command id` };
  if (verb === 'retry' && hold) return { ok: false, error: '--hold is for skip' };
  const problem = reasonProblem(reason, verb === 'skip');
  if (problem) return { ok: false, error: problem.replace(/^reason/, '--reason') };
  return { ok: true, request: { verb, id, reason, hold } };
}

/** `cli:<os user>`: who ran the tool, for the action's record. */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    // A container user with no passwd entry has no name, only its uid.
    return `cli:uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

export async function parkedTool(args: readonly string[], env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  const parsed = parseParkedArgs(args);
  if (!parsed.ok) {
    if (parsed.error) out.error(parsed.error);
    out.error(out.usage);
    return 2;
  }
  const { verb, id, reason, hold } = parsed.request;
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
    const deps: ParkedDeps = { pool, schemas: new SchemaRegistry(), topics: common.topics };
    const by = { actor: cliActor(), reason };
    const r = verb === 'retry' ? await retryParked(deps, id, by) : await skipParked(deps, id, { ...by, hold });
    return report(r, out);
  } catch (err) {
    out.error(err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await pool.end();
  }
}

function report(r: ActionResult, out: Out): number {
  if (r.action === 'skip') out.print(`skipped ${r.command_id}${r.hold ? ' (held: the commands behind it stay parked)' : ''}`);
  for (const a of r.applied) out.print(`applied ${a}`);
  if (r.failed) {
    out.error(`failed again: ${r.failed.command_id}: ${r.failed.error}\nit stays parked; fix the cause and retry, or skip it`);
    return 1;
  }
  if (r.remaining === 0) out.print(`${r.applied.length} command(s) applied; nothing of this shop is parked now`);
  else out.print(`${r.applied.length} command(s) applied; ${r.remaining} still parked for its shop (parked retry <id> applies them)`);
  out.print(`recorded as operator action ${r.action_id}`);
  return 0;
}
