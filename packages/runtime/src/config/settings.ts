// Reading, checking and describing the settings of catalog.ts.
import { readFileSync } from 'node:fs';
import { ConfigError } from './env.ts';
import { GROUPS, ROLES, ROLE_TITLES, SETTINGS, type Role, type SettingDef, type SettingName } from './catalog.ts';

type Def<N extends SettingName> = (typeof SETTINGS)[N];
type ValueOf<N extends SettingName> = Def<N>['kind'] extends { parse(raw: string): infer T } ? T : never;
/** A setting with a default always has a value; one without is undefined while unset. */
export type SettingValue<N extends SettingName> = Def<N>['default'] extends string ? ValueOf<N> : ValueOf<N> | undefined;

export type ReadFile = (path: string) => string;
const readUtf8: ReadFile = (path) => readFileSync(path, 'utf8');

const isSet = (env: NodeJS.ProcessEnv, name: string): boolean => env[name] !== undefined && env[name] !== '';

/**
 * The raw value of a setting as the process sees it: NAME, else NAME_FILE's content (for settings
 * that allow it), else the default; undefined when unset without a default.
 */
function rawOf(env: NodeJS.ProcessEnv, name: SettingName, readFile: ReadFile): string | undefined {
  const d: SettingDef<unknown> = SETTINGS[name];
  const file = `${name}_FILE`;
  if (d.fromFile && isSet(env, name) && isSet(env, file)) throw new Error(`set ${name} or ${file}, not both`);
  if (isSet(env, name) || (d.emptyIsValue && env[name] === '')) return env[name];
  if (d.fromFile && isSet(env, file)) {
    let content: string;
    try {
      content = readFile(env[file]!);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? (err as Error).message);
      throw new Error(`${file}=${env[file]} cannot be read (${why})`);
    }
    if (content.trim() === '') throw new Error(`${file}=${env[file]} is empty`);
    return content.trim();
  }
  return d.default;
}

/** One setting's message: its name, what it must be, and the value given (never a secret's). */
function problem(env: NodeJS.ProcessEnv, name: SettingName, err: unknown): string {
  const msg = (err as Error).message;
  if (msg.startsWith(name)) return msg;
  const d: SettingDef<unknown> = SETTINGS[name];
  const shown = d.secret ? '' : ` (got ${JSON.stringify(env[name] ?? '')})`;
  return `${name} ${msg}${shown}`;
}

/** The typed value of one setting (throws ConfigError naming it when it is bad). */
export function setting<N extends SettingName>(env: NodeJS.ProcessEnv, name: N, readFile: ReadFile = readUtf8): SettingValue<N> {
  let raw: string | undefined;
  try {
    raw = rawOf(env, name, readFile);
    if (raw === undefined) return undefined as SettingValue<N>;
    const d: SettingDef<unknown> = SETTINGS[name];
    if (raw === '' && d.emptyIsValue) return '' as SettingValue<N>;
    return d.kind.parse(raw) as SettingValue<N>;
  } catch (err) {
    throw new ConfigError(problem(env, name, err));
  }
}

/** Whether the environment gives the setting (or its _FILE) a value, rather than leaving the default. */
export function settingGiven(env: NodeJS.ProcessEnv, name: SettingName): boolean {
  const d: SettingDef<unknown> = SETTINGS[name];
  return isSet(env, name) || (d.emptyIsValue === true && env[name] === '') || (d.fromFile === true && isSet(env, `${name}_FILE`));
}

export const settingsOf = (roles: readonly Role[]): SettingName[] =>
  (Object.keys(SETTINGS) as SettingName[]).filter((n) => SETTINGS[n].roles.some((r) => roles.includes(r)));

/**
 * Every problem with the settings `roles` read, one line each: each bad value, then the rules that
 * tie settings together (`combined`: readers that throw ConfigError, such as Kafka security), so
 * that an operator fixes them all in one go rather than one start at a time.
 */
