// B10's replay: the operator's CLI (`node services/operator/src/cli/replay.ts`, in place or
// `--into scratch`), a process of its own as an operator runs it; its lines are timed on the bench's
// clock, so the swap can be laid over the clients' answers.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';
import { procStat } from './lib/processSampler.ts';

export interface ReplayCliRun {
  /** Bench clock (performance.now(), ms) when the process started and ended. */
  started_ms: number;
  ended_ms: number;
  /** When the rebuild said it was swapping, and when it said it had swapped (in place only). */
  swap_started_ms: number | null;
  swapped_ms: number | null;
  /** What the rebuild measured: how long its locks were held (readers and the live projector waited). */
  locked_ms: number | null;
  /** From its last line: commands applied + skipped, its own seconds and rate. */
  commands: number | null;
  seconds: number | null;
  commands_per_s: number | null;
  /** CPU seconds of the replay process (user + system). */
  cpu_s: number;
  swap_attempts_retried: number;
  lines: string[];
}

/**
 * Runs the replay CLI against `databaseUrl` (the owner: an in-place rebuild moves tables) and
 * resolves when it exits 0; rejects with its last lines otherwise.
 */
export async function runReplayCli(opts: {
  databaseUrl: string;
  /** A scratch database: `--into scratch` there; none: in place. */
  scratchUrl?: string;
  env: NodeJS.ProcessEnv;
  /** Called with each line as it arrives (progress). */
  onLine?: (line: string) => void;
}): Promise<ReplayCliRun> {
  const args = [join(REPO_ROOT, 'services/operator/src/cli/replay.ts'), ...(opts.scratchUrl ? ['--into', 'scratch'] : [])];
  const run: ReplayCliRun = {
    started_ms: performance.now(),
    ended_ms: 0,
    swap_started_ms: null,
    swapped_ms: null,
    locked_ms: null,
    commands: null,
    seconds: null,
    commands_per_s: null,
    cpu_s: 0,
    swap_attempts_retried: 0,
    lines: [],
  };
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...opts.env,
      DATABASE_URL: opts.databaseUrl,
      ...(opts.scratchUrl ? { REPLAY_DATABASE_URL: opts.scratchUrl } : {}),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let partial = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    const now = performance.now();
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      run.lines.push(line);
      if (run.lines.length > 400) run.lines.splice(0, 100);
      opts.onLine?.(line);
      if (/\] within \d+ commands of the live projection: swapping/.test(line)) run.swap_started_ms ??= now;
      if (/\] swap attempt \d+/.test(line)) run.swap_attempts_retried += 1;
      const swapped = /\] swapped: readers and the live projector waited (\d+) ms/.exec(line);
      if (swapped) {
        run.swapped_ms = now;
        run.locked_ms = Number(swapped[1]);
      }
      const done = /\] done: ([\d,]+) applied, ([\d,]+) skipped in ([\d.]+) s \(([\d,]+) cmd\/s\)/.exec(line);
      if (done) {
        const n = (x: string | undefined) => Number((x ?? '0').replaceAll(',', ''));
        run.commands = n(done[1]) + n(done[2]);
        run.seconds = Number(done[3]);
        run.commands_per_s = n(done[4]);
      }
    }
  });
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  // The process's CPU, read while it lives (its /proc entry goes with it).
  const cpu = setInterval(() => {
    const st = child.pid === undefined ? null : procStat(child.pid);
    if (st) run.cpu_s = st.cpu_s;
  }, 500);
  const [code, signal] = await exited.finally(() => clearInterval(cpu));
  run.ended_ms = performance.now();
  if (code !== 0) throw new Error(`replay exited ${code ?? signal}: ${run.lines.slice(-15).join('\n')}`);
  return run;
}
