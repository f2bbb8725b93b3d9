// Stopping the pods the way a rolling update does, while requests are in flight: a second projector
// joins, the first is stopped; a second gateway starts, the first is stopped while the load still goes
// to it (no Service in front: harsher than a cluster, where it would leave the endpoints first), and
// the load moves to the second once the first has exited. Each stop is the kubelet's (preStop, then
// SIGTERM, SIGKILL at the grace period), with the SIGTERM sent once requests wait for their reply.
// Then every request must have had an answer (200/202, or 503 with Retry-After once intake stopped;
// a refused connection never reached a server) and every accepted command must be in the database
// exactly once (the fault suite's verify()).
import pg from 'pg';
import { createKafka, type TopicNames } from '@ingest/kafka';
import type { RunningPod, Terminated } from '../deployment/kubelet.ts';
import type { Stack } from '../faults/infra.ts';
import { createLoad, type Load, type Shop } from '../faults/load.ts';
import { getCommand, verify, waitQuiescent, type Verdict } from '../faults/verify.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A running pod and the part it plays in the run (projector-1, gateway-2, …). */
export interface RolePod {
  role: string;
  pod: RunningPod;
}

export interface StopRecord extends Terminated {
  role: string;
  /** Requests waiting for their reply when the SIGTERM went out. */
  inFlight: number;
}

export interface DrainResult {
  load: Load;
  stops: StopRecord[];
  verdict: Verdict;
  quiescentMs: number;
  refused: number;
  /** The replacements, still running. */
  survivors: RolePod[];
}

export interface DrainSetup {
  runId: string;
  shops: Shop[];
  gateway1: RolePod;
  projector1: RolePod;
  /** Starts a pod of the Deployment until it is ready: the replacements a rolling update brings up first. */
  start: (deployment: 'gateway' | 'projector', role: string) => Promise<RolePod>;
  brokers: string[];
  topics: TopicNames;
  groupId: string;
  databaseUrl: string;
  ratePerSec: number;
  say: (msg: string) => void;
}

const target = (p: RolePod) => ({ name: p.role, port: p.pod.hostPort('http') });

/** The kubelet's stop, its SIGTERM sent when requests are waiting (bounded: the load may be answered too fast). */
export async function stopUnderLoad(p: RolePod, load: Load | null, say: (msg: string) => void): Promise<StopRecord> {
  let inFlight = 0;
  const t = await p.pod.terminate({
    beforeSigterm: async () => {
      const until = Date.now() + 10_000;
      while (load && load.inFlight() < 2 && Date.now() < until) await sleep(5);
      inFlight = load?.inFlight() ?? 0;
      say(`SIGTERM ${p.role} (${inFlight} requests in flight)`);
    },
  });
  say(`${p.role} exited ${t.code} after ${t.drainMs} ms${t.killed ? ' (SIGKILL at the grace period)' : ''}`);
  return { role: p.role, inFlight, ...t };
}

export async function drainUnderLoad(s: DrainSetup): Promise<DrainResult> {
  const stops: StopRecord[] = [];
  const projector2 = await s.start('projector', 'projector-2');
  // The image test's mix: a sixth products, bulk, asynchronous and large products each, a third keyed deltas.
  const load = createLoad({
    tag: s.runId,
    shops: s.shops,
    targets: [target(s.gateway1)],
    ratePerSec: s.ratePerSec,
    mix: { products: 1, bulk: 1, async: 1, delta: 2, get: 0 },
    large: { share: 1, items: 300 },
    connections: 'fresh',
    requestTimeoutMs: 60_000,
  });
  load.start();
  await sleep(3000);
  stops.push(await stopUnderLoad(s.projector1, load, s.say));
  const gateway2 = await s.start('gateway', 'gateway-2');
  await sleep(3000);
  stops.push(await stopUnderLoad(s.gateway1, load, s.say));
  // As a Service would once the old pod is gone: the load goes on against the new gateway.
  load.setTargets([target(gateway2)]);
  await sleep(2000);
  await load.stop();

  const db = new pg.Pool({ connectionString: s.databaseUrl, max: 4 });
  db.on('error', () => {});
  const kafka = createKafka({ brokers: s.brokers, clientId: `image-test-${s.runId}-verify` });
  // verify() and waitQuiescent() read only these fields of the fault suite's Stack.
  const stack = { id: s.runId, db, kafka, topics: s.topics, groupId: s.groupId } as Pick<
    Stack,
    'id' | 'db' | 'kafka' | 'topics' | 'groupId'
  > as Stack;
  try {
    const quiet = await waitQuiescent(stack, s.groupId, 120_000);
    if (!quiet.ok) throw new Error(`not quiescent within 120 s: ${quiet.detail}`);
    const sent = load.records.filter((r) => r.error !== 'ECONNREFUSED');
    const verdict = await verify(stack, sent, s.shops, {
      finalGet: (id) => getCommand(gateway2.pod.hostPort('http'), id),
      connectionErrorsExpected: false,
    });
    return {
      load,
      stops,
      verdict,
      quiescentMs: quiet.ms,
      refused: load.records.length - sent.length,
      survivors: [gateway2, projector2],
    };
  } finally {
    await db.end().catch(() => {});
  }
}
