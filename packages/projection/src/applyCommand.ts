import { outbox, parkedCommands, processedCommands, type CommandPosition, type PoolClient } from '@ingest/db';
import type { Command, LocationRef, OutboxEvent } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { injectTraceHeaders } from '@ingest/runtime';
import { projectDailySnapshot } from './inventory/projectDailySnapshot.ts';
import { projectInventory, refsOf } from './inventory/projectInventory.ts';
import { projectSnapshotRun, snapshotRunFrom } from './inventory/snapshot/index.ts';
import { loadLocationMatchesOf } from './inventory/store/index.ts';
import type { Projection } from './projection.ts';
import { projectOrderLines } from './orders/projectOrderLines.ts';
import { projectProductsUpsert } from './products/projectProductsUpsert.ts';
import { projectRegisterChannels, projectRegisterLocations } from './registry/projectRegistry.ts';

export type { Projection } from './projection.ts';

export type ApplyOutcome = 'applied' | 'duplicate' | 'parked';

export interface ApplyOptions {
  /**
   * Outbox rows (D5) and the stored reply (D6): live only; a replay's were published and answered
   * live (D26). `recordHeaders`: the command's Kafka record headers, whose trace context its
   * events carry when tracing is off here (eventTraceHeaders).
   */
  sideEffects: { topics: TopicNames; recordHeaders?: Record<string, string> } | null;
  /** The live consumer moves its partition's position in the same transaction (docs/operations.md#retention). */
  checkpoint?: boolean;
  /** Live: a command of a shop with a parked command is parked behind it (D2), with its message. */
  parkBehind?: { message: Buffer } | null;
}

/**
 * One command inside a transaction: claim (D4), position, lock its shop, and either park it behind
 * the shop's parked command or project it, with its outbox rows and stored reply. The claim comes
 * first: an in-place rebuild's swap locks the claims table to find no live transaction half way.
 */
export async function applyCommand(tx: PoolClient, c: Command, at: CommandPosition, opts: ApplyOptions): Promise<ApplyOutcome> {
  if (!(await processedCommands.claimAndLock(tx, c, at, opts.checkpoint ?? false))) return 'duplicate';
  if (opts.parkBehind) {
    const blocker = await parkedCommands.firstOpen(tx, c.shop);
    if (blocker) {
      await parkBehind(tx, c, at, opts.parkBehind.message, blocker);
      return 'parked';
    }
  }
  const { reply, events } = await projectCommand(tx, c);
  if (opts.sideEffects) {
    const trace = eventTraceHeaders(opts.sideEffects.recordHeaders);
    await outbox.storeOutcome(tx, c, reply, outboxRows(events, opts.sideEffects.topics, trace));
  }
  return 'applied';
}

/** A command of a group, as applyGroup takes it: where it was read, and its record's headers and bytes. */
export interface GroupCommand {
  c: Command;
  at: CommandPosition;
  /** The record's headers, whose trace context its events carry when tracing is off here. */
  recordHeaders?: Record<string, string>;
  /** The record's value, kept when the command is parked behind its shop's parked command (live only). */
  message?: Buffer;
}

export interface GroupOptions {
  /** As ApplyOptions: outbox rows and stored replies, live only. */
  sideEffects: { topics: TopicNames } | null;
  /** The live consumer moves its partition's position in the same transaction. */
  checkpoint: boolean;
  /** Live: a command of a shop with a parked command is parked behind it (D2). */
  parkBehind: boolean;
}

/**
 * applyCommand for a run of commands of one partition in one transaction, with what each command
 * did one by one in a few statements for the whole run: the claims, position and shop locks
 * (processedCommands.claimGroup), the shops' parked commands (parkedCommands.firstOpenOf, read
 * after the locks, as applyCommand does), the inventory commands' locations (loadLocationMatchesOf),
 * runs of small snapshots in one statement each (snapshotRunFrom, projectSnapshotRun) and at the end
 * every stored reply and outbox row (outbox.storeOutcomes). Each command is projected in log order
 * in between, inside `each` (its span and log context; a run is written inside its first command's,
 * and its other snapshots, each still after every earlier command of its shop, ahead of their turn). The outcomes are applyCommand's, command by command (applyGroup.int.test.ts); a
 * failure anywhere leaves the transaction to be rolled back.
 */
export async function applyGroup(
  tx: PoolClient,
  group: readonly GroupCommand[],
  opts: GroupOptions,
  each: (i: number, fn: () => Promise<ApplyOutcome>) => Promise<ApplyOutcome> = (_i, fn) => fn(),
): Promise<ApplyOutcome[]> {
  const first = group[0];
  if (!first) return [];
  const claims = group.map((g) => ({ c: g.c, offset: g.at.offset }));
  const go = await processedCommands.claimGroup(tx, first.at, claims, opts.checkpoint);
  const shops = [...new Set(group.filter((_, i) => go[i]).map((g) => g.c.shop))];
  const blockers = opts.parkBehind ? await parkedCommands.firstOpenOf(tx, shops) : new Map<string, string>();
  const projected = (i: number): boolean => go[i] === true && !blockers.has(group[i]!.c.shop);
  const loaded = await loadGroupLocations(
    tx,
    group.filter((_, i) => projected(i)).map((g) => g.c),
  );
  const commands = group.map((g) => g.c);
  // Projections of the snapshots a run's statement wrote ahead of their turn, by index in the group.
  const ahead = new Map<number, Projection>();
  const stored: outbox.Outcome[] = [];
  const outcomes: ApplyOutcome[] = [];
  for (const [i, { c, at, recordHeaders, message }] of group.entries()) {
    outcomes.push(
      await each(i, async () => {
        if (!go[i]) return 'duplicate';
        const blocker = blockers.get(c.shop);
        if (blocker) {
          await parkBehind(tx, c, at, message ?? Buffer.alloc(0), blocker);
          return 'parked';
        }
        if (!ahead.has(i)) {
          // A snapshot an earlier run wrote is passed over like a duplicate: it must not be written twice.
          const run = snapshotRunFrom(commands, i, (k) => projected(k) && !ahead.has(k), loaded);
          if (run.items.length > 1) {
            const projections = await projectSnapshotRun(tx, run.items);
            run.indexes.forEach((k, j) => ahead.set(k, projections[j]!));
          }
        }
        const { reply, events } = ahead.get(i) ?? (await projectCommand(tx, c, loaded));
        ahead.delete(i);
        // A shop's locations just changed: its later commands of the group load theirs as they come.
        if (c.kind === 'locations.register') loaded.delete(c.shop);
        if (opts.sideEffects)
          stored.push({ c, reply, rows: outboxRows(events, opts.sideEffects.topics, eventTraceHeaders(recordHeaders)) });
        return 'applied';
      }),
    );
  }
  await outbox.storeOutcomes(tx, stored);
  return outcomes;
}

