import { describe, expect, it } from 'vitest';
import { baselineProblem, parseDeclarations, promoteUnreleased, releaseDigest, unreleasedSection } from './changelog.ts';
import type { JsonObject } from '../schemaFiles.ts';
import { canonicalJson, sameJson } from './canonicalJson.ts';

const CHANGELOG = `# Changelog

Forms: \`- Breaking: \` … (this header is not a declaration)

## Unreleased

- Breaking: \`inventory.stock-zero.v1\` is removed; use \`inventory.stock-zero.v2\` (since 2026-12-01).
- Stricter request description: \`POST /api/ingest/inventory-snapshot\`, \`POST /api/ingest/inventory-available\`: exactly one of \`location_id\` and \`location\`.
- Added \`GET /api/products\`.

## 2026-11-26

- Breaking: \`/api/old\` is removed; use \`/api/new\`.
`;

describe('docs/changelog.md', () => {
  it('declarations are read from the Unreleased section only, with the names in backticks', () => {
    expect(parseDeclarations(CHANGELOG)).toEqual({
      breaking: [
        { removed: 'inventory.stock-zero.v1', successors: ['inventory.stock-zero.v2'], line: expect.stringMatching(/^- Breaking/) },
      ],
      stricterRequests: [
        {
          operations: ['POST /api/ingest/inventory-snapshot', 'POST /api/ingest/inventory-available'],
          line: expect.stringMatching(/^- Stricter/),
        },
      ],
    });
    expect(parseDeclarations('# Changelog\n\n## 2026-11-26\n\n- Breaking: `a` use `b`\n')).toEqual({ breaking: [], stricterRequests: [] });
  });

  it('a release moves the Unreleased entries under its name, with its digest, and leaves an empty Unreleased section', () => {
    const after = promoteUnreleased(CHANGELOG, '2026-12-10', 'ab12');
    expect(unreleasedSection(after).trim()).toBe('');
    expect(after).toMatch(
      /## Unreleased\n\n## 2026-12-10\n\n<!-- released contracts: sha256 ab12 -->\n\n- Breaking: `inventory\.stock-zero\.v1`[^]*- Added `GET \/api\/products`\.\n\n## 2026-11-26\n/,
    );
    expect(after.startsWith('# Changelog\n\nForms:')).toBe(true);
    expect(() => promoteUnreleased(after, '2026-12-10', 'cd34')).toThrow(/already has a release named 2026-12-10/);
  });

  it('a release with no entries says that its changes are compatible', () => {
    const after = promoteUnreleased('# C\n\n## Unreleased\n\n## 1\n\n- x\n', '2', 'ff');
    expect(after).toBe(
      '# C\n\n## Unreleased\n\n## 2\n\n<!-- released contracts: sha256 ff -->\n\n- Compatible changes only: see the diff of schemas/published/ for what was added.\n\n## 1\n\n- x\n',
    );
  });

  it('the released copy is the baseline only while it is the release the changelog names last', () => {
    const released = new Map<string, JsonObject>([
      ['openapi.json', { openapi: '3.1.0' }],
      ['asyncapi.json', { asyncapi: '3.0.0' }],
    ]);
    const changelog = promoteUnreleased('# C\n\n## Unreleased\n\n- first\n', '1', releaseDigest(released));
    expect(baselineProblem(released, changelog)).toBeNull();
    const edited = new Map([...released, ['openapi.json', { openapi: '3.1.0', paths: {} }]]);
    expect(baselineProblem(edited, changelog)).toMatch(
      /^schemas\/published\/released\/ \(sha256 [0-9a-f]{16}\) is not the release docs\/changelog.md names last \(1, sha256/,
    );
    expect(baselineProblem(new Map(), changelog)).toMatch(/has no openapi.json or asyncapi.json/);
    expect(baselineProblem(released, '# C\n\n## Unreleased\n')).toMatch(/names no release with its digest/);
    // Only the newest release counts: an older one with this digest does not make an edit the baseline.
    const later = promoteUnreleased(changelog, '2', releaseDigest(edited));
    expect(baselineProblem(released, later)).toMatch(/names last \(2, /);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every level, keeps arrays in order, ends with a newline', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{\n  "a": {\n    "c": null,\n    "d": [\n      3,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
    );
    expect(sameJson({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(sameJson([1, 2], [2, 1])).toBe(false);
  });
});
