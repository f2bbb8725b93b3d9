// What every scenario shares: its stack and services, the shops it writes to, the load, the
// recovery measurement and the final verdict.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Partitioners } from 'kafkajs';
import { createStack, PARTITIONS, type OwnBroker, type Stack, type Template } from './infra.ts';
import { setupShops } from './setupShops.ts';
import { createLoad, type Load, type LoadOptions, type Sent, type Shop, type Target } from './load.ts';
import { serviceHost, type Service, type ServiceHost } from './procs.ts';
import { getCommand, verify, waitQuiescent, type Verdict } from './verify.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Suite {
  runDir: string;
  broker: OwnBroker;
  template: Template;
}

export interface Ctx {
  name: string;
  dir: string;
  stack: Stack;
  host: ServiceHost;
  suite: Suite;
  /** Timeline lines (also written to the scenario's timeline.log). */
  note(msg: string): void;
  timeline: string[];
  t0: number;
  gateway(name: string): Promise<Service>;
  projector(name: string): Promise<Service>;
  /** Shop names on distinct partitions (one per partition by default), or all on `onPartition`. */
  shopNames(n?: number, onPartition?: number): string[];
  /** Registers each shop's location and its INV level (available_qty = BASE_AVAILABLE) through a gateway. */
  setupShops(via: Service, names: string[]): Promise<Shop[]>;
  newLoad(shops: Shop[], targets: Service[], o?: Partial<LoadOptions>): Load;
  /** The group whose offsets say "projected" (changes when a scenario switches group). */
  groupId: string;
}

export interface Outcome {
  /** When the system should be whole again (fault removed, or the kill for failover faults). */
  reference: number | null;
  /** Seconds within which it must be whole again. */
  recoveryLimitS: number;
  load: Load | null;
  connectionErrorsExpected: boolean;
  /** A live gateway for the final GETs. */
  gatewayForChecks: Service;
  shops: Shop[];
  parkedShops?: string[];
  /** Checks of the scenario's own (failures), and notes. */
  failures?: string[];
  info?: string[];
  /** Overrides the measured recovery (seconds), e.g. measured by the scenario itself. */
  recoveryS?: number | null;
  /** Requests the scenario sent itself (outside the load), counted and checked like the load's. */
  extraRecords?: Sent[];
  /** Checks of the scenario's own that need the pipeline quiescent (e.g. every stock event published). */
  afterQuiescence?: () => Promise<{ failures: string[]; info: string[] }>;
}

export interface Result {
  name: string;
  requests: number;
  accepted: number;
  unknown: number;
  lost: number;
  doubled: number;
  fiveXX: number;
  status503: number;
  status503WithRetryAfter: number;
  recoveryS: number | null;
  recoveryLimitS: number;
  pass: boolean;
  failures: string[];
  info: string[];
  seconds: number;
  logDir: string;
  database: string;
  eventsDuplicated: number;
}

const partitioner = Partitioners.DefaultPartitioner();
const partitionMetadata = Array.from({ length: PARTITIONS }, (_, i) => ({
  partitionErrorCode: 0,
  partitionId: i,
  leader: 1,
  replicas: [1],
  isr: [1],
}));
/** The partition the producer (kafkajs' default partitioner, as the gateway uses) puts a shop on. */
export const partitionOf = (shop: string): number => partitioner({ topic: 'x', partitionMetadata, message: { key: shop, value: null } });

export { BASE_AVAILABLE, post } from './client.ts';

