// B1.floor verification: the same commands through the projector (applyCommand) in one database
// and through the floor in an identical one must leave byte-identical rows. Compared by checksum
// (md5 of the rows' text ordered by key), table by table; on a mismatch the differing keys are listed.
import type { Pool, PoolClient } from '@ingest/db';
import type { Command, InventorySnapshotCommand, SnapshotLine } from '@ingest/domain';
import type { TopicNames } from '@ingest/kafka';
import { applyCommand, type CommandPosition } from '@ingest/projection';
import { applyFloor } from './b1-floor.ts';
import {
  availableDeltaCommand,
  dailySnapshotCommand,
  productsUpsertCommand,
  registerLocationsCommand,
  snapshotCommand,
} from './lib/commands.ts';
import { uuidv7 } from './lib/util.ts';

export interface TableCheck {
  table: string;
  rows_projector: number;
  rows_floor: number;
  identical: boolean;
  /** Keys of differing or missing rows (a few), when not identical. */
  differing?: string[];
}

export interface Verification {
  what: string;
  commands: number;
  identical: boolean;
  tables: TableCheck[];
}

/**
 * What is compared: every column the projection writes. Left out, and only these: columns the
 * database fills itself (processed_at, created_at of results and outbox rows: now(); the outbox's
 * identity id, whose order is checked instead, since the rows are compared in id order).
 */
const TABLES = (scope: { locations: boolean }) => {
  const at = scope.locations ? ' AND location_id = ANY($2::uuid[])' : '';
  const t = (name: string, row: string, key: string, where: string, diffKey?: string) => ({
    name,
    from: name.split(' ')[0]!,
    row,
    key,
    where,
    diffKey,
  });
  return [
    t('sot.inventory_levels', 't', 'row(shop, product_id, location_id)', `shop = $1${at}`),
    t('sot.inventory_daily_snapshots', 't', 'row(shop, product_id, location_id, snapshot_date)', `shop = $1${at}`),
    t('sot.inventory_update_logs', 't', 'log_id', 'shop = $1'),
    // In id order, so the publish order is compared too; differences are listed by event_id.
    t(
      'agent_runtime.outbox',
      'row(event_id, topic, message_key, headers, payload, command_id, log_table, published_at)',
      'id',
      'message_key = $1',
      'event_id',
    ),
    t('agent_runtime.command_results', 'row(command_id, shop, kind, status_code, body::text)', 'command_id', 'shop = $1'),
    t(
      'agent_runtime.processed_commands',
      'row(command_id, shop, kind, kafka_topic, kafka_partition, kafka_offset, received_at)',
      'command_id',
      'shop = $1',
    ),
    // Rows the compared commands wrote anywhere else (none expected in either database).
    ...(scope.locations
      ? [
          t(
            'sot.inventory_levels (other locations)',
            't',
            'row(shop, product_id, location_id)',
            'shop = $1 AND location_id <> ALL($2::uuid[]) AND last_command_id = ANY($3::uuid[])',
          ),
          t(
            'sot.inventory_daily_snapshots (other locations)',
            't',
            'row(shop, product_id, location_id, snapshot_date)',
            'shop = $1 AND location_id <> ALL($2::uuid[]) AND command_id = ANY($3::uuid[])',
          ),
        ]
      : []),
  ];
};
type Table = ReturnType<typeof TABLES>[number];

const SESSION = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET extra_float_digits = 3";

async function checksum(c: PoolClient, t: Table, params: unknown[]): Promise<{ n: number; md5: string }> {
  const sql = `SELECT count(*)::int AS n, coalesce(md5(string_agg(${t.row}::text, E'\\n' ORDER BY ${t.key})), '') AS md5 FROM ${t.from} t WHERE ${t.where}`;
  return (await c.query<{ n: number; md5: string }>(sql, params)).rows[0]!;
}

async function rowTexts(c: PoolClient, t: Table, params: unknown[]): Promise<Map<string, string>> {
  const { rows } = await c.query<{ k: string; r: string }>(
    `SELECT (${t.diffKey ?? t.key})::text AS k, ${t.row}::text AS r FROM ${t.from} t WHERE ${t.where}`,
    params,
  );
  return new Map(rows.map((x) => [x.k, x.r]));
}

/**
 * Compares the rows of one shop in both databases; with a scope, levels and daily rows only at its
 * locations, plus any row its commands wrote at another location.
 */
