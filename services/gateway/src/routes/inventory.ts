import { Router, type Request, type Response } from 'express';
import type { SchemaRegistry, Validator } from '@ingest/contracts';
import type {
  InventoryAvailableAbsoluteLines,
  InventoryAvailableDeltaLines,
  InventoryAvailableRequest,
  InventoryLevelsRequest,
  InventorySnapshotLines,
  InventorySnapshotRequest,
} from '@ingest/contracts/types';
import {
  BUSINESS_TIME,
  businessDate,
  inBusinessTime,
  parseInstant,
  QTY_FIELDS,
  type LevelsLine,
  type LocationRef,
  type QtyField,
} from '@ingest/domain';
import { badRequest, unprocessable } from '../errors/catalog.ts';
import { intake, type Intake } from '../edge/intake.ts';
import { formatPath, inexactMessage, inexactNumbersOf } from '../edge/body.ts';
import { payloadHash } from '../commands/idempotency.ts';
import { submitCommand, type SubmitDeps } from '../commands/submit.ts';

/** What the shared steps read of a body of endpoint 3, 4 or 5 (schemas/http/*.request.json). */
type InventoryBody = Pick<InventorySnapshotRequest, 'shop' | 'source_system' | 'lines' | 'inventory_as_of' | 'idempotency_key'> &
  Partial<Pick<InventoryAvailableRequest, 'mode'>>;
/** Lines of endpoint 5 in either mode. */
type AvailableLines = { lines: Array<InventoryAvailableAbsoluteLines['lines'][number] | InventoryAvailableDeltaLines['lines'][number]> };
/** Levels lines are read field by field (normaliseLevelsLine) once their lines schema passed. */
type LevelsLines = { lines: Array<Record<string, unknown>> };

/** Endpoints 3, 4 and 5 (D11 statuses: top-level problems 400, line problems 422 invalid_payload). */
export function inventoryRoutes(deps: SubmitDeps & Intake & { schemas: SchemaRegistry; businessTimezone: string }): Router {
  const router = Router();
  const s = deps.schemas;
  const snapshotBody = s.validator<InventorySnapshotRequest>('http/inventory-snapshot.request.json');
  const snapshotLines = s.validator<InventorySnapshotLines>('http/inventory-snapshot.lines.json');
  const availableBody = s.validator<InventoryAvailableRequest>('http/inventory-available.request.json');
  const availableLines = {
    absolute: s.validator<AvailableLines>('http/inventory-available.absolute-lines.json'),
    delta: s.validator<AvailableLines>('http/inventory-available.delta-lines.json'),
  };
  const levelsBody = s.validator<InventoryLevelsRequest>('http/inventory-levels.request.json');
  const levelsLines = {
    absolute: s.validator<LevelsLines>('http/inventory-levels.absolute-lines.json'),
    delta: s.validator<LevelsLines>('http/inventory-levels.delta-lines.json'),
  };
  const front = intake({ platform: 'ingest', scope: 'inventory:write', retailer: true }, deps);

  /** The body (400 when its schema fails) and its lines (422 when their schema fails, D11). */
  const read = <B extends InventoryBody, L>(
    req: Request,
    top: Validator<B>,
    lines: (b: B) => Validator<{ lines: L[] }>,
  ): { b: B; lines: L[] } => {
    const body = top(req.body);
    if (!body.ok) throw badRequest(body.failure.message);
    const checked = lines(body.value)({ lines: body.value.lines });
    if (!checked.ok) throw unprocessable('invalid_payload', checked.failure.message);
    // A quantity JSON parsing rounded (999999999999.99999999 reads as 1e12) is refused, never stored rounded.
    const rounded = inexactNumbersOf(req)[0];
    if (rounded) throw unprocessable('invalid_payload', inexactMessage(formatPath(rounded.path), rounded));
    return { b: body.value, lines: checked.value.lines };
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
    const { b, lines } = read(req, snapshotBody, () => snapshotLines);
    const location = locationRefOf(b);
    const asOf = inventoryAsOf(b.inventory_as_of, now);
    const payload = { location, snapshot_date: businessDate(asOf, deps.businessTimezone), lines };
    await submitCommand(deps, req, res, {
      kind: 'inventory.snapshot',
      shop: b.shop,
      payload,
      meta: meta(b, asOf, { location, lines }),
      receivedAt: now,
    });
  });

  router.post('/api/ingest/inventory-available', ...front, async (req: Request, res: Response) => {
    const now = deps.now();
    const { b, lines } = read(req, availableBody, (body) => availableLines[body.mode]);
    const location = locationRefOf(b);
    const asOf = inventoryAsOf(b.inventory_as_of, now);
    const payload = { mode: b.mode, location, lines };
    await submitCommand(deps, req, res, {
      kind: 'inventory.available',
      shop: b.shop,
      payload,
      meta: meta(b, asOf, payload),
      receivedAt: now,
    });
  });

  router.post('/api/inventory-levels/bulk-upsert', ...front, async (req: Request, res: Response) => {
    const now = deps.now();
    const { b, lines: raw } = read(req, levelsBody, (body) => levelsLines[body.mode]);
    const delta = b.mode === 'delta';
    const lines: LevelsLine[] = raw.map((line, i) => normaliseLevelsLine(line, i, delta));
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
    if (raw[short] !== undefined && raw[long] !== undefined)
      throw unprocessable('invalid_payload', `${at}${short} and ${at}${long} are the same field; send one`);
    const d = raw[short] ?? raw[long];
    if (typeof d === 'number') values[f] = d;
  }
  if (Object.keys(values).length === 0)
    throw unprocessable('invalid_payload', `lines[${i}] needs at least one ${delta ? '<quantity>_delta' : 'quantity'} field`);
  return { barcode: raw['barcode'] as string, location, ...(delta ? { delta: values } : { set: values }) };
}

const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;

/** D11: both forms -> 422 invalid_payload; neither -> 400. */
function locationRefOf(
  body: { location_id?: string; location?: { identifier_type: string; identifier_value: string } },
  at = '',
): LocationRef {
  const hasId = body.location_id !== undefined;
  const hasExt = body.location !== undefined;
  if (hasId && hasExt) throw unprocessable('invalid_payload', `${at}location_id and ${at}location are mutually exclusive; send one`);
  if (hasId) return { location_id: body.location_id as string };
  if (hasExt) {
    const l = body.location as { identifier_type: string; identifier_value: string };
    return { location: { identifier_type: l.identifier_type, identifier_value: l.identifier_value } };
  }
  if (at) throw unprocessable('invalid_payload', `${at}location_id or ${at}location required`);
  throw badRequest('location_id or location required');
}

/**
 * The effective time of an inventory write (D3: defaulted here); far future is refused (D15b), and
 * so is a time before the business range (docs/api.md "Value ranges"), with the same 422.
 */
function inventoryAsOf(value: string | undefined, now: Date): string {
  if (value === undefined) return now.toISOString();
  const at = parseInstant(value);
  if (at === null) throw badRequest('inventory_as_of must be a valid date-time');
  const t = Date.parse(at);
  if (t - now.getTime() > FUTURE_TOLERANCE_MS)
    throw unprocessable('invalid_payload', 'inventory_as_of is more than 5 minutes in the future');
  if (!inBusinessTime(at)) throw unprocessable('invalid_payload', `inventory_as_of is before ${BUSINESS_TIME.from.replace('.000Z', 'Z')}`);
  return at;
}
