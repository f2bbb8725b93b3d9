// docs/runbooks.md and the alert rules: every alert links, in its runbook_url, a section of the runbooks
// that exists and is its own, every alert section says what the alert means, what to check and what to
// do, and the commands the runbooks give exist (the operator CLIs, the npm scripts).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, readYamlDocs, REPO } from './support.ts';

interface Rule {
  alert: string;
  annotations: Record<string, string>;
}

const RUNBOOKS = 'docs/runbooks.md';
const rules: Rule[] = (readYamlDocs('deploy/prometheus/ingest-alerts.yml')[0]!['groups'] as Array<{ rules: Rule[] }>).flatMap((g) => g.rules);
const text = read(RUNBOOKS);
const withoutFences = text.replace(/^```[\s\S]*?^```$/gm, '');

/** GitHub's id of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** The `## ` sections of the runbooks: id → body. */
const sections = new Map(
  withoutFences
    .split(/^## /m)
    .slice(1)
    .map((s) => {
      const [heading, ...body] = s.split('\n');
      return [slug(heading!), body.join('\n')] as const;
    }),
);

describe(RUNBOOKS, () => {
  it('is linked by every alert, each to a section of its own, all under one address', () => {
    expect(rules.length).toBeGreaterThan(10);
    const bases = new Set<string>();
    for (const r of rules) {
      const url = r.annotations['runbook_url'];
      expect(url, r.alert).toBeDefined();
      const m = /^(https:\/\/\S+\/)docs\/runbooks\.md#([a-z0-9-]+)$/.exec(url!);
      expect(m, `${r.alert}: ${url}`).not.toBeNull();
      bases.add(m![1]!);
      expect(m![2], r.alert).toBe(slug(r.alert));
      expect(sections.has(m![2]!), `${r.alert}: no section #${m![2]} in ${RUNBOOKS}`).toBe(true);
    }
    expect(bases.size).toBe(1);
  });

  it('has a section for every alert and none for an alert that does not exist', () => {
    const alertSections = [...sections.keys()].filter((id) => id.startsWith('ingest'));
    expect(alertSections.sort()).toEqual(rules.map((r) => slug(r.alert)).sort());
  });

  it('says in each alert section what the alert means, what to check and what to do', () => {
    for (const r of rules) {
      const body = sections.get(slug(r.alert)) ?? '';
      for (const part of ['**What it means.**', '**What to check.**', '**What to do.**']) expect(body, `${r.alert}: ${part}`).toContain(part);
    }
  });

  it('gives commands that exist: the operator CLIs of the image and the npm scripts', () => {
    const clis = new Set([...text.matchAll(/\b(?:node )?(services\/operator\/src\/cli\/[a-z]+\.ts)/g)].map((m) => m[1]!));
    const short = new Set([...text.matchAll(/`(parked|topics|replay|verify|migrate)\.ts\b/g)].map((m) => `services/operator/src/cli/${m[1]}.ts`));
    expect(clis.size).toBeGreaterThan(0);
    for (const cli of [...clis, ...short]) expect(existsSync(join(REPO, cli)), cli).toBe(true);
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const npm = [...text.matchAll(/`npm run ([a-z:-]+)/g)].map((m) => m[1]!);
    expect(npm.length).toBeGreaterThan(0);
    for (const s of npm) expect(scripts, `npm run ${s}`).toHaveProperty(s);
  });

  it('is read as the checks above read it (a missing section and a wrong anchor are found)', () => {
    expect(slug('IngestRelayNoLeader')).toBe('ingestrelaynoleader');
    expect(slug('The setup Job fails')).toBe('the-setup-job-fails');
    expect(sections.has('ingestnotanalert')).toBe(false);
    expect(sections.get('ingestparkedcommands')).toContain('parked.ts retry');
  });
});
