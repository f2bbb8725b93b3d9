import { withTransaction, type Pool } from '@ingest/db';
import type { Command } from '@ingest/domain';
import { commandContextOf, withIncomingCommand, type IncomingMessage, type TopicNames } from '@ingest/kafka';
import { applyGroup, type ApplyOutcome, type CommandRun } from '@ingest/projection';
import { failpoint, inSpan, spanContextOf, tracingOn, type Link, type Logger } from '@ingest/runtime';
import type { projectorMetrics } from './metrics.ts';

export interface GroupCommitDeps {
  pool: Pool;
  topics: TopicNames;
  log: Logger;
  metrics: Pick<ReturnType<typeof projectorMetrics>, 'applied' | 'groupSize' | 'duration' | 'transaction' | 'lag'>;
  /** The most commands in one transaction (1 turns group commit off). */
  maxCommands: number;
  /** The most message bytes in one transaction. */
  maxBytes: number;
}

/**
 * Group commit: the longest run of decodable commands from `from`, within the bounds,
 * applied in ONE transaction (applyGroup: each with its own claim, result and outbox rows, in log
 * order, so D2 and D4 hold as one by one, with the bookkeeping of the whole run in three statements). Replies go out on commit (NOTIFY is transactional);
 * offsets are resolved after it. Returns how many messages it handled: 0 when there is no group
 * to make, or when the group's transaction failed, in which case nothing of it was applied and the
 * caller takes the commands one by one, with their retries and parking.
 */
export function groupCommit(deps: GroupCommitDeps): (run: CommandRun, from: number) => Promise<number> {
  const { pool, log, maxCommands, maxBytes } = deps;
  const { applied, groupSize, duration, transaction, lag } = deps.metrics;
  // After a group failed, its commands go one by one (with their retries and parking), not regrouped.
  const singleUntil = new Map<number, number>();

  return async (run, from) => {
    const { messages } = run;
    const first = messages[from];
    if (maxCommands < 2 || messages.length - from < 2 || !first || Number(first.offset) <= (singleUntil.get(first.partition) ?? -1))
      return 0;
    const group: Array<{ m: IncomingMessage; c: Command }> = [];
    let bytes = 0;
    for (let i = from; i < messages.length && group.length < maxCommands; i++) {
      const m = run.message(i);
      bytes += m.value?.length ?? 0;
      if (group.length > 0 && bytes > maxBytes) break;
      const decoded = run.decoded(i);
      if (!decoded.ok) break;
      group.push({ m, c: decoded.command });
    }
    if (group.length < 2) return 0;
    const started = performance.now();
    let outcomes: ApplyOutcome[];
    try {
      await failpoint('projector.before-apply');
      // Tracing: one `apply group` span for the transaction, linked to every command's
      // request; each command keeps its own `apply <kind>` span in its request's trace, linked back.
      const links: Link[] = tracingOn()
        ? group.flatMap(({ m }) => {
            const sc = spanContextOf(commandContextOf(m).trace);
            return sc ? [{ context: sc }] : [];
          })
        : [];
      outcomes = await inSpan('apply group', { links, attributes: { 'ingest.group_commands': group.length } }, (groupSpan) =>
        withTransaction(pool, (tx) => {
          const inGroup = groupSpan ? { links: [{ context: groupSpan.spanContext() }] } : {};
          return applyGroup(
            tx,
            group.map(({ m, c }) => ({
              c,
              at: { topic: m.topic, partition: m.partition, offset: m.offset },
              recordHeaders: m.headers,
              message: m.value ?? Buffer.alloc(0),
            })),
            { sideEffects: { topics: deps.topics }, checkpoint: true, parkBehind: true },
            (i, apply) => {
              const { m, c } = group[i] as { m: IncomingMessage; c: Command };
              return withIncomingCommand(
                m,
                `apply ${c.kind}`,
                { ...inGroup, attributes: { 'ingest.command_id': c.command_id, 'ingest.group_commands': group.length } },
                async () => {
                  const outcome = await apply();
                  log.debug(
                    {
                      command_id: c.command_id,
                      kind: c.kind,
                      outcome,
                      group: group.length,
                      topic: m.topic,
                      partition: m.partition,
                      offset: m.offset,
                    },
                    'command projected (commits with its group)',
                  );
                  return outcome;
                },
              );
            },
          );
        }),
      );
    } catch (err) {
      log.debug({ err, commands: group.length }, 'group transaction failed; applying its commands one by one');
      singleUntil.set(first.partition, Number(group[group.length - 1]?.m.offset ?? -1));
      return 0;
    }
    const last = group[group.length - 1] as { m: IncomingMessage; c: Command };
    const total = (performance.now() - started) / 1000;
    const each = total / group.length;
    groupSize.observe(group.length);
    transaction.observe(total);
    group.forEach(({ c }, i) => {
      applied.inc({ kind: c.kind, outcome: outcomes[i] });
      duration.observe({ kind: c.kind }, each);
    });
    lag.applied(last.m.partition, Date.parse(last.c.received_at));
    await failpoint('projector.after-commit-before-ack');
    return group.length;
  };
}