export async function compareFloor(
  what: string,
  projector: Pool,
  floor: Pool,
  shop: string,
  commands: number,
  scope?: { locations: string[]; commandIds: string[] },
): Promise<Verification> {
  const a = await projector.connect();
  const b = await floor.connect();
  try {
    await a.query(SESSION);
    await b.query(SESSION);
    const all = scope ? [shop, scope.locations, scope.commandIds] : [shop];
    const tables: TableCheck[] = [];
    for (const t of TABLES({ locations: Boolean(scope) })) {
      // As many parameters as the filter names.
      const params = all.slice(0, Math.max(...[...t.where.matchAll(/\$(\d)/g)].map((m) => Number(m[1]))));
      const [x, y] = [await checksum(a, t, params), await checksum(b, t, params)];
      const check: TableCheck = { table: t.name, rows_projector: x.n, rows_floor: y.n, identical: x.n === y.n && x.md5 === y.md5 };
      if (!check.identical) {
        const [ra, rb] = [await rowTexts(a, t, params), await rowTexts(b, t, params)];
        const diff: string[] = [];
        for (const [k, v] of ra)
          if (rb.get(k) !== v) diff.push(`projector ${v.slice(0, 600)} | floor ${(rb.get(k) ?? '(missing)').slice(0, 600)}`);
        for (const [k, v] of rb) if (!ra.has(k)) diff.push(`floor only ${v.slice(0, 600)}`);
        if (diff.length === 0) diff.push('the same rows in a different order');
        check.differing = diff.slice(0, 6);
      }
      tables.push(check);
    }
    return { what, commands, identical: tables.every((t) => t.identical), tables };
  } finally {
    a.release();
    b.release();
  }
}

export type Step = { path: 'both' | 'floor'; command: Command };

/** Runs one step in both databases: a snapshot through applyCommand and through the floor; setup commands through applyCommand in both. */
export async function applyBoth(step: Step, at: CommandPosition, projector: Pool, floor: Pool, topics: TopicNames): Promise<void> {
  const tx = async (pool: Pool, fn: (c: PoolClient) => Promise<unknown>) => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await fn(c);
      await c.query('COMMIT');
    } catch (err) {
      await c.query('ROLLBACK');
      throw err;
    } finally {
      c.release();
    }
  };
  await tx(projector, (c) => applyCommand(c, step.command, at, { sideEffects: { topics } }));
  await tx(floor, (c) =>
    step.path === 'floor'
      ? applyFloor(c, step.command as InventorySnapshotCommand, at, topics)
      : applyCommand(c, step.command, at, { sideEffects: { topics } }),
  );
}

/**
 * A command sequence for one small shop that walks the rules the floor must reproduce: unresolved
 * barcodes (repeated, with characters JSON escapes), repeated barcodes (D6a) that move away and back,
 * zero crossings and restores within one command and across commands (D18), levels created at 0,
 * omitted quantities, levels a delta created (no absolute as-of yet), daily-job rows overwritten
 * (D16) and unchanged daily rows left alone (D16b), a resend, a late (stale) snapshot (D15b), an
 * idempotency key carried into the logs, and a snapshot with nothing to write.
 */
