import { Router } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import type { ProductInput, ProductsBulkUpsertRequest, ProductsIngestRequest, ProductsUpsertPayload } from '@ingest/contracts/types';
import { badRequest } from '../errors/catalog.ts';
import { submitCommand, type SubmitDeps } from '../commands/submit.ts';
import { intake, type Intake } from '../edge/intake.ts';
import { formatPath, inexactMessage, inexactNumbersOf, type InexactNumber } from '../edge/body.ts';

type Item = ProductsUpsertPayload['items'][number];

const REQUIRED_TEXT = 'barcode and product_name required';
/** D27's code; an item error reads `unknown_field: color is not allowed`. */
const UNKNOWN_FIELD = 'unknown_field';

/** Endpoints 1 and 2 run one command (D7); each item is checked alone and a bad one is reported, not fatal. */
export function productRoutes(deps: SubmitDeps & Intake & { schemas: SchemaRegistry }): Router {
  const router = Router();
  const bulkBody = deps.schemas.validator<ProductsBulkUpsertRequest>('http/products-bulk-upsert.request.json');
  const ingestBody = deps.schemas.validator<ProductsIngestRequest>('http/products-ingest.request.json');
  const product = deps.schemas.validator<ProductInput>('http/product.json');

  const toItems = (products: unknown[], inexact: InexactNumber[]): Item[] => {
    // A number JSON parsing rounded is that item's error, like any other bad value.
    const rounded = new Map<number, InexactNumber>();
    for (const n of inexact)
      if (n.path[0] === 'products' && typeof n.path[1] === 'number' && !rounded.has(n.path[1])) rounded.set(n.path[1], n);
    return products.map((raw, i) => {
      const obj = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
      const b = obj?.['barcode'];
      const barcode = typeof b === 'string' ? b : typeof b === 'number' || typeof b === 'boolean' ? String(b) : '';
      if (!obj) return { rejected: { barcode: '', error: 'product must be an object' } };
      // Absent, null or blank is missing (the spec's text); a value of another type is reported by type below.
      const missing = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
      if (missing(obj['barcode']) || missing(obj['product_name'])) return { rejected: { barcode, error: REQUIRED_TEXT } };
      const r = product(obj);
      const n = rounded.get(i);
      const field = n ? formatPath(n.path.slice(2)) : '';
      // Also when the validator refused the value it was made into (1e400 -> Infinity).
      if (n && (r.ok || r.failure.path === field)) return { rejected: { barcode, error: inexactMessage(field, n) } };
      if (r.ok) return { product: r.value };
      // D27: the item keeps the spec's `{barcode, error}` shape (D7); the code leads the text.
      if (r.failure.keyword === 'unknown_field') return { rejected: { barcode, error: `${UNKNOWN_FIELD}: ${r.failure.message}` } };
      return { rejected: { barcode, error: r.failure.message } };
    });
  };

  router.post(
    '/api/products/bulk-upsert',
    ...intake({ platform: 'cron', scope: 'products:write', retailer: true }, deps),
    async (req, res) => {
      const body = bulkBody(req.body);
      if (!body.ok) throw badRequest(body.failure.message);
      const shop = res.locals['shop'] as string;
      await submitCommand(deps, req, res, {
        kind: 'products.upsert',
        shop,
        payload: { response: 'bulk_upsert', items: toItems(body.value.products, inexactNumbersOf(req)) },
      });
    },
  );

  router.post(
    '/api/ingest/products',
    ...intake({ platform: 'ingest', scope: 'products:write', retailer: true }, deps),
    async (req, res) => {
      const body = ingestBody(req.body);
      if (!body.ok) throw badRequest(body.failure.message);
      await submitCommand(deps, req, res, {
        kind: 'products.upsert',
        shop: body.value.shop,
        payload: { response: 'ingest', items: toItems(body.value.products, inexactNumbersOf(req)) },
      });
    },
  );

  return router;
}
