import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.ts';
import { SETTINGS, ROLES, type SettingDef, type SettingName } from './catalog.ts';
import { duration, flag, integer, oneOf, someOf, url } from './kinds.ts';
import { checkSettings, setting, settingsHelp, settingsOf, withSettingsTable } from './settings.ts';
import { combinedChecks, unknownSettings } from './startup.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const names = Object.keys(SETTINGS) as SettingName[];

describe('kinds', () => {
  it.each([
    ['7d', 7 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['1m', 60_000],
    ['30s', 30_000],
    ['250ms', 250],
    ['1500', 1500],
  ])('duration %s is %d ms', (raw, ms) => expect(duration().parse(raw)).toBe(ms));

  it('refuse what they cannot read and what is out of bounds, saying what they expect', () => {
    expect(() => duration().parse('7 days')).toThrow(/must be a duration such as/);
    expect(() => duration(6000).parse('1s')).toThrow(/at least 6s/);
    expect(() => integer(1).parse('0')).toThrow('must be an integer >= 1');
    expect(() => integer(0, 65535).parse('65536')).toThrow('must be an integer from 0 to 65535');
    expect(() => integer().parse('1.5')).toThrow();
    expect(() => integer().parse('12abc')).toThrow();
    expect(() => flag().parse('yes')).toThrow('must be true or false');
    expect(() => oneOf(['a', 'b']).parse('c')).toThrow('must be one of a, b');
    expect(() => someOf(['a', 'b']).parse('a,c')).toThrow();
    expect(() => url(['http', 'https']).parse('ftp://x')).toThrow('must be an absolute http or https URL');
  });

  it('read case-insensitive words, and lists in the catalog order', () => {
    expect(oneOf(['otlp', 'console']).parse(' OTLP ')).toBe('otlp');
    expect(someOf(['apply', 'relay', 'pruner']).parse('pruner, APPLY')).toEqual(['apply', 'pruner']);
    expect(flag().parse('TRUE')).toBe(true);
  });
});

describe('the catalog', () => {
  it('gives every setting a meaning, a process that reads it, and a default its own kind accepts', () => {
    for (const n of names) {
      const d: SettingDef<unknown> = SETTINGS[n];
      expect(d.doc.length, n).toBeGreaterThan(10);
      expect(d.roles.length, n).toBeGreaterThan(0);
      if (d.default !== undefined) expect(() => d.kind.parse(d.default!), n).not.toThrow();
    }
  });

  it('holds every variable the services, packages and scripts read (no setting outside it)', () => {
    const read = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir)) {
        const path = join(dir, entry);
        // Fixtures (testing/) are test code, like *.test.ts: their knobs (PROPERTY_RUNS) are not settings.
        if (entry === 'node_modules' || entry === 'generated' || entry === 'testing') continue;
        if (statSync(path).isDirectory()) walk(path);
        else if (/\.(ts|mjs)$/.test(entry) && !/\.test\.ts$/.test(entry)) {
          const text = readFileSync(path, 'utf8');
          for (const m of text.matchAll(/(?:env\[['"]|process\.env\.|setting\(\w+(?:\.\w+)?, ')([A-Z][A-Z0-9_]+)/g)) read.add(m[1]!);
        }
      }
    };
    for (const dir of ['services', 'packages', 'scripts']) walk(join(ROOT, dir));
    // Node's own variables (NODE_EXTRA_CA_CERTS: the image build hands the host's CA bundle on) are not ours.
    const outside = [...read].filter(
      (v) => !(v in SETTINGS) && !/_FILE$/.test(v) && !['NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS', 'PATH'].includes(v),
    );
    expect(outside).toEqual([]);
  });
});

