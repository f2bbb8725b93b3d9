import { createPool, projectorCheckpoints, type Pool } from '@ingest/db';
import { retry } from '@ingest/runtime';
import { logEnd, startReplay, type Positions, type ReplayOptions, type ReplayResult, type ReplayRun } from './replayer.ts';
import {
  createShadowSchema,
  dropRetired,
  dropShadowSchema,
  NotCaughtUp,
  shadowSchemaExists,
  shapeDrift,
  SHADOW_SCHEMA,
  swapShadowIn,
  tryLockRebuild,
} from './shadowSchema.ts';

export interface RebuildOptions extends Omit<ReplayOptions, 'pool'> {
  /** The live database, as a role that may create and move tables (the migrating owner). */
  databaseUrl: string;
  /** Continue into the shadow schema an earlier, stopped run left behind. */
  resume?: boolean;
  /** Keep the replaced tables in the retired schema instead of dropping them. */
  keepRetired?: boolean;
  /**
   * Swap once the rebuild is within this many commands of the live projection (default: what the
   * replay applies in SWAP_CATCH_UP_MS at its rate so far).
   */
  maxSwapGap?: number;
  lockTimeoutMs?: number;
  /** Longest the final catch-up may hold the swap's locks before the swap backs off (default 30 s). */
  catchUpTimeoutMs?: number;
  /** Called with the swap's locks held, just before the tables move. */
  onLocked?: () => Promise<void> | void;
  /** When the replaced tables are retired; names the retired schema. */
  now?: Date;
  say?: (msg: string) => void;
}

export interface RebuildResult extends ReplayResult {
  swapped: boolean;
  /** Schema holding the replaced tables (null when dropped or not swapped). */
  retired: string | null;
  /** How long readers and the live projector waited on the swap's locks. */
  lockedMs: number;
}

// lock_not_available (lock_timeout), deadlock_detected, query_canceled (the swap's lock budget).
const LOCK_CONFLICT = new Set(['55P03', '40P01', '57014']);
const SWAP_ATTEMPTS = 20;
/**
 * The swap's catch-up runs under its locks: every command still to replay then is time the live
 * projector (and so every client waiting for a reply) waits. The rebuild follows the live
 * projection until what is left would take about this long (B10: a fixed 1,000-command gap held
 * live writes for 8.6 s under load), or for FOLLOW_ROUNDS rounds when live outpaces that.
 */
const SWAP_CATCH_UP_MS = 100;
const FOLLOW_ROUNDS = 50;

/** A rested replay (busy < 100 %) whose last follow round did not shrink its gap to the live projection rests too long. */
export const restedTooLong = (busy: number, gap: number, lastGap: number): boolean => busy < 100 && gap >= lastGap;

/** Whether the rebuild, `gap` commands behind the live projection after `round` rounds, should swap now. */
export function closeEnoughToSwap(f: { gap: number; round: number; commandsPerSecond: number; maxSwapGap?: number | undefined }): boolean {
  const closeEnough = f.maxSwapGap ?? Math.max(1, (f.commandsPerSecond * SWAP_CATCH_UP_MS) / 1000);
  return f.gap <= closeEnough || f.round >= FOLLOW_ROUNDS;
}
const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};
const gapTo = (target: Positions, at: Positions) => [...target].reduce((s, [p, o]) => s + Math.max(0, o - (at.get(p) ?? 0)), 0);
const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);

/**
 * D26 in place: replays the command log into a shadow schema of the live database while the live
 * projector keeps serving, follows the live projection until it is close, then swaps the rebuilt
 * tables in under one short lock. The rebuild never goes past the live projection, so every
 * command after the swap is projected live, with its events and reply, exactly once.
 */
