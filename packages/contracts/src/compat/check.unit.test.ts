import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../schemaFiles.ts';
import { checkContracts, compareContracts } from './check.ts';
import { formatReport } from './report.ts';

// What the changelog can declare (docs/changelog.md) and what it cannot, on small documents.
const op = (summary: string) => ({
  post: {
    summary,
    requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Req' } } } },
    responses: { '200': { description: 'ok' } },
  },
});
const Req = (extra: JsonObject = {}) => ({
  $comment: 'schemas/http/req.json',
  type: 'object',
  properties: { shop: { type: 'string' }, location_id: {}, location: {} },
  ...extra,
});
const event = (properties: JsonObject) => ({ type: 'object', properties });

function contracts(
  o: { paths?: string[]; req?: JsonObject; topics?: string[]; event?: JsonObject; files?: string[] } = {},
): Map<string, JsonObject> {
  const paths = Object.fromEntries((o.paths ?? ['/api/a', '/api/b']).map((p) => [p, op(p)]));
  const channels = Object.fromEntries((o.topics ?? ['inventory.stock-zero.v1']).map((t) => [t, { address: t, messages: {} }]));
  const set = new Map<string, JsonObject>([
    ['openapi.json', { openapi: '3.1.0', paths, components: { schemas: { Req: o.req ?? Req() } } }],
    ['asyncapi.json', { asyncapi: '3.0.0', channels }],
  ]);
  for (const f of o.files ?? ['schemas/events/stock-level-event.json']) set.set(f, o.event ?? event({ barcode: { type: 'string' } }));
  return set;
}
const xor = Req({ oneOf: [{ required: ['location_id'] }, { required: ['location'] }] });
const changelog = (...lines: string[]) =>
  `# Changelog\n\n## Unreleased\n\n${lines.join('\n')}\n\n## 2026-11-26\n\n- Breaking: \`/api/a\` is removed; use \`/api/b\`.\n`;

describe('compareContracts', () => {
  it('reports a change once, with every operation, topic or served file that reaches it', () => {
    const found = compareContracts(contracts(), contracts({ req: Req({ additionalProperties: false }) }));
    expect(found).toEqual([
      expect.objectContaining({ rule: 'type-narrowed', where: 'schemas/http/req.json', via: ['POST /api/a', 'POST /api/b'] }),
    ]);
  });

  it('schema-removed: a served schema file that is gone; an event file read as an event', () => {
    expect(compareContracts(contracts(), contracts({ files: [] }))).toEqual([
      expect.objectContaining({ rule: 'schema-removed', role: 'event', subject: 'schemas/events/stock-level-event.json' }),
    ]);
    expect(compareContracts(contracts(), contracts({ event: event({ gtin: { type: 'string' } }) }))).toEqual([
      expect.objectContaining({ rule: 'field-removed', via: ['/schemas/events/stock-level-event.json'] }),
    ]);
  });
});

describe('checkContracts: declarations in the Unreleased section', () => {
  it('an undeclared break fails, and the report says where, through what, and what to do', () => {
    const result = checkContracts(contracts(), contracts({ topics: [] }), changelog());
    expect(result.breaking.map((f) => f.rule)).toEqual(['topic-removed']);
    const report = formatReport(result);
    expect(report).toContain('[topic-removed] event: topic `inventory.stock-zero.v1` removed');
    expect(report).toContain('via  topic inventory.stock-zero.v1');
    expect(report).toContain('keep publishing it beside its successor');
    expect(report).toContain('docs/api.md#changing-a-published-contract');
  });

  it('Breaking: a removal whose successor was already in the last release passes', () => {
    const before = contracts({ topics: ['inventory.stock-zero.v1', 'inventory.stock-zero.v2'] });
    const after = contracts({ topics: ['inventory.stock-zero.v2'] });
    const line = '- Breaking: `inventory.stock-zero.v1` is removed; consumers read `inventory.stock-zero.v2` (since 2026-11-26).';
    const result = checkContracts(before, after, changelog(line));
    expect(result.breaking).toEqual([]);
    expect(result.declared).toEqual([{ finding: expect.objectContaining({ rule: 'topic-removed' }), line }]);
  });

  it('Breaking: refused when the successor is new in this change (no release had both), or not named', () => {
    const line = '- Breaking: `inventory.stock-zero.v1` is removed; use `inventory.stock-zero.v2`.';
    const result = checkContracts(contracts(), contracts({ topics: ['inventory.stock-zero.v2'] }), changelog(line));
    expect(result.breaking).toEqual([
      expect.objectContaining({ rule: 'topic-removed', hint: expect.stringContaining('ship the successor in a release first') }),
    ]);
    expect(result.unused).toEqual([line]);
  });

  it('Breaking: an operation is named by method and path, or by its path; only the section Unreleased counts', () => {
    const before = contracts({ paths: ['/api/a', '/api/v2/a'] });
    const after = contracts({ paths: ['/api/v2/a'] });
    expect(checkContracts(before, after, changelog('- Breaking: `POST /api/a` is removed; use `POST /api/v2/a`.')).breaking).toEqual([]);
    expect(checkContracts(before, after, changelog('- Breaking: `/api/a` is removed; use `/api/v2/a`.')).breaking).toEqual([]);
    // The 2026-11-26 section of changelog() declares the same removal: it was another release.
    expect(checkContracts(contracts({ paths: ['/api/a', '/api/b'] }), contracts({ paths: ['/api/b'] }), changelog()).breaking).toHaveLength(
      1,
    );
  });

  it('Breaking: cannot excuse a change in place, only a removal', () => {
    const result = checkContracts(
      contracts(),
      contracts({ event: event({}) }),
      changelog('- Breaking: `schemas/events/stock-level-event.json` changes; use `POST /api/b`.'),
    );
    expect(result.breaking.map((f) => f.rule)).toEqual(['field-removed']);
  });

  it('Stricter request description: passes a narrower request of the operations it names', () => {
    const line =
      '- Stricter request description: `POST /api/a`, `POST /api/b`: exactly one of `location_id` and `location` (already refused, D11).';
    const result = checkContracts(contracts(), contracts({ req: xor }), changelog(line));
    expect(result.breaking).toEqual([]);
    expect(result.declared.map((d) => d.finding.what)).toEqual(['oneOf added']);
  });

  it('Stricter request description: refused when another operation reaches the same schema', () => {
    const result = checkContracts(
      contracts(),
      contracts({ req: xor }),
      changelog('- Stricter request description: `POST /api/a`: exactly one location.'),
    );
    expect(result.breaking).toEqual([
      expect.objectContaining({ rule: 'type-narrowed', hint: expect.stringContaining('also reached by POST /api/b') }),
    ]);
  });

  it('Stricter request description: never excuses a removed operation, an event or a response', () => {
    const line = '- Stricter request description: `POST /api/a`, `POST /api/b`.';
    expect(checkContracts(contracts(), contracts({ paths: ['/api/b'] }), changelog(line)).breaking.map((f) => f.rule)).toEqual([
      'operation-removed',
    ]);
    expect(checkContracts(contracts(), contracts({ event: event({}) }), changelog(line)).breaking.map((f) => f.rule)).toEqual([
      'field-removed',
    ]);
  });
});
