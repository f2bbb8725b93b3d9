import { describe, expect, it } from 'vitest';
import { auditBatch } from '../events.ts';
import { eventId } from '../ids.ts';
import { inventoryEvents, stockEvent, type StockChange } from './outcome.ts';
import { LOC, PA, SHOP, T1, meta } from '../../testing/inventory.ts';

// The events both paths emit (the deciders' LevelBook and packages/projection/src/inventory's
// set-based statements): D18's stock_zero / stock_restored, and the audit batch of D5.
const change: StockChange = {
  product_id: PA,
  location_id: LOC,
  barcode: 'A',
  previous_available_qty: 3,
  available_qty: 0,
  on_hand_qty: 2,
  seq: 7,
};

describe('stockEvent (D18)', () => {
  it('given a level moved to 0, then a stock_zero keyed by shop, its id derived from the level and its seq (D3)', () => {
    const c = meta({ inventory_as_of: T1 });
    const e = stockEvent(c, 'stock_zero', 'available_delta', change);
    const id = eventId(c.command_id, 'stock_zero', `${PA}|${LOC}|7`);
    expect(e).toMatchObject({ event_id: id, channel: 'stock_zero', key: SHOP, command_id: c.command_id });
    expect(e.headers).toMatchObject({
      ce_id: id,
      ce_type: 'com.retail-ingestion.inventory.stock_zero.v1',
      ce_time: T1,
      ce_subject: `${PA}/${LOC}`,
      ce_actor: 'platform',
    });
    expect(e.payload).toEqual({
      event_id: id,
      event_type: 'stock_zero',
      schema_version: 1,
      shop: SHOP,
      product_id: PA,
      barcode: 'A',
      location_id: LOC,
      previous_available_qty: 3,
      available_qty: 0,
      on_hand_qty: 2,
      change_type: 'available_delta',
      source_system: 'pos',
      occurred_at: T1,
      command_id: c.command_id,
      seq: 7,
    });
  });

  it("D28: given a command of a shop's key, then its stock events name that key in ce_actor", () => {
    const e = stockEvent(meta({ actor: 'key_0123456789abcdef' }), 'stock_restored', 'levels_set', { ...change, available_qty: 1 });
    expect(e.headers['ce_actor']).toBe('key_0123456789abcdef');
  });

  it('given the same change as stock_restored, then another id and type on its own channel', () => {
    const c = meta();
    const zero = stockEvent(c, 'stock_zero', 'snapshot', change);
    const restored = stockEvent(c, 'stock_restored', 'snapshot', { ...change, previous_available_qty: 0, available_qty: 4 });
    expect(restored.event_id).not.toBe(zero.event_id);
    expect(restored.channel).toBe('stock_restored');
    expect(restored.headers['ce_type']).toBe('com.retail-ingestion.inventory.stock_restored.v1');
  });
});

describe('inventoryEvents (D5)', () => {
  it('given a write with logs, then its audit batch first, then its stock events in order', () => {
    const c = meta();
    const stock = [stockEvent(c, 'stock_zero', 'snapshot', change)];
    expect(inventoryEvents(c, 2, stock)).toEqual([auditBatch('inventory_update_logs', c.command_id, SHOP), ...stock]);
  });

  it('given a write without logs, then no audit batch', () => {
    expect(inventoryEvents(meta(), 0, [])).toEqual([]);
  });
});
