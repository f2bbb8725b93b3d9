import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decideOrderLines, type OrderLineLog, type OrderLinesState, type OrderLinesUpsertCommand } from './decideOrderLines.ts';
import { orderLineKey, type OrderLine } from './orderLine.ts';
import type { RowProblem } from './validateRow.ts';

// D6a: a batch gives the same rows, counts and logs as its rows sent one by one, each as its own
// command (log ids, command ids and log_seq aside: they are per command). D22 rides along: a dry
// run of the batch answers what the real run answers and writes nothing.

const CH = '0190a000-0000-7000-8000-0000000000c1';
const LOC = '0190a000-0000-7000-8000-0000000000a1';
const OTHER = '0190a000-0000-7000-8000-0000000000ff';
const T0 = '2026-11-01T00:00:00.000Z';
const AT = '2026-11-02T00:00:00.000Z';
const VERSION = '1.2.3';

const row: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .record({
        transaction_id: fc.constantFrom('T1', 'T2'),
        line_instance_no: fc.constantFrom(1, 2, 0),
        barcode: fc.constantFrom('KNOWN', 'UNKNOWN'),
        channel_id: fc.constantFrom(CH, CH, CH, OTHER),
        location_id: fc.constantFrom(LOC, LOC, LOC, OTHER),
        customer_id: fc.constantFrom('a', 'b', null),
        gross_amount_taxincl: fc.constantFrom(1100, 1100, 1100.01, 1100.02),
        tax_rate: fc.constantFrom(0.1, 0.1, 0, 1.5),
        refund_amount: fc.constantFrom(0, 0, 5, 10, -1),
        refunded_at: fc.constantFrom(null, null, '2026-10-30T00:00:00.000Z', '2026-10-30T09:00:00+09:00', '2026-10-31T00:00:00Z'),
        refund_reason: fc.constantFrom(null, 'damaged'),
      })
      .map((r) => ({
        source_system: 'pos',
        transaction_line_id: 'L1',
        ordered_at: '2026-10-29T12:00:00.000Z',
        currency: 'JPY',
        is_test: false,
        discount_amount_taxincl: 100,
        net_amount_taxincl: 1000,
        net_amount_taxexcl: 909.09,
        tax_amount: 90.91,
        ...r,
      })),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('junk', null, {}) },
);

const cmd = (id: string, at: string, rows: unknown[], dryRun = false): OrderLinesUpsertCommand => ({
  kind: 'order_lines.upsert',
  command_id: id,
  shop: 's.example',
  received_at: at,
  source: { endpoint: '/api/order-line-master/bulk-upsert' },
  actor: 'platform',
  payload: { rows, dry_run: dryRun, change_source: 'external_app', ingest_run_id: 'run', idempotency_key: 'k', changed_by_user_id: null },
});

const withLines = (s: OrderLinesState, lines: Map<string, OrderLine>): OrderLinesState => ({ ...s, lines });
const applied = (lines: ReadonlyMap<string, OrderLine>, upserts: OrderLine[]) => {
  const next = new Map(lines);
  for (const u of upserts) next.set(orderLineKey(u), u);
  return next;
};
const withoutIds = (logs: OrderLineLog[]) => logs.map(({ log_id: _l, command_id: _c, log_seq: _s, ...rest }) => rest);
const sorted = (lines: ReadonlyMap<string, OrderLine>) => [...lines.entries()].sort(([a], [b]) => a.localeCompare(b));
const commandId = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;

interface Body {
  accepted_rows: number;
  inserted_rows: number;
  updated_rows: number;
  rejected_rows: number;
  warnings_count: number;
  errors: RowProblem[];
  warnings: RowProblem[];
}

describe('decideOrderLines, D6a property', () => {
  it('a batch equals its rows sent one by one as separate commands (rows, counts, errors, warnings, logs)', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), fc.array(row, { maxLength: 14 }), (seedRows, rows) => {
        const registry: OrderLinesState = {
          lines: new Map(),
          channels: new Set([CH]),
          locations: new Set([LOC]),
          barcodes: new Set(['KNOWN']),
        };
        // Stored lines to start from: whatever an earlier command left.
        const seed = decideOrderLines(registry, cmd(commandId(999), T0, seedRows), VERSION);
        const start = withLines(registry, applied(registry.lines, seed.upserts));

        const batch = decideOrderLines(start, cmd(commandId(0), AT, rows), VERSION);

        let lines = new Map(start.lines);
        const logs: OrderLineLog[] = [];
        const totals = { accepted_rows: 0, inserted_rows: 0, updated_rows: 0, rejected_rows: 0, warnings_count: 0 };
        const errors: RowProblem[] = [];
        const warnings: RowProblem[] = [];
        rows.forEach((r, i) => {
          const one = decideOrderLines(withLines(start, lines), cmd(commandId(i + 1), AT, [r]), VERSION);
          lines = applied(lines, one.upserts);
          logs.push(...one.logs);
          const b = one.reply.body as unknown as Body;
          for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += b[k];
          errors.push(...b.errors.map((e) => ({ ...e, row_index: i })));
          warnings.push(...b.warnings.map((w) => ({ ...w, row_index: i })));
        });

        expect(batch.reply).toEqual({
          status: 200,
          body: { ok: true, dry_run: false, ...totals, errors, warnings, adapter_version: VERSION },
        });
        expect(withoutIds(batch.logs)).toEqual(withoutIds(logs));
        expect(batch.logs.map((l) => l.log_seq)).toEqual(batch.logs.map((_, i) => i));
        expect(sorted(applied(start.lines, batch.upserts))).toEqual(sorted(lines));
        // Each key is written once per command, with its last value.
        expect(new Set(batch.upserts.map(orderLineKey)).size).toBe(batch.upserts.length);
      }),
      { numRuns: 500 },
    );
  });

  it('a dry run of any batch answers what the real run answers and writes nothing (D22)', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 6 }), fc.array(row, { maxLength: 14 }), (seedRows, rows) => {
        const registry: OrderLinesState = {
          lines: new Map(),
          channels: new Set([CH]),
          locations: new Set([LOC]),
          barcodes: new Set(['KNOWN']),
        };
        const seed = decideOrderLines(registry, cmd(commandId(999), T0, seedRows), VERSION);
        const start = withLines(registry, applied(registry.lines, seed.upserts));
        const real = decideOrderLines(start, cmd(commandId(0), AT, rows), VERSION);
        const dry = decideOrderLines(start, cmd(commandId(0), AT, rows, true), VERSION);
        expect(dry.upserts).toEqual([]);
        expect(dry.logs).toEqual([]);
        expect(dry.reply).toEqual({ ...real.reply, body: { ...real.reply.body, dry_run: true } });
      }),
      { numRuns: 300 },
    );
  });
});
