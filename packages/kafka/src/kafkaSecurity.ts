// TLS and SASL settings for every Kafka client the project runs (docs/operations.md
// "Client security (TLS, SASL)"). Read once at start, validated with one clear error per bad
// combination; secrets are wrapped so no dump shows them.
import { readFileSync } from 'node:fs';
import { ConfigError, Secret } from '@ingest/runtime';

export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface KafkaTls {
  /** PEM CA bundle; absent = the system's CAs (managed Kafka with a public certificate). */
  ca?: string;
  /** mTLS: the client certificate chain (PEM) and its private key. */
  cert?: string;
  key?: Secret;
  keyPassword?: Secret;
  /** Name the broker certificate must carry (SNI and hostname check) when it differs from the bootstrap host. */
  servername?: string;
}

export interface KafkaSasl {
  mechanism: SaslMechanism;
  username: string;
  password: Secret;
}

/** null/null is plaintext, the default. Certificate checks are always on (no setting turns them off). */
export interface KafkaSecurity {
  tls: KafkaTls | null;
  sasl: KafkaSasl | null;
}

export const PLAINTEXT: KafkaSecurity = { tls: null, sasl: null };

export type ReadFile = (path: string) => string;
const readUtf8: ReadFile = (path) => readFileSync(path, 'utf8');

function isSet(env: NodeJS.ProcessEnv, name: string): boolean {
  return env[name] !== undefined && env[name] !== '';
}

/** NAME or NAME_FILE (never both); a _FILE that cannot be read stops the start with its path and reason. */
function valueOrFile(env: NodeJS.ProcessEnv, name: string, readFile: ReadFile, trim: boolean): string | undefined {
  const file = `${name}_FILE`;
  if (isSet(env, name) && isSet(env, file)) throw new ConfigError(`set ${name} or ${file}, not both`);
  if (isSet(env, name)) return env[name];
  if (!isSet(env, file)) return undefined;
  return readSetting(file, env[file]!, readFile, trim);
}

function readSetting(name: string, path: string, readFile: ReadFile, trim: boolean): string {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? (err as Error).message);
    throw new ConfigError(`${name}=${path} cannot be read (${why})`);
  }
  const value = trim ? text.trim() : text;
  if (value.trim() === '') throw new ConfigError(`${name}=${path} is empty`);
  return value;
}

function pemFile(env: NodeJS.ProcessEnv, name: string, readFile: ReadFile, marker: RegExp, what: string): string | undefined {
  if (!isSet(env, name)) return undefined;
  const pem = readSetting(name, env[name]!, readFile, false);
  if (!marker.test(pem)) throw new ConfigError(`${name}=${env[name]} is not a PEM ${what}`);
  return pem;
}

