// What every entry point does with its settings before anything else: `--help`
// prints them; otherwise every bad one is reported at once, one line each, and the process exits 1
// before it opens a connection.
import { publicBaseUrl } from './publicUrl.ts';
import { SETTINGS, type Role, type SettingDef, type SettingName } from './catalog.ts';
import { checkSettings, helpRequested } from './settings.ts';

/** A rule that ties settings together: a reader that throws ConfigError when they do not fit. */
export type SettingsCheck = (env: NodeJS.ProcessEnv) => unknown;

/**
 * The rules of this package that tie settings together, by the processes that read them. Those of
 * the Kafka client (security, replication) are packages/kafka's: entry points pass them as `checks`.
 */
const COMBINED: ReadonlyArray<{ roles: readonly Role[]; check: SettingsCheck }> = [
  { roles: ['gateway', 'projector'], check: (env) => publicBaseUrl(env) },
];

export const combinedChecks = (roles: readonly Role[]): SettingsCheck[] =>
  COMBINED.filter((c) => c.roles.some((r) => roles.includes(r))).map((c) => c.check);

/** Prefixes of our settings: an unknown variable with one of them is probably a typo. */
const OURS =
  /^(KAFKA|PROJECTOR|SHOP|REPLAY|RELAY|DB|BODY|MAX|INGEST|CRON|IDEMPOTENCY|RESULT|MARKER|PRUNE|POSITION|DRY_RUN|LOG|PUBLIC|BUSINESS|DAILY|REPLY)_/;
/** Read by other programs (Kafka's own scripts), not by us. */
const FOREIGN = new Set([
  'KAFKA_HEAP_OPTS',
  'KAFKA_OPTS',
  'KAFKA_JVM_PERFORMANCE_OPTS',
  'KAFKA_LOG4J_OPTS',
  'KAFKA_DEBUG',
  'KAFKA_GC_LOG_OPTS',
  'KAFKA_JMX_OPTS',
]);

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j]!;
      row[j] = next;
    }
  }
  return row[b.length]!;
}

/** Variables that look like ours but are not settings (KAFKA_BROKER, SHOP_BURST), with the likely one. */
export function unknownSettings(env: NodeJS.ProcessEnv, extra: readonly string[] = []): string[] {
  const names = Object.keys(SETTINGS) as SettingName[];
  const known = new Set<string>([
    ...names,
    ...names.filter((n) => (SETTINGS[n] as SettingDef<unknown>).fromFile).map((n) => `${n}_FILE`),
    ...extra,
  ]);
  const out: string[] = [];
  for (const v of Object.keys(env).sort()) {
    if (!OURS.test(v) || known.has(v) || FOREIGN.has(v)) continue;
    // A small typo, or a name cut short (SHOP_BURST for SHOP_BURST_LINES).
    const near = names.map((n) => ({ n, d: n.startsWith(`${v}_`) ? 1 : distance(v, n) })).sort((x, y) => x.d - y.d)[0];
    out.push(`${v} is not a setting${near && near.d <= 3 ? ` (did you mean ${near.n}?)` : ''}; it is ignored`);
  }
  return out;
}

export interface StartOptions {
  /** Which processes' settings this entry point reads. */
  roles: readonly Role[];
  /** The first line of --help: how to run it. */
  usage: string;
  /** Named in the error ("ingest gateway: cannot start"). */
  name: string;
  argv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Variables this entry point reads besides the catalog's (its own, documented where it is). */
  extra?: readonly string[];
  /** Rules between settings of the packages it uses (KAFKA_SETTINGS_CHECKS), checked before this package's own. */
  checks?: readonly SettingsCheck[];
}

/**
 * `--help` → the settings and exit 0; bad settings → every problem on stderr and exit 1. Returns
 * warnings (unknown variables that look like ours) for the caller's logger.
 */
export function settingsAtStart(opts: StartOptions): string[] {
  const argv = opts.argv ?? process.argv.slice(2);
  const env = opts.env ?? process.env;
  helpRequested(argv, opts.roles, opts.usage);
  const problems = checkSettings(env, opts.roles, [...(opts.checks ?? []), ...combinedChecks(opts.roles)]);
  if (problems.length > 0) {
    const head = problems.length === 1 ? 'a setting is wrong' : `${problems.length} settings are wrong`;
    process.stderr.write(
      `${opts.name}: cannot start, ${head}:\n${problems.map((p) => `  - ${p}`).join('\n')}\nRun it with --help for every setting, its default and what it accepts.\n`,
    );
    process.exit(1);
  }
  return unknownSettings(env, opts.extra);
}
