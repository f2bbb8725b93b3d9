// After the load: wait until everything appended is projected and published, then compare each
// request's answer with the database. Lost = an accepted request (200/202) whose effect is missing;
// doubled = an effect present more than once (any request, answered or not).
import type { Stack } from './infra.ts';
import { INGEST_SECRET, type Sent, type Shop } from './load.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Quiescence {
  ok: boolean;
  ms: number;
  detail: string;
}

/** Every partition's committed group offset reached its end, and the outbox has nothing unpublished. */
export async function waitQuiescent(stack: Stack, groupId: string, timeoutMs: number): Promise<Quiescence> {
  const t0 = Date.now();
  const admin = stack.kafka.admin();
  let detail = '';
  try {
    await admin.connect();
    for (;;) {
      try {
        const [ends, committed, outbox] = await Promise.all([
          admin.fetchTopicOffsets(stack.topics.commands),
          admin.fetchOffsets({ groupId, topics: [stack.topics.commands] }),
          stack.db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_runtime.outbox WHERE published_at IS NULL'),
        ]);
        const done = new Map((committed[0]?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
        const behind = ends.filter((e) => Number(e.high) > 0 && (done.get(e.partition) ?? -1) < Number(e.high));
        const unpublished = outbox.rows[0]?.n ?? 0;
        detail = `${behind.length ? `partitions behind: ${behind.map((e) => `p${e.partition} ${done.get(e.partition) ?? -1}/${e.high}`).join(', ')}` : 'log projected'}; outbox unpublished ${unpublished}`;
        if (behind.length === 0 && unpublished === 0) return { ok: true, ms: Date.now() - t0, detail };
      } catch (err) {
        detail = `not measurable: ${err instanceof Error ? err.message : String(err)}`;
      }
      if (Date.now() - t0 > timeoutMs) return { ok: false, ms: Date.now() - t0, detail };
      await sleep(500);
    }
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * Reads topics from the beginning to their ends as they are now, handing each message's parsed JSON
 * value (null when it does not parse) to `onMessage`. It gives up only after `stallMs` without a
 * message: an hour-long soak's audit topic takes longer than any fixed deadline to read, while a read
 * that stopped moving is soon found out. `complete`: every partition was read to its end.
 */
export async function readTopicsToEnd(
  stack: Stack,
  topics: string[],
  stallMs: number,
  onMessage: (m: { topic: string; partition: number; value: unknown }) => void,
): Promise<{ complete: boolean }> {
  const admin = stack.kafka.admin();
  await admin.connect();
  const want = new Map<string, number>();
  try {
    for (const topic of topics)
      for (const e of await admin.fetchTopicOffsets(topic))
        if (Number(e.high) > Number(e.low)) want.set(`${topic}/${e.partition}`, Number(e.high) - 1);
  } finally {
    await admin.disconnect().catch(() => {});
  }
  if (want.size === 0) return { complete: true };
  const consumer = stack.kafka.consumer({ groupId: `faults-reader-${stack.id}-${Date.now()}`, sessionTimeout: 10_000 });
  const reached = new Set<string>();
  let lastProgress = Date.now();
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => (done = r));
  await consumer.connect();
  try {
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        let value: unknown = null;
        try {
          value = JSON.parse(message.value?.toString('utf8') ?? 'null');
        } catch {
          value = null;
        }
        onMessage({ topic, partition, value });
        lastProgress = Date.now();
        const key = `${topic}/${partition}`;
        if (Number(message.offset) >= (want.get(key) ?? Infinity)) reached.add(key);
        if (reached.size >= want.size) done();
      },
    });
    const stalled = (async () => {
      while (reached.size < want.size && Date.now() - lastProgress < stallMs) await sleep(Math.min(1_000, stallMs));
    })();
    await Promise.race([finished, stalled]);
    return { complete: reached.size >= want.size };
  } finally {
    await consumer.disconnect().catch(() => {});
  }
}

/** Reads the whole audit topic: how many times each log record (log_id) was published. */
export async function readAuditEvents(stack: Stack, stallMs: number): Promise<{ counts: Map<string, number>; complete: boolean }> {
  const counts = new Map<string, number>();
  const { complete } = await readTopicsToEnd(stack, [stack.topics.audit], stallMs, ({ value }) => {
    const logId = (value as { log_id?: unknown } | null)?.log_id;
    const key = typeof logId === 'string' && logId ? logId : value === null ? '<unparseable>' : null;
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  });
  return { counts, complete };
}

export interface Verdict {
  requests: number;
  accepted: number;
  unknown: number;
  lost: string[];
  doubled: string[];
  /** Wrong answers that are neither lost nor doubled: a 5xx other than 503, 503 without Retry-After, … */
  failures: string[];
  info: string[];
  fiveXX: number;
  status503: number;
  status503WithRetryAfter: number;
  eventsMissing: number;
  eventsDuplicated: number;
}

const short = (r: Sent): string =>
  `#${r.seq} ${r.kind} ${r.shop} via ${r.gateway} sent ${new Date(r.sentAt).toISOString().slice(11, 23)} -> ${r.error ?? r.status} ${r.error ? '' : r.text.slice(0, 160)}`;

