import { Counter, Gauge, Histogram, type Registry } from '@ingest/runtime';

/**
 * How far behind the projector is, in seconds, per partition this member consumes (README
 * "Operations"). While commands of the partition wait (a batch is being applied, or the last batch
 * ended with offsets left to read), the lag is the time since the newest command it has applied was
 * accepted (its received_at), or since the batch that ended a caught-up spell arrived if that is
 * later: no command still waiting was accepted before that moment, so this bounds the age of the
 * oldest waiting command from above (to within one fetch), and grows by one second per second while
 * the projector is stuck. A caught-up partition reads 0. A partition with a backlog and no batch here for `forgetAfterMs` has moved to another
 * member (kafkajs fetches at once while a backlog remains): its series is dropped.
 */
export class PartitionLag {
  private readonly parts = new Map<
    number,
    { busy: boolean; behind: boolean; lastApplied: number | null; caughtUpAt: number | null; firstSeen: number; lastBatchEnd: number }
  >();

  private readonly now: () => number;
  private readonly forgetAfterMs: number;

  constructor(now: () => number = Date.now, forgetAfterMs = 30_000) {
    this.now = now;
    this.forgetAfterMs = forgetAfterMs;
  }

  batchStarted(partition: number): void {
    const t = this.now();
    const s = this.parts.get(partition);
    if (!s || (!s.busy && t - s.lastBatchEnd > this.forgetAfterMs)) {
      this.parts.set(partition, { busy: true, behind: true, lastApplied: null, caughtUpAt: null, firstSeen: t, lastBatchEnd: t });
      return;
    }
    // Caught up until now: the consumer was waiting on the log, so what this batch brings arrived just now.
    if (!s.behind) s.caughtUpAt = t;
    s.busy = true;
    s.behind = true;
  }

  /** A command of the partition was applied (or parked, or found a duplicate): it was accepted at `receivedAtMs`. */
  applied(partition: number, receivedAtMs: number): void {
    const s = this.parts.get(partition);
    if (s && Number.isFinite(receivedAtMs)) s.lastApplied = Math.max(s.lastApplied ?? receivedAtMs, receivedAtMs);
  }

  /** The batch ended with `offsetLag` commands left on the partition (null: unknown, it failed). */
  batchEnded(partition: number, offsetLag: number | null): void {
    const s = this.parts.get(partition);
    if (!s) return;
    s.busy = false;
    s.lastBatchEnd = this.now();
    s.behind = offsetLag !== 0;
    if (!s.behind) s.caughtUpAt = s.lastBatchEnd;
  }

  /** Seconds behind, per partition, now. */
  seconds(): Map<number, number> {
    const t = this.now();
    const out = new Map<number, number>();
    for (const [p, s] of this.parts) {
      if (!s.busy && !s.behind) {
        out.set(p, 0);
        continue;
      }
      if (!s.busy && t - s.lastBatchEnd > this.forgetAfterMs) {
        this.parts.delete(p);
        continue;
      }
      const since = Math.max(s.lastApplied ?? -Infinity, s.caughtUpAt ?? -Infinity);
      out.set(p, Math.max(0, (t - (since === -Infinity ? s.firstSeen : since)) / 1000));
    }
    return out;
  }

  clear(): void {
    this.parts.clear();
  }
}

