// A server under test in a forked process (its own event loop, measured from inside), driven by the
// bench over IPC: it sends {type: 'ready', port}, answers 'reset' and 'stats', and exits on 'stop'.
import { fork, type ChildProcess } from 'node:child_process';

export class ServerProcess {
  private readonly child: ChildProcess;
  readonly port: number;

  private constructor(child: ChildProcess, port: number) {
    this.child = child;
    this.port = port;
  }

  static async start(script: string, args: string[], env: NodeJS.ProcessEnv, execArgv: string[] = []): Promise<ServerProcess> {
    const child = fork(script, args, { env: { ...process.env, ...env }, execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { type: string; port: number }) =>
        m.type === 'ready' ? resolve(m.port) : reject(new Error('unexpected message')),
      );
      child.once('exit', (code) => reject(new Error(`${script} ${args.join(' ')} exited with ${code}`)));
    });
    return new ServerProcess(child, port);
  }

  ask<T>(type: string): Promise<T> {
    return new Promise((resolve) => {
      this.child.once('message', (m: T) => resolve(m));
      this.child.send({ type });
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * The server side of the protocol: event-loop delay and CPU since the last 'reset'; `stop` runs on
 * 'stop'; any other message type the server names in `extra` is answered with what it returns.
 */
export async function serveBench(port: number, stop: () => Promise<void>, extra: Record<string, () => unknown> = {}): Promise<void> {
  const { monitorEventLoopDelay, PerformanceObserver } = await import('node:perf_hooks');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let cpu = process.cpuUsage();
  // Garbage collection since the last reset: the longest pause and the time spent (the main thread stops).
  let gc = { max_ms: 0, total_ms: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.max_ms = Math.max(gc.max_ms, e.duration);
      gc.total_ms += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('message', (m: { type: string }) => {
    if (m.type === 'reset') {
      delay.reset();
      cpu = process.cpuUsage();
      gc = { max_ms: 0, total_ms: 0 };
      process.send?.({ type: 'reset' });
    } else if (m.type === 'stats') {
      const used = process.cpuUsage(cpu);
      const ms = (ns: number) => Math.round(ns / 1e4) / 100;
      process.send?.({
        type: 'stats',
        event_loop_delay_ms: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), mean: ms(delay.mean) },
        cpu_ms: Math.round((used.user + used.system) / 1000),
        gc_ms: { max: Math.round(gc.max_ms * 10) / 10, total: Math.round(gc.total_ms) },
      });
    } else if (extra[m.type]) {
      process.send?.({ type: m.type, value: extra[m.type]!() });
    } else if (m.type === 'stop') {
      void stop().finally(() => process.exit(0));
    }
  });
  process.send?.({ type: 'ready', port });
}
