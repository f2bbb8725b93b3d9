// The services as real OS processes (node services/*/src/main.ts), each with its own log file,
// killed with SIGKILL when a scenario says so. Every wait here is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';

/**
 * Node's flags of a service process, as the image sets them (Dockerfile, `NODE_OPTIONS`): a young
 * generation of fixed size (docs/operations.md#memory).
 */
export const SERVICE_NODE_FLAGS = ['--min-semi-space-size=64', '--max-semi-space-size=64'];

export type ServiceKind = 'gateway' | 'projector';

export interface ExitRecord {
  service: string;
  pid: number;
  at: number;
  code: number | null;
  signal: string | null;
  /** We killed it (SIGKILL/SIGTERM from the suite), or a failpoint it was configured with did. */
  expected: boolean;
  why: string;
}

export interface Service {
  name: string;
  kind: ServiceKind;
  /** Gateway: its API port; projector: its metrics/readyz port. Kept across restarts. */
  port: number;
  pid(): number | null;
  running(): boolean;
  /** Starts (again) with the base env plus `extra`; resolves once /readyz answers 200. */
  start(extra?: NodeJS.ProcessEnv, readyTimeoutMs?: number): Promise<void>;
  /** kill -9; resolves when the process is gone. */
  kill9(why?: string): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves when the current process exits (for failpoint-driven deaths). */
  waitExit(timeoutMs: number): Promise<ExitRecord | null>;
  /** Marks the next exit as expected (a failpoint configured to kill it). */
  expectExit(why: string): void;
  url(path?: string): string;
  /** GET /readyz now: its status (0 = no answer within timeoutMs). */
  readyStatus(timeoutMs?: number): Promise<number>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// If the suite itself dies, it takes its services with it (never orphaned on a shared machine).
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

async function httpStatus(url: string, timeoutMs = 1000): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.text();
    return res.status;
  } catch {
    return 0;
  }
}

export interface ServiceHost {
  /** Every exit of every service of the scenario, expected or not. */
  exits: ExitRecord[];
  create(kind: ServiceKind, name: string, env: NodeJS.ProcessEnv): Promise<Service>;
  all(): Service[];
  /** Stops every running service (SIGTERM, then SIGKILL). */
  stopAll(): Promise<void>;
  /** kill -9 every running service (once a scenario's checks are done: nothing left to drain). */
  killAll(): Promise<void>;
}

export function serviceHost(logDir: string, note: (msg: string) => void): ServiceHost {
  const exits: ExitRecord[] = [];
  const services: Service[] = [];

  const create = async (kind: ServiceKind, name: string, baseEnv: NodeJS.ProcessEnv): Promise<Service> => {
    const port = await freePort();
    const logFile: WriteStream = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    let child: ChildProcess | null = null;
    let exited: Promise<ExitRecord> | null = null;
    let expected: string | null = null;
    const main = join(REPO_ROOT, 'services', kind, 'src', 'main.ts');

    const svc: Service = {
      name,
      kind,
      port,
      pid: () => child?.pid ?? null,
      running: () => child !== null,
      url: (path = '') => `http://127.0.0.1:${port}${path}`,
      readyStatus: (timeoutMs = 8000) => httpStatus(`http://127.0.0.1:${port}/readyz`, timeoutMs),
      expectExit: (why) => {
        expected = why;
      },
      start: async (extra = {}, readyTimeoutMs = 30_000) => {
        if (child) throw new Error(`${name} is already running (pid ${child.pid})`);
        const env: NodeJS.ProcessEnv = {
          ...baseEnv,
          ...(kind === 'gateway' ? { PORT: String(port), HOST: '127.0.0.1' } : { PROJECTOR_METRICS_PORT: String(port) }),
          ...extra,
        };
        const c = spawn(process.execPath, [...SERVICE_NODE_FLAGS, main], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
        child = c;
        live.add(c);
        const pid = c.pid ?? -1;
        logFile.write(
          `${JSON.stringify({ fault_suite: 'started', name, pid, time: new Date().toISOString(), failpoints: env['FAILPOINTS'] ?? '' })}\n`,
        );
        c.stdout.pipe(logFile, { end: false });
        c.stderr.pipe(logFile, { end: false });
        exited = new Promise<ExitRecord>((resolve) => {
          c.once('exit', (code, signal) => {
            live.delete(c);
            const rec: ExitRecord = {
              service: name,
              pid,
              at: Date.now(),
              code,
              signal,
              expected: expected !== null,
              why: expected ?? 'unexpected',
            };
            expected = null;
            exits.push(rec);
            if (child === c) child = null;
            logFile.write(
              `${JSON.stringify({ fault_suite: 'exited', name, pid, code, signal, why: rec.why, time: new Date().toISOString() })}\n`,
            );
            note(`${name} (pid ${pid}) exited: ${signal ?? `code ${code}`} (${rec.why})`);
            resolve(rec);
          });
        });
        const deadline = Date.now() + readyTimeoutMs;
        for (;;) {
          if (child !== c) throw new Error(`${name} exited during start-up; see ${join(logDir, `${name}.log`)}`);
          if ((await httpStatus(svc.url('/readyz'))) === 200) break;
          if (Date.now() > deadline) throw new Error(`${name} not ready within ${readyTimeoutMs} ms; see ${join(logDir, `${name}.log`)}`);
          await sleep(150);
        }
        note(`${name} ready (pid ${pid})`);
      },
      kill9: async (why = 'kill -9 by the suite') => {
        const c = child;
        if (!c || !exited) return;
        expected = why;
        const done = exited;
        c.kill('SIGKILL');
        await Promise.race([done, sleep(10_000)]);
      },
      stop: async (graceMs = 15_000) => {
        const c = child;
        if (!c || !exited) return;
        expected = 'stopped by the suite';
        const done = exited;
        c.kill('SIGTERM');
        const t = setTimeout(() => c.kill('SIGKILL'), graceMs);
        await Promise.race([done, sleep(graceMs + 5000)]);
        clearTimeout(t);
      },
      waitExit: async (timeoutMs) => {
        if (!exited) return null;
        return Promise.race([exited, sleep(timeoutMs).then(() => null)]);
      },
    };
    services.push(svc);
    return svc;
  };

  return {
    exits,
    create,
    all: () => services,
    stopAll: async () => {
      await Promise.all(services.map((s) => s.stop(10_000)));
    },
    killAll: async () => {
      await Promise.all(services.map((s) => s.kill9('killed by the suite after the checks')));
    },
  };
}
