// `npm run parked -- list | retry <command_id> | skip <command_id>`: resolve parked commands (issue 11).
//   list                 open parked commands by shop, in the order they will be applied
//   retry <command_id>   applies that command's shop's parked commands in log order (D2), until none is left
//   skip <command_id>    never applies that one command (its caller's answer becomes 422 `skipped`)
import { SchemaRegistry } from '@ingest/contracts';
import { createPool } from '@ingest/db';
import { listParked, retryParked, skipParked } from '@ingest/projector';
import { readCommonConfig, settingsAtStart } from '@ingest/runtime';

const usage = 'usage: npm run parked -- list | retry <command_id> | skip <command_id>';
settingsAtStart({ roles: ['tools'], name: 'npm run parked', usage });
const [verb, id] = process.argv.slice(2);
const common = readCommonConfig(process.env);
const pool = createPool({
  connectionString: common.databaseUrl,
  role: common.dbRole || undefined,
  max: 2,
  applicationName: 'ingest-parked',
});

try {
  if (verb === 'list') {
    const rows = await listParked(pool);
    if (rows.length === 0) console.log('no parked commands');
    for (const r of rows)
      console.log(
        [
          r.command_id,
          r.shop,
          r.kind,
          `p${r.kafka_partition}@${r.kafka_offset}`,
          r.parked_at.toISOString(),
          r.behind ? `behind ${r.behind}` : `failed: ${r.error}`,
        ].join('  '),
      );
  } else if (verb === 'retry' && id) {
    const r = await retryParked(pool, new SchemaRegistry(), common.topics, id);
    for (const a of r.applied) console.log(`applied ${a}`);
    if (r.failed) {
      console.error(`failed again: ${r.failed.command_id}: ${r.failed.error}\nit stays parked; fix the cause and retry, or skip it`);
      process.exitCode = 1;
    } else console.log(`${r.applied.length} command(s) applied; nothing of this shop is parked now`);
  } else if (verb === 'skip' && id) {
    const r = await skipParked(pool, id);
    console.log(
      `skipped ${id}; ${r.remaining} more parked for its shop${r.remaining ? ' (npm run parked -- retry <id> applies them)' : ''}`,
    );
  } else {
    console.error(usage);
    process.exitCode = 2;
  }
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
} finally {
  await pool.end();
}
