import type { AuditRecord, OperatorActionEvent } from '@ingest/contracts/types';
import { eventId } from './ids.ts';

/** Where an event goes; the projector maps a channel to its configured topic. */
export type EventChannel = 'audit' | 'stock_zero' | 'stock_restored';

/** An event for the outbox (D5): CloudEvents binary mode, headers + JSON payload (D18). */
export interface OutboxEvent {
  event_id: string;
  channel: EventChannel;
  key: string;
  headers: Record<string, string>;
  payload: Record<string, unknown>;
  command_id: string;
  /** An audit batch: one outbox row for every record of this log table written by the command. */
  log_table?: LogTable;
}

/** The update-log tables of schemas/events/audit-record.json. */
export type LogTable = AuditRecord['log_table'];

export interface AuditedLog {
  log_id: string;
  shop: string;
  change_type: string;
  command_id: string;
  created_at: string;
  /** D28: the actor of the command that wrote the record, as stored with it. */
  actor: string;
}

export const CLOUDEVENTS_SOURCE = '/retail-ingestion/projector';

/**
 * The JSON Schema (a file under schemas/) of each CloudEvent type's data. The relay names it in
 * `ce_dataschema` when it publishes, as a URL the gateway serves; it is not part of the
 * stored outbox row, so the URL can follow the deployment without changing what a replay writes.
 */
export const EVENT_DATA_SCHEMAS: Readonly<Record<string, `events/${string}.json`>> = {
  'com.retail-ingestion.audit_record.v1': 'events/audit-record.json',
  'com.retail-ingestion.inventory.stock_zero.v1': 'events/stock-level-event.json',
  'com.retail-ingestion.inventory.stock_restored.v1': 'events/stock-level-event.json',
  'com.retail-ingestion.operator_action.v1': 'events/operator-action.json',
};

/** The headers of a CloudEvent with its `ce_dataschema` under `schemaBaseUrl` (`<public base>/schemas`); other headers as they are. */
export function withDataschema(headers: Record<string, string>, schemaBaseUrl: string): Record<string, string> {
  const schema = headers['ce_type'] === undefined ? undefined : EVENT_DATA_SCHEMAS[headers['ce_type']];
  return schema ? { ...headers, ce_dataschema: `${schemaBaseUrl}/${schema}` } : headers;
}

/**
 * The CloudEvents attributes of an event as binary-mode headers. `actor` (D28: the key id or
 * platform of the command behind the event) is an extension attribute, header `ce_actor`: a
 * consumer learns who wrote a change without reading the command.
 */
export function cloudEventHeaders(id: string, type: string, time: string, actor: string, subject?: string): Record<string, string> {
  return {
    ce_specversion: '1.0',
    ce_id: id,
    ce_type: type,
    ce_source: CLOUDEVENTS_SOURCE,
    ce_time: time,
    ...(subject ? { ce_subject: subject } : {}),
    ce_actor: actor,
    'content-type': 'application/json',
  };
}

/**
 * D5 for update logs: the projection writes one outbox row per (command, log table); the relay
 * expands it into one audit event per record (auditEvent), in log_seq order.
 */
export function auditBatch(table: LogTable, commandId: string, shop: string): OutboxEvent {
  return {
    event_id: eventId(commandId, 'audit_batch', table),
    channel: 'audit',
    key: shop,
    headers: {},
    payload: { event_type: 'audit_batch', log_table: table, command_id: commandId },
    command_id: commandId,
    log_table: table,
  };
}

/** Every update-log record is also published as an audit event, keyed by shop (D5). */
export function auditEvent(table: LogTable, log: AuditedLog & Record<string, unknown>): OutboxEvent {
  const id = eventId(log.command_id, 'audit_record', log.log_id);
  return {
    event_id: id,
    channel: 'audit',
    key: log.shop,
    headers: cloudEventHeaders(id, 'com.retail-ingestion.audit_record.v1', log.created_at, log.actor, table),
    payload: {
      event_id: id,
      event_type: 'audit_record',
      schema_version: 1,
      shop: log.shop,
      log_table: table,
      log_id: log.log_id,
      change_type: log.change_type,
      command_id: log.command_id,
      occurred_at: log.created_at,
      record: log,
    } satisfies AuditRecord,
    command_id: log.command_id,
  };
}

/** An operator's action as its audit event carries it (agent_runtime.operator_actions). */
export type OperatorActionFacts = Omit<OperatorActionEvent, 'event_id' | 'event_type' | 'schema_version'>;

/**
 * An operator's retry or skip of a parked command, published on the audit channel like the update
 * logs' records (D5), keyed by shop. Its id is derived from the action, so a re-sent outbox row
 * is the same event.
 */
export function operatorActionEvent(a: OperatorActionFacts): OutboxEvent {
  const id = eventId(a.command_id, 'operator_action', a.action_id);
  return {
    event_id: id,
    channel: 'audit',
    key: a.shop,
    headers: cloudEventHeaders(id, 'com.retail-ingestion.operator_action.v1', a.occurred_at, a.actor, a.command_id),
    payload: { event_id: id, event_type: 'operator_action', schema_version: 1, ...a } satisfies OperatorActionEvent,
    command_id: a.command_id,
  };
}
