// The image's processes as podman containers on the host's network: started detached (services) or
// run to their end (the setup Job's steps), stopped as the kubelet stops a pod (SIGTERM, then SIGKILL
// after the grace period), each with its exit code, its stop time and its log.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS, PODMAN } from '../../scripts/image/podman.ts';
import { runAsync } from '../../scripts/image/proc.ts';
import type { RunSpec } from './pods.ts';

/** Every container of a run carries this label with the run's id: cleanup removes those, and only those. */
export const RUN_LABEL = 'ingest.image-test';

const podman = (args: string[]) => runAsync('podman', [...PODMAN, ...args]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Stopped {
  exitCode: number;
  /** From SIGTERM to the container's exit. */
  drainMs: number;
}

export class Container {
  readonly name: string;
  readonly runId: string;
  readonly role: string;
  readonly spec: RunSpec;
  readonly image: string;

  constructor(runId: string, role: string, spec: RunSpec, image: string) {
    this.runId = runId;
    this.role = role;
    this.spec = spec;
    this.image = image;
    this.name = `ingest-image-test-${runId}-${role}`;
  }

  private args(detached: boolean): string[] {
    return [
      'run',
      ...(detached ? ['--detach'] : []),
      `--name=${this.name}`,
      `--label=${RUN_LABEL}=${this.runId}`,
      '--network=host',
      ...LIMITS,
      ...this.spec.flags,
      ...Object.entries(this.spec.env).map(([k, v]) => `--env=${k}=${v}`),
      this.image,
      ...this.spec.command,
    ];
  }

  async start(): Promise<void> {
    const r = await podman(this.args(true));
    if (r.code !== 0) throw new Error(`${this.role}: podman run failed: ${r.stderr.trim()}`);
  }

  /** Runs to the end (a Job's container): exit code, output and time. */
  async runToEnd(): Promise<{ exitCode: number; ms: number; output: string }> {
    const t0 = Date.now();
    const r = await podman(this.args(false));
    return { exitCode: r.code ?? -1, ms: Date.now() - t0, output: `${r.stdout}${r.stderr}` };
  }

  async running(): Promise<boolean> {
    const r = await podman(['container', 'inspect', '--format', '{{.State.Running}}', this.name]);
    return r.stdout.trim() === 'true';
  }

  /** Until the readiness probe answers 200; fails early when the container has exited. */
  async waitReady(timeoutMs = 120_000): Promise<number> {
    const probe = this.spec.readiness;
    if (!probe) throw new Error(`${this.spec.source} has no readiness probe`);
    const t0 = Date.now();
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${probe.port}${probe.path}`, { signal: AbortSignal.timeout(3000) }).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return Date.now() - t0;
      if (!(await this.running())) throw new Error(`${this.role} exited before it was ready:\n${await this.logTail()}`);
      if (Date.now() - t0 > timeoutMs)
        throw new Error(`${this.role} not ready within ${timeoutMs} ms (last ${status}):\n${await this.logTail()}`);
      await sleep(250);
    }
  }

  /** SIGTERM, then SIGKILL after the pod's terminationGracePeriodSeconds, as the kubelet does. */
  async stop(): Promise<Stopped> {
    const t0 = Date.now();
    const r = await podman(['stop', `--time=${this.spec.gracePeriodSeconds}`, this.name]);
    const drainMs = Date.now() - t0;
    if (r.code !== 0) throw new Error(`${this.role}: podman stop failed: ${r.stderr.trim()}`);
    const code = await podman(['container', 'inspect', '--format', '{{.State.ExitCode}}', this.name]);
    return { exitCode: Number(code.stdout.trim()), drainMs };
  }

  async logs(): Promise<string> {
    const r = await podman(['logs', this.name]);
    return `${r.stdout}${r.stderr}`;
  }

  async logTail(lines = 30): Promise<string> {
    return (await this.logs()).trim().split('\n').slice(-lines).join('\n');
  }

  async saveLog(dir: string): Promise<void> {
    writeFileSync(join(dir, `${this.role}.log`), await this.logs());
  }
}

/** Removes every container of the run, running or not. */
export async function removeRunContainers(runId: string): Promise<void> {
  const r = await podman(['ps', '--all', '--quiet', `--filter=label=${RUN_LABEL}=${runId}`]);
  const ids = r.stdout.split('\n').filter(Boolean);
  if (ids.length) await podman(['rm', '--force', '--time=0', ...ids]);
}