/** The projector's own metrics (labels: kind and outcome from closed sets, partition numbers). */
export function projectorMetrics(registry: Registry, lag: PartitionLag = new PartitionLag()) {
  return {
    lag,
    applied: new Counter({
      name: 'projector_commands_total',
      help: 'Commands consumed, by kind and outcome (applied, duplicate, parked, skipped, rejected)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    retries: new Counter({
      name: 'projector_retries_total',
      help: 'Command transactions tried again, by failure class (transient, permanent)',
      labelNames: ['class'],
      registers: [registry],
    }),
    consumerRebuilds: new Counter({
      name: 'projector_consumer_rebuilds_total',
      help: 'Group members rebuilt after a consumer crash kafkajs does not restart from (docs/operations.md#faults-and-outages)',
      registers: [registry],
    }),
    retrying: new Gauge({
      name: 'projector_commands_retrying',
      help: 'Commands being retried now after a failed transaction (a database outage holds them here)',
      registers: [registry],
    }),
    groupSize: new Histogram({
      name: 'projector_group_commands',
      help: 'Commands applied per transaction (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'projector_command_seconds',
      help: 'Time to project one command (one transaction)',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    transaction: new Histogram({
      name: 'projector_transaction_seconds',
      help: "One projector transaction, from its start to its commit: a group of commands, or one command (its retries included); a stall shows here whole, where projector_command_seconds spreads a group's time over its commands",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    lagOffsets: new Gauge({
      name: 'projector_lag_offsets',
      help: 'Commands not yet projected, per partition (after the last batch)',
      labelNames: ['partition'],
      registers: [registry],
    }),
    lagSeconds: new Gauge({
      name: 'projector_lag_seconds',
      help: 'Seconds the projector is behind, per partition: age of the newest applied command while commands wait, 0 when caught up',
      labelNames: ['partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [p, s] of lag.seconds()) this.set({ partition: String(p) }, s);
      },
    }),
  };
}

/**
 * The outbox relay's metrics. The backlog figures are those of the leader's last count (at most
 * every few seconds); a process that does not lead reads 0 for the age and keeps its last count
 * (alerts and panels select the leader with `and on(instance) (relay_leader == 1)`).
 */
export function relayMetrics(registry: Registry, now: () => number = Date.now) {
  let oldest: { ageSeconds: number; at: number } | null = null;
  return {
    published: new Counter({ name: 'relay_events_published_total', help: 'Outbox events published', registers: [registry] }),
    publishSeconds: new Histogram({
      name: 'relay_publish_seconds',
      help: 'Time to publish one slice of outbox records to Kafka (acks=all)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30],
      registers: [registry],
    }),
    pending: new Gauge({ name: 'relay_outbox_pending', help: 'Outbox rows not yet published', registers: [registry] }),
    leader: new Gauge({ name: 'relay_leader', help: '1 while this process publishes the outbox', registers: [registry] }),
    oldestSeconds: new Gauge({
      name: 'relay_outbox_oldest_seconds',
      help: 'Age of the oldest outbox row not yet published (0 when none, or when this process does not lead)',
      registers: [registry],
      collect() {
        this.set(oldest ? oldest.ageSeconds + (now() - oldest.at) / 1000 : 0);
      },
    }),
    /** The leader's count: the oldest unpublished row was `ageSeconds` old (null: none, or lead lost). */
    setOldest(ageSeconds: number | null): void {
      oldest = ageSeconds === null ? null : { ageSeconds, at: now() };
    },
  };
}

export function prunerMetrics(registry: Registry) {
  return {
    deleted: new Counter({
      name: 'prune_rows_deleted_total',
      help: 'Rows deleted by retention, per table',
      labelNames: ['table'],
      registers: [registry],
    }),
    seconds: new Histogram({
      name: 'prune_round_seconds',
      help: 'Duration of one pruning round',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: [registry],
    }),
    parkedOpen: new Gauge({ name: 'projector_parked_open', help: 'Parked commands waiting for an operator', registers: [registry] }),
  };
}

/** Table upkeep (VACUUM / ANALYZE where autovacuum does not run): what was done, and dead rows per table. */
export function upkeepMetrics(registry: Registry) {
  const done = new Counter({
    name: 'table_upkeep_total',
    help: 'VACUUM / ANALYZE run by the service, per table and action',
    labelNames: ['table', 'action'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'table_upkeep_seconds',
    help: 'Duration of one VACUUM / ANALYZE of one table',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  const dead = new Gauge({
    name: 'table_dead_rows',
    help: 'Dead rows per table (pg_stat_user_tables.n_dead_tup), read by the process that does the upkeep',
    labelNames: ['table'],
    registers: [registry],
  });
  const live = new Gauge({
    name: 'table_live_rows',
    help: 'Live rows per table (pg_stat_user_tables.n_live_tup), read by the process that does the upkeep',
    labelNames: ['table'],
    registers: [registry],
  });
  return {
    onAction: (table: string, action: string, s: number) => {
      done.inc({ table, action });
      seconds.observe(s);
    },
    onLook: (rows: Map<string, { dead: number; live: number }>) => {
      for (const [table, n] of rows) {
        dead.set({ table }, n.dead);
        live.set({ table }, n.live);
      }
    },
  };
}
