// B10's settings and results (b10-rebuild-under-load.ts measures them, b10-report.ts renders them).
import type { LoadShop, statsOf } from './b10-load.ts';
import type { NothingLost } from './b10-verify.ts';
import type { WrittenLog } from './lib/writeCommandLog.ts';

export interface B10Settings {
  commands: number;
  shops: number;
  locations: number;
  products: number;
  partitions: number;
  lines_per_request: number;
  quiet_shops: number;
  /** Each quiet shop's lines/s as a fraction of the capacity; the busy shop offers the rest of `load_fraction`. */
  quiet_fraction: number;
  load_fraction: number;
  baseline_seconds: number;
  warmup_seconds: number;
  /** The load goes on this long after the replay ends (the swap's aftermath is measured too). */
  tail_seconds: number;
  capacity_clients: number;
  capacity_seconds: number;
  /** BENCH_B10_CAPACITY: lines/s taken as the capacity instead of probing it. 0: probe. */
  fixed_capacity: number;
  kafka_port: number;
  controller_port: number;
  catch_up_timeout_s: number;
}

export interface B10Phase {
  name: 'baseline' | 'rebuild' | 'baseline_after';
  seconds: number;
  quiet: ReturnType<typeof statsOf>;
  all: ReturnType<typeof statsOf>;
  by_shop: Record<string, ReturnType<typeof statsOf>>;
  machine_busy: number;
  server_event_loop_p99_ms: number;
  server_cpu_ms: number;
}

export interface B10Result {
  settings: B10Settings;
  log: WrittenLog;
  catch_up_seconds: number;
  capacity_lines_per_s: number;
  capacity_source: string;
  load_lines_per_s: number;
  shops: Array<Omit<LoadShop, 'bodies'>>;
  phases: B10Phase[];
  /** The quiet shops over both baselines together. */
  baseline_quiet: ReturnType<typeof statsOf>;
  /** Quiet shops' reply p99 during the rebuild / over both baselines (target <= 1.5). */
  p99_ratio: number | null;
  replay: {
    commands: number | null;
    seconds: number | null;
    commands_per_s: number | null;
    cpu_s: number;
    /** What the rebuild measured: its locks were held this long. */
    locked_ms: number | null;
    /** From its "swapping" line to its "swapped" line, on the bench's clock. */
    swap_window_ms: number | null;
    swap_attempts_retried: number;
  };
  /** Every answer in flight during the swap window, a second either side, all shops. */
  swap: ReturnType<typeof statsOf>;
  /** The quiet shops' answers due while the replay ran, up to a second before its swap: what sharing the cores costs. */
  quiet_while_replaying: ReturnType<typeof statsOf>;
  /** REPLAY_* settings the replay ran with (unset: its defaults). */
  replay_env: Record<string, string>;
  nothing_lost: NothingLost;
  verify: { identical: boolean; differing_tables: string[]; scratch_replay_seconds: number | null };
}