describe('setting()', () => {
  it('reads a value, falls back to the default when unset or empty, and types it', () => {
    expect(setting({}, 'PORT')).toBe(8080);
    expect(setting({ PORT: '' }, 'PORT')).toBe(8080);
    expect(setting({ PORT: '0' }, 'PORT')).toBe(0);
    expect(setting({}, 'RESULT_RETENTION')).toBe(7 * 86_400_000);
    expect(setting({}, 'INGEST_SECRET')).toBeUndefined();
    expect(setting({ INGEST_SECRET: 'a, b,' }, 'INGEST_SECRET')).toEqual(['a', 'b']);
    expect(setting({}, 'PROJECTOR_ROLES')).toEqual(['apply', 'relay', 'scheduler', 'pruner']);
  });

  it('keeps an empty DB_ROLE (the connecting user) apart from an unset one (the default role, D25)', () => {
    expect(setting({}, 'DB_ROLE')).toBe('ingest_service');
    expect(setting({ DB_ROLE: '' }, 'DB_ROLE')).toBe('');
  });

  it('reads NAME_FILE for the settings that allow it, and refuses both, a missing file or an empty one', () => {
    const files: Record<string, string> = { '/run/secrets/ingest': 'alpha,beta\n', '/run/secrets/empty': ' \n' };
    const readFile = (p: string): string => {
      if (p in files) return files[p]!;
      throw Object.assign(new Error('nope'), { code: 'ENOENT' });
    };
    expect(setting({ INGEST_SECRET_FILE: '/run/secrets/ingest' }, 'INGEST_SECRET', readFile)).toEqual(['alpha', 'beta']);
    expect(() => setting({ INGEST_SECRET: 'x', INGEST_SECRET_FILE: '/run/secrets/ingest' }, 'INGEST_SECRET', readFile)).toThrow(
      'set INGEST_SECRET or INGEST_SECRET_FILE, not both',
    );
    expect(() => setting({ INGEST_SECRET_FILE: '/nowhere' }, 'INGEST_SECRET', readFile)).toThrow(
      'INGEST_SECRET_FILE=/nowhere cannot be read (no such file)',
    );
    expect(() => setting({ INGEST_SECRET_FILE: '/run/secrets/empty' }, 'INGEST_SECRET', readFile)).toThrow('is empty');
    // PORT_FILE means nothing: PORT is not a secret.
    expect(setting({ PORT_FILE: '/run/secrets/ingest' }, 'PORT', readFile)).toBe(8080);
  });

  it("names the setting and the value given, except a secret's", () => {
    expect(() => setting({ MAX_CONSUMER_LAG: 'lots' }, 'MAX_CONSUMER_LAG')).toThrow(
      new ConfigError('MAX_CONSUMER_LAG must be an integer >= 1 (got "lots")'),
    );
    let message = '';
    try {
      setting({ DATABASE_URL: 'mysql://root:hunter2@db/x' }, 'DATABASE_URL');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('DATABASE_URL must be an absolute postgres or postgresql URL');
  });
});

describe('checkSettings()', () => {
  it('reports every bad setting of the process at once, one line each, and not those of other processes', () => {
    const env = { PORT: 'abc', BODY_TIMEOUT: '5x', SHOP_BURST_LINES: '0', REPLAY_BATCH: 'x', KAFKA_SESSION_TIMEOUT: '1s' };
    expect(checkSettings(env, ['gateway'])).toEqual([
      'PORT must be an integer from 0 to 65535 (got "abc")',
      'BODY_TIMEOUT must be a duration such as 500ms, 30s, 1m, 12h or 7d, at least 100ms (got "5x")',
      'SHOP_BURST_LINES must be an integer >= 1 (got "0")',
    ]);
    expect(checkSettings(env, ['projector'])).toEqual([
      'KAFKA_SESSION_TIMEOUT must be a duration such as 500ms, 30s, 1m, 12h or 7d, at least 6s (got "1s")',
    ]);
  });

  it('then the rules between settings: the public URL (those of the Kafka client are packages/kafka settingsChecks.ts)', () => {
    const checks = combinedChecks(['gateway']);
    expect(checkSettings({ PUBLIC_BASE_URL: 'https://x.example/?a=1' }, ['gateway'], checks)[0]).toMatch(/must not carry a query/);
    expect(checkSettings({}, ['gateway', 'projector', 'dev'], combinedChecks(['gateway', 'projector', 'dev']))).toEqual([]);
  });
});

describe('unknownSettings()', () => {
  it("warns of a variable that looks like ours, with the likely name; leaves others and Kafka's own alone", () => {
    expect(
      unknownSettings({ KAFKA_BROKER: 'x', SHOP_BURST: '1', KAFKA_HEAP_OPTS: '-Xmx1g', HOME: '/root', INGEST_SECRET_FILE: '/x' }),
    ).toEqual([
      'KAFKA_BROKER is not a setting (did you mean KAFKA_BROKERS?); it is ignored',
      'SHOP_BURST is not a setting (did you mean SHOP_BURST_LINES?); it is ignored',
    ]);
  });
});

describe('--help and the settings table of docs/operations.md', () => {
  it('--help lists each setting the process reads, with its default and what it accepts', () => {
    const help = settingsHelp(['projector'], 'usage: x');
    for (const n of settingsOf(['projector'])) expect(help).toContain(`  ${n}`);
    expect(help).toContain('PROJECTOR_GROUP_COMMANDS   default: 64; an integer >= 1');
    expect(help).not.toContain('REPLAY_BATCH');
    expect(help).not.toContain('`');
  });

  it("every role has settings, and every setting is in some process's --help", () => {
    const shown = new Set(ROLES.flatMap((r) => settingsOf([r])));
    expect(names.filter((n) => !shown.has(n))).toEqual([]);
  });

  it('the settings table of docs/operations.md is the generated one (run `npm run gen` after changing the catalog)', () => {
    const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const generated = withSettingsTable(doc);
    expect(generated, 'docs/operations.md has the settings table markers').not.toBeNull();
    expect(doc === generated, 'the settings table of docs/operations.md is stale: run npm run gen').toBe(true);
    for (const n of names) expect(doc).toContain(`| \`${n}\``);
  });

  it('a process started with --help prints them and exits 0; with bad settings it names each and exits 1', () => {
    const main = join(ROOT, 'services/gateway/src/main.ts');
    const help = spawnSync(process.execPath, [main, '--help'], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('MAX_INFLIGHT_BYTES');
    const bad = spawnSync(process.execPath, [main], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', PORT: 'abc', BODY_TIMEOUT: '5x' },
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      'ingest gateway: cannot start, 2 settings are wrong:\n  - PORT must be an integer from 0 to 65535 (got "abc")\n  - BODY_TIMEOUT must be',
    );
    // Two Node processes that each load the gateway: about 1.5 s alone, several times that on a busy machine.
  }, 30_000);
});