/** Location matches loaded for a group, by shop (applyGroup). */
export type LoadedLocations = ReadonlyMap<string, ReadonlyMap<string, string[]>>;

/** Dispatches a claimed command to its projection; runs inside the command's transaction. */
export async function projectCommand(tx: PoolClient, command: Command, loaded?: LoadedLocations): Promise<Projection> {
  const kind = command.kind;
  switch (kind) {
    case 'products.upsert':
      return projectProductsUpsert(tx, command);
    case 'locations.register':
      return projectRegisterLocations(tx, command);
    case 'channels.register':
      return projectRegisterChannels(tx, command);
    case 'inventory.snapshot':
    case 'inventory.available':
    case 'inventory.levels':
      return projectInventory(tx, command, undefined, loaded?.get(command.shop));
    case 'inventory.daily_snapshot':
      return projectDailySnapshot(tx, command);
    case 'order_lines.upsert':
      return projectOrderLines(tx, command);
    default: {
      const _exhaustive: never = kind;
      throw new Error(`unknown command kind ${String(_exhaustive)}`);
    }
  }
}

/** The location matches of every inventory command of a group, by shop, in at most two statements. */
async function loadGroupLocations(tx: PoolClient, commands: readonly Command[]): Promise<Map<string, Map<string, string[]>>> {
  const refs = new Map<string, LocationRef[]>();
  for (const c of commands) {
    if (c.kind !== 'inventory.snapshot' && c.kind !== 'inventory.available' && c.kind !== 'inventory.levels') continue;
    // Appended in place: a replay batch holds hundreds of commands of a shop.
    const ofShop = refs.get(c.shop) ?? [];
    ofShop.push(...refsOf(c));
    refs.set(c.shop, ofShop);
  }
  return refs.size ? loadLocationMatchesOf(tx, refs) : new Map();
}

/** D2: the command waits behind its shop's parked command; not applied, its claim goes, so that retrying it later applies it. */
async function parkBehind(tx: PoolClient, c: Command, at: CommandPosition, message: Buffer, blocker: string): Promise<void> {
  await processedCommands.unclaim(tx, c.command_id);
  await parkedCommands.park(tx, {
    command_id: c.command_id,
    shop: c.shop,
    kind: c.kind,
    at,
    message,
    error: `waiting behind parked command ${blocker}`,
    attempts: 0,
    behind: blocker,
  });
}

/** Events as outbox rows: each channel goes to its configured topic, with the command's trace context (eventTraceHeaders). */
export function outboxRows(events: OutboxEvent[], topics: TopicNames, trace: Record<string, string> = {}): outbox.OutboxInsert[] {
  const topicOf = { audit: topics.audit, stock_zero: topics.stockZero, stock_restored: topics.stockRestored };
  return events.map((e) => ({
    event_id: e.event_id,
    topic: topicOf[e.channel],
    message_key: e.key,
    headers: { ...e.headers, ...trace },
    payload: e.payload,
    command_id: e.command_id,
    log_table: e.log_table ?? null,
  }));
}

const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The W3C trace context an event of a command carries, so a subscriber continues the trace of the
 * retailer's request (CloudEvents distributed-tracing extension: `traceparent` and `tracestate`,
 * in Kafka binary mode the headers `ce_traceparent` and `ce_tracestate`; also the plain
 * `traceparent`/`tracestate` headers that OpenTelemetry's Kafka instrumentations read).
 * Tracing on: the command's apply span, itself a child of the request's. Tracing off here: the
 * context the command's record came with (the gateway's), passed on as it is. None: no headers.
 */
export function eventTraceHeaders(recordHeaders: Record<string, string> | undefined): Record<string, string> {
  const active: Record<string, string> = {};
  injectTraceHeaders(active);
  const source = active['traceparent'] !== undefined ? active : (recordHeaders ?? {});
  const traceparent = source['traceparent'];
  if (traceparent === undefined || !TRACEPARENT.test(traceparent)) return {};
  const tracestate = source['tracestate'];
  return {
    ce_traceparent: traceparent,
    traceparent,
    ...(tracestate ? { ce_tracestate: tracestate, tracestate } : {}),
  };
}

/**
 * Postgres errors a retry cannot fix: the command's data itself is at fault (22 data exception,
 * 23 integrity, 54 program limit such as an index row too large). A replay skips such a command
 * (it was parked live); the live projector parks it after its bounded retries.
 */
export function isDeterministicDbError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^(22|23|54)/.test(code);
}
