import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as ledger from './index.ts';

// The ledger is the one owner of agent_runtime's tables: every table the migrations create has its
// file here, and no production source outside this folder names one in SQL.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const LEDGER = relative(ROOT, dirname(fileURLToPath(import.meta.url)));

/** The agent_runtime tables the migrations leave (their up sections, in order). */
function runtimeTables(): string[] {
  const tables = new Set<string>();
  const dir = join(ROOT, 'migrations');
  for (const file of readdirSync(dir).sort()) {
    const up = readFileSync(join(dir, file), 'utf8').split('-- Down Migration')[0] ?? '';
    for (const m of up.matchAll(/(CREATE|DROP) (?:UNLOGGED )?TABLE (?:IF (?:NOT )?EXISTS )?agent_runtime\.(\w+)/g))
      if (m[1] === 'CREATE') tables.add(m[2]!);
      else tables.delete(m[2]!);
  }
  return [...tables].sort();
}

const TABLES = runtimeTables();
const camel = (name: string): string => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const KEYWORDS = 'from|into|update|join|table|using|truncate|copy|vacuum|analyze';

/**
 * The tables a piece of string text (a literal, or a template's text between its substitutions)
 * names as SQL does: schema-qualified, after a keyword that takes a table, after a substituted
 * schema (`${schema}.outbox`), or as the whole string (a table or channel name handed around).
 */
function tablesNamedIn(text: string, tables: readonly string[] = TABLES): string[] {
  return tables.filter((t) => {
    const name = `"?${escape(t)}"?\\b`;
    return (
      new RegExp(`\\bagent_runtime"?\\s*\\.\\s*${name}`, 'i').test(text) ||
      new RegExp(`\\b(?:${KEYWORDS})\\s+(?:only\\s+)?${name}`, 'i').test(text) ||
      new RegExp(`^\\.\\s*${name}`).test(text) ||
      text.trim() === t
    );
  });
}

/** Every string and template text of a TypeScript source (comments are not SQL). */
function stringsOf(path: string, source: string): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) out.push(node.text);
    node.forEachChild(visit);
  };
  visit(ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true));
  return out;
}

/** Production sources: packages' and services' src (not their tests or testing/ fixtures) and scripts. */
function productionSources(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (entry === 'node_modules' || entry === 'testing') continue;
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|mjs)$/.test(entry) && !/\.test\.ts$/.test(entry)) files.push(path);
    }
  };
  for (const group of ['packages', 'services'])
    for (const workspace of readdirSync(join(ROOT, group))) {
      const src = join(ROOT, group, workspace, 'src');
      if (existsSync(src)) walk(src);
    }
  walk(join(ROOT, 'scripts'));
  return files;
}

describe('the ledger', () => {
  it('has one file per agent_runtime table of the migrations, named after it', () => {
    const owned = Object.entries(ledger).flatMap(([name, value]) =>
      typeof value === 'object' && 'TABLE' in value ? [{ name, table: value.TABLE.name }] : [],
    );
    expect(TABLES.length).toBeGreaterThan(0);
    expect(owned.map((o) => o.table).sort()).toEqual(TABLES);
    for (const o of owned) expect(o.name, o.table).toBe(camel(o.table));
  });

  it('is the only production code that names those tables in SQL', () => {
    const outside = productionSources()
      .filter((path) => !relative(ROOT, path).startsWith(`${LEDGER}/`))
      .flatMap((path) => {
        const named = new Set(stringsOf(path, readFileSync(path, 'utf8')).flatMap((s) => tablesNamedIn(s)));
        return [...named].map((t) => `${relative(ROOT, path)}: ${t}`);
      });
    expect(outside).toEqual([]);
  });

  it('finds a table named as SQL names it, and not in prose or in names that merely start alike', () => {
    expect(tablesNamedIn('SELECT 1 FROM agent_runtime.outbox WHERE published_at IS NULL')).toEqual(['outbox']);
    expect(tablesNamedIn('delete from processed_commands where command_id = $1')).toEqual(['processed_commands']);
    expect(tablesNamedIn('LOCK TABLE agent_runtime.processed_commands IN ACCESS EXCLUSIVE MODE')).toEqual(['processed_commands']);
    expect(tablesNamedIn('WITH r AS (INSERT INTO "command_results" (command_id) VALUES ($1))')).toEqual(['command_results']);
    expect(tablesNamedIn('.request_keys WHERE key = $1')).toEqual(['request_keys']);
    expect(tablesNamedIn('outbox')).toEqual(['outbox']);
    expect(tablesNamedIn('outbox relay: round failed, will retry')).toEqual([]);
    expect(tablesNamedIn('SELECT agent_runtime.log_id($1, 0)')).toEqual([]);
    expect(tablesNamedIn('DROP INDEX agent_runtime.command_results_created_at_idx')).toEqual([]);
    expect(tablesNamedIn('the stored reply, from the results')).toEqual([]);
  });

  it('reads string and template texts, not comments', () => {
    const source = "// FROM agent_runtime.outbox\nconst a = 'x';\nconst b = `UPDATE ${s}.relay_lease SET renewed_at = now()`;";
    expect(stringsOf('x.ts', source)).toEqual(['x', 'UPDATE ', '.relay_lease SET renewed_at = now()']);
  });
});