function readBool(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false (got ${env[name]})`);
}

const TLS_SETTINGS = [
  'KAFKA_SSL_CA_FILE',
  'KAFKA_SSL_CERT_FILE',
  'KAFKA_SSL_KEY_FILE',
  'KAFKA_SSL_KEY_PASSWORD',
  'KAFKA_SSL_KEY_PASSWORD_FILE',
  'KAFKA_SSL_SERVERNAME',
];
const SASL_SETTINGS = ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_USERNAME_FILE', 'KAFKA_SASL_PASSWORD', 'KAFKA_SASL_PASSWORD_FILE'];

function readTls(env: NodeJS.ProcessEnv, readFile: ReadFile): KafkaTls | null {
  if (!readBool(env, 'KAFKA_SSL')) {
    const stray = TLS_SETTINGS.find((n) => isSet(env, n));
    // A CA or certificate given without KAFKA_SSL=true would otherwise be ignored in silence.
    if (stray) throw new ConfigError(`${stray} is set but KAFKA_SSL is not true`);
    return null;
  }
  const tls: KafkaTls = {};
  const ca = pemFile(env, 'KAFKA_SSL_CA_FILE', readFile, /-----BEGIN CERTIFICATE-----/, 'certificate (-----BEGIN CERTIFICATE-----)');
  const cert = pemFile(env, 'KAFKA_SSL_CERT_FILE', readFile, /-----BEGIN CERTIFICATE-----/, 'certificate (-----BEGIN CERTIFICATE-----)');
  const key = pemFile(
    env,
    'KAFKA_SSL_KEY_FILE',
    readFile,
    /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
    'private key (-----BEGIN ... PRIVATE KEY-----)',
  );
  if (cert !== undefined && key === undefined)
    throw new ConfigError('KAFKA_SSL_CERT_FILE is set without KAFKA_SSL_KEY_FILE (mTLS needs both)');
  if (key !== undefined && cert === undefined)
    throw new ConfigError('KAFKA_SSL_KEY_FILE is set without KAFKA_SSL_CERT_FILE (mTLS needs both)');
  const keyPassword = valueOrFile(env, 'KAFKA_SSL_KEY_PASSWORD', readFile, true);
  if (keyPassword !== undefined && key === undefined) throw new ConfigError('KAFKA_SSL_KEY_PASSWORD is set without KAFKA_SSL_KEY_FILE');
  if (ca !== undefined) tls.ca = ca;
  if (cert !== undefined) tls.cert = cert;
  if (key !== undefined) tls.key = new Secret(key);
  if (keyPassword !== undefined) tls.keyPassword = new Secret(keyPassword);
  if (isSet(env, 'KAFKA_SSL_SERVERNAME')) tls.servername = env['KAFKA_SSL_SERVERNAME']!.trim();
  return tls;
}

function readSasl(env: NodeJS.ProcessEnv, readFile: ReadFile, tls: boolean): KafkaSasl | null {
  const raw = (env['KAFKA_SASL_MECHANISM'] ?? '').trim().toLowerCase();
  if (raw === '') {
    const stray = SASL_SETTINGS.find((n) => isSet(env, n));
    if (stray) throw new ConfigError(`${stray} is set but KAFKA_SASL_MECHANISM is not (one of ${SASL_MECHANISMS.join(', ')})`);
    return null;
  }
  const mechanism = SASL_MECHANISMS.find((m) => m === raw);
  if (!mechanism)
    throw new ConfigError(`KAFKA_SASL_MECHANISM must be one of ${SASL_MECHANISMS.join(', ')} (got ${env['KAFKA_SASL_MECHANISM']})`);
  const username = valueOrFile(env, 'KAFKA_SASL_USERNAME', readFile, true);
  if (username === undefined)
    throw new ConfigError(`KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_USERNAME (or KAFKA_SASL_USERNAME_FILE)`);
  const password = valueOrFile(env, 'KAFKA_SASL_PASSWORD', readFile, true);
  if (password === undefined)
    throw new ConfigError(`KAFKA_SASL_MECHANISM=${mechanism} needs KAFKA_SASL_PASSWORD (or KAFKA_SASL_PASSWORD_FILE)`);
  // PLAIN sends the password itself; SCRAM (a challenge-response) may run on SASL_PLAINTEXT.
  if (mechanism === 'plain' && !tls) throw new ConfigError('KAFKA_SASL_MECHANISM=plain sends the password in clear: set KAFKA_SSL=true');
  return { mechanism, username, password: new Secret(password) };
}

/** The Kafka client security settings from the environment (README "Kafka in production"). */
export function readKafkaSecurity(env: NodeJS.ProcessEnv, readFile: ReadFile = readUtf8): KafkaSecurity {
  const tls = readTls(env, readFile);
  return { tls, sasl: readSasl(env, readFile, tls !== null) };
}

/** One line for a start-up log: the protocol, mechanism and user, never a secret. */
export function describeKafkaSecurity(s: KafkaSecurity): string {
  const protocol = `${s.sasl ? 'SASL_' : ''}${s.tls ? 'SSL' : 'PLAINTEXT'}`;
  const parts: string[] = [];
  if (s.sasl) parts.push(`${s.sasl.mechanism} as ${s.sasl.username}`);
  if (s.tls)
    parts.push(
      s.tls.ca ? 'own CA' : 'system CAs',
      ...(s.tls.cert ? ['client certificate'] : []),
      ...(s.tls.servername ? [`server name ${s.tls.servername}`] : []),
    );
  return parts.length ? `${protocol} (${parts.join(', ')})` : protocol;
}
