import { Router, type Request, type Response } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import type { OrderLinesBulkUpsertRequest } from '@ingest/contracts/types';
import { BUSINESS_TIME, inBusinessTime, parseInstant, type RowProblem } from '@ingest/domain';
import { badRequest } from '../errors/catalog.ts';
import { intake, type Intake } from '../edge/intake.ts';
import { submitCommand, type SubmitDeps } from '../commands/submit.ts';
import { inexactMessage, inexactNumbersOf, type InexactNumber } from '../edge/body.ts';

const ROWS_REQUIRED = 'rows[] required and non-empty';

/** Endpoint 6: the request's shape here (400s of the spec); every row rule in the projector's decider (D20). */
export function orderLineRoutes(deps: SubmitDeps & Intake & { schemas: SchemaRegistry }): Router {
  const router = Router();
  const body = deps.schemas.validator<OrderLinesBulkUpsertRequest>('http/order-lines.request.json');

  router.post(
    '/api/order-line-master/bulk-upsert',
    ...intake({ platform: 'ingest', scope: 'orders:write', retailer: true }, deps),
    async (req: Request, res: Response) => {
      const b = body(req.body);
      if (!b.ok) {
        const f = b.failure;
        if (f.path === 'rows' && f.keyword === 'maxItems') throw badRequest('rows exceeds the batch limit of 5000 rows');
        if (f.path === 'rows') throw badRequest(ROWS_REQUIRED);
        throw badRequest(f.message);
      }
      const v = b.value;
      await submitCommand(deps, req, res, {
        kind: 'order_lines.upsert',
        shop: v.shop,
        // The body flag makes a dry run like `?dry_run=true`: the command is the real one
        // (dry_run false), projected and rolled back, and the answer echoes `dry_run: true` (D22).
        dryRun: v.dry_run,
        payload: {
          rows: v.rows,
          dry_run: false,
          change_source: v.change_source ?? 'external_app',
          ingest_run_id: v.ingest_run_id ?? null,
          idempotency_key: v.idempotency_key ?? null,
          changed_by_user_id: v.changed_by_user_id?.toLowerCase() ?? null,
          // D27: the decider rejects a row with a field the spec does not define (code unknown_field).
          unknown_fields: 'reject',
          ...rowProblems(v.rows, inexactNumbersOf(req)),
        },
      });
    },
  );
  return router;
}

const NUMBER_FIELDS: ReadonlySet<string> = new Set([
  'line_instance_no',
  'gross_amount_taxincl',
  'discount_amount_taxincl',
  'net_amount_taxincl',
  'net_amount_taxexcl',
  'tax_amount',
  'tax_rate',
  'refund_amount',
]);
const TIME_FIELDS = ['ordered_at', 'refunded_at'] as const;
const RANGE = `on or after ${BUSINESS_TIME.from.replace('.000Z', 'Z')} and before ${BUSINESS_TIME.until.replace('.000Z', 'Z')}`;

/**
 * What makes a row unstorable that only the gateway sees (a number JSON parsing rounded)
 * or that came after the rows' rules (times outside the business range), as D20 row problems
 * carried in the command: the decider rejects those rows and lists them, and replays stay as they were.
 */
function rowProblems(rows: unknown[], inexact: InexactNumber[]): { row_problems?: RowProblem[] } {
  const problems: RowProblem[] = [];
  for (const n of inexact) {
    const [top, index, field] = n.path;
    if (top === 'rows' && typeof index === 'number' && typeof field === 'string' && n.path.length === 3 && NUMBER_FIELDS.has(field))
      problems.push({ row_index: index, field, code: 'invalid_value', message: inexactMessage(field, n) });
  }
  rows.forEach((raw, i) => {
    if (raw === null || typeof raw !== 'object') return;
    for (const field of TIME_FIELDS) {
      const v = (raw as Record<string, unknown>)[field];
      // A malformed time is the decider's invalid_value already; only well-formed ones are ranged here.
      const at = typeof v === 'string' ? parseInstant(v) : null;
      if (at !== null && !inBusinessTime(at))
        problems.push({ row_index: i, field, code: 'invalid_value', message: `${field} must be ${RANGE}` });
    }
  });
  problems.sort((a, b) => a.row_index - b.row_index);
  return problems.length ? { row_problems: problems } : {};
}