export function edgeSequence(shop: string): { locations: string[]; steps: Step[] } {
  const L1 = uuidv7();
  const L2 = uuidv7();
  const e = (i: number) => `48${String(i).padStart(11, '0')}`;
  const x = (l: SnapshotLine): SnapshotLine => l;
  const steps: Step[] = [];
  const both = (command: Command) => steps.push({ path: 'both', command });
  const snap = (command: InventorySnapshotCommand) => (steps.push({ path: 'floor', command }), command);

  both(
    registerLocationsCommand(shop, [
      { location_id: L1, name: 'EDGE-1' },
      { location_id: L2, name: 'EDGE-2' },
    ]),
  );
  both(
    productsUpsertCommand(
      shop,
      Array.from({ length: 60 }, (_, i) => ({ barcode: e(i + 1), product_name: `Edge ${i + 1}` })),
    ),
  );
  both(
    availableDeltaCommand(
      shop,
      L1,
      Array.from({ length: 10 }, (_, i) => ({ barcode: e(i + 1), available_delta: 5 })),
    ),
  );

  const s1Lines: SnapshotLine[] = [
    ...Array.from({ length: 30 }, (_, i) => x({ barcode: e(i + 1), on_hand_qty: 10 + i, available_qty: 10 + i })),
    x({ barcode: e(2), on_hand_qty: 4, available_qty: 0 }), // 5 -> 0 after its first line: stock_zero
    x({ barcode: e(3), on_hand_qty: 0, available_qty: 5 }), // back to what the delta left
    x({ barcode: e(5), on_hand_qty: 21, available_qty: 21 }),
    x({ barcode: e(5), on_hand_qty: 14, available_qty: 14 }), // away and back within the command
    x({ barcode: e(7), on_hand_qty: 3, available_qty: 0 }),
    x({ barcode: e(7), on_hand_qty: 3, available_qty: 4 }), // zero, then restored (seq 2)
    x({ barcode: e(11), on_hand_qty: 0, available_qty: 0 }),
    x({ barcode: 'X"1\\é\t', on_hand_qty: 1 }),
    x({ barcode: e(12), on_hand_qty: 0, available_qty: 0 }),
    x({ barcode: e(12), on_hand_qty: 2, available_qty: 2 }),
    x({ barcode: 'X"1\\é\t', on_hand_qty: 2 }),
    x({ barcode: e(13), on_hand_qty: 9, allocated_qty: 2, reserved_qty: 1, incoming_qty: 7 }),
    x({ barcode: e(14), on_hand_qty: 999_999_999_999, available_qty: 1_000_000_000_000 }),
    x({ barcode: 'X2', on_hand_qty: 3 }),
  ];
  const s1 = snap(snapshotCommand(shop, L1, s1Lines));
  both(
    availableDeltaCommand(
      shop,
      L1,
      Array.from({ length: 10 }, (_, i) => ({ barcode: e(31 + i), available_delta: 3 })),
    ),
  );
  both(dailySnapshotCommand(shop, s1.payload.snapshot_date));
  // A resend of S1 (stamps; E5 and E7 move and come back), daily_job rows with the level's values
  // (source changes: rewritten) and one with new values.
  snap(
    snapshotCommand(shop, L1, [
      ...s1Lines,
      ...Array.from({ length: 5 }, (_, i) => x({ barcode: e(31 + i), on_hand_qty: 0, available_qty: 3 })),
      x({ barcode: e(36), on_hand_qty: 8, available_qty: 8 }),
    ]),
  );
  snap(snapshotCommand(shop, L1, s1Lines)); // the same again: nothing but stamps, no logs, no daily rows
  // Late: an hour older than S1 -> the levels S1 wrote are stale; new levels are not.
  snap(
    snapshotCommand(
      shop,
      L1,
      [
        ...Array.from({ length: 5 }, (_, i) => x({ barcode: e(i + 1), on_hand_qty: 1, available_qty: 1 })),
        ...Array.from({ length: 5 }, (_, i) => x({ barcode: e(41 + i), on_hand_qty: 6, available_qty: 6 })),
        x({ barcode: e(2), on_hand_qty: 1 }),
        x({ barcode: 'X3', on_hand_qty: 1 }),
      ],
      { inventoryAsOf: new Date(Date.parse(s1.inventory_as_of) - 3_600_000).toISOString() },
    ),
  );
  // An empty location, with repeated lines that create, zero and restore; an idempotency key.
  snap(
    snapshotCommand(
      shop,
      L2,
      [
        ...Array.from({ length: 20 }, (_, i) => x({ barcode: e(i + 1), on_hand_qty: 2 + i, available_qty: i % 3 })),
        x({ barcode: e(1), on_hand_qty: 2, available_qty: 0 }),
        x({ barcode: e(2), on_hand_qty: 3, available_qty: 5 }),
        x({ barcode: e(2), on_hand_qty: 3, available_qty: 0 }),
        x({ barcode: e(2), on_hand_qty: 3, available_qty: 1 }),
      ],
      { idempotencyKey: 'edge-key-1' },
    ),
  );
  snap(snapshotCommand(shop, L2, [x({ barcode: 'X4', on_hand_qty: 1 }), x({ barcode: 'X4', on_hand_qty: 2 })])); // nothing resolves
  // Back at L1: zero what was restored and restore what was zeroed, across commands.
  snap(
    snapshotCommand(shop, L1, [
      x({ barcode: e(7), on_hand_qty: 3, available_qty: 0 }),
      x({ barcode: e(2), on_hand_qty: 4, available_qty: 9 }),
      x({ barcode: e(11), on_hand_qty: 1, available_qty: 1 }),
      x({ barcode: e(12), on_hand_qty: 2 }),
    ]),
  );
  return { locations: [L1, L2], steps };
}
