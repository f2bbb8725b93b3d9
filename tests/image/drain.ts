// Stopping the containers the way a rolling update does, while requests are in flight: a second
// projector joins, the first gets SIGTERM; a second gateway starts, the first gets SIGTERM while the
// load still goes to it, and the load moves to the second once the first has exited. Then every
// request must have had an answer (200/202, or 503 with Retry-After once intake stopped; a refused
// connection never reached a server) and every accepted command must be in the database exactly
// once (the fault suite's verify()).
import pg from 'pg';
import { createKafka } from '@ingest/kafka';
import type { Stack } from '../faults/infra.ts';
import type { Shop } from '../faults/load.ts';
import { verify, waitQuiescent, type Verdict } from '../faults/verify.ts';
import type { Container, Stopped } from './containers.ts';
import { send } from './http.ts';
import { startLoad, type Load } from './load.ts';
import type { Gateway } from './writes.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const BASE_AVAILABLE = 1_000_000;

export interface StopRecord extends Stopped {
  role: string;
  inFlight: number;
}

export interface DrainResult {
  load: Load;
  stops: StopRecord[];
  verdict: Verdict;
  quiescentMs: number;
  refused: number;
}

/** Each shop's location and its INV level (available_qty = BASE_AVAILABLE), through a gateway. */
export async function seedShops(gw: Gateway, names: string[]): Promise<Shop[]> {
  const post = (path: string, body: unknown) => send(gw.port, 'POST', path, { 'x-ingest-secret': gw.ingestSecret }, body);
  const shops: Shop[] = [];
  for (const shop of names) {
    const loc = await post('/api/admin/locations', { shop, locations: [{ name: 'Image test store' }] });
    if (loc.status !== 200) throw new Error(`seed: locations of ${shop}: ${loc.status ?? loc.error} ${loc.text}`);
    const locationId = String(loc.body.locations[0].location_id);
    const prod = await post('/api/ingest/products', { shop, products: [{ barcode: 'INV', product_name: 'Inventory probe' }] });
    if (prod.status !== 200) throw new Error(`seed: product of ${shop}: ${prod.status ?? prod.error} ${prod.text}`);
    const level = await post('/api/ingest/inventory-available', {
      shop,
      source_system: 'image-test-seed',
      mode: 'absolute',
      location_id: locationId,
      lines: [{ barcode: 'INV', available_qty: BASE_AVAILABLE }],
    });
    if (level.status !== 200) throw new Error(`seed: level of ${shop}: ${level.status ?? level.error} ${level.text}`);
    shops.push({ shop, locationId, base: BASE_AVAILABLE });
  }
  return shops;
}

export interface DrainSetup {
  runId: string;
  shops: Shop[];
  gateway1: Container;
  gateway1Api: Gateway;
  projector1: Container;
  /** Started here: the replacements a rolling update brings up before it stops the old ones. */
  newGateway: () => Promise<{ container: Container; api: Gateway }>;
  newProjector: () => Promise<Container>;
  brokers: string[];
  topics: Stack['topics'];
  groupId: string;
  databaseUrl: string;
  ratePerSec: number;
  say: (msg: string) => void;
}

export async function drainUnderLoad(s: DrainSetup): Promise<DrainResult & { survivors: Container[] }> {
  const stops: StopRecord[] = [];
  const stopDuring = async (c: Container, load: Load): Promise<void> => {
    // SIGTERM when requests are waiting for an answer (bounded: the load may be answered too fast).
    const until = Date.now() + 10_000;
    while (load.inFlightAt(Date.now()) < 2 && Date.now() < until) await sleep(5);
    const at = Date.now();
    const inFlight = load.inFlightAt(at);
    s.say(`SIGTERM ${c.role} (${inFlight} requests in flight)`);
    const stopped = await c.stop();
    stops.push({ role: c.role, inFlight, ...stopped });
    s.say(`${c.role} exited ${stopped.exitCode} after ${stopped.drainMs} ms`);
  };

  const projector2 = await s.newProjector();
  const load = startLoad({
    tag: s.runId,
    shops: s.shops,
    ratePerSec: s.ratePerSec,
    target: { name: s.gateway1.role, port: s.gateway1Api.port },
    ingestSecret: s.gateway1Api.ingestSecret,
    cronSecret: s.gateway1Api.cronSecret,
  });
  await sleep(3000);
  await stopDuring(s.projector1, load);
  const gateway2 = await s.newGateway();
  await sleep(3000);
  await stopDuring(s.gateway1, load);
  // As a Service would once the old pod is gone: the load goes on against the new gateway.
  load.setTarget({ name: gateway2.container.role, port: gateway2.api.port });
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
      finalGet: async (id) => {
        const a = await send(gateway2.api.port, 'GET', `/api/commands/${id}`, { 'x-ingest-secret': gateway2.api.ingestSecret });
        return { status: a.status ?? 0, body: a.body };
      },
      connectionErrorsExpected: false,
    });
    return {
      load,
      stops,
      verdict,
      quiescentMs: quiet.ms,
      refused: load.records.length - sent.length,
      survivors: [gateway2.container, projector2],
    };
  } finally {
    await db.end().catch(() => {});
  }
}