export function checkSettings(
  env: NodeJS.ProcessEnv,
  roles: readonly Role[],
  combined: ReadonlyArray<(env: NodeJS.ProcessEnv) => unknown> = [],
  readFile: ReadFile = readUtf8,
): string[] {
  const problems: string[] = [];
  for (const name of settingsOf(roles)) {
    try {
      setting(env, name, readFile);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  if (problems.length > 0) return problems; // the combined rules assume each value is good
  for (const check of combined) {
    try {
      check(env);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(err.message);
    }
  }
  return problems;
}

/** Throws one ConfigError listing every problem (see checkSettings). */
export function assertSettings(
  env: NodeJS.ProcessEnv,
  roles: readonly Role[],
  combined: ReadonlyArray<(env: NodeJS.ProcessEnv) => unknown> = [],
): void {
  const problems = checkSettings(env, roles, combined);
  if (problems.length === 1) throw new ConfigError(problems[0]);
  if (problems.length > 1) throw new ConfigError(`${problems.length} settings are wrong:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
}

/** Markdown without its markup, for a terminal. */
const plain = (md: string): string =>
  md
    .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\*\*/g, '');

function defaultShown(d: SettingDef<unknown>): string {
  if (d.defaultText) return d.defaultText;
  return d.default === undefined ? 'unset' : `\`${d.default}\``;
}

function wrap(textLine: string, width: number, indent: string): string {
  const words = textLine.split(/\s+/);
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line ? `${line} ${w}` : w;
  }
  if (line) lines.push(line);
  return lines.map((l) => indent + l).join('\n');
}

/** `--help`: every setting the process reads, by group, with its default and what it accepts. */
export function settingsHelp(roles: readonly Role[], usage: string): string {
  const names = settingsOf(roles);
  const out = [usage, '', `Settings (environment variables) of the ${roles.map((r) => plain(ROLE_TITLES[r])).join(' and ')}:`];
  for (const group of GROUPS) {
    const inGroup = names.filter((n) => SETTINGS[n].group === group);
    if (inGroup.length === 0) continue;
    out.push('', `${group}:`);
    for (const n of inGroup) {
      const d: SettingDef<unknown> = SETTINGS[n];
      out.push(`  ${n}${d.fromFile ? ` (or ${n}_FILE)` : ''}   default: ${plain(defaultShown(d))}; ${d.kind.accepts}`);
      out.push(wrap(plain(d.doc), 96, '      '));
    }
  }
  out.push('', 'Durations are written 500ms, 30s, 1m, 12h, 7d. Every bad setting is reported at start, one line each.');
  return out.join('\n');
}

/** If argv asks for help, prints it and exits 0. */
export function helpRequested(argv: readonly string[], roles: readonly Role[], usage: string): void {
  if (!argv.includes('--help') && !argv.includes('-h')) return;
  process.stdout.write(`${settingsHelp(roles, usage)}\n`);
  process.exit(0);
}

export const TABLE_BEGIN = '<!-- settings table: generated from packages/runtime/src/config/catalog.ts by `npm run gen`; do not edit -->';
export const TABLE_END = '<!-- end of settings table -->';

/** The README's settings table, one per group (the part between TABLE_BEGIN and TABLE_END). */
export function settingsTable(): string {
  const out: string[] = [];
  const all = Object.keys(SETTINGS) as SettingName[];
  for (const group of GROUPS) {
    const inGroup = all.filter((n) => SETTINGS[n].group === group);
    if (inGroup.length === 0) continue;
    out.push(`**${group}**`, '', '| Variable | Default | Read by | Meaning |', '|---|---|---|---|');
    for (const n of inGroup) {
      const d: SettingDef<unknown> = SETTINGS[n];
      const name = `\`${n}\`${d.fromFile ? ` (\`_FILE\`)` : ''}`;
      const readBy = ROLES.filter((r) => d.roles.includes(r)).join(', ');
      const cell = (t: string): string => t.replace(/\|/g, '\\|').replace(/\n/g, ' ');
      out.push(`| ${name} | ${cell(defaultShown(d))} | ${readBy} | ${cell(d.doc)} Accepts ${cell(d.kind.accepts)}. |`);
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}

/** The README with its settings table replaced by the generated one; null when the markers are missing. */
export function withSettingsTable(readme: string): string | null {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END);
  if (begin < 0 || end < begin) return null;
  return `${readme.slice(0, begin + TABLE_BEGIN.length)}\n\n${settingsTable()}\n\n${readme.slice(end)}`;
}