export async function rebuildInPlace(opts: RebuildOptions): Promise<RebuildResult> {
  const say = opts.say ?? (() => {});
  const admin = createPool({ connectionString: opts.databaseUrl, max: 3, applicationName: 'ingest-rebuild' });
  let shadowPool: Pool | null = null;
  let run: ReplayRun | null = null;
  const outcome = { swapped: false, retired: null as string | null, lockedMs: 0 };
  // Held for the whole run: a second rebuild of the same database would share the shadow schema.
  const guard = await admin.connect();
  try {
    if (!(await tryLockRebuild(guard))) throw new Error('another rebuild of this database is running');
    if (opts.resume && (await shadowSchemaExists(guard))) {
      const drift = await shapeDrift(guard);
      if (drift.length)
        throw new Error(`the live tables changed since this rebuild started (${drift.join(', ')}): run it afresh, without --resume`);
      say(`resuming into the shadow schema ${SHADOW_SCHEMA}`);
    } else {
      say(`fresh rebuild into the shadow schema ${SHADOW_SCHEMA}`);
      await createShadowSchema(admin);
    }
    shadowPool = createPool({
      connectionString: opts.databaseUrl,
      searchPath: [SHADOW_SCHEMA],
      max: (opts.concurrency ?? 3) + 1,
      applicationName: 'ingest-rebuild',
    });
    const replay = await startReplay({ ...opts, pool: shadowPool });
    run = replay;
    const livePositions = async () => {
      const live = await projectorCheckpoints.livePositions(admin, opts.topic);
      // The live projection can only stand inside the log it projected; past its end, this database
      // was projected from another log (another broker, a recreated topic) and could never be caught up.
      const end = await logEnd(opts.kafka, opts.topic);
      const beyond = [...live].filter(([p, o]) => o > (end.get(p) ?? 0)).map(([p, o]) => `partition ${p}: ${o} > ${end.get(p) ?? 0}`);
      if (beyond.length) {
        throw new Error(
          `the live database has projected offsets past the end of the command log ${opts.topic} (${beyond.join(', ')}): it was projected from another log`,
        );
      }
      return live;
    };

    // Follow the live projection: replay up to where it stands, look again, until close. A rested
    // replay slower than the live projection would never get close: when a round did not shrink the
    // gap, it rests half as much (B10: at 25 % it fell behind a live load of 18 snapshots/s).
    let busy = opts.busyPercent ?? 100;
    let lastGap = Infinity;
    for (let round = 1; ; round++) {
      await replay.runTo(await livePositions());
      if (opts.signal?.aborted) {
        run = null;
        return { ...(await replay.stop()), ...outcome, complete: false };
      }
      const gap = gapTo(await livePositions(), replay.positions());
      if (restedTooLong(busy, gap, lastGap)) {
        busy = Math.min(100, busy * 2);
        replay.setBusyPercent(busy);
        say(`the live projection outpaces the rested replay (${gap} commands behind): busy ${busy} %`);
      }
      lastGap = gap;
      // Close to live, the rest goes flat out: the rounds are short, and the swap's catch-up (under its locks) must be.
      if (gap <= (opts.batchSize ?? 500) * (opts.concurrency ?? 3)) replay.setBusyPercent(100);
      if (closeEnoughToSwap({ gap, round, commandsPerSecond: replay.progress().commandsPerSecond, maxSwapGap: opts.maxSwapGap })) {
        say(`within ${gap} commands of the live projection: swapping`);
        break;
      }
    }
    replay.setBusyPercent(100);

    const retired = `retired_${stamp(opts.now ?? new Date())}`;
    // Up to SWAP_ATTEMPTS swaps: after a lock conflict (a short random pause, longer each time),
    // or straight away when the rebuild did not catch up while locked; an abort ends them.
    let attempt = 0;
    const swapOnce = async (): Promise<void> => {
      attempt += 1;
      const swap = await swapShadowIn(admin, {
        topic: opts.topic,
        retired,
        ...(opts.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: opts.lockTimeoutMs }),
        ...(opts.onLocked ? { onLocked: opts.onLocked } : {}),
        // Readers wait while this runs: give up (and retry the swap) rather than hold them long.
        catchUp: async (target) => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, opts.catchUpTimeoutMs ?? 30_000)));
          await Promise.race([replay.runTo(target), timeout]).finally(() => clearTimeout(timer));
          return replay.reached(target);
        },
      });
      outcome.swapped = true;
      outcome.lockedMs = swap.lockedMs;
    };
    if (!opts.signal?.aborted) {
      await retry(swapOnce, {
        classify: (err) => (err instanceof NotCaughtUp ? 'behind' : LOCK_CONFLICT.has(codeOf(err)) ? 'conflict' : null),
        backoff: (_, cls) => (attempt >= SWAP_ATTEMPTS ? null : cls === 'conflict' ? 50 + Math.random() * 200 * attempt : 0),
        signal: opts.signal,
        onRetry: ({ err }) => {
          if (err instanceof NotCaughtUp) {
            outcome.lockedMs = err.lockedMs;
            say(`swap attempt ${attempt}: the rebuild did not catch up while locked; retrying`);
          } else say(`swap attempt ${attempt} could not take its locks (${codeOf(err)}); retrying`);
        },
      }).catch((err: unknown) => {
        // Not swapped after its attempts, or stopped: the run ends incomplete. Anything else fails it.
        const stopped = opts.signal?.aborted === true && err === opts.signal.reason;
        if (!stopped && !(err instanceof NotCaughtUp) && !LOCK_CONFLICT.has(codeOf(err))) throw err;
      });
    }
    const result = await replay.stop();
    run = null;
    if (!outcome.swapped) return { ...result, ...outcome, complete: false };
    say(`swapped: readers and the live projector waited ${Math.round(outcome.lockedMs)} ms`);
    await dropShadowSchema(guard);
    if (opts.keepRetired) {
      outcome.retired = retired;
      say(`the replaced tables are kept in schema ${retired}`);
    } else {
      await dropRetired(guard, retired).then(
        () => say('dropped the replaced tables'),
        (err: unknown) => {
          outcome.retired = retired;
          say(`kept schema ${retired}: ${err instanceof Error ? err.message : String(err)}`);
        },
      );
    }
    return { ...result, ...outcome };
  } finally {
    if (run) await run.stop();
    await shadowPool?.end();
    guard.release(true); // closing the session releases the advisory lock
    await admin.end();
  }
}
