// B7's noisy shop as a client process of its own (forked by b7-fair.ts). A noisy retailer is another
// client than the quiet ones: when one process sent both, the noisy stream's 480 requests a second
// (and their answers) queued in that process's event loop ahead of the quiet shops' answers, and the
// quiet latencies measured the load generator as much as the gateway.
// Protocol: receives {type: 'run', port, path, bodies, intervalMs, seconds, maxSockets}, answers
// {type: 'ready'}, runs the open loop on {type: 'go'}, then sends {type: 'samples', samples}.
import { SECRET } from './b6-e2e.ts';
import { encodePost, RawHttpClient } from './lib/rawHttpClient.ts';
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
  // Encoded once, and sent by a lean client (lib/rawHttpClient.ts): the load generator shares the
  // machine with the server, and is not what is measured.
  const requests = run.bodies.map((b) => encodePost(run.port, run.path, { 'x-ingest-secret': SECRET }, Buffer.from(b)));
  const client = new RawHttpClient(run.port, run.maxSockets);
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
      const request = requests[n++ % requests.length]!;
      pending.push(
        client.send(request).then(
          (r) =>
            void samples.push({
              at: due / 1000,
              status: r.status,
              ms: performance.now() - t0 - due,
              retryAfter: r.retryAfter,
            }),
          () => void samples.push({ at: due / 1000, status: 0, ms: performance.now() - t0 - due, retryAfter: null }),
        ),
      );
    }
    if (next >= end) break;
    await sleep(Math.max(0, next - (performance.now() - t0)));
  }
  await Promise.all(pending);
  client.close();
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
