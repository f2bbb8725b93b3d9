// Runs a planned pod (podPlan.ts) from the built image the way a kubelet does, with podman: the
// container's user and groups, a read-only root file system with no writable /tmp unless the pod
// mounts one, its capabilities dropped and added, no privilege escalation, its memory limit, its
// Secret files mounted read-only, its command and environment. Readiness is probed as the manifest
// says (path, port, period, timeout, failure threshold, after the startup probe), and a pod is
// stopped as Kubernetes stops one: out of
// the Service's endpoints first, then the preStop hook, then SIGTERM, then SIGKILL once
// terminationGracePeriodSeconds (counted from the start of preStop) have passed.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { LIMITS, PODMAN } from '../../scripts/image/podman.ts';
import type { ContainerPlan, PodPlan } from './podPlan.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const live = new Set<string>();
process.on('exit', () => {
  for (const name of live) spawnSync('podman', [...PODMAN, 'rm', '-f', '-t', '0', name], { stdio: 'ignore' });
});

function runArgs(name: string, c: ContainerPlan, image: string): string[] {
  // --sig-proxy=false: the container gets the signals the kubelet sends (terminate()), not whatever
  // reaches the podman client that follows its output.
  const args = [...PODMAN, 'run', '--rm', '--sig-proxy=false', '--name', name, '--network', 'host', ...LIMITS];
  args.push('--user', `${c.user.uid}:${c.user.gid}`);
  for (const g of c.user.groups) args.push('--group-add', String(g));
  // readOnlyRootFilesystem: nothing writable, not even the /tmp podman would otherwise add.
  if (c.readOnlyRoot) args.push('--read-only', '--read-only-tmpfs=false');
  for (const cap of c.capDrop) args.push('--cap-drop', cap);
  for (const cap of c.capAdd) args.push('--cap-add', cap);
  if (c.noNewPrivileges) args.push('--security-opt', 'no-new-privileges');
  if (c.memoryLimitBytes !== undefined) args.push('--memory', String(c.memoryLimitBytes));
  for (const t of c.tmpfs) args.push('--tmpfs', `${t}:rw,mode=1777`);
  for (const m of c.mounts) args.push('-v', `${m.hostPath}:${m.mountPath}:${m.readOnly ? 'ro' : 'rw'}`);
  for (const [k, v] of Object.entries(c.env)) args.push('-e', `${k}=${v}`);
  const [entry, ...rest] = c.argv;
  if (!entry) throw new Error(`${name}: no command`);
  args.push('--entrypoint', entry, image, ...rest);
  return args;
}

/**
 * One podman command, its output kept (the last `keep` characters) and, for a container, written to
 * its log file; `exited` settles with its exit code. A container named here is removed if this
 * process dies first.
 */
