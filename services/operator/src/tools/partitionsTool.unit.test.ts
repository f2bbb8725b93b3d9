import { describe, expect, it } from 'vitest';
import { parsePartitionsArgs } from './partitionsTool.ts';

// The partitions tool's command line (docs/operations.md#update-log-partitions).
describe('parsePartitionsArgs', () => {
  it('reads list, ensure with or without a month, archive with its directory, restore with its manifest', () => {
    expect(parsePartitionsArgs(['list'])).toEqual({ ok: true, request: { verb: 'list' } });
    expect(parsePartitionsArgs(['ensure'])).toEqual({ ok: true, request: { verb: 'ensure', month: null } });
    expect(parsePartitionsArgs(['ensure', '--month', '2026-01'])).toEqual({
      ok: true,
      request: { verb: 'ensure', month: new Date('2026-01-01T00:00:00Z') },
    });
    expect(parsePartitionsArgs(['archive', 'sot.inventory_update_logs_p202601', '--to', '/b'])).toEqual({
      ok: true,
      request: { verb: 'archive', partition: 'sot.inventory_update_logs_p202601', dir: '/b', keepTable: false },
    });
    expect(parsePartitionsArgs(['archive', 'x', '--to=/b', '--keep-table'])).toMatchObject({ ok: true, request: { keepTable: true } });
    expect(parsePartitionsArgs(['restore', '/b/x.manifest.json'])).toEqual({
      ok: true,
      request: { verb: 'restore', manifest: '/b/x.manifest.json' },
    });
  });

  it('refuses what is not one of them', () => {
    expect(parsePartitionsArgs([])).toEqual({ ok: false, error: null });
    expect(parsePartitionsArgs(['drop'])).toEqual({ ok: false, error: null });
    expect(parsePartitionsArgs(['archive', 'x'])).toEqual({ ok: false, error: 'archive needs a partition and --to <dir>' });
    expect(parsePartitionsArgs(['ensure', '--month', '2026-13'])).toEqual({ ok: false, error: '--month is YYYY-MM' });
    expect(parsePartitionsArgs(['list', '--month', '2026-01'])).toEqual({ ok: false, error: '--month is for ensure' });
    expect(parsePartitionsArgs(['list', 'x'])).toEqual({ ok: false, error: 'list takes no arguments' });
    expect(parsePartitionsArgs(['restore'])).toEqual({ ok: false, error: 'restore takes the manifest file only' });
    expect(parsePartitionsArgs(['restore', 'm', 'n'])).toEqual({ ok: false, error: 'unexpected argument n' });
    expect(parsePartitionsArgs(['list', '--what'])).toMatchObject({ ok: false, error: expect.stringContaining('--what') });
  });
});
