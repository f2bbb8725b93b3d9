import { Router, type Request, type Response } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import { requireIngestSecret } from '../auth.ts';
import { badRequest } from '../errors.ts';
import { intake, type Intake } from '../intake.ts';
import { submitCommand, type SubmitDeps } from '../submit.ts';

interface OrderLinesBody {
  shop: string;
  rows: unknown[];
  dry_run?: boolean;
  change_source?: string;
  ingest_run_id?: string;
  idempotency_key?: string;
  changed_by_user_id?: string;
}

const ROWS_REQUIRED = 'rows[] required and non-empty';

/** Endpoint 6: the request's shape here (400s of the spec); every row rule in the projector's decider (D20). */
export function orderLineRoutes(deps: SubmitDeps & Intake & { schemas: SchemaRegistry; ingestSecrets: string[] }): Router {
  const router = Router();
  const body = deps.schemas.validator<OrderLinesBody>('http/order-lines.request.json');

  router.post('/api/order-line-master/bulk-upsert', ...intake(requireIngestSecret(deps.ingestSecrets), deps), async (req: Request, res: Response) => {
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
      payload: {
        rows: v.rows,
        dry_run: v.dry_run ?? false,
        change_source: v.change_source ?? 'external_app',
        ingest_run_id: v.ingest_run_id ?? null,
        idempotency_key: v.idempotency_key ?? null,
        changed_by_user_id: v.changed_by_user_id?.toLowerCase() ?? null,
        // D27: the decider rejects a row with a field the spec does not define (code unknown_field).
        unknown_fields: 'reject',
      },
    });
  });
  return router;
}
