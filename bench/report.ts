// Renders bench results as Markdown and checks them against the issue's targets.
import type { B1KindResult, B1Result } from './b1-apply.ts';
import type { B2Result, LoadResult } from './b2-gateway.ts';
import type { B4Result } from './b4-e2e.ts';
import type { B5Result } from './b5-replay.ts';
import type { B9Result } from './b9-replay-scale.ts';
import { b9Markdown } from './b9-report.ts';
import type { B10Result } from './b10-rebuild-under-load.ts';
import { b10Markdown } from './b10-report.ts';
import type { B6Result } from './b6-e2e.ts';
import type { B7Result } from './b7-fair.ts';
import type { B8Result } from './b8-scale.ts';

export interface Results {
  commit: string;
  working_tree_dirty: boolean;
  date: string;
  total_seconds: number;
  machine: Record<string, unknown>;
  versions: Record<string, string>;
  settings: Record<string, unknown>;
  B1:
    | (B1Result & {
        ratio_floor_changed?: number;
        ratio_floor_10?: number;
        ratio_floor_resend?: number;
        floor_rows_identical?: boolean;
        set_based_property?: { runs: number; seed: number; passed: boolean; seconds: number };
        ratio_changed?: number;
        ratio_resend?: number;
        resend_log_rows: number;
        no_seq_scan_of_big_tables: boolean;
      })
    | null;
  B2: B2Result | null;
  B5: B5Result | null;
  B9?: B9Result | null;
  B10?: B10Result | null;
  B6?: B6Result | null;
  B4?: B4Result | null;
  B7?: B7Result | null;
  B8?: B8Result | null;
  /** Benches this run did not measure, kept from an earlier run: the commit and date they were measured at. */
  carried_over?: Record<string, { commit: string; date: string }>;
  errors: Record<string, string>;
}

export interface Target {
  bench: string;
  what: string;
  value: number | string;
  target: string;
  met: boolean | null;
}

