// B10's section of latest.md and its targets.
import type { B10Result } from './b10-rebuild-under-load.ts';

const fmt = (n: number | null | undefined) => (n == null ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: 2 }));

export function b10Markdown(b: B10Result): string[] {
  const quiet = b.shops.filter((x) => x.role === 'quiet').map((x) => x.shop);
  const row = (p: B10Result['phases'][number]) =>
    `| ${p.name} | ${fmt(p.seconds)} | ${fmt(p.quiet.p50_ms)} | ${fmt(p.quiet.p99_ms)} | ${fmt(p.quiet.max_ms)} | ${quiet.map((s) => fmt(p.by_shop[s]?.p99_ms)).join(' / ')} | ${fmt(p.all.accepted)} | ${fmt(p.all.count_202)} | ${fmt(p.all.count_429)} | ${fmt(p.all.count_503)} | ${fmt(p.all.errors)} | ${Math.round(100 * p.machine_busy)} % |`;
  return [
    '## B10 in-place rebuild under live load',
    '',
    `A log of ${fmt(b.log.commands)} commands (${fmt(b.log.lines)} lines, B9's mix over ${b.settings.shops} shops) on ${b.settings.partitions} partitions, projected live in ${fmt(b.catch_up_seconds)} s. Capacity ${fmt(b.capacity_lines_per_s)} lines/s (${b.capacity_source}); load ${fmt(b.load_lines_per_s)} lines/s, open loop, ${b.settings.lines_per_request}-line snapshots: ${b.shops.map((x) => `${x.role} ${fmt(x.lines_per_s)}`).join(', ')} lines/s.`,
    '',
    '| phase | s | quiet p50 ms | quiet p99 ms | quiet max ms | p99 per quiet shop | accepted | 202 | 429 | 503 | errors | machine busy |',
    '|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|',
    ...b.phases.map(row),
    '',
    `Quiet p99 during the rebuild / over both baselines (${fmt(b.baseline_quiet.p99_ms)} ms): **${fmt(b.p99_ratio)}**.`,
    `Replay: ${fmt(b.replay.commands)} commands in ${fmt(b.replay.seconds)} s (${fmt(b.replay.commands_per_s)} cmd/s, ${fmt(b.replay.cpu_s)} s CPU), locks held ${fmt(b.replay.locked_ms)} ms (its "swapping" to "swapped" lines: ${fmt(b.replay.swap_window_ms)} ms, ${b.replay.swap_attempts_retried} swap attempts retried).`,
    `Quiet shops while the replay ran (up to a second before its swap): p50 ${fmt(b.quiet_while_replaying.p50_ms)} ms, p99 ${fmt(b.quiet_while_replaying.p99_ms)} ms, statuses ${JSON.stringify(b.quiet_while_replaying.statuses)}; replay settings ${JSON.stringify(b.replay_env)} (unset: defaults).`,
    `Answers in flight around the swap (±1 s): ${fmt(b.swap.requests)}, max ${fmt(b.swap.max_ms)} ms, p50 ${fmt(b.swap.p50_ms)} ms, statuses ${JSON.stringify(b.swap.statuses)}.`,
    `Nothing lost: ${b.nothing_lost.ok ? 'yes' : 'NO'} (lost ${b.nothing_lost.lost}, doubled ${b.nothing_lost.doubled}; ${b.nothing_lost.shops.map((x) => `${x.accepted} accepted / ${x.processed} processed`).join(', ')}). Rebuilt read model identical to a fresh \`replay --into scratch\` (${fmt(b.verify.scratch_replay_seconds)} s): ${b.verify.identical ? 'yes' : `no (${b.verify.differing_tables.join(', ')})`}.`,
    '',
  ];
}
