import { describe, expect, it } from 'vitest';
import { auditEvent, EVENT_DATA_SCHEMAS, withDataschema } from './events.ts';

// The relay names the schema of each event's data in ce_dataschema, on the way out.
describe('withDataschema', () => {
  const log = {
    log_id: 'l',
    shop: 's',
    change_type: 'created',
    command_id: '01a1fc98-0eb1-76d9-abf5-bac488b6b8e4',
    created_at: '2026-11-23T00:00:00.000Z',
    actor: 'platform',
  };

  it('adds ce_dataschema for a known event type, under the schema base', () => {
    const e = auditEvent('product_update_logs', log);
    expect(withDataschema(e.headers, 'https://x.test/schemas')).toEqual({
      ...e.headers,
      ce_dataschema: 'https://x.test/schemas/events/audit-record.json',
    });
    expect(e.headers['ce_dataschema']).toBeUndefined();
  });

  it('leaves headers without a known ce_type as they are', () => {
    expect(withDataschema({ command_id: 'c' }, 'https://x.test/schemas')).toEqual({ command_id: 'c' });
    expect(withDataschema({ ce_type: 'other' }, 'https://x.test/schemas')).toEqual({ ce_type: 'other' });
  });

  it('knows the stock events', () => {
    for (const kind of ['stock_zero', 'stock_restored'])
      expect(EVENT_DATA_SCHEMAS[`com.retail-ingestion.inventory.${kind}.v1`]).toBe('events/stock-level-event.json');
  });
});
