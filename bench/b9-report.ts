// B9's section of latest.md.
import type { B9Result } from './b9-replay-scale.ts';

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

export function b9Markdown(b: B9Result): string[] {
  const r = b.replay;
  return [
    '## B9 replay at log scale',
    '',
    `${fmt(b.log.commands)} commands (${fmt(b.log.lines)} lines, ${fmt(Math.round(b.log.bytes / 2 ** 20))} MiB of JSON; ${Object.entries(
      b.log.mix,
    )
      .map(([k, v]) => `${k} ${fmt(v)}`)
      .join(
        ', ',
      )}) over ${b.settings.shops} shops, ${b.settings.locations} locations and ${b.settings.products} products each, on ${b.settings.partitions} partitions; written in ${fmt(b.log.write_seconds)} s.`,
    '',
    '| path | commands | seconds | commands/s | lines/s |',
    '|---|---:|---:|---:|---:|',
    `| live projector on the first ${fmt(b.live.commands)} | ${fmt(b.live.commands)} | ${fmt(b.live.seconds)} | ${fmt(b.live.commands_per_s)} | ${fmt(b.live.lines_per_s)} |`,
    `| \`replay --into scratch\` (batch ${b.settings.replay_batch}, ${b.settings.replay_concurrency} partitions side by side) | ${fmt(r.commands)} | ${fmt(r.seconds)} | ${fmt(r.commands_per_s)} | ${fmt(r.lines_per_s)} |`,
    '',
    `ratio replay / live: **${fmt(b.ratio)}**. Commands/s by tenth of the log: ${r.commands_per_s_by_tenth.map(fmt).join(', ')}.`,
    '',
    `Replay process after warm-up: RSS ${fmt(r.rss_mb.after_warmup)} → ${fmt(r.rss_mb.end)} MB (max ${fmt(r.rss_mb.max)}, slope ${fmt(r.rss_mb.slope_mb_per_100k_commands)} MB per 100k commands)` +
      (r.heap_used_mb
        ? `; V8 heap ${fmt(r.heap_used_mb.after_warmup)} → ${fmt(r.heap_used_mb.end)} MB (max ${fmt(r.heap_used_mb.max)}, slope ${fmt(r.heap_used_mb.slope_mb_per_100k_commands)}).`
        : '.'),
    `CPU: replay process ${fmt(r.cpu_seconds.replay_process)} s, its PostgreSQL backends ${fmt(r.cpu_seconds.postgres_backends)} s; WAL ${fmt(Math.round(r.wal_bytes / 2 ** 20))} MiB (${fmt(r.wal_bytes_per_command)} B per command).`,
    `At the second half's rate: 10 M commands ${fmt(r.extrapolated_hours['10M'])} h, 100 M ${fmt(r.extrapolated_hours['100M'])} h.`,
    '',
    `Killed with SIGKILL at ${fmt(b.resume.killed_at_commands)} commands reported done (${fmt(b.resume.committed_at_kill)} committed): ${fmt(b.resume.redone_commands)} done again (one batch per partition: ${fmt(b.resume.one_batch_per_partition)}); killed run ${fmt(b.resume.killed_run_seconds)} s + resumed ${fmt(b.resume.resumed_run_seconds)} s, ${fmt(b.resume.time_lost_seconds)} s more than straight. Killed-and-resumed read model identical to the straight one: ${b.verify.identical ? 'yes' : `no (${b.verify.differing_tables.join(', ')})`}.`,
    '',
  ];
}
