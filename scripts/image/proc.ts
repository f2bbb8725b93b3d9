// Running the host's tools (podman, mmdebstrap, npm, tar, git) from the image scripts: a failure
// throws with the command and the end of its output, so the caller's message says what broke.
import { spawn, spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const say = (msg: string): void => void process.stderr.write(`[image] ${msg}\n`);

export interface RunOptions {
  cwd?: string;
  /** Let the tool write to our stderr (long builds; stdout stays for results): nothing is captured then. */
  inherit?: boolean;
  input?: string;
}

const tail = (text: string): string => text.trim().split('\n').slice(-20).join('\n');

/** Runs to the end and returns stdout; throws on a non-zero exit. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): string {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? REPO,
    encoding: 'utf8',
    input: opts.input,
    stdio: opts.inherit ? ['ignore', 2, 2] : ['pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    const out = opts.inherit ? '' : `\n${tail(`${r.stdout}\n${r.stderr}`)}`;
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}${out}`);
  }
  return r.stdout ?? '';
}

/** True when `cmd args` exits 0 (nothing printed). */
export const succeeds = (cmd: string, args: string[]): boolean => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The asynchronous form, for the test harness that drives HTTP load while containers run. */
export function runAsync(cmd: string, args: string[], opts: { input?: string } = {}): Promise<Finished> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}
