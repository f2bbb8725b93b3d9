import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { changedSinceRelease, releasedForm, releasedText, shapeOf } from './releasedCommands.ts';
import { SchemaRegistry, SCHEMAS_DIR } from './validation.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/**
 * A copy of schemas/commands and schemas/http to change at will, its v1 released from its own files
 * (so that a test sees its own change only, whatever the repository's state).
 */
function schemasCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'released-'));
  dirs.push(dir);
  for (const group of ['commands', 'http']) cpSync(join(SCHEMAS_DIR, group), join(dir, group), { recursive: true });
  for (const file of readdirSync(join(dir, 'commands')).filter((f) => f.endsWith('.json')))
    writeFileSync(join(dir, 'commands', 'v1', file), releasedText(releasedForm(file, 1, dir)));
  return dir;
}

const edit = (dir: string, path: string, change: (s: Record<string, any>) => void) => {
  const schema = JSON.parse(readFileSync(join(dir, path), 'utf8'));
  change(schema);
  writeFileSync(join(dir, path), JSON.stringify(schema, null, 2));
};

const refsOf = (node: unknown): string[] =>
  Array.isArray(node)
    ? node.flatMap(refsOf)
    : node && typeof node === 'object'
      ? Object.entries(node).flatMap(([k, v]) => (k === '$ref' ? [String(v)] : refsOf(v)))
      : [];

describe('a command schema as released (docs/replay.md#command-versions)', () => {
  it('is self-contained: what it refers to, directly or not, is copied under its $defs', () => {
    const s = releasedForm('inventory-snapshot.json', 3);
    expect(s['$id']).toBe('https://schemas.ingest.local/commands/v3/inventory-snapshot.json');
    expect(Object.keys(s['$defs'] as object)).toEqual(['http.inventory-common.json', 'http.inventory-snapshot.lines.json']);
    expect(refsOf(s).every((r) => r.startsWith('#/$defs/'))).toBe(true);
    expect(refsOf(s)).toContain('#/$defs/http.inventory-snapshot.lines.json/properties/lines');
    // The lines file's own reference to inventory-common.json, relative to http/, points into the copy too.
    expect(refsOf((s['$defs'] as Record<string, unknown>)['http.inventory-snapshot.lines.json'])).toContain(
      '#/$defs/http.inventory-common.json/$defs/qty',
    );
  });

  it('keeps a file without references as it is, under its new $id', () => {
    const { $id, ...rest } = releasedForm('daily-snapshot.json', 1);
    const { $id: _, ...original } = JSON.parse(readFileSync(join(SCHEMAS_DIR, 'commands', 'daily-snapshot.json'), 'utf8'));
    expect($id).toBe('https://schemas.ingest.local/commands/v1/daily-snapshot.json');
    expect(rest).toEqual(original);
  });

  it('accepts and refuses what today’s schema does, compiled by the registry beside it', () => {
    const dir = schemasCopy();
    const registry = new SchemaRegistry(dir);
    const [today, released] = [registry.validator('commands/products-upsert.json'), registry.validator('commands/v1/products-upsert.json')];
    const payloads = [
      { response: 'ingest', items: [{ product: { barcode: 'A', product_name: 'Apple', current_price: 1 } }] },
      { response: 'ingest', items: [{ product: { barcode: 'B'.repeat(129), product_name: 'x' } }] },
      { response: 'ingest', items: [{ product: { barcode: 'A' } }] },
      { response: 'bulk_upsert', items: [{ rejected: { barcode: 'A', error: 'e' } }] },
      { response: 'other', items: [] },
    ];
    expect(payloads.map((p) => released(structuredClone(p)).ok)).toEqual(payloads.map((p) => today(structuredClone(p)).ok));
    expect(payloads.map((p) => released(p).ok)).toEqual([true, false, false, true, false]);
  });
});

describe('what a schema accepts (its shape)', () => {
  it('leaves out annotations, but not a property that happens to be named like one', () => {
    const schema = {
      title: 'T',
      description: 'd',
      properties: { description: { type: 'string', description: 'x' } },
      required: ['description'],
    };
    expect(shapeOf(schema)).toEqual({ properties: { description: { type: 'string' } }, required: ['description'] });
  });

  it('keeps data as it is: an enum of objects keeps their descriptions', () => {
    expect(shapeOf({ enum: [{ description: 1 }], const: { title: 2 } })).toEqual({ enum: [{ description: 1 }], const: { title: 2 } });
  });
});

describe('today’s command schemas against their release', () => {
  it('match their release when nothing changed', () => {
    expect(changedSinceRelease(1, schemasCopy())).toEqual([]);
  });

  it('may change a description, not what they accept', () => {
    const dir = schemasCopy();
    edit(dir, 'commands/envelope.json', (s) => (s['properties'].shop.description = 'a new description'));
    expect(changedSinceRelease(1, dir)).toEqual([]);
    edit(dir, 'commands/envelope.json', (s) => (s['properties'].shop.maxLength = 255));
    expect(changedSinceRelease(1, dir)).toEqual(['envelope.json: differs from v1/envelope.json']);
  });

  it('count the http definitions they refer to: a narrower product is a change of products-upsert', () => {
    const dir = schemasCopy();
    edit(dir, 'http/product.json', (s) => (s['properties'].barcode.maxLength = 17));
    expect(changedSinceRelease(1, dir)).toEqual(['products-upsert.json: differs from v1/products-upsert.json']);
  });

  it('name a file added or gone since the release', () => {
    const dir = schemasCopy();
    writeFileSync(join(dir, 'commands', 'new-kind.json'), '{"type":"object"}');
    rmSync(join(dir, 'commands', 'daily-snapshot.json'));
    expect(changedSinceRelease(1, dir)).toEqual(['new-kind.json: not in v1/', 'v1/daily-snapshot.json: no longer in schemas/commands/']);
  });
});
