// The Debian mirror the base image is made from: the one this machine's apt uses (a closed network
// often allows only its own mirror or proxy), read from /etc/apt, with deb.debian.org as the fallback.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Entry {
  uri: string;
  suite: string;
}

function oneLineEntries(text: string): Entry[] {
  const out: Entry[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
    if (m) out.push({ uri: m[1]!, suite: m[2]! });
  }
  return out;
}

function deb822Entries(text: string): Entry[] {
  const out: Entry[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    const field = (name: string): string[] =>
      (new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi').exec(stanza)?.[1] ?? '').trim().split(/\s+/).filter(Boolean);
    if (!field('Types').includes('deb') || field('Enabled')[0] === 'no') continue;
    for (const uri of field('URIs')) for (const suite of field('Suites')) out.push({ uri, suite });
  }
  return out;
}

function hostEntries(etc: string): Entry[] {
  const entries: Entry[] = [];
  const list = join(etc, 'apt', 'sources.list');
  if (existsSync(list)) entries.push(...oneLineEntries(readFileSync(list, 'utf8')));
  const dir = join(etc, 'apt', 'sources.list.d');
  for (const name of existsSync(dir) ? readdirSync(dir).sort() : []) {
    const text = readFileSync(join(dir, name), 'utf8');
    if (name.endsWith('.list')) entries.push(...oneLineEntries(text));
    if (name.endsWith('.sources')) entries.push(...deb822Entries(text));
  }
  return entries;
}

/**
 * sources.list lines for `suite` (its -updates and -security included) on the host's Debian mirrors:
 * the entries of the host's own release, with the release's name swapped for `suite`. Third-party
 * repositories are left out: their suites are not named after the release.
 */
export function debianSources(suite: string, etc = '/etc'): string[] {
  const osRelease = existsSync(join(etc, 'os-release')) ? readFileSync(join(etc, 'os-release'), 'utf8') : '';
  const codename = /^VERSION_CODENAME=("?)([^"\n]*)\1$/m.exec(osRelease)?.[2] ?? '';
  const isDebian = /^ID=("?)debian\1$/m.test(osRelease);
  const lines = new Set<string>();
  if (isDebian && codename) {
    for (const e of hostEntries(etc)) {
      if (e.suite !== codename && !e.suite.startsWith(`${codename}-`)) continue;
      lines.add(`deb ${e.uri.replace(/\/+$/, '')} ${suite}${e.suite.slice(codename.length)} main`);
    }
  }
  if (lines.size > 0) return [...lines].sort();
  return [
    `deb http://deb.debian.org/debian ${suite} main`,
    `deb http://deb.debian.org/debian ${suite}-updates main`,
    `deb http://deb.debian.org/debian-security ${suite}-security main`,
  ];
}
