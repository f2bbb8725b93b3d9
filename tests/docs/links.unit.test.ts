// Every relative link in README.md and docs/**/*.md points to a file that exists, and every `#anchor`
// to a heading (GitHub's slugs) or an `<a id>` of the file it names. External links
// (http, https, mailto) are not fetched.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return markdownFiles(path);
    return e.name.endsWith('.md') ? [path] : [];
  });
}

/** The text of a markdown file with fenced code blocks blanked out (their lines kept, so line numbers hold). */
function withoutFences(md: string): string[] {
  let fence: string | null = null;
  return md.split('\n').map((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === null && open) {
      fence = open[1]!;
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return line;
  });
}

/** GitHub's heading id (github-slugger): the heading's text, lower case, without punctuation, spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images keep their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/`/g, '')
    .replace(/(\*\*|__)(.*?)\1/g, '$2')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every id a file defines: its headings' slugs (repeats numbered -1, -2, … as GitHub does) and `<a id|name>`. */
function anchorsOf(file: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      ids.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) ids.add(m[1]!);
  }
  return ids;
}

interface Link {
  line: number;
  target: string;
}

/** The inline links of a file, outside code blocks and code spans. */
function linksOf(file: string): Link[] {
  const out: Link[] = [];
  withoutFences(readFileSync(file, 'utf8')).forEach((raw, i) => {
    const line = raw.replace(/(`+)[^`]*?\1/g, ''); // code spans (a link's text may be one: the link stays)
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
  });
  return out;
}

/** What is wrong with one link of `file`, or null. */
function problem(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // http:, https:, mailto:
  const hash = target.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? null : decodeURIComponent(target.slice(hash + 1));
  const dest = path === '' ? file : resolve(dirname(file), path);
  // The contract and DECISIONS live beside the repository (../shared), not in it: a clean clone
  // elsewhere (CI) does not have them, so links that leave the repository are not followed.
  if (relative(ROOT, dest).startsWith('..')) return null;
  if (!existsSync(dest)) return `${path} does not exist`;
  if (anchor === null) return null;
  if (!dest.endsWith('.md') || statSync(dest).isDirectory()) return `#${anchor} points into ${path}, which is not a markdown file`;
  return anchorsOf(dest).has(anchor) ? null : `#${anchor} is not a heading or <a id> of ${relative(ROOT, dest)}`;
}

const DOCS = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

describe('doc links', () => {
  it('finds the README and the docs', () => {
    expect(DOCS.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/operations.md']));
  });

  it.each(DOCS.map((f) => [relative(ROOT, f), f]))('%s: every relative link and anchor resolves', (_name, file) => {
    const broken = linksOf(file)
      .map((l) => ({ ...l, why: problem(file, l.target) }))
      .filter((l) => l.why !== null)
      .map((l) => `line ${l.line}: (${l.target}) ${l.why}`);
    expect(broken).toEqual([]);
  });

  it('the README stays the front door (at most ~200 lines; the rest lives in docs/)', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(210);
  });
});

describe('the checker itself', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Dry run: `?dry_run=true` (D22, D15b)')).toBe('dry-run-dry_runtrue-d22-d15b');
    expect(slug('`GET /api/commands/{command_id}` (D6)')).toBe('get-apicommandscommand_id-d6');
    expect(slug('1. `POST /api/products/bulk-upsert`')).toBe('1-post-apiproductsbulk-upsert');
    expect(slug('Fault suite (`npm run test:faults`)')).toBe('fault-suite-npm-run-testfaults');
    expect(slug('Client security (TLS, SASL)')).toBe('client-security-tls-sasl');
    expect(slug('Replay (D26)')).toBe('replay-d26');
  });

  it('reports a missing file, a missing anchor, and ignores links in code', () => {
    const readme = join(ROOT, 'README.md');
    expect(problem(readme, 'docs/nope.md')).toBe('docs/nope.md does not exist');
    expect(problem(readme, 'docs/api.md#no-such-heading')).toMatch(/not a heading/);
    expect(problem(readme, 'docs/api.md#errors')).toBeNull();
    expect(problem(readme, 'https://example.com/x#y')).toBeNull();
    expect(linksOf(join(ROOT, 'docs/api.md')).some((l) => l.target.startsWith('http://127.0.0.1'))).toBe(false);
  });
});
