import { Router, type Request, type Response } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import { QTY_FIELDS, type LevelsLine, type QtyField } from '@ingest/domain';
import { requireIngestSecret } from '../auth.ts';
import { badRequest, unprocessable } from '../errors.ts';
import { intake, type Intake } from '../intake.ts';
import { inexactNumbersOf } from '../body.ts';
import { formatPath, inexactMessage } from '../exactNumbers.ts';
import { businessDate, inventoryAsOf, locationRefOf, payloadHash } from '../inventoryInput.ts';
import { submitCommand, type SubmitDeps } from '../submit.ts';

type Ext = { identifier_type: string; identifier_value: string };
interface InventoryBody {
  shop: string;
  source_system: string;
  mode?: 'absolute' | 'delta';
  location_id?: string;
  location?: Ext;
  lines: Array<Record<string, unknown>>;
  inventory_as_of?: string;
  idempotency_key?: string;
}

/** Endpoints 3, 4 and 5 (D11 statuses: top-level problems 400, line problems 422 invalid_payload). */
export function inventoryRoutes(deps: SubmitDeps & Intake & { schemas: SchemaRegistry; ingestSecrets: string[]; businessTimezone: string }): Router {
  const router = Router();
  const v = (name: Parameters<SchemaRegistry['validator']>[0]) => deps.schemas.validator<InventoryBody>(name);
  const snapshotBody = v('http/inventory-snapshot.request.json');
  const snapshotLines = v('http/inventory-snapshot.lines.json');
  const availableBody = v('http/inventory-available.request.json');
  const availableLines = { absolute: v('http/inventory-available.absolute-lines.json'), delta: v('http/inventory-available.delta-lines.json') };
  const levelsBody = v('http/inventory-levels.request.json');
  const levelsLines = { absolute: v('http/inventory-levels.absolute-lines.json'), delta: v('http/inventory-levels.delta-lines.json') };
  const front = intake(requireIngestSecret(deps.ingestSecrets), deps);

  const read = (req: Request, top: ReturnType<typeof v>, lines: (b: InventoryBody) => ReturnType<typeof v>): InventoryBody => {
    const body = top(req.body);
    if (!body.ok) throw badRequest(body.failure.message);
    const checked = lines(body.value)({ lines: body.value.lines });
    if (!checked.ok) throw unprocessable('invalid_payload', checked.failure.message);
    // Issue 12: a quantity JSON parsing rounded (999999999999.99999999 reads as 1e12) is refused, never stored rounded.
    const rounded = inexactNumbersOf(req)[0];
    if (rounded) throw unprocessable('invalid_payload', inexactMessage(formatPath(rounded.path), rounded));
    return body.value;
  };

  // The payload hash only serves D19's reuse warning, so only delta requests with a key pay for it.
  const meta = (b: InventoryBody, asOf: string, hashed: unknown) => ({
    source_system: b.source_system,
    inventory_as_of: asOf,
    ...(b.idempotency_key !== undefined ? { idempotency_key: b.idempotency_key } : {}),
    ...(b.mode === 'delta' && b.idempotency_key !== undefined ? { payload_hash: payloadHash(hashed) } : {}),
  });

  router.post('/api/ingest/inventory-snapshot', ...front, async (req: Request, res: Response) => {
    const now = deps.now();
    const b = read(req, snapshotBody, () => snapshotLines);
    const location = locationRefOf(b);
    const asOf = inventoryAsOf(b.inventory_as_of, now);
    const payload = { location, snapshot_date: businessDate(asOf, deps.businessTimezone), lines: b.lines };
    await submitCommand(deps, req, res, { kind: 'inventory.snapshot', shop: b.shop, payload, meta: meta(b, asOf, { location, lines: b.lines }), receivedAt: now });
  });

  router.post('/api/ingest/inventory-available', ...front, async (req: Request, res: Response) => {
    const now = deps.now();
    const b = read(req, availableBody, (body) => availableLines[body.mode ?? 'absolute']);
    const location = locationRefOf(b);
    const asOf = inventoryAsOf(b.inventory_as_of, now);
    const payload = { mode: b.mode, location, lines: b.lines };
    await submitCommand(deps, req, res, { kind: 'inventory.available', shop: b.shop, payload, meta: meta(b, asOf, payload), receivedAt: now });
  });

  router.post('/api/inventory-levels/bulk-upsert', ...front, async (req: Request, res: Response) => {
    const now = deps.now();
    const b = read(req, levelsBody, (body) => levelsLines[body.mode ?? 'absolute']);
    const delta = b.mode === 'delta';
    const lines: LevelsLine[] = b.lines.map((raw, i) => normaliseLevelsLine(raw, i, delta));
    const asOf = inventoryAsOf(b.inventory_as_of, now);
    const payload = { mode: b.mode, lines };
    await submitCommand(deps, req, res, { kind: 'inventory.levels', shop: b.shop, payload, meta: meta(b, asOf, payload), receivedAt: now });
  });

  return router;
}

/** D17 line: its own location; absolute quantities go to `set`, `<field>_delta` (or `<field>_qty_delta`) to `delta`. */
function normaliseLevelsLine(raw: Record<string, unknown>, i: number, delta: boolean): LevelsLine {
  const at = `lines[${i}].`;
  const location = locationRefOf(raw, at);
  const values: Partial<Record<QtyField, number>> = {};
  for (const f of QTY_FIELDS) {
    if (!delta) {
      if (typeof raw[f] === 'number') values[f] = raw[f];
      continue;
    }
    const short = `${f.replace(/_qty$/, '')}_delta`;
    const long = `${f}_delta`;
    if (raw[short] !== undefined && raw[long] !== undefined) throw unprocessable('invalid_payload', `${at}${short} and ${at}${long} are the same field; send one`);
    const d = raw[short] ?? raw[long];
    if (typeof d === 'number') values[f] = d;
  }
  if (Object.keys(values).length === 0)
    throw unprocessable('invalid_payload', `lines[${i}] needs at least one ${delta ? '<quantity>_delta' : 'quantity'} field`);
  return { barcode: raw['barcode'] as string, location, ...(delta ? { delta: values } : { set: values }) };
}