export async function makeCtx(name: string, suite: Suite): Promise<Ctx> {
  const dir = join(suite.runDir, name);
  const stack = await createStack(name, suite.template, suite.broker.brokers, dir, suite.broker.replication);
  const t0 = Date.now();
  const timeline: string[] = [];
  const note = (msg: string) => {
    const line = `+${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s ${msg}`;
    timeline.push(line);
    appendFileSync(join(dir, 'timeline.log'), `${line}\n`);
    if (process.env['FAULTS_VERBOSE']) process.stderr.write(`  [${name}] ${line}\n`);
  };
  const host = serviceHost(dir, note);
  const ctx: Ctx = {
    name,
    dir,
    stack,
    host,
    suite,
    note,
    timeline,
    t0,
    groupId: stack.groupId,
    gateway: (n) => host.create('gateway', n, stack.env),
    projector: (n) => host.create('projector', n, stack.env),
    shopNames: (n = PARTITIONS, onPartition?: number) => {
      const names: string[] = [];
      const used = new Set<number>();
      for (let i = 0; names.length < n && i < 100_000; i++) {
        const shop = `s${i}-${stack.id}.faults.example`;
        const p = partitionOf(shop);
        if (onPartition !== undefined ? p !== onPartition : used.has(p)) continue;
        used.add(p);
        names.push(shop);
      }
      return names;
    },
    setupShops: async (via, names) => {
      const shops = await setupShops(via.port, names);
      note(`${shops.length} shops set up (partitions ${shops.map((s) => partitionOf(s.shop)).join(',')})`);
      return shops;
    },
    newLoad: (shops, targets, o = {}) =>
      createLoad({ tag: `${stack.id}`, shops, targets: targets.map(toTarget), ratePerSec: Number(process.env['FAULTS_RATE'] ?? 20), ...o }),
  };
  return ctx;
}

export const toTarget = (s: Service): Target => ({ name: s.name, port: s.port });

const GOOD_LATENCY_MS = 2000;

const isBad = (r: Sent, ignoreConnErrors: boolean, now: number): boolean => {
  if (r.endAt === null) return now - r.sentAt > GOOD_LATENCY_MS; // still waiting: already too slow
  if (ignoreConnErrors && r.error && !r.error.startsWith('timeout')) return false;
  // an async request's good answer is its immediate 202
  return !(r.status === (r.kind === 'async' ? 202 : 200) && r.endAt - r.sentAt <= GOOD_LATENCY_MS);
};

/**
 * Recovery: from `reference` until the first answer after which every write was answered 200
 * within 2 s. Null when that never held for the last `confirmMs` of the load.
 */
export function measureRecovery(
  records: Sent[],
  reference: number,
  ignoreConnErrors: boolean,
  loadEnd: number,
  confirmMs = 3000,
): { seconds: number | null; lastBad: Sent | null } {
  const after = records.filter((r) => r.kind !== 'get' && r.sentAt >= reference);
  let lastBad: Sent | null = null;
  for (const r of after) if (isBad(r, ignoreConnErrors, loadEnd) && (!lastBad || r.sentAt > lastBad.sentAt)) lastBad = r;
  const from = lastBad ? lastBad.sentAt : reference;
  const firstGood = after
    .filter((r) => r.sentAt > from && !isBad(r, ignoreConnErrors, loadEnd) && !r.error)
    .sort((a, b) => a.sentAt - b.sentAt)[0];
  if (!firstGood || firstGood.endAt === null || (lastBad && lastBad.sentAt > loadEnd - confirmMs)) return { seconds: null, lastBad };
  return { seconds: lastBad ? Math.max(0, firstGood.sentAt - reference) / 1000 : 0, lastBad };
}

/**
 * Keeps the load running until recovery is confirmed for `confirmMs` (at least minMs, at most
 * maxMs after reference). Answers the recovery time in seconds, or null.
 */
export async function runUntilRecovered(
  ctx: Ctx,
  load: Load,
  reference: number,
  o: { minMs: number; maxMs: number; ignoreConnErrors?: boolean; confirmMs?: number },
): Promise<number | null> {
  const confirm = o.confirmMs ?? 4000;
  for (;;) {
    const now = Date.now();
    if (now - reference >= o.minMs) {
      const r = measureRecovery(load.records, reference, o.ignoreConnErrors ?? false, now, confirm);
      if (r.seconds !== null) {
        ctx.note(`recovered ${r.seconds.toFixed(1)} s after the reference point (every write since answered 200 within 2 s)`);
        return r.seconds;
      }
    }
    if (now - reference >= o.maxMs) {
      const r = measureRecovery(load.records, reference, o.ignoreConnErrors ?? false, now, confirm);
      ctx.note(
        `NOT recovered ${(o.maxMs / 1000).toFixed(0)} s after the reference point; last bad write: ${r.lastBad ? `#${r.lastBad.seq} ${r.lastBad.error ?? r.lastBad.status}` : 'none'}`,
      );
      return null;
    }
    await sleep(500);
  }
}

