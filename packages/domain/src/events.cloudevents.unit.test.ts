import { describe, expect, it } from 'vitest';
import { auditBatch, auditEvent, CLOUDEVENTS_SOURCE, cloudEventHeaders, operatorActionEvent } from './events.ts';
import { eventId } from './ids.ts';

// D18: events follow the CloudEvents 1.0 Kafka binding in binary mode, so a standard SDK reads
// them; D3/D5: their ids derive from (command_id, kind, key), so a consumer can dedupe.
const CMD = '01a1fc98-0eb1-76d9-abf5-bac488b6b8e4';

describe('cloudEventHeaders (D18, binary mode)', () => {
  it('carries spec version 1.0, the projector as source, the id, type and time, and a JSON content type', () => {
    expect(cloudEventHeaders('id-1', 'com.example.t.v1', '2026-11-23T00:00:00.000Z', 'platform')).toEqual({
      ce_specversion: '1.0',
      ce_id: 'id-1',
      ce_type: 'com.example.t.v1',
      ce_source: '/retail-ingestion/projector',
      ce_time: '2026-11-23T00:00:00.000Z',
      ce_actor: 'platform',
      'content-type': 'application/json',
    });
    expect(CLOUDEVENTS_SOURCE).toBe('/retail-ingestion/projector');
  });

  it('adds ce_subject only when there is one', () => {
    expect(cloudEventHeaders('i', 't', 'x', 'platform', 'p/l')).toMatchObject({ ce_subject: 'p/l' });
    expect(cloudEventHeaders('i', 't', 'x', 'platform')).not.toHaveProperty('ce_subject');
  });
});

describe('audit events (D5)', () => {
  it('one audit batch per (command, log table): its id derives from both, and it names what the relay expands', () => {
    const batch = auditBatch('inventory_update_logs', CMD, 'shop.example');
    expect(batch).toEqual({
      event_id: eventId(CMD, 'audit_batch', 'inventory_update_logs'),
      channel: 'audit',
      key: 'shop.example',
      headers: {},
      payload: { event_type: 'audit_batch', log_table: 'inventory_update_logs', command_id: CMD },
      command_id: CMD,
      log_table: 'inventory_update_logs',
    });
    expect(auditBatch('product_update_logs', CMD, 'shop.example').event_id).not.toBe(batch.event_id);
  });

  it('an audit record event takes its id from the record: (command_id, audit_record, log_id)', () => {
    const log = {
      log_id: 'log-1',
      shop: 's',
      change_type: 'created',
      command_id: CMD,
      created_at: '2026-11-23T00:00:00.000Z',
      actor: 'platform',
    };
    const e = auditEvent('product_update_logs', log);
    expect(e.event_id).toBe(eventId(CMD, 'audit_record', 'log-1'));
    expect(e.headers['ce_id']).toBe(e.event_id);
    expect(e.event_id).not.toBe(auditEvent('product_update_logs', { ...log, log_id: 'log-2' }).event_id);
  });

  it("D28: an audit record event names the record's actor in the ce_actor extension, and the record keeps it", () => {
    const log = { log_id: 'log-1', shop: 's', change_type: 'created', command_id: CMD, created_at: '2026-11-23T00:00:00.000Z' };
    const e = auditEvent('product_update_logs', { ...log, actor: 'key_0123456789abcdef' });
    expect(e.headers['ce_actor']).toBe('key_0123456789abcdef');
    expect(e.payload['record']).toMatchObject({ actor: 'key_0123456789abcdef' });
  });
});

describe('operator action events (docs/operations.md#parked-commands)', () => {
  const action = {
    action_id: '0f8e1c2a-3b4d-4e5f-8a6b-7c8d9e0f1a2b',
    action: 'skip' as const,
    command_id: CMD,
    shop: 'shop.example',
    actor: 'cli:ops',
    reason: 'a date PostgreSQL cannot store',
    hold: false,
    outcome: { applied: ['01a1fc98-0eb1-76d9-abf5-bac488b6b8e5'], failed: null, remaining: 0 },
    occurred_at: '2026-11-23T00:00:00.000Z',
  };

  it('go on the audit channel keyed by shop, with an id derived from (command_id, operator_action, action_id)', () => {
    const e = operatorActionEvent(action);
    expect(e.event_id).toBe(eventId(CMD, 'operator_action', action.action_id));
    expect(e).toMatchObject({ channel: 'audit', key: 'shop.example', command_id: CMD });
    expect(e.log_table).toBeUndefined();
    expect(e.headers).toEqual(cloudEventHeaders(e.event_id, 'com.retail-ingestion.operator_action.v1', action.occurred_at, 'cli:ops', CMD));
    // D28: who acted, and the command acted on.
    expect(e.headers).toMatchObject({ ce_actor: 'cli:ops', ce_subject: CMD });
    expect(e.payload).toEqual({ event_id: e.event_id, event_type: 'operator_action', schema_version: 1, ...action });
    expect(operatorActionEvent({ ...action, action_id: '0f8e1c2a-3b4d-4e5f-8a6b-7c8d9e0f1a2c' }).event_id).not.toBe(e.event_id);
  });
});
