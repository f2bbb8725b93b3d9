import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkContracts,
  formatReport,
  readDocSet,
  readSchemaFiles,
  RELEASED_DIR,
  type JsonObject,
  type SchemaFile,
} from '@ingest/contracts';
import { defaultDocs } from '../app.ts';
import { startTestGateway, type TestGateway } from '../../testing/testGateway.ts';
import { servedContracts } from './docs.ts';

// The published contracts (docs/api.md#changing-a-published-contract): servedContracts is what the
// routes serve, so `npm run gen` commits what clients fetch; and each rule bites on the real
// documents against the last release (schemas/published/released/).
let g: TestGateway;
beforeAll(async () => {
  g = await startTestGateway();
});
afterAll(() => g?.close());

describe('servedContracts', () => {
  it('is exactly what GET /openapi.json, /asyncapi.json and /schemas/… answer on the default settings', async () => {
    const served = servedContracts(defaultDocs());
    expect([...served.keys()].filter((k) => !k.startsWith('schemas/'))).toEqual(['openapi.json', 'asyncapi.json']);
    expect(served.size).toBe(2 + readSchemaFiles().length);
    for (const [path, doc] of served) {
      const res = await fetch(`${g.url}/${path}`);
      expect(res.status, path).toBe(200);
      expect((await res.json()) as JsonObject, path).toEqual(doc);
    }
  });
});

describe('the compatibility check on the real contracts', () => {
  const released = readDocSet(RELEASED_DIR);
  const NO_DECLARATION = '# Changelog\n\n## Unreleased\n';
  const CHANGELOG = readFileSync(new URL('../../../../docs/changelog.md', import.meta.url), 'utf8');
  /** The contracts the gateway would serve with one schemas/ file edited, or other topics. */
  const servedWith = (edit: { file?: string; change?: (schema: any) => void; topics?: (t: any) => void }) => {
    const files: SchemaFile[] = readSchemaFiles().map((f) => {
      if (f.name !== edit.file) return f;
      const schema = structuredClone(f.schema);
      edit.change?.(schema);
      return { ...f, schema };
    });
    const docs = defaultDocs();
    const topics = structuredClone(docs.topics);
    edit.topics?.(topics);
    return servedContracts({ ...docs, topics, files });
  };
  // Each case below is one edit of today's contracts; what docs/changelog.md declares since the last
  // release is set aside (it would excuse an edit of a request it names), and so is what today's
  // contracts already report without it: a case sees the findings its edit adds.
  const key = (f: { rule: string; where: string; what: string }) => `${f.rule} ${f.where} ${f.what}`;
  const today = new Set(checkContracts(released, servedContracts(defaultDocs()), NO_DECLARATION).breaking.map(key));
  const breaking = (served: Map<string, JsonObject>) => {
    const result = checkContracts(released, served, NO_DECLARATION);
    return { ...result, breaking: result.breaking.filter((f) => !today.has(key(f))) };
  };

  it('the contracts served today are compatible with the last release, given what docs/changelog.md declares', () => {
    const result = checkContracts(released, servedContracts(defaultDocs()), CHANGELOG);
    expect(formatReport({ ...result, declared: [] })).toBe('');
  });

  it('an event field renamed (barcode -> gtin in stock-level-event.json) fails on both topics', () => {
    const result = breaking(
      servedWith({
        file: 'events/stock-level-event.json',
        change: (s) => {
          s.properties.gtin = s.properties.barcode;
          delete s.properties.barcode;
          s.required = s.required.map((r: string) => (r === 'barcode' ? 'gtin' : r));
        },
      }),
    );
    expect(result.breaking[0]).toMatchObject({
      rule: 'field-removed',
      role: 'event',
      where: 'schemas/events/stock-level-event.json#/properties/barcode',
      via: expect.arrayContaining([
        'topic inventory.stock-zero.v1',
        'topic inventory.stock-restored.v1',
        '/schemas/events/stock-level-event.json',
      ]),
    });
    expect(formatReport(result)).toContain('publish a new event version beside this one');
  });

  it('an enum value removed from a request (mode delta of endpoint 3) fails', () => {
    const result = breaking(
      servedWith({ file: 'http/inventory-levels.request.json', change: (s) => (s.properties.mode.enum = ['absolute']) }),
    );
    expect(result.breaking).toEqual([
      expect.objectContaining({
        rule: 'enum-value-removed',
        role: 'request',
        what: 'value "delta" no longer accepted',
        via: ['POST /api/inventory-levels/bulk-upsert'],
      }),
    ]);
  });

  it('a new required request field (region on the snapshot) fails', () => {
    const result = breaking(
      servedWith({
        file: 'http/inventory-snapshot.request.json',
        change: (s) => {
          s.properties.region = { type: 'string' };
          s.required.push('region');
        },
      }),
    );
    expect(result.breaking).toEqual([
      expect.objectContaining({
        rule: 'required-added',
        what: 'field `region` is now required',
        via: ['POST /api/ingest/inventory-snapshot'],
      }),
    ]);
  });

  it('a topic renamed (inventory.stock-zero.v1 -> inventory.stock-zero) fails', () => {
    const result = breaking(servedWith({ topics: (t) => (t.stockZero.topic = 'inventory.stock-zero') }));
    expect(result.breaking).toEqual([
      expect.objectContaining({ rule: 'topic-renamed', what: 'topic `inventory.stock-zero.v1` renamed to `inventory.stock-zero`' }),
    ]);
  });
});
