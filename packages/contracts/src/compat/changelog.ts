/**
 * The declarations of docs/changelog.md that let a change the checker calls breaking ship
 * (docs/api.md#changing-a-published-contract). Only the `## Unreleased` section counts: a release
 * moves it under its own heading, and the next release is compared with that one.
 *
 *   - Breaking: `<removed>` ... `<successor>` ...
 *       a path or operation, topic, message or served schema is removed; the first name in backticks is
 *       what goes, the others its successors, each of which must already be in the last release.
 *   - Stricter request description: `POST /api/...` ...
 *       the request of each named operation is described more strictly, and the gateway already
 *       refused what the description now excludes.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from './canonicalJson.ts';
import type { DocSet } from './types.ts';

export interface Declarations {
  breaking: Array<{ removed: string; successors: string[]; line: string }>;
  stricterRequests: Array<{ operations: string[]; line: string }>;
}

const UNRELEASED = /^## Unreleased\s*$/im;
const ticks = (line: string): string[] => [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim());

/** The body of the Unreleased section (empty when there is none). */
export function unreleasedSection(changelog: string): string {
  const m = UNRELEASED.exec(changelog);
  if (!m) return '';
  const rest = changelog.slice(m.index + m[0].length);
  const next = /^## /m.exec(rest);
  return next ? rest.slice(0, next.index) : rest;
}

export function parseDeclarations(changelog: string): Declarations {
  const out: Declarations = { breaking: [], stricterRequests: [] };
  for (const raw of unreleasedSection(changelog).split('\n')) {
    const line = raw.trim();
    if (/^[-*] Breaking:/i.test(line)) {
      const [removed, ...successors] = ticks(line);
      if (removed) out.breaking.push({ removed, successors, line });
    } else if (/^[-*] Stricter request description:/i.test(line)) {
      out.stricterRequests.push({ operations: ticks(line).filter((t) => /^[A-Z]+ \//.test(t)), line });
    }
  }
  return out;
}

/** A short digest of a set of contracts as written (canonical JSON), named in the changelog by each release. */
export function releaseDigest(set: DocSet): string {
  const hash = createHash('sha256');
  for (const name of [...set.keys()].sort()) hash.update(`${name}\n${canonicalJson(set.get(name))}`);
  return hash.digest('hex').slice(0, 16);
}

const DIGEST = /<!-- released contracts: sha256 ([0-9a-f]+) -->/;

/**
 * Why schemas/published/released/ is not the baseline it must be, or null when it is: it changes only
 * with `npm run contracts -- release`, which names its digest under the release's heading, so a copy
 * edited by hand (or lost) cannot quietly move the baseline.
 */
export function baselineProblem(released: DocSet, changelog: string): string | null {
  const restore = 'it changes only with `npm run contracts -- release`; restore it with `git checkout -- schemas/published/released`';
  if (!released.has('openapi.json') || !released.has('asyncapi.json'))
    return `schemas/published/released/ has no openapi.json or asyncapi.json: ${restore}`;
  // Newest first: the first section after Unreleased is the last release.
  const release = changelog.split(/^(?=## )/m).find((sec) => sec.startsWith('## ') && !UNRELEASED.test(sec.split('\n')[0] ?? ''));
  const label = release?.split('\n')[0]?.slice(3).trim();
  const digest = release ? DIGEST.exec(release) : null;
  if (!digest)
    return 'docs/changelog.md names no release with its digest (`<!-- released contracts: sha256 … -->` under the newest release heading)';
  const actual = releaseDigest(released);
  if (digest[1] !== actual)
    return `schemas/published/released/ (sha256 ${actual}) is not the release docs/changelog.md names last (${label}, sha256 ${digest[1]}): ${restore}`;
  return null;
}

/**
 * The changelog after a release named `label` of contracts whose digest is `digest`: the Unreleased
 * entries move under `## <label>`, and an empty Unreleased section starts above it.
 */
export function promoteUnreleased(changelog: string, label: string, digest: string): string {
  if (new RegExp(`^## ${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'm').test(changelog))
    throw new Error(`docs/changelog.md already has a release named ${label}: name this one (npm run contracts -- release <name>)`);
  const m = UNRELEASED.exec(changelog);
  if (!m) throw new Error('docs/changelog.md has no "## Unreleased" section');
  const body = unreleasedSection(changelog).trim();
  const after = changelog.slice(m.index + m[0].length + unreleasedSection(changelog).length);
  const entries = body || '- Compatible changes only: see the diff of schemas/published/ for what was added.';
  const heading = `## ${label}\n\n<!-- released contracts: sha256 ${digest} -->\n\n`;
  return `${changelog.slice(0, m.index)}## Unreleased\n\n${heading}${entries}\n${after.trim() ? `\n${after.trimStart()}` : ''}`;
}
