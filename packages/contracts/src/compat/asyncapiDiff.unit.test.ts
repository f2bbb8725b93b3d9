import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../schemaFiles.ts';
import { compareAsyncApi } from './asyncapiDiff.ts';
import type { Finding } from './types.ts';

// The topic rules of docs/api.md#changing-a-published-contract on a small AsyncAPI 3.0 document.
const shopKey = { kafka: { key: { type: 'string', description: 'The shop domain' }, bindingVersion: '0.5.0' } };
function topics(edit: (doc: any) => void = () => {}): JsonObject {
  const doc: any = {
    asyncapi: '3.0.0',
    channels: {
      commands: { address: 'ingest.commands.v1', messages: { command: { $ref: '#/components/messages/command' } } },
      stockZero: { address: 'inventory.stock-zero.v1', messages: { stockZero: { $ref: '#/components/messages/stockZero' } } },
    },
    components: {
      schemas: {
        CommandEnvelope: {
          $comment: 'schemas/commands/envelope.json',
          type: 'object',
          required: ['kind'],
          properties: { kind: { type: 'string' } },
        },
        StockLevelEvent: {
          $comment: 'schemas/events/stock-level-event.json',
          type: 'object',
          required: ['barcode'],
          properties: { barcode: { type: 'string' }, change_type: { enum: ['snapshot', 'levels_delta'] } },
        },
      },
      messages: {
        command: { payload: { $ref: '#/components/schemas/CommandEnvelope' }, bindings: shopKey },
        stockZero: {
          headers: { type: 'object', properties: { ce_type: { const: 'com.retail-ingestion.inventory.stock_zero.v1' } } },
          payload: { $ref: '#/components/schemas/StockLevelEvent' },
          bindings: shopKey,
        },
      },
    },
  };
  edit(doc);
  return doc as JsonObject;
}

function diff(edit: (doc: any) => void): Finding[] {
  const out: Finding[] = [];
  compareAsyncApi(new Map([['asyncapi.json', topics()]]), new Map([['asyncapi.json', topics(edit)]]), (c, via) =>
    out.push({ ...c, via: [via] }),
  );
  return out;
}
const event = (doc: any) => doc.components.schemas.StockLevelEvent;

describe('compareAsyncApi', () => {
  it('finds nothing in the same document, nor in a new topic, message or optional event field', () => {
    expect(diff(() => {})).toEqual([]);
    expect(
      diff((doc) => {
        doc.channels.stockZeroV2 = { address: 'inventory.stock-zero.v2', messages: {} };
        event(doc).properties.gtin = { type: 'string' };
      }),
    ).toEqual([]);
  });

  it('topic-renamed: the same channel with another address', () => {
    expect(diff((doc) => (doc.channels.stockZero.address = 'inventory.stock-zero'))).toEqual([
      expect.objectContaining({
        rule: 'topic-renamed',
        what: 'topic `inventory.stock-zero.v1` renamed to `inventory.stock-zero`',
        via: ['topic inventory.stock-zero.v1'],
      }),
    ]);
  });

  it('topic-removed: no channel of that id or address; a channel id renamed is the same topic', () => {
    expect(diff((doc) => delete doc.channels.stockZero)).toEqual([
      expect.objectContaining({ rule: 'topic-removed', subject: 'inventory.stock-zero.v1' }),
    ]);
    expect(
      diff((doc) => {
        doc.channels.zero = doc.channels.stockZero;
        delete doc.channels.stockZero;
      }),
    ).toEqual([]);
  });

  it('message-removed and key-changed', () => {
    expect(diff((doc) => (doc.channels.stockZero.messages = {}))).toEqual([
      expect.objectContaining({ rule: 'message-removed', subject: 'stockZero' }),
    ]);
    expect(
      diff((doc) => (doc.components.messages.stockZero.bindings = { kafka: { key: { type: 'string', description: 'product_id' } } })),
    ).toEqual([expect.objectContaining({ rule: 'key-changed', role: 'event' })]);
  });

  it('an event field renamed, an enum value removed, a ce_type changed: event payload and headers', () => {
    const found = diff((doc) => {
      event(doc).properties = { gtin: { type: 'string' }, change_type: { enum: ['snapshot'] } };
      event(doc).required = ['gtin'];
      doc.components.messages.stockZero.headers.properties.ce_type.const = 'com.retail-ingestion.inventory.stock_zero.v2';
    });
    expect(found.map((f) => [f.rule, f.role, f.where])).toEqual([
      ['enum-value-removed', 'event', 'asyncapi.json#/components/messages/stockZero/headers/properties/ce_type'],
      ['field-removed', 'event', 'schemas/events/stock-level-event.json#/properties/barcode'],
      ['enum-value-removed', 'event', 'schemas/events/stock-level-event.json#/properties/change_type'],
      ['required-added', 'event', 'schemas/events/stock-level-event.json#/properties/gtin'],
    ]);
  });

  it('the command log is read as commands: a new required envelope field breaks every replay (D26)', () => {
    const found = diff((doc) => {
      doc.components.schemas.CommandEnvelope.required.push('tenant');
      doc.components.schemas.CommandEnvelope.properties.tenant = { type: 'string' };
    });
    expect(found).toEqual([expect.objectContaining({ rule: 'required-added', role: 'command', via: ['topic ingest.commands.v1'] })]);
  });
});
