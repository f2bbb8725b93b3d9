// B7's noisy shop as a client process of its own (forked by b7-fair.ts). A noisy retailer is another
// client than the quiet ones: when one process sent both, the noisy stream's 480 requests a second
// (and their answers) queued in that process's event loop ahead of the quiet shops' answers, and the
// quiet latencies measured the load generator as much as the gateway.
// Protocol: receives {type: 'run', port, path, bodies, intervalMs, seconds, maxSockets}, answers
// {type: 'ready'}, runs the open loop on {type: 'go'}, then sends {type: 'samples', samples}.
import { Agent } from 'node:http';
import { post } from './b6-e2e.ts';
import { sleep } from './lib/util.ts';

export interface NoisyRun {
  type: 'run';
  port: number;
  path: string;
  bodies: string[];
  intervalMs: number;
  seconds: number;
  maxSockets: number;
}

/** What the noisy client sends back: its answers, and the CPU it took (it runs on the same machine). */
export interface NoisyReport {
  type: 'samples';
  samples: NoisySample[];
  cpu_ms: number;
}

export interface NoisySample {
  /** Seconds since the phase started, when the request was due. */
  at: number;
  status: number;
  ms: number;
  retryAfter: string | null;
}

async function openLoop(run: NoisyRun): Promise<NoisySample[]> {
  // Encoded once: the load generator shares the machine with the server, and is not what is measured.
  const bodies = run.bodies.map((b) => Buffer.from(b));
  const agent = new Agent({ keepAlive: true, maxSockets: run.maxSockets });
  const samples: NoisySample[] = [];
  const pending: Array<Promise<void>> = [];
  const end = run.seconds * 1000;
  const t0 = performance.now();
  let next = 0;
  let n = 0;
  for (;;) {
    const now = performance.now() - t0;
    while (next <= now && next < end) {
      const due = next;
      next += run.intervalMs;
      const body = bodies[n++ % bodies.length]!;
      pending.push(
        post(agent, run.port, run.path, body).then(
          (r) =>
            void samples.push({
              at: due / 1000,
              status: r.status,
              ms: performance.now() - t0 - due,
              retryAfter: r.headers['retry-after'] ?? null,
            }),
          () => void samples.push({ at: due / 1000, status: 0, ms: performance.now() - t0 - due, retryAfter: null }),
        ),
      );
    }
    if (next >= end) break;
    await sleep(Math.max(0, next - (performance.now() - t0)));
  }
  await Promise.all(pending);
  agent.destroy();
  return samples;
}

let run: NoisyRun | null = null;
process.on('message', (m: { type: string }) => {
  if (m.type === 'run') {
    run = m as NoisyRun;
    process.send?.({ type: 'ready' });
  } else if (m.type === 'go' && run) {
    const cpu = process.cpuUsage();
    void openLoop(run).then((samples) => {
      const used = process.cpuUsage(cpu);
      const report: NoisyReport = { type: 'samples', samples, cpu_ms: Math.round((used.user + used.system) / 1000) };
      process.send?.(report, () => process.exit(0));
    });
  }
});