export function targetsOf(r: Results): Target[] {
  const t = (bench: string, what: string, value: number | undefined, target: string, ok: (v: number) => boolean): Target => ({
    bench,
    what,
    value: value ?? 'not measured',
    target,
    met: value === undefined ? null : ok(value),
  });
  const b6 = r.B6;
  const most = b6 ? Math.max(...b6.settings.shop_counts) : null;
  return [
    // Against the contract floor (the same rows from one set-based statement), not a bare upsert.
    t(
      'B1',
      'floor time / projector time, 10,000-line snapshot at 100% changed (p50)',
      r.B1?.ratio_floor_changed,
      '>= 0.85',
      (v) => v >= 0.85,
    ),
    t('B1', 'floor time / projector time at 10% changed (p50)', r.B1?.ratio_floor_10, '>= 0.85', (v) => v >= 0.85),
    t('B1', 'floor time / projector time on a resend (0% changed, p50)', r.B1?.ratio_floor_resend, '>= 0.85', (v) => v >= 0.85),
    t(
      'B1',
      'set-based projection equals the deciders (long property run)',
      r.B1?.set_based_property === undefined ? undefined : r.B1.set_based_property.passed ? 1 : 0,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t(
      'B1',
      "floor's rows byte-identical to the projector's (checked in the run)",
      r.B1?.floor_rows_identical === undefined ? undefined : r.B1.floor_rows_identical ? 1 : 0,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t('B1', 'log rows written on resend', r.B1?.resend_log_rows, '= 0', (v) => v === 0),
    t(
      'B1',
      'no sequential scan of a big table in the load plans',
      r.B1 ? (r.B1.no_seq_scan_of_big_tables ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t('B2', 'gateway (stub ports) / parse floor, req/s at 4 concurrent', r.B2?.ratio_stub, '>= 0.6', (v) => v >= 0.6),
    t('B2', 'gateway event-loop delay p99 (ms) at 4 concurrent max-size bodies', r.B2?.event_loop_p99_ms, '< 50', (v) => v < 50),
    t('B5', 'replay / live projection, commands/s', r.B5?.ratio, '>= 1.0', (v) => v >= 1.0),
    t('B9', 'replay of the whole log / live on a slice, commands/s', r.B9?.ratio, '>= 2.0', (v) => v >= 2.0),
    t('B9', 'replay RSS max after warm-up (MB)', r.B9?.replay.rss_mb.max, '<= 512', (v) => v <= 512),
    t('B9', 'replay RSS slope after warm-up (MB per 100k commands)', r.B9?.replay.rss_mb.slope_mb_per_100k_commands, '<= 2', (v) => v <= 2),
    t(
      'B9',
      'resume: commands done again after SIGKILL',
      r.B9?.resume.redone_commands,
      '<= one batch per partition',
      (v) => v <= (r.B9?.resume.one_batch_per_partition ?? 0),
    ),
    t(
      'B9',
      'killed + resumed replay identical to the straight one',
      r.B9 ? (r.B9.verify.identical ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t('B10', 'quiet shops reply p99 during an in-place rebuild / without it', r.B10?.p99_ratio ?? undefined, '<= 1.5', (v) => v <= 1.5),
    t(
      'B10',
      'rebuild under load: nothing lost or doubled',
      r.B10 ? (r.B10.nothing_lost.ok ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t(
      'B10',
      'rebuilt read model identical to a fresh projection',
      r.B10 ? (r.B10.verify.identical ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t('B10', 'swap pause: max reply latency around the swap (ms, reported)', r.B10?.swap.max_ms, 'reported', () => true),
    t('B6', 'pipeline / direct-write peer, lines/s at saturation, 1 shop', b6?.ratio_1_shop ?? undefined, '>= 1.0', (v) => v >= 1.0),
    t('B6', 'pipeline / direct-write peer, lines/s at saturation, 4 shops', b6?.ratio_4_shops ?? undefined, '>= 0.9', (v) => v >= 0.9),
    t(
      'B6',
      // The label stays the same from run to run (bench --baseline matches figures by it); the
      // peer's rate is a figure of its own (peer_single_shop_lines_per_s).
      'pipeline lines/s, 1 shop',
      b6?.single_shop_lines_per_s ?? undefined,
      '>= 12,400 (2× the ~6,200 measured before)',
      (v) => v >= 12_400,
    ),
    t(
      'B6',
      'nothing lost: every request answered 200 with its counts, every result stored',
      b6 ? (b6.nothing_lost ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t(
      'B4',
      `sustained lines/s (highest passing rate: flat lag, nothing lost) / B6 pipeline capacity${most ? ` (${most} shops)` : ''}`,
      r.B4?.ratio_sustained,
      '>= 0.75',
      (v) => v >= 0.75,
    ),
    {
      bench: 'B4',
      what: `reply p99 (ms) at 50% of capacity, bound 3× (B1 projector p95 scaled to ${r.B4?.settings.lines_per_request ?? 1000} lines + Kafka append p99)`,
      value: r.B4?.p99_ms_at_half ?? 'not measured',
      target:
        r.B4?.p99_bound_at_half_ms != null ? `<= ${fmt(r.B4.p99_bound_at_half_ms)}` : '<= 3× (B1 p95 + Kafka p99) (B1 not run: no bound)',
      met: r.B4?.p99_ms_at_half == null || r.B4.p99_bound_at_half_ms == null ? null : r.B4.p99_ms_at_half <= r.B4.p99_bound_at_half_ms,
    },
    t('B4', '202 fallbacks at 50% of capacity', r.B4?.fallbacks_202_at_half ?? undefined, '= 0', (v) => v === 0),
    t(
      'B7',
      "quiet shops' reply p99 with a noisy shop at 10× capacity / without it",
      r.B7?.p99_ratio ?? undefined,
      '<= 1.5',
      (v) => v <= 1.5,
    ),
    t(
      'B7',
      'noisy shop: only 200/202 or 429 with Retry-After (no 5xx)',
      r.B7 ? (r.B7.noisy_only_429_with_retry_after ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
    t(
      'B8',
      'scale-out on three brokers: every accepted snapshot stored, every 200 with its counts (joins and leaves included)',
      r.B8 ? (r.B8.nothing_lost ? 1 : 0) : undefined,
      '= 1 (true)',
      (v) => v === 1,
    ),
  ];
}

const fmt = (n: number | undefined) => (n === undefined ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: 2 }));
const kb = (n: number) => `${(n / 1024).toLocaleString('en-US', { maximumFractionDigits: 0 })} KiB`;

function b1Table(title: string, k: B1KindResult): string[] {
  const out = [
    `#### ${title}`,
    '',
    '| scenario | path | rows/s | p50 ms | p95 ms | WAL/command | log rows | outbox rows | floor / projector (p50 time) | projector / bare (rows/s) | projector / COPY |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [s, r] of Object.entries(k)) {
    for (const path of ['projector', 'floor', 'bare_upsert', 'copy_floor'] as const) {
      const x = r[path];
      if (!x) continue;
      const ratio = path === 'projector' ? [fmt(r.ratio_floor), fmt(r.ratio_vs_bare), fmt(r.ratio_vs_copy)] : ['', '', ''];
      out.push(
        `| ${s} | ${path} | ${fmt(x.rows_per_s)} | ${fmt(x.p50_ms)} | ${fmt(x.p95_ms)} | ${kb(x.wal_bytes_per_command)} | ${fmt(x.log_rows_per_command)} | ${fmt(x.outbox_rows_per_command)} | ${ratio.join(' | ')} |`,
      );
    }
  }
  for (const path of ['projector', 'floor'] as const) {
    const phases = [...new Set(Object.values(k).flatMap((r) => Object.keys(r[path]?.phase_ms_p50 ?? {})))];
    if (!phases.length) continue;
    out.push(
      '',
      path === 'projector'
        ? `Projector time split (p50 ms per command; \`decide_and_serialize_js\` is the gap between the last load and the first write, \`other_js\` the rest of the time outside SQL). Decode + validate of the command (before the transaction) shown separately:`
        : 'Floor time split (p50 ms per command; `js` is building the parameter arrays and the time outside SQL):',
      '',
    );
    out.push(
      `| scenario | ${phases.join(' | ')}${path === 'projector' ? ' | decode+validate' : ''} |`,
      `|---|${phases.map(() => '---:').join('|')}${path === 'projector' ? '|---:' : ''}|`,
    );
    for (const [s, r] of Object.entries(k)) {
      const x = r[path];
      if (x)
        out.push(
          `| ${s} | ${phases.map((p) => fmt(x.phase_ms_p50?.[p])).join(' | ')}${path === 'projector' ? ` | ${fmt(x.decode_validate_ms_p50)}` : ''} |`,
        );
    }
  }
  return [...out, ''];
}

function loadRow(name: string, l: LoadResult): string {
  const eld = l.event_loop_delay_ms;
  return `| ${name} | ${l.concurrency} | ${l.requests} | ${fmt(l.requests_per_s)} | ${fmt(l.p50_ms)} | ${fmt(l.p99_ms)} | ${eld ? `${fmt(eld.p99)} (max ${fmt(eld.max)})` : ''} | ${fmt(l.server_cpu_ms_per_request)} | ${l.non_200} |`;
}

export function renderMarkdown(r: Results): string {
  const L: string[] = [];
  L.push('# Benchmark results', '');
  if (r.carried_over && Object.keys(r.carried_over).length)
    L.push(
      `Not measured in this run and kept from an earlier one: ${Object.entries(r.carried_over)
        .map(([k, v]) => `${k} (commit \`${v.commit.slice(0, 12)}\`, ${v.date})`)
        .join(', ')}.`,
      '',
    );
  L.push(
    `- date: ${r.date}`,
    `- commit: \`${r.commit}\`${r.working_tree_dirty ? ' (working tree had uncommitted changes)' : ''}`,
    `- total runtime: ${r.total_seconds} s`,
  );
  L.push(
    `- machine: ${Object.entries(r.machine)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ')}`,
  );
  L.push(
    `- versions: ${Object.entries(r.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    '',
  );
  L.push('## Targets', '', '| bench | what | value | target | met |', '|---|---|---:|---|---|');
  for (const t of targetsOf(r))
    L.push(
      `| ${t.bench} | ${t.what} | ${typeof t.value === 'number' ? fmt(t.value) : t.value} | ${t.target} | ${t.met === null ? 'n/a' : t.met ? 'yes' : '**no**'} |`,
    );
  L.push('');
  if (r.B1) {
    const s = r.B1.settings;
    L.push('## B1 projector apply', '');
    L.push(
      `Read model preloaded in ${r.B1.preload.seconds} s: ${fmt(r.B1.preload.inventory_levels)} inventory levels, ${fmt(r.B1.preload.products)} products (${s.otherShops + 1} shops), ${fmt(r.B1.preload.order_line_master)} order lines (then VACUUM ANALYZE, CHECKPOINT). ` +
        `${s.warmup} warm-up + ${s.iterations} measured commands per scenario and path; snapshot ${fmt(s.snapshotLines)} lines, order batch ${fmt(s.orderRows)} rows. rows/s = rows per command / p50.`,
      '',
    );
    L.push(...b1Table('Inventory snapshot (10,000 lines, one location)', r.B1.inventory_snapshot));
    const f = r.B1.floor;
    if (f) {
      L.push(
        '#### Contract floor (B1.floor)',
        '',
        `After the projector's claim and shop lock, one set-based statement (\`bench/b1-floor.ts\`) writes the rows the projector writes, in an identical copy of the preloaded database (copied in ${f.clone_seconds} s), for the projector's very commands at the same log positions; projector and floor take turns going first. Ids: ${f.ids}. ` +
          `Rows compared by md5 of the rows' text in key order (the outbox in id order), all columns except those the database fills itself (processed_at, created_at of results and outbox rows, the outbox's identity id):`,
        '',
        '| verification | commands | table | rows (projector) | rows (floor) | identical |',
        '|---|---:|---|---:|---:|---|',
      );
      for (const v of f.verifications)
        for (const t of v.tables)
          L.push(
            `| ${v.what} | ${v.commands} | ${t.table} | ${fmt(t.rows_projector)} | ${fmt(t.rows_floor)} | ${t.identical ? 'yes' : `**no**: ${(t.differing ?? []).join('; ').replace(/\|/g, '\\|').slice(0, 800)}`} |`,
          );
      L.push('');
    }
    if (r.B1.order_lines) L.push(...b1Table('Order lines (5,000 rows)', r.B1.order_lines));
    L.push(
      '#### Plans of the load queries (EXPLAIN ANALYZE on the preloaded model)',
      '',
      '| query | plan nodes | relations (node, index) | seq scan of big table | ms |',
      '|---|---|---|---|---:|',
    );
    for (const p of r.B1.plans)
      L.push(
        `| ${p.query} | ${p.node_types.join(', ')} | ${p.relations.map((x) => `${x.relation} (${x.node}${x.index ? `, ${x.index}` : ''})`).join('; ')} | ${p.seq_scan_on_big_table ? '**yes**' : 'no'} | ${fmt(p.execution_ms)} |`,
      );
    L.push('');
  }
  if (r.B2) {
    const b = r.B2;
    L.push('## B2 gateway', '');
    L.push(
      `Body: ${fmt(b.settings.lines)}-line snapshot JSON, ${kb(b.settings.body_bytes)}. c=1 for ${b.settings.single_seconds} s, c=${b.settings.concurrency} for ${b.settings.seconds} s; event-loop delay (monitorEventLoopDelay, 10 ms resolution) measured in the server process during the concurrent run.`,
      '',
    );
    L.push(
      '| server | concurrency | requests | req/s | p50 ms | p99 ms | event-loop p99 ms | server CPU ms/request | non-200 |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    const rows: Array<[string, { single: LoadResult; concurrent: LoadResult } | undefined]> = [
      ['bare node:http + JSON.parse', b.bare_parse],
      ['gateway, stub ports', b.gateway_stub],
      ['gateway, real Kafka append + stub reply', b.gateway_kafka],
    ];
    for (const [name, x] of rows) if (x) L.push(loadRow(name, x.single), loadRow(name, x.concurrent));
    L.push(
      '',
      `ratio (gateway stub / floor, c=${b.settings.concurrency}): ${fmt(b.ratio_stub)}${b.ratio_kafka !== undefined ? `; through Kafka: ${fmt(b.ratio_kafka)}` : ''}`,
      '',
    );
    if (b.gateway_profile) {
      L.push(
        `Gateway CPU profile (node --cpu-prof, separate run) under c=${b.settings.concurrency} (${fmt(b.gateway_profile.busy_ms)} ms busy): share of busy time by category (≥ 0.5 %)`,
        '',
      );
      L.push(
        '| category | % |',
        '|---|---:|',
        ...Object.entries(b.gateway_profile.categories)
          .filter(([, v]) => v >= 0.5)
          .map(([k, v]) => `| ${k} | ${fmt(v)} |`),
        '',
      );
      L.push('| top self time | % |', '|---|---:|', ...b.gateway_profile.top_self.map((x) => `| \`${x.fn}\` | ${fmt(x.pct)} |`), '');
    }
  }
  if (r.B9) L.push(...b9Markdown(r.B9));
  if (r.B10) L.push(...b10Markdown(r.B10));
  if (r.B5) {
    const b = r.B5;
    L.push('## B5 replay', '');
    L.push(
      `${fmt(b.live.commands)} small mixed commands (${Object.entries(b.mix)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}) over ${b.settings.shops} shops on a ${b.settings.partitions}-partition topic.`,
      '',
    );
    L.push('| path | commands | seconds (first to last commit) | commands/s | notes |', '|---|---:|---:|---:|---|');
    L.push(
      `| live (startProjector, ${b.settings.live_partitions_concurrently} group members, group commit) | ${b.live.commands} | ${fmt(b.live.seconds)} | ${fmt(b.live.commands_per_s)} | ${fmt(b.live.wall_seconds_incl_group_join)} s incl. group join; statuses ${JSON.stringify(b.live.statuses)} |`,
    );
    L.push(
      `| replay (replayCommandLog, batch ${b.settings.replay_batch_size}) | ${b.replay.commands} | ${fmt(b.replay.seconds)} | ${fmt(b.replay.commands_per_s)} | ${b.replay.transactions} transactions; replayer's own figure ${fmt(b.replay.replayer_reported_commands_per_s)}/s over ${fmt(b.replay.replayer_reported_seconds)} s incl. consumer start |`,
    );
    L.push(
      '',
      `ratio replay / live: ${fmt(b.ratio)}; read models identical after replay: ${b.read_models_identical ? 'yes' : `no (${b.differing_tables.join(', ')})`}`,
      '',
    );
    const phases = [...new Set([...Object.keys(b.live.profile.sql_ms_per_command), ...Object.keys(b.replay.profile.sql_ms_per_command)])];
    L.push(
      'Time per command: wall (span / commands) and SQL statement time by phase (summed over concurrent transactions, so live can exceed its wall time):',
      '',
    );
    L.push(
      `| path | wall ms | statements | SQL ms total | ${phases.join(' | ')} |`,
      `|---|---:|---:|---:|${phases.map(() => '---:').join('|')}|`,
    );
    for (const [name, p] of [
      ['live', b.live.profile],
      ['replay', b.replay.profile],
    ] as const)
      L.push(
        `| ${name} | ${fmt(p.wall_ms_per_command)} | ${fmt(p.statements_per_command)} | ${fmt(p.sql_ms_per_command_total)} | ${phases.map((x) => fmt(p.sql_ms_per_command[x])).join(' | ')} |`,
      );
    L.push('');
  }
  if (r.B6) {
    const b = r.B6;
    L.push('## B6 end to end against a direct-write peer', '');
    L.push(
      `Closed loop: ${b.settings.clients} clients, each with its own location (so no snapshot is ever stale), each sending the next ${fmt(b.settings.lines_per_request)}-line snapshot (every line changed) when its reply arrives; ` +
        `one loop per point: ${b.settings.warmup_seconds} s of warm-up, then a ${b.settings.seconds} s window whose replies are counted (lines/s = lines of the 200 replies with the expected counts that arrived in the window / window; latencies over the same replies); the designs interleaved (ABBA) in the same run, ${b.settings.rounds} round(s). ` +
        `**pipeline**: the project as \`npm start\` runs it (runProjector + runGateway in one process; HTTP → gateway → Kafka → projector → PostgreSQL → reply; ${b.settings.partitions}-partition commands topic, shops on ${b.shops.map((x) => `partition ${x.partition}`).join(', ')}). ` +
        `**peer**: the same gateway app (buildApp) whose CommandLog runs the projector's applyCommand inside the request (one transaction with claim, shop lock, outbox rows and stored result) and replies at once. ` +
        "Both run the project's outbox relay (audit batches and stock events published to Kafka); before each point the relays have published everything. Each design runs in its own process; the load generator is the bench process.",
      '',
    );
    L.push(
      '| design | shops | round | requests | lines/s | p50 ms | p95 ms | p99 ms | statuses | stored | lost | bad replies | server CPU ms/request | event-loop p99 ms | outbox left / drain s | lines/s until its events were published | commands per projector transaction | projector ms per command |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|',
    );
    for (const p of b.points)
      L.push(
        `| ${p.design} | ${p.shops} | ${p.round} | ${p.requests} | ${fmt(p.lines_per_s)} | ${fmt(p.p50_ms)} | ${fmt(p.p95_ms)} | ${fmt(p.p99_ms)} | ${JSON.stringify(p.statuses)} | ${p.results_stored} | ${p.lost} | ${p.bad_replies} | ${fmt(p.server_cpu_ms_per_request)} | ${fmt(p.event_loop_p99_ms)} | ${p.outbox_pending_at_end} / ${p.outbox_drain_seconds === null ? '**not drained**' : fmt(p.outbox_drain_seconds)} | ${fmt(p.lines_per_s_published ?? undefined)} | ${fmt(p.projector?.commands_per_transaction ?? undefined)} | ${fmt(p.projector?.apply_ms_per_command ?? undefined)} |`,
      );
    L.push(
      '',
      `pipeline / peer: 1 shop ${fmt(b.ratio_1_shop ?? undefined)}, 4 shops ${fmt(b.ratio_4_shops ?? undefined)}; pipeline 1 shop ${fmt(b.single_shop_lines_per_s ?? undefined)} lines/s (peer ${fmt(b.peer_single_shop_lines_per_s ?? undefined)}); counted until each design's events were published (window + the relay's drain after it): 1 shop ${fmt(b.ratio_published_1_shop ?? undefined)}, 4 shops ${fmt(b.ratio_published_4_shops ?? undefined)}; nothing lost: ${b.nothing_lost ? 'yes' : '**no**'}${b.relay_stalled ? `; **relay stalled**: ${b.relay_stalled} (the points after it were not run)` : ''}`,
      '',
    );
  }
  if (r.B4) {
    const b = r.B4;
    L.push('## B4 end to end', '');
    L.push(
      `Open loop (arrivals by the clock, never waiting for replies): ${fmt(b.settings.lines_per_request)}-line inventory snapshots (every line changed) to \`POST /api/ingest/inventory-snapshot\`, rotating over ${b.settings.shops} shops on a ${b.settings.partitions}-partition commands topic, ` +
        `${b.settings.seconds_per_rate} s per rate, through runGateway → Kafka → runProjector → PostgreSQL → reply, all in the bench process (the load generator shares the 2 cores and the event loop). ` +
        `Capacity ${fmt(b.capacity_lines_per_s)} lines/s (${b.capacity_source}). Lag sampled every ${b.settings.lag_sample_ms} ms (startLagMonitor); trend = least-squares slope over the arrival phase. ` +
        `Sustained = processed lines / time from the first arrival until every reply is in and the lag is 0. A rate passes if it drained, the lag stayed flat, every request was accepted (200/202) and every accepted request was processed. Kafka append p99 (sequential, same size): ${fmt(b.kafka_append_p99_ms)} ms.`,
      '',
    );
    L.push(
      '| rate | offered lines/s | req/s | requests | sustained lines/s | p50 ms | p95 ms | p99 ms | 202 share | 429 | 503 | other errors | lag max | lag trend /s | drain s | lost | pass |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    );
    for (const x of b.rates)
      L.push(
        `| ${x.fraction * 100}% | ${fmt(x.offered_lines_per_s)} | ${fmt(x.offered_requests_per_s)} | ${x.requests} | ${fmt(x.sustained_lines_per_s)} | ${fmt(x.p50_ms)} | ${fmt(x.p95_ms)} | ${fmt(x.p99_ms)} | ${fmt(x.share_202)} | ${x.count_429} | ${x.count_503} | ${x.other_errors} | ${fmt(x.lag_max)} | ${fmt(x.lag_trend_per_s)} | ${fmt(x.drain_seconds)} | ${x.lost ?? `not drained (${x.pending_at_timeout} pending)`} | ${x.pass ? 'yes' : '**no**'} |`,
      );
    L.push(
      '',
      `ratio sustained (highest passing rate) / capacity: ${fmt(b.ratio_sustained)} (best sustained of any rate, passing or not: ${fmt(b.ratio_best_sustained_any)}); p99 at 50%: ${b.p99_ms_at_half ?? '–'} ms${b.p99_bound_at_half_ms !== null ? ` (bound ${fmt(b.p99_bound_at_half_ms)} ms)` : ''}`,
      '',
    );
  }
  if (r.B7) {
    const b = r.B7;
    L.push('## B7 fair admission per shop', '');
    L.push(
      `Open loop (arrivals by the clock): ${fmt(b.settings.lines_per_request)}-line inventory snapshots (every line changed) through the real pipeline (b6-server.ts \`pipeline\`: runGateway + runProjector in a forked process, ${b.settings.partitions}-partition commands topic; each shop on its own partition). ` +
        `Capacity ${fmt(b.capacity_lines_per_s)} lines/s (${b.capacity_source}, before the phases, with no per-shop limits; B6's figure on a quiet machine: ${fmt(b.b6_capacity_lines_per_s ?? undefined)}). Phase **alone**: ${b.settings.quiet_shops} quiet shops at ${b.settings.quiet_fraction * 100}% of the capacity each; phase **with_noisy**: the same plus one shop offering ${b.settings.noisy_factor}× the capacity, sent by a client process of its own (b7-noisy.ts); phase **fair_share** (the control): the same fourth shop offering only its share, ${b.settings.quiet_fraction * 100}% (what its admitted quota costs the others, without its refusals). ` +
        `${b.settings.rounds} round(s) of the phases, alternating, ${b.settings.seconds} s each; the first ${b.settings.warmup_seconds} s of each are not counted in the latencies. Gateway per-shop budgets: \`SHOP_RATE_LINES_PER_S\`=${fmt(b.shop_rate_lines_per_s)} (${b.settings.shop_rate_fraction * 100}% of the capacity), \`SHOP_BURST_LINES\`=${fmt(b.shop_burst_lines)}, the other settings at their defaults. ` +
        "Latency: from the request's due time to its answer (200 answers only).",
      '',
    );
    L.push(
      '| phase | side | requests | statuses | accepted lines/s | p50 ms | p95 ms | p99 ms | max ms | 429 with Retry-After | Retry-After s | server event-loop p99 ms | server CPU ms |',
      '|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|---:|',
    );
    for (const ph of b.phases) {
      L.push(
        `| ${ph.name} | quiet | ${ph.quiet.requests} | ${JSON.stringify(ph.quiet.statuses)} | ${fmt(ph.quiet.accepted_lines_per_s)} | ${fmt(ph.quiet.p50_ms)} | ${fmt(ph.quiet.p95_ms)} | ${fmt(ph.quiet.p99_ms)} | ${fmt(ph.quiet.max_ms)} | – | – | ${fmt(ph.server_event_loop_p99_ms)} | ${fmt(ph.server_cpu_ms)} |`,
      );
      const n = ph.noisy;
      if (n)
        L.push(
          `| ${ph.name} | noisy | ${n.requests} | ${JSON.stringify(n.statuses)} | ${fmt(n.accepted_lines_per_s)} | ${fmt(n.p50_ms)} | ${fmt(n.p95_ms)} | ${fmt(n.p99_ms)} | ${fmt(n.max_ms)} | ${n.count_429_with_retry_after} / ${n.count_429} | ${n.retry_after_s ? `${n.retry_after_s.min}–${n.retry_after_s.max}` : '–'} | | |`,
        );
    }
    L.push(
      '',
      `Quiet shops' p99 by round: ${b.phases.map((ph) => `${ph.name} ${ph.quiet_p99_ms_by_round.map((v) => fmt(v)).join(' / ')} ms`).join('; ')}. By shop: ${b.phases
        .map(
          (ph) =>
            `${ph.name} ${Object.values(ph.quiet.p99_ms_by_shop)
              .map((v) => fmt(v))
              .join(' / ')} ms`,
        )
        .join(
          '; ',
        )}. p99 with / without the noisy shop: ${fmt(b.p99_ratio ?? undefined)}; beside the fourth shop sending its share / alone: ${fmt(b.p99_ratio_fair_share ?? undefined)}; with the noisy shop / beside it sending its share: ${fmt(b.p99_ratio_noisy_vs_fair_share ?? undefined)}. ` +
        `Machine CPU busy (all cores) by round: ${b.phases.map((ph) => `${ph.name} ${(ph.machine_busy_by_round ?? []).map((v) => `${Math.round(v * 100)} %`).join(' / ')}`).join('; ')}; ` +
        `the noisy client process took ${fmt(b.phases.find((ph) => ph.name === 'with_noisy')?.noisy_client_cpu_ms ?? undefined)} ms of CPU on the same machine.`,
      '',
    );
  }
  if (r.B8) L.push(...b8Section(r.B8));
  if (Object.keys(r.errors).length) {
    L.push('## Errors', '');
    for (const [k, v] of Object.entries(r.errors)) L.push(`### ${k}`, '', '```', v, '```', '');
  }
  L.push('## Settings', '', '```json', JSON.stringify(r.settings, null, 2), '```', '');
  return L.join('\n');
}

function b8Section(b: B8Result): string[] {
  const s = b.settings;
  const L = ['## B8 scale-out on a three-broker cluster', ''];
  L.push(
    `A ${s.cluster_size}-node KRaft cluster of the bench's own (Kafka ${b.kafka_version}, ${b.cluster.brokers.join(', ')}, started in ${fmt(b.cluster.started_seconds)} s), commands topic with ${s.partitions} partitions at replication ${s.replication_factor}, min ISR ${s.min_insync_replicas}; producer acks=all, idempotent. ` +
      `Gateways and projectors are separate processes (\`services/*/src/main.ts\`, as deployed), one consumer group; projector 1 runs every role, the others \`PROJECTOR_ROLES=apply\`. ` +
      `${b.shops.length} shops, ${Math.ceil(b.shops.length / s.partitions)} on each partition (${b.shops.map((x) => x.partition).join(', ')}), each with ${b.shops[0]?.locations ?? 0} location(s) and ${s.lines_per_request} products. ` +
      `Closed loop: ${s.clients} clients, each on a location of its own, each sending the next ${s.lines_per_request}-line inventory snapshot (every line changed) when its reply arrives, round-robin over the gateways; ${s.warmup_seconds} s of warm-up, then a ${s.seconds} s window. ` +
      `Lag: commands appended but not committed by the group, sampled every ${s.lag_sample_ms / 1000} s. CPU: utime + stime from /proc/<pid>/stat over the window, in cores (1.0 = one core busy) and as a share of the machine's ${b.cores} cores; "postgres (all)" is every postgres process on the machine and "machine" is /proc/stat: both include other work on the shared machine, as does the load average ("other processes" = machine − everything listed; load average before B8 started: ${b.loadavg_before.join(' / ')}).`,
    '',
  );
  L.push(
    '| configuration | requests | accepted lines/s | p50 ms | p99 ms | max ms | statuses | lag max / mean | partitions per group member | gateways cores | projectors cores | brokers cores | (gw + proj + brokers) / machine | load generator cores | postgres (all) cores | other processes cores | machine busy cores | load average (1/5/15 min, end) |',
    '|---|---:|---:|---:|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const c of b.configs)
    L.push(
      `| ${c.name} | ${c.requests} | ${fmt(c.accepted_lines_per_s)} | ${fmt(c.p50_ms)} | ${fmt(c.p99_ms)} | ${fmt(c.max_ms)} | ${JSON.stringify(c.statuses)} | ${c.lag_max ?? '–'} / ${fmt(c.lag_mean ?? undefined)} | ${c.assignment.join(' + ')} | ${fmt(c.cpu.gateways_cores)} | ${fmt(c.cpu.projectors_cores)} | ${fmt(c.cpu.brokers_cores)} | ${fmt(c.cpu.pipeline_and_brokers_share * 100)} % | ${fmt(c.cpu.load_generator_cores)} | ${fmt(c.cpu.postgres_all_cores)} | ${fmt(c.cpu.other_processes_cores)} | ${fmt(c.cpu.machine_busy_cores)} | ${c.loadavg_end.join(' / ')} |`,
    );
  L.push('');
  if (b.events.length) {
    L.push(
      'Rebalances under load (2 + 2 load; the third projector started, then stopped with SIGTERM). Stall: the longest gap between two reply completions from the event until the group had settled + 2 s, against the longest gap in the steady window before the join. Settled: the group (admin describeGroups, polled every 100 ms) Stable again with every partition assigned.',
      '',
      '| event | longest stall in replies ms | steady longest gap ms (p99 gap) | slowest reply ms (steady p99) | group left Stable after ms | settled after ms | process ms | replies per second from -5 s to +15 s |',
      '|---|---:|---:|---:|---:|---:|---:|---|',
    );
    for (const e of b.events)
      L.push(
        `| ${e.kind} | ${fmt(e.stall_ms)} | ${fmt(e.steady_max_gap_ms)} (${fmt(e.steady_p99_gap_ms)}) | ${fmt(e.max_reply_ms)} (${fmt(e.steady_p99_reply_ms)}) | ${e.rebalance_seen_after_ms ?? 'not seen'} | ${e.settled_after_ms ?? '**not settled**'} | ${fmt(e.process_ms)} | ${e.completions_per_s.join(' ')} |`,
      );
    L.push('', '(process ms: join = spawn until /readyz 200, i.e. the member has joined; leave = SIGTERM until the process exited.)', '');
  }
  L.push(
    `Accepted snapshots ${fmt(b.accepted)}, results stored ${fmt(b.stored)}; nothing lost: ${b.nothing_lost ? 'yes' : '**no**'}. Service logs: \`${b.log_dir}\`.`,
    '',
  );
  return L;
}
