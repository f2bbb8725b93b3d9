// `npm run soak -- --minutes N`: the pipeline as deployed (2 gateways, 2 projectors, a broker or the
// three-broker cluster, PostgreSQL) under a realistic mix at a share of its measured capacity, for N
// minutes; a sample every minute, verdicts at the end (bench/soak/README.md).
import { execSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@ingest/devstack';
import { toTarget } from '../../tests/faults/harness.ts';
import { parseArgs, seconds } from './args.ts';
import { endChecks } from './checks.ts';
import { createClient } from './client.ts';
import { judge } from './judge.ts';
import { quarterAlignedPeriod } from './verdicts.ts';
import { heapSnapshots, measureCapacity, sampler, type Sample } from './measure.ts';
import { writeResults } from './report.ts';
import { MIX, type Kind } from './requests.ts';
import { groupLag } from './sampler.ts';
import { deploy, serviceEnv, startSoakBroker, type SoakSettings } from './stack.ts';
import { createTraffic } from './traffic.ts';

const args = (() => {
  try {
    return parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
})();
const date = new Date().toISOString().slice(0, 16).replace(/:/g, '-');
const runDir = join(REPO_ROOT, '.data', 'soak', date);
const heapDir = join(runDir, 'heap');
mkdirSync(heapDir, { recursive: true });
const t0 = Date.now();
const note = (m: string) => {
  const line = `+${((Date.now() - t0) / 1000).toFixed(0).padStart(5)}s ${m}`;
  appendFileSync(join(runDir, 'timeline.log'), `${line}\n`);
  process.stderr.write(`[soak] ${line}\n`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How often the heap of each process is read between samples (its floor: sampler.ts LowWater). */
const HEAP_POLL_MS = 5_000;
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.on(sig, () => {
    note(`${sig}: stopping (the services die with this process; logs in ${runDir})`);
    process.exit(130);
  });

// Lines a request of the mix carries on average (SHOP_RATE_LINES_PER_S counts lines).
const LINES: Record<Kind, number> = {
  products: 4 / 3,
  async: 4 / 3,
  bulk: 1,
  delta: 1,
  snapshot: 10,
  levels: 10,
  orders: 2,
  dry: 1,
  idem: 2,
};
const linesPerRequest = MIX.reduce((s, k) => s + LINES[k], 0) / MIX.length;

const settings: SoakSettings = {
  retention: args.retention,
  keyTtl: args.retention,
  pruneInterval: '10s',
  dayLength: args.dayLength,
  shopRateLines: 0, // off while the capacity is measured; set when the gateways restart
  heapDir,
};
note(`run dir ${runDir}; ${args.minutes} min on ${args.cluster ? 'three brokers' : 'one broker'}`);
const broker = await startSoakBroker(args.cluster, (m) => note(`kafka: ${m}`));
let exitCode = 1;
try {
  const d = await deploy({ broker, runDir, shops: args.shops, env: serviceEnv(settings), note });
  let loadStart = Date.now();
  const s = sampler(d, broker, () => loadStart);
  // Every accepted write's time and reply ms, for the p99 verdict: two flat arrays of doubles (8 bytes
  // a value), not an array per reply, whose objects an hour's run would keep in the client's heap (spool.ts).
  const replyT: number[] = [];
  const replyMs: number[] = [];
  const call = createClient({
    onAttempt: (a) => {
      s.onAttempt(a);
      if ((a.status === 200 || a.status === 202) && a.endpoint.startsWith('POST')) {
        replyT.push((a.at - loadStart) / 1000);
        replyMs.push(a.ms);
      }
    },
  });
  const traffic = createTraffic({
    tag: `soak${Date.now().toString(36)}`,
    shops: d.shops,
    gateways: d.gateways.map(toTarget),
    call,
    spoolPath: join(runDir, 'sent.ndjson'),
  });

  note(`measuring capacity: 32 clients in a closed loop for ${args.capacityS} s`);
  const measured = await measureCapacity(
    traffic,
    d.shops.length,
    args.capacityS,
    async () => (await groupLag(d.stack.kafka, d.stack.topics.commands, d.stack.groupId)) === 0,
  );
  const capacity = measured.perSecond;
  note(
    `${measured.accepted} requests accepted in the measured ${((args.capacityS * 2) / 3).toFixed(0)} s, all applied ${measured.drainSeconds.toFixed(1)} s after the loop`,
  );
  const rate = capacity * args.fraction;
  // 6x its share: a shop at 10x runs into it once its bucket (10 s of budget) is spent, and gets 429s
  // on purpose for part of each burst; its client retries them after Retry-After.
  const shopRateLines = Math.ceil(6 * (rate / d.shops.length) * linesPerRequest);
  note(
    `capacity ${capacity.toFixed(1)} requests/s; the soak runs ${rate.toFixed(1)}/s; a shop's budget ${shopRateLines} lines/s (6x its share)`,
  );
  for (const g of d.gateways) {
    await g.stop();
    await g.start({ SHOP_RATE_LINES_PER_S: String(shopRateLines), SHOP_BURST_LINES: String(shopRateLines * 10) }, 60_000);
  }
  await traffic.stop(); // the capacity phase's polls
  await s.take();

  const heap = heapSnapshots(d, note);
  const durationS = args.minutes * 60;
  const burstEveryS = quarterAlignedPeriod(durationS, args.burstEveryS);
  loadStart = Date.now();
  traffic.start(rate, { everyS: burstEveryS, lengthS: 30, factor: 10 });
  const samples: Sample[] = [];
  let nextHeap = args.heapSnapshotEveryMin ? args.heapSnapshotEveryMin * 60 : Infinity;
  for (let k = 1; k * args.sampleEveryS <= durationS; k++) {
    const due = loadStart + k * args.sampleEveryS * 1000;
    while (Date.now() < due - HEAP_POLL_MS) {
      await sleep(HEAP_POLL_MS);
      await s.poll();
    }
    await sleep(Math.max(0, due - Date.now()));
    const sample = await s.take();
    samples.push(sample);
    const gw = Object.values(sample.processes)
      .map((p) => p.rss_mb?.toFixed(0))
      .join('/');
    note(
      `minute ${(sample.t / 60).toFixed(1)}: RSS ${gw} MB, lag ${sample.lag_offsets}, outbox ${sample.outbox_unpublished}, 429 ${sample.window.status_429}, 202 ${sample.window.status_202}`,
    );
    if (sample.t >= nextHeap) {
      heap.take(`every ${args.heapSnapshotEveryMin} min`);
      nextHeap += args.heapSnapshotEveryMin! * 60;
    }
  }
  const minutesRun = (Date.now() - loadStart) / 60_000;
  note('load stopped; waiting for the pipeline to be quiescent, then checking');
  await traffic.stop();
  const end = await endChecks(d, traffic, runDir, heap.taken() > 0);
  const final = await s.take();
  samples.push(final);
  const verdicts = judge({
    samples,
    replies: replyT.map((t, i): [number, number] => [t, replyMs[i]!]),
    durationS: Math.min(durationS, minutesRun * 60),
    retentionPassedAtS: seconds(args.retention) + 10,
    end,
    projectors: d.projectors.map((p) => p.name),
  });
  const pass = verdicts.every((v) => v.pass);
  if (!pass) {
    const leaking = verdicts
      .filter((v) => !v.pass && / growth of /.test(v.name))
      .map((v) => v.name.split(' growth of ')[1]!.split(' ')[0]!);
    heap.take('a verdict failed', leaking.length ? leaking : undefined);
  }
  if (args.heapSnapshotEveryMin || !pass) await heap.wait();
  const result = {
    date,
    commit: `${execSync('git rev-parse --short HEAD', { cwd: REPO_ROOT }).toString().trim()}${execSync('git status --porcelain --untracked-files=no', { cwd: REPO_ROOT }).toString().trim() ? '+uncommitted changes' : ''}`,
    minutes_planned: args.minutes,
    minutes_run: minutesRun,
    cluster: args.cluster,
    capacity_per_s: capacity,
    fraction: args.fraction,
    rate_per_s: rate,
    shop_rate_lines_per_s: shopRateLines,
    settings: {
      ...serviceEnv({ ...settings, shopRateLines, heapDir: null }),
      burst: `one shop at 10x for 30 s every ${burstEveryS.toFixed(1)} s (asked ${args.burstEveryS} s, fitted to the quarters)`,
      shops: String(args.shops),
    },
    machine: { cpus: cpus().length, note: 'shared with other agents' },
    requests: { ...traffic.counts, checked_writes: traffic.sent.length },
    verdicts,
    pass,
    end,
    heap_snapshots: existsSync(heapDir) ? readdirSync(heapDir).map((f) => join(heapDir, f)) : [],
    run_dir: runDir,
    samples,
  };
  const files = await writeResults(args.resultsDir ?? join(REPO_ROOT, 'bench', 'results'), result);
  for (const v of verdicts) note(`${v.pass ? 'pass' : 'FAIL'}  ${v.name}: ${v.detail}`);
  note(`results: ${files.json}, ${files.md}, ${files.svg}`);
  exitCode = pass ? 0 : 1;
  await d.dispose();
} catch (err) {
  note(`the soak itself failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  await broker.stop().catch(() => {});
}
process.exit(exitCode);
