import { Router, type Request, type Response } from 'express';
import type { SchemaRegistry } from '@ingest/contracts';
import type { DailySnapshotRequest, RegisterChannelsRequest, RegisterLocationsRequest } from '@ingest/contracts/types';
import { badRequest, unprocessable } from '../errors/catalog.ts';
import { intake, type Intake } from '../edge/intake.ts';
import { submitCommand, type SubmitDeps } from '../commands/submit.ts';
import { businessDate, previousDate } from '@ingest/domain';

/**
 * The earliest snapshot_date accepted (docs/api.md "Value ranges"). The daily copy writes
 * today's levels under that date, so a date before the service could have held any stock is a
 * mistake, and PostgreSQL refuses some (year 0000): every accepted value must be storable.
 */
export const MIN_SNAPSHOT_DATE = '2000-01-01';

/** D14: the locations and channels registry, through the command log like every write (D1). */
export function adminRoutes(deps: SubmitDeps & Intake & { schemas: SchemaRegistry; businessTimezone: string }): Router {
  const router = Router();
  const locationsBody = deps.schemas.validator<RegisterLocationsRequest>('http/admin-locations.request.json');
  const channelsBody = deps.schemas.validator<RegisterChannelsRequest>('http/admin-channels.request.json');
  const registry = intake({ platform: 'ingest', scope: 'registry:write', retailer: true }, deps);

  router.post('/api/admin/locations', ...registry, async (req: Request, res: Response) => {
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

  router.post('/api/admin/channels', ...registry, async (req: Request, res: Response) => {
    const b = channelsBody(req.body);
    if (!b.ok) throw badRequest(b.failure.message);
    const channels = b.value.channels.map((c) => ({ channel_id: (c.channel_id ?? deps.newId()).toLowerCase(), name: c.name }));
    await submitCommand(deps, req, res, { kind: 'channels.register', shop: b.value.shop, payload: { channels } });
  });

  const dailyBody = deps.schemas.validator<DailySnapshotRequest>('http/admin-daily-snapshot.request.json');
  // D16 on demand: the same command the daily scheduler appends, for one shop and date.
  router.post(
    '/api/admin/daily-snapshot',
    ...intake({ platform: 'ingest', scope: null, retailer: false }, deps),
    async (req: Request, res: Response) => {
      const b = dailyBody(req.body);
      if (!b.ok) throw badRequest(b.failure.message);
      const now = deps.now();
      // Like the scheduler: by default the business day that ended last; never a day not yet begun.
      const today = businessDate(now, deps.businessTimezone);
      const snapshotDate = b.value.snapshot_date ?? previousDate(today);
      if (snapshotDate > today)
        throw unprocessable('invalid_payload', `snapshot_date ${snapshotDate} is after the current business date ${today}`);
      if (snapshotDate < MIN_SNAPSHOT_DATE)
        throw unprocessable('invalid_payload', `snapshot_date ${snapshotDate} is before ${MIN_SNAPSHOT_DATE}`);
      await submitCommand(deps, req, res, {
        kind: 'inventory.daily_snapshot',
        shop: b.value.shop,
        payload: { snapshot_date: snapshotDate },
        receivedAt: now,
      });
    },
  );

  return router;
}
