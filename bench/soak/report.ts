// The soak's outputs: soak-<date>.json (every sample, every verdict), soak-<date>.md (the summary)
// and soak-<date>.svg (the chart), in bench/results or --results-dir.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EndChecks } from './checks.ts';
import type { Sample } from './measure.ts';
import type { Verdict } from './verdicts.ts';
import { renderChart } from './chart.ts';

export interface SoakResult {
  date: string;
  commit: string;
  minutes_planned: number;
  minutes_run: number;
  cluster: boolean;
  capacity_per_s: number;
  fraction: number;
  rate_per_s: number;
  shop_rate_lines_per_s: number;
  settings: Record<string, string | undefined>;
  machine: { cpus: number; note: string };
  requests: Record<string, number>;
  verdicts: Verdict[];
  pass: boolean;
  end: EndChecks;
  heap_snapshots: string[];
  run_dir: string;
  samples: Sample[];
}

const mb = (b: number) => (b / 2 ** 20).toFixed(1);

export function markdown(r: SoakResult, chartFile: string): string {
  const first = r.samples[0];
  const last = r.samples.at(-1);
  const lines = [
    `# Soak ${r.date}`,
    '',
    `${r.minutes_run.toFixed(1)} minutes (planned ${r.minutes_planned}) on ${r.cluster ? 'the three-broker cluster' : 'one broker'}, commit ${r.commit}; ` +
      `2 gateways and 2 projectors as processes; ${r.rate_per_s.toFixed(1)} requests/s = ${r.fraction * 100} % of the ${r.capacity_per_s.toFixed(1)}/s measured first. ` +
      `Shared machine (${r.machine.cpus} cores, ${r.machine.note}): absolute figures are noisy. **${r.pass ? 'All verdicts pass' : 'Some verdicts FAIL'}.**`,
    '',
    `![chart](${chartFile})`,
    '',
    '| verdict | result | figures |',
    '|---|---|---|',
    ...r.verdicts.map((v) => `| ${v.name} | ${v.pass ? 'pass' : '**FAIL**'} | ${v.detail.replace(/\|/g, '/')} |`),
    '',
    `Requests by kind: ${Object.entries(r.requests)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}.`,
    '',
    '| minute | 202 | 429 | 503 | retried | lag (cmds) | lag (s) | outbox | WAL MB | buffer reads / hits | Kafka log MB | client loop p99 / max ms, heap MB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...r.samples.map(
      (s) =>
        `| ${(s.t / 60).toFixed(1)} | ${s.window.status_202} | ${s.window.status_429} | ${s.window.status_503} | ${s.window.retried} | ${s.lag_offsets ?? 'n/a'} | ${s.lag_seconds?.toFixed(1) ?? 'n/a'} | ${s.outbox_unpublished} | ${mb(s.wal_written_bytes)} | ${s.buffer_reads ?? 'n/a'} / ${s.buffer_hits ?? 'n/a'} | ${mb(s.kafka_log_bytes)} | ${s.client ? `${s.client.event_loop_p99_ms.toFixed(0)} / ${s.client.event_loop_max_ms.toFixed(0)}, ${s.client.heap_used_mb.toFixed(0)}` : 'n/a'} |`,
    ),
    '',
    '| table | first: total MB (index MB), live / dead rows | last |',
    '|---|---|---|',
    ...(last?.tables ?? []).map((t) => {
      const f = first?.tables.find((x) => x.table === t.table);
      const cell = (x: typeof t | undefined) =>
        x ? `${mb(x.total_bytes)} (${mb(x.index_bytes)}), ${x.live_rows} / ${x.dead_rows}` : 'n/a';
      return `| ${t.table} | ${cell(f)} | ${cell(t)} |`;
    }),
    '',
    ...(r.end.errorLogs.length ? ['Error logs:', '', ...r.end.errorLogs.slice(0, 10).map((l) => `- \`${l.slice(0, 300)}\``), ''] : []),
    ...r.end.info.map((i) => `- ${i}`),
    ...(r.heap_snapshots.length ? ['', `Heap snapshots: ${r.heap_snapshots.join(', ')}`] : []),
    '',
  ];
  return lines.join('\n');
}

export async function writeResults(dir: string, r: SoakResult): Promise<{ json: string; md: string; svg: string }> {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `soak-${r.date}`);
  const files = { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
  writeFileSync(
    files.svg,
    await renderChart(r.samples, `Soak ${r.date}: ${r.minutes_run.toFixed(1)} min at ${r.rate_per_s.toFixed(1)} requests/s`),
  );
  writeFileSync(files.json, `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(files.md, markdown(r, `soak-${r.date}.svg`));
  return files;
}