function podmanChild(
  args: string[],
  o: { container?: string; logFile?: string; keep?: number } = {},
): { output(): string; exited: Promise<number> } {
  if (o.container) live.add(o.container);
  const child = spawn('podman', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = o.logFile ? createWriteStream(o.logFile) : null;
  let output = '';
  const keep = (b: Buffer) => {
    log?.write(b);
    output = (output + b.toString()).slice(-(o.keep ?? 64_000));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number>((resolve) =>
    child.on('close', (code) => {
      if (o.container) live.delete(o.container);
      log?.end();
      resolve(code ?? 1);
    }),
  );
  return { output: () => output, exited };
}

/** Runs one container to its end (an init container, a Job's container, an operator's command). */
export async function runContainer(
  name: string,
  c: ContainerPlan,
  image: string,
  logDir: string,
): Promise<{ code: number; output: string }> {
  const run = podmanChild(runArgs(name, c, image), { container: name, logFile: join(logDir, `${name}.log`) });
  const code = await run.exited;
  return { code, output: run.output() };
}

/** `kubectl exec` into a running pod's container: the command with the container's settings and files. */
export async function execIn(pod: RunningPod, argv: string[]): Promise<{ code: number; output: string }> {
  const run = podmanChild([...PODMAN, 'exec', pod.name, ...argv]);
  const code = await run.exited;
  return { code, output: run.output() };
}

export interface Terminated {
  preStopMs: number;
  /** From SIGTERM to the container's exit. */
  drainMs: number;
  code: number;
  /** SIGKILL at the end of the grace period. */
  killed: boolean;
}

export interface RunningPod {
  name: string;
  plan: PodPlan;
  /** The host port of a declared container port (by name or number) of the main container. */
  hostPort(port: string | number): number;
  ready(): boolean;
  waitReady(timeoutMs: number): Promise<void>;
  /** Settles with the container's exit code when it ends. */
  exited: Promise<number>;
  /**
   * The Kubernetes stop: preStop, SIGTERM, SIGKILL at the grace period. Returns when the pod is gone.
   * `beforeSigterm` runs between the hook and the signal, within the grace period: a test that wants
   * the signal to meet requests in flight waits for them there.
   */
  terminate(o?: { beforeSigterm?: () => Promise<void> }): Promise<Terminated>;
  logTail(): string;
}

async function httpOk(port: number, path: string, timeoutMs: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    await r.arrayBuffer();
    return r.status >= 200 && r.status < 400;
  } catch {
    return false;
  }
}

/** Starts a Deployment's pod (its one main container; init containers first, each to its end). */
export async function startPod(plan: PodPlan, image: string, logDir: string, note: (m: string) => void): Promise<RunningPod> {
  for (const c of plan.init) {
    const r = await runContainer(`${plan.name}-${c.name}`, c, image, logDir);
    if (r.code !== 0) throw new Error(`${plan.name}: init container ${c.name} failed (${r.code}):\n${r.output.slice(-2000)}`);
  }
  if (plan.containers.length !== 1) throw new Error(`${plan.name}: the harness runs pods of one container`);
  const c = plan.containers[0]!;
  const name = plan.name;
  const run = podmanChild(runArgs(name, c, image), { container: name, logFile: join(logDir, `${name}.log`), keep: 16_000 });
  const { exited } = run;
  let gone = false;
  void exited.then(() => (gone = true));
  const hostPort = (port: string | number): number => {
    const p = c.ports.get(port);
    if (p === undefined) throw new Error(`${name} declares no port ${port}`);
    return p;
  };
  // The kubelet's probers: startup first, then readiness every periodSeconds.
  let ready = false;
  let started = !c.probes.startup;
  let failures = 0;
  const probe = async (p: Record<string, any>) => httpOk(hostPort(p['httpGet'].port), p['httpGet'].path, (p['timeoutSeconds'] ?? 1) * 1000);
  const prober = (async () => {
    const startup = c.probes.startup;
    const readiness = c.probes.readiness;
    await sleep(((startup ?? readiness)?.['initialDelaySeconds'] ?? 0) * 1000);
    while (!gone && !started && startup) {
      started = await probe(startup);
      if (!started) await sleep((startup['periodSeconds'] ?? 10) * 1000);
    }
    while (!gone) {
      if (!readiness) ready = true;
      else if (await probe(readiness)) {
        failures = 0;
        ready = true;
      } else if (++failures >= (readiness['failureThreshold'] ?? 3)) ready = false;
      await sleep((readiness?.['periodSeconds'] ?? 10) * 1000);
    }
    ready = false;
  })();
  void prober;
  note(`${name} started (${c.argv.join(' ')})`);
  return {
    name,
    plan,
    hostPort,
    ready: () => ready && !gone,
    waitReady: async (timeoutMs) => {
      const t0 = Date.now();
      while (!(ready && !gone)) {
        if (gone) throw new Error(`${name} exited before it was ready:\n${run.output().slice(-3000)}`);
        if (Date.now() - t0 > timeoutMs) throw new Error(`${name} not ready within ${timeoutMs} ms:\n${run.output().slice(-3000)}`);
        await sleep(200);
      }
    },
    exited,
    terminate: async (o) => {
      const t0 = Date.now();
      const graceMs = plan.terminationGraceSeconds * 1000;
      if (c.preStop) {
        // The hook runs in the container; the grace period counts from its start (Kubernetes' rule).
        await new Promise<void>((resolve) => {
          const hook = spawn('podman', [...PODMAN, 'exec', name, ...c.preStop!], { stdio: 'ignore' });
          const cap = setTimeout(() => hook.kill('SIGKILL'), graceMs);
          hook.on('close', () => {
            clearTimeout(cap);
            resolve();
          });
        });
      }
      const preStopMs = Date.now() - t0;
      await o?.beforeSigterm?.();
      const t1 = Date.now();
      const left = Math.max(1, Math.ceil((graceMs - (t1 - t0)) / 1000));
      spawnSync('podman', [...PODMAN, 'kill', '--signal', 'TERM', name], { stdio: 'ignore' });
      let killed = false;
      const code = await Promise.race([
        exited,
        sleep(left * 1000).then(async () => {
          killed = true;
          spawnSync('podman', [...PODMAN, 'kill', '--signal', 'KILL', name], { stdio: 'ignore' });
          return exited;
        }),
      ]);
      return { preStopMs, drainMs: Date.now() - t1, code, killed };
    },
    logTail: () => run.output(),
  };
}