const isAccepted = (r: Sent) => r.status === 200 || r.status === 202;

/**
 * Compares every request with the database. `finalGet` asks a live gateway for a command's
 * stored answer (202'd commands must end as a stored result, never 404).
 */
export async function verify(
  stack: Stack,
  records: Sent[],
  shops: Shop[],
  opts: {
    finalGet: (commandId: string) => Promise<{ status: number; body: any }>;
    /** Connection errors are expected (a gateway was killed): counted as unknown, not failures. */
    connectionErrorsExpected: boolean;
    /** Shops whose commands are meant to stay parked (the poison scenario checks them itself). */
    parkedShops?: string[];
    checkEvents?: boolean;
  },
): Promise<Verdict> {
  const v: Verdict = {
    requests: records.length,
    accepted: 0,
    unknown: 0,
    lost: [],
    doubled: [],
    failures: [],
    info: [],
    fiveXX: 0,
    status503: 0,
    status503WithRetryAfter: 0,
    eventsMissing: 0,
    eventsDuplicated: 0,
  };
  const shopNames = shops.map((s) => s.shop);
  const parkedShops = new Set(opts.parkedShops ?? []);

  // Answers.
  for (const r of records) {
    if (isAccepted(r) && r.kind !== 'get') v.accepted += 1;
    if (r.error) {
      v.unknown += 1;
      if (r.error.startsWith('timeout')) v.failures.push(`no answer (hung): ${short(r)}`);
      else if (!opts.connectionErrorsExpected) v.failures.push(`connection error with no gateway killed: ${short(r)}`);
    }
    if (r.status !== null && r.status >= 500) {
      if (r.status === 503) {
        v.status503 += 1;
        if (r.retryAfter) v.status503WithRetryAfter += 1;
        else v.failures.push(`503 without Retry-After: ${short(r)}`);
      } else {
        v.fiveXX += 1;
        v.failures.push(`${r.status}: ${short(r)}`);
      }
    }
    if (r.kind === 'get' && r.status === 404) v.failures.push(`accepted command answered 404 (GET ${r.commandId}): ${short(r)}`);
    if (r.status !== null && r.status >= 400 && r.status < 500 && r.status !== 404) v.failures.push(`unexpected ${r.status}: ${short(r)}`);
  }

  // Products: one `created` record and nothing else per unique barcode.
  const logs = await stack.db.query<{ barcode: string; created: number; total: number }>(
    `SELECT barcode, count(*) FILTER (WHERE change_type = 'created')::int AS created, count(*)::int AS total
       FROM public.product_update_logs WHERE shop = ANY($1) GROUP BY barcode`,
    [shopNames],
  );
  const logByBarcode = new Map(logs.rows.map((r) => [r.barcode, r]));
  const products = await stack.db.query<{ barcode: string }>('SELECT barcode FROM public.products WHERE shop = ANY($1)', [shopNames]);
  const productSet = new Set(products.rows.map((r) => r.barcode));
  // Inventory deltas: one log record per idempotency key.
  const deltaLogs = await stack.db.query<{ key: string; n: number }>(
    `SELECT idempotency_key AS key, count(*)::int AS n FROM sot.inventory_update_logs
      WHERE shop = ANY($1) AND change_type = 'available_delta' GROUP BY idempotency_key`,
    [shopNames],
  );
  const deltaByKey = new Map(deltaLogs.rows.map((r) => [r.key, r.n]));

  let appliedAfter503 = 0;
  let unknownApplied = 0;
  const sumApplied = new Map<string, number>();
  for (const r of records) {
    if (r.kind === 'get') continue;
    if (parkedShops.has(r.shop)) continue;
    let present: boolean;
    if (r.kind === 'delta') {
      const n = deltaByKey.get(r.key!) ?? 0;
      present = n > 0;
      if (n > 1) v.doubled.push(`delta key ${r.key} applied ${n} times: ${short(r)}`);
      if (present) sumApplied.set(r.shop, (sumApplied.get(r.shop) ?? 0) + r.delta);
      if (r.status === 200 && !(r.body?.lines_updated === 1 && r.body?.lines_deduped === 0))
        v.failures.push(`delta answered 200 but not as one fresh update: ${short(r)}`);
    } else {
      const states = r.barcodes.map((b) => ({ b, log: logByBarcode.get(b), product: productSet.has(b) }));
      const have = states.filter((s) => s.product && (s.log?.created ?? 0) > 0);
      present = have.length > 0;
      for (const s of states)
        if ((s.log?.created ?? 0) > 1 || (s.log?.total ?? 0) > 1)
          v.doubled.push(`barcode ${s.b}: ${s.log?.created} created / ${s.log?.total} log records: ${short(r)}`);
      if (have.length > 0 && have.length < states.length) v.failures.push(`torn command (some barcodes applied, not all): ${short(r)}`);
      if (r.status === 200 && r.body?.created !== r.barcodes.length)
        v.failures.push(`products answered 200 with created=${r.body?.created}, expected ${r.barcodes.length}: ${short(r)}`);
    }
    if (isAccepted(r) && !present) v.lost.push(short(r));
    if (!isAccepted(r) && present) {
      if (r.error) unknownApplied += 1;
      else if (r.status === 503) {
        // A 503 tells the client to send it again: applied as well, a keyless delta would double.
        appliedAfter503 += 1;
        v.failures.push(`answered 503 (retry) but applied: ${short(r)}`);
      } else {
        v.failures.push(`refused (${r.status}) but applied: ${short(r)}`);
      }
    }
  }
  if (unknownApplied) v.info.push(`${unknownApplied} of ${v.unknown} unanswered requests were applied (once)`);
  if (appliedAfter503) v.info.push(`${appliedAfter503} requests answered 503 were applied anyway`);

  // Every delta key the database holds must be one we sent (no phantom writes), and each level
  // must equal its base plus the deltas applied.
  const ourKeys = new Set(records.filter((r) => r.key).map((r) => r.key!));
  for (const k of deltaByKey.keys()) if (!ourKeys.has(k)) v.failures.push(`unknown idempotency key in the logs: ${k}`);
  const levels = await stack.db.query<{ shop: string; available_qty: number }>(
    `SELECT shop, available_qty FROM sot.inventory_levels WHERE shop = ANY($1) AND barcode = 'INV'`,
    [shopNames],
  );
  for (const s of shops) {
    if (parkedShops.has(s.shop)) continue;
    const got = levels.rows.find((l) => l.shop === s.shop)?.available_qty;
    const want = s.base + (sumApplied.get(s.shop) ?? 0);
    if (got === undefined) v.lost.push(`level of ${s.shop} missing`);
    else if (got > want)
      v.doubled.push(`level of ${s.shop}: available ${got}, expected ${want} (base ${s.base} + applied deltas): ${got - want} too much`);
    else if (got < want) v.lost.push(`level of ${s.shop}: available ${got}, expected ${want}: ${want - got} missing`);
  }

  // 202'd commands end as a stored result (never 404, never pending for ever).
  const ids = [
    ...new Set(
      records.filter((r) => r.kind !== 'get' && r.status === 202 && r.commandId && !parkedShops.has(r.shop)).map((r) => r.commandId!),
    ),
  ];
  let finals = 0;
  const pollUntil = Date.now() + 60_000;
  for (const id of ids.slice(0, 400)) {
    if (Date.now() > pollUntil) {
      v.failures.push(`polling the 202'd commands took over 60 s; ${ids.length - finals} not checked`);
      break;
    }
    const g = await opts.finalGet(id).catch((err: unknown) => ({ status: 0, body: String(err) }));
    finals += 1;
    if (g.status === 200) continue;
    if (g.status === 404) v.failures.push(`accepted (202) command ${id} answered 404 after quiescence`);
    else if (g.status === 202) v.lost.push(`202'd command ${id} still ${g.body?.status ?? 'pending'} after quiescence`);
    else v.failures.push(`202'd command ${id} answered ${g.status} after quiescence: ${JSON.stringify(g.body).slice(0, 200)}`);
  }
  if (ids.length) v.info.push(`${finals} command(s) answered 202 polled after quiescence`);

  // Commands parked where nothing should be (a transient failure parked is a bug).
  const parked = await stack.db.query<{ command_id: string; shop: string; error: string }>(
    'SELECT command_id, shop, error FROM agent_runtime.parked_commands WHERE resolved_at IS NULL AND NOT (shop = ANY($1))',
    [[...parkedShops]],
  );
  for (const p of parked.rows) v.failures.push(`command ${p.command_id} of ${p.shop} parked: ${p.error}`);

  // Audit events: every log record published at least once (D5 allows duplicates).
  if (opts.checkEvents !== false) {
    const { rows: logIds } = await stack.db.query<{ log_id: string }>(
      `SELECT log_id::text FROM public.product_update_logs WHERE shop = ANY($1)
        UNION ALL SELECT log_id::text FROM sot.inventory_update_logs WHERE shop = ANY($1)`,
      [shopNames],
    );
    const events = await readAuditEvents(stack, 30_000);
    if (!events.complete) v.failures.push('the read of the audit topic made no progress for 30 s before its end');
    const missing = logIds.filter((l) => !events.counts.has(l.log_id));
    v.eventsMissing = missing.length;
    v.eventsDuplicated = [...events.counts.values()].reduce((s, n) => s + Math.max(0, n - 1), 0);
    if (missing.length)
      v.failures.push(
        `${missing.length} audit event(s) never published, e.g. log_id ${missing
          .slice(0, 5)
          .map((m) => m.log_id)
          .join(', ')}`,
      );
    v.info.push(
      `audit events: ${logIds.length} log records, ${[...events.counts.values()].reduce((s, n) => s + n, 0)} events read, ${v.eventsDuplicated} duplicate(s)`,
    );
  }
  return v;
}

/** GET /api/commands/{id} on a gateway. */
export async function getCommand(port: number, id: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/commands/${id}`, {
    headers: { 'x-ingest-secret': INGEST_SECRET },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* plain text */
  }
  return { status: res.status, body };
}