export async function finish(ctx: Ctx, o: Outcome): Promise<Result> {
  const started = ctx.t0;
  const failures = [...(o.failures ?? [])];
  const info = [...(o.info ?? [])];
  let loadEnd = Date.now();
  if (o.load) {
    await o.load.stop();
    loadEnd = Date.now();
    if (o.load.droppedByClient() > 0) info.push(`${o.load.droppedByClient()} requests not sent: the client's in-flight cap was reached`);
  }
  ctx.note('load stopped; waiting for quiescence');
  const q = await waitQuiescent(ctx.stack, ctx.groupId, 75_000);
  ctx.note(`quiescence ${q.ok ? 'reached' : 'NOT reached'} after ${(q.ms / 1000).toFixed(1)} s (${q.detail})`);
  if (!q.ok) failures.push(`no quiescence within 75 s: ${q.detail}`);
  const records = [...(o.load?.records ?? []), ...(o.extraRecords ?? [])];
  writeFileSync(
    join(ctx.dir, 'requests.jsonl'),
    records
      .map((r) =>
        JSON.stringify({
          ...r,
          sentAt: `+${((r.sentAt - ctx.t0) / 1000).toFixed(3)}s`,
          ms: r.endAt === null ? null : r.endAt - r.sentAt,
          endAt: undefined,
        }),
      )
      .join('\n') + '\n',
  );
  const v: Verdict = await verify(ctx.stack, records, o.shops, {
    finalGet: (id) => getCommand(o.gatewayForChecks.port, id),
    connectionErrorsExpected: o.connectionErrorsExpected,
    parkedShops: o.parkedShops ?? [],
  });
  if (o.afterQuiescence) {
    const own = await o
      .afterQuiescence()
      .catch((err: unknown) => ({ failures: [`the scenario's own final check failed: ${String(err)}`], info: [] }));
    failures.push(...own.failures);
    info.push(...own.info);
  }
  let recoveryS: number | null = o.recoveryS ?? null;
  if (o.recoveryS === undefined && o.reference !== null && o.load) {
    const r = measureRecovery(o.load.records, o.reference, o.connectionErrorsExpected, loadEnd);
    recoveryS = r.seconds;
    if (r.lastBad)
      info.push(
        `last slow or failed write after the reference: ${r.lastBad.kind} #${r.lastBad.seq} ${r.lastBad.error ?? r.lastBad.status} after ${(((r.lastBad.endAt ?? loadEnd) - r.lastBad.sentAt) / 1000).toFixed(1)} s`,
      );
  }
  if (o.reference !== null && recoveryS === null)
    failures.push('did not recover: writes were still failing or slow (> 2 s) at the end of the load');
  else if (recoveryS !== null && recoveryS > o.recoveryLimitS)
    failures.push(`recovered too slowly: ${recoveryS.toFixed(1)} s > ${o.recoveryLimitS} s`);
  for (const e of ctx.host.exits)
    if (!e.expected) failures.push(`${e.service} (pid ${e.pid}) died on its own: ${e.signal ?? `exit code ${e.code}`}`);
  await ctx.host.killAll();
  const allFailures = [...failures, ...v.failures];
  const pass = v.lost.length === 0 && v.doubled.length === 0 && allFailures.length === 0;
  await ctx.stack.dispose(!pass);
  return {
    name: ctx.name,
    requests: v.requests,
    accepted: v.accepted,
    unknown: v.unknown,
    lost: v.lost.length,
    doubled: v.doubled.length,
    fiveXX: v.fiveXX,
    status503: v.status503,
    status503WithRetryAfter: v.status503WithRetryAfter,
    recoveryS,
    recoveryLimitS: o.recoveryLimitS,
    pass,
    failures: [...v.lost.map((l) => `LOST ${l}`), ...v.doubled.map((d) => `DOUBLED ${d}`), ...allFailures],
    info: [...info, ...v.info],
    seconds: (Date.now() - started) / 1000,
    logDir: ctx.dir,
    database: ctx.stack.dbName,
    eventsDuplicated: v.eventsDuplicated,
  };
}
