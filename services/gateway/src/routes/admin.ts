import { Router, type Request, type Response } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import { requireIngestSecret } from '../auth.ts';
import { parseJsonObject } from '../body.ts';
import { badRequest, unprocessable } from '../errors.ts';
import { submitCommand, type SubmitDeps } from '../submit.ts';
import { businessDate, previousDate } from '@ingest/runtime';

type Ext = { identifier_type: string; identifier_value: string };

/** D14: the locations and channels registry, through the command log like every write (D1). */
export function adminRoutes(deps: SubmitDeps & { schemas: SchemaRegistry; ingestSecrets: string[]; bodyLimitBytes: number; businessTimezone: string }): Router {
  const router = Router();
  const locationsBody = deps.schemas.validator<{ shop: string; locations: Array<{ location_id?: string; name: string; identifiers?: Ext[] }> }>(
    'http/admin-locations.request.json',
  );
  const channelsBody = deps.schemas.validator<{ shop: string; channels: Array<{ channel_id?: string; name: string }> }>('http/admin-channels.request.json');
  const auth = requireIngestSecret(deps.ingestSecrets);
  const json = parseJsonObject(deps.bodyLimitBytes);

  router.post('/api/admin/locations', auth, ...json, async (req: Request, res: Response) => {
    const b = locationsBody(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    // An omitted id is chosen here and carried in the command (D3), so a replay keeps it.
    const locations = b.value.locations.map((l) => ({
      location_id: (l.location_id ?? deps.newId()).toLowerCase(),
      name: l.name,
      identifiers: l.identifiers ?? [],
    }));
    await submitCommand(deps, req, res, { kind: 'locations.register', shop: b.value.shop, payload: { locations } });
  });

  router.post('/api/admin/channels', auth, ...json, async (req: Request, res: Response) => {
    const b = channelsBody(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    const channels = b.value.channels.map((c) => ({ channel_id: (c.channel_id ?? deps.newId()).toLowerCase(), name: c.name }));
    await submitCommand(deps, req, res, { kind: 'channels.register', shop: b.value.shop, payload: { channels } });
  });

  const dailyBody = deps.schemas.validator<{ shop: string; snapshot_date?: string }>('http/admin-daily-snapshot.request.json');
  // D16 on demand: the same command the daily scheduler appends, for one shop and date.
  router.post('/api/admin/daily-snapshot', auth, ...json, async (req: Request, res: Response) => {
    const b = dailyBody(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    const now = deps.now();
    // Like the scheduler: by default the business day that ended last; never a day not yet begun.
    const today = businessDate(now, deps.businessTimezone);
    const snapshotDate = b.value.snapshot_date ?? previousDate(today);
    if (snapshotDate > today) throw unprocessable('invalid_payload', `snapshot_date ${snapshotDate} is after the current business date ${today}`);
    await submitCommand(deps, req, res, { kind: 'inventory.daily_snapshot', shop: b.value.shop, payload: { snapshot_date: snapshotDate }, receivedAt: now });
  });

  return router;
}
