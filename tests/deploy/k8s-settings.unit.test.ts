// deploy/k8s settings and secrets, on each overlay as `kubectl kustomize` renders it: every variable a
// container gets is a setting of the catalog read by that process, each process passes its own start-up
// check of them (with the files its Secrets mount), every secret is a file of a mounted Secret (never an
// environment variable), and the cluster's settings are those of the overlay's plan: Kafka security,
// replication, the topic plan the setup Job applies, PUBLIC_BASE_URL, PostgreSQL over TLS in prod.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readGatewayConfig } from '@ingest/gateway';
import { describeKafkaSecurity, KAFKA_SETTINGS_CHECKS, readKafkaSecurity, readTopicReplication, runTopicsCommand } from '@ingest/kafka';
import { checkSettings, combinedChecks, publicBaseUrl, readCommonConfig, SETTINGS, type Role, type SettingName } from '@ingest/runtime';
import { container, containerEnv, databaseUrl, entryPoint, entryRoles, K8S, OVERLAYS, podSpec, Rendered, secretFile, type Obj } from './k8sRender.ts';
import { read } from './support.ts';

const RENDERED = new Map(OVERLAYS.map((o) => [o, Rendered.of(o)]));
const PEM = '-----BEGIN CERTIFICATE-----\nMIIBdGVzdA==\n-----END CERTIFICATE-----\n';
const PROD_KUSTOMIZATION = read(`${K8S}/overlays/prod/kustomization.yaml`);
/** The URL form the prod overlay documents for the Secret ingest-secrets (its comment). */
const PROD_DATABASE_URL = databaseUrl(RENDERED.get('prod')!);

const catalog = SETTINGS as Record<string, { roles: readonly Role[]; secret?: boolean; fromFile?: boolean }>;
/** The rules between settings an entry point checks at start: the Kafka client's (its `checks`), then runtime's. */
const startChecks = (roles: readonly Role[]) => [...KAFKA_SETTINGS_CHECKS, ...combinedChecks(roles)];
/** The setting a variable gives: itself, or NAME for NAME_FILE of a setting that may come from a file. */
function settingOf(variable: string): string | undefined {
  if (catalog[variable]) return variable;
  const base = variable.replace(/_FILE$/, '');
  return base !== variable && catalog[base]?.fromFile ? base : undefined;
}

/** What a Secret key holds, to start the processes with: a generated Secret's own value, else an example of its form. */
function secretContent(r: Rendered, secret: string, key: string): string {
  const generated = r.all('Secret').find((s) => s['metadata'].name === secret);
  if (generated) return Buffer.from(String(generated['data']?.[key] ?? ''), 'base64').toString('utf8');
  if (key.endsWith('.crt')) return PEM;
  if (key.endsWith('database-url')) return PROD_DATABASE_URL ?? '';
  // A pepper has a floor of 32 characters (D28).
  if (key === 'api-key-pepper') return `example-${key}-of-at-least-32-characters`;
  return `example-${key}`;
}

const scratch = mkdtempSync(join(tmpdir(), 'ingest-k8s-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A container's environment with each `*_FILE` path moved under a scratch directory holding what its Secret provides. */
function startEnv(r: Rendered, owner: Obj, c: Obj): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = containerEnv(r, c);
  for (const [name, path] of Object.entries(env)) {
    if (!name.endsWith('_FILE')) continue;
    const file = secretFile(owner, c, path!);
    if (!file) continue; // reported by the secrets check
    const at = join(scratch, r.overlay, c['name'], path!);
    mkdirSync(dirname(at), { recursive: true });
    writeFileSync(at, secretContent(r, file.secret, file.key));
    env[name] = at;
  }
  return env;
}

describe.each(OVERLAYS)('deploy/k8s/overlays/%s', (name) => {
  const r = RENDERED.get(name)!;
  const config: Record<string, string> = r.find('ConfigMap', 'ingest-config')['data'];
  const containers = r.containers().map((x) => ({ ...x, roles: entryRoles(entryPoint(x.c)) as Role[] }));

  it('gives each process only settings of the catalog that it reads', () => {
    for (const { c, roles, name: where } of containers) {
      expect(roles.length, where).toBeGreaterThan(0);
      for (const e of c['env'] ?? []) {
        const setting = settingOf(e['name']);
        expect(setting, `${where}: ${e['name']} is not a setting`).toBeDefined();
        expect(catalog[setting!]!.roles.some((role) => roles.includes(role)), `${where}: ${e['name']} is not read by ${roles.join(', ')}`).toBe(true);
      }
      expect(c['envFrom'], where).toEqual([{ configMapRef: { name: 'ingest-config' } }]);
    }
    const roles = new Set(containers.flatMap((x) => x.roles));
    for (const key of Object.keys(config)) {
      const setting = settingOf(key);
      expect(setting, `ConfigMap key ${key} is not a setting`).toBeDefined();
      expect(catalog[setting!]!.roles.some((role) => roles.has(role)), `ConfigMap key ${key} is read by no process here`).toBe(true);
    }
    expect(config).not.toHaveProperty('FAILPOINTS');
  });

  it("passes each process's start-up check of its settings, with the files its Secrets mount", () => {
    for (const { owner, c, roles, name: where } of containers) {
      const env = startEnv(r, owner, c);
      expect(checkSettings(env, roles, startChecks(roles)), where).toEqual([]);
      expect(() => readCommonConfig(env), where).not.toThrow();
    }
  });

  it('reads every secret from a file of a mounted Secret, never from an environment variable or the ConfigMap', () => {
    for (const { owner, c, name: where } of containers) {
      expect((c['env'] ?? []).filter((e: Obj) => e['valueFrom']), `${where}: values from elsewhere (secretKeyRef)`).toEqual([]);
      const env = containerEnv(r, c);
      for (const [variable, value] of Object.entries(env)) {
        const setting = settingOf(variable);
        if (setting && catalog[setting]!.secret) expect(variable, `${where}: ${setting} is given as a value, not a file`).toMatch(/_FILE$/);
        if (!variable.endsWith('_FILE')) continue;
        const file = secretFile(owner, c, value);
        expect(file, `${where}: ${variable}=${value} is no file of a mounted Secret`).toBeDefined();
        expect(file!.mount['readOnly'], `${where}: ${file!.mount['mountPath']}`).toBe(true);
        // Readable by the process's group only (the kubelet gives the files the pod's fsGroup).
        expect(file!.volume['secret'].defaultMode, `${where}: ${file!.volume['name']}`).toBe(0o440);
        expect(podSpec(owner)['securityContext'].fsGroup, where).toBe(podSpec(owner)['securityContext'].runAsGroup);
      }
    }
    for (const key of Object.keys(config)) if (catalog[settingOf(key)!]!.secret) expect(key, 'the ConfigMap names secret files only').toMatch(/_FILE$/);
  });

  it('gives each process only the secrets it uses', () => {
    const secrets = (owner: Obj, c: Obj) =>
      Object.fromEntries(
        Object.entries(containerEnv(r, c))
          .filter(([v]) => v.endsWith('_FILE'))
          .map(([v, path]) => [v, `${secretFile(owner, c, path)?.secret.replace(/-[a-z0-9]{10}$/, '')}/${secretFile(owner, c, path)?.key}`]),
      );
    const kafka =
      name === 'prod'
        ? { KAFKA_SSL_CA_FILE: 'ingest-kafka/ca.crt', KAFKA_SASL_USERNAME_FILE: 'ingest-kafka/username', KAFKA_SASL_PASSWORD_FILE: 'ingest-kafka/password' }
        : {};
    const gateway = r.find('Deployment', 'ingest-gateway');
    const projector = r.find('Deployment', 'ingest-projector');
    const job = r.find('Job', 'ingest-setup');
    expect(secrets(gateway, container(gateway, 'gateway'))).toEqual({
      ...kafka,
      INGEST_SECRET_FILE: 'ingest-secrets/ingest-secret',
      CRON_SECRET_FILE: 'ingest-secrets/cron-secret',
      API_KEY_PEPPER_FILE: 'ingest-secrets/api-key-pepper',
      DATABASE_URL_FILE: 'ingest-secrets/database-url',
    });
    expect(secrets(projector, container(projector, 'projector'))).toEqual({ ...kafka, DATABASE_URL_FILE: 'ingest-secrets/database-url' });
    expect(secrets(job, container(job, 'migrate'))).toEqual({ ...kafka, DATABASE_URL_FILE: 'ingest-secrets/migrate-database-url' });
    expect(secrets(job, container(job, 'topics'))).toEqual(kafka);
  });

  it('sets the Kafka brokers, the replication of the plan, the Kafka security and PUBLIC_BASE_URL of the cluster', () => {
    const gateway = r.find('Deployment', 'ingest-gateway');
    const env = startEnv(r, gateway, container(gateway, 'gateway'));
    expect(config['KAFKA_BROKERS']).toBeTruthy();
    expect(readCommonConfig(env).kafkaPartitions).toBe(6);
    const security = describeKafkaSecurity(readKafkaSecurity(env));
    const base = publicBaseUrl(env);
    if (name === 'prod') {
      expect(readTopicReplication(config)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2, explicit: true });
      expect(security).toBe('SASL_SSL (scram-sha-512 as example-username, own CA)');
      expect(base).toMatch(/^https:\/\//);
    } else {
      expect(readTopicReplication(config)).toEqual({ replicationFactor: 1, minInsyncReplicas: 1, explicit: true });
      expect(security).toBe('PLAINTEXT');
      expect(config['PUBLIC_BASE_URL']).toBe(base);
    }
    expect(config['PUBLIC_BASE_URL'], 'the default would name 127.0.0.1 in every event').toBeDefined();
  });

  it('applies the topic plan with the replication and the configs of the overlay (setup Job)', async () => {
    const job = r.find('Job', 'ingest-setup');
    const topics = container(job, 'topics');
    expect(topics['command'].slice(2)).toEqual(['--apply']);
    const lines: string[] = [];
    // --plan prints what --apply brings the cluster to, from the same settings, without a broker.
    expect(await runTopicsCommand(['--plan'], startEnv(r, job, topics), (l) => lines.push(l))).toBe(0);
    const replication = name === 'prod' ? 3 : 1;
    const isr = name === 'prod' ? 2 : 1;
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line).toMatch(new RegExp(`: 6 partitions, replication ${replication}, .*min\\.insync\\.replicas=${isr}\\b`));
    expect(lines.find((l) => l.startsWith(`${config['COMMANDS_TOPIC']}:`))).toMatch(/\bretention\.ms=-1\b/);
  });

  it('keeps admission well under the gateway memory limit (a body takes several times its size once parsed)', () => {
    const gateway = r.find('Deployment', 'ingest-gateway');
    const c = container(gateway, 'gateway');
    const limit = /^(\d+)(Mi|Gi)$/.exec(c['resources'].limits.memory);
    const limitBytes = Number(limit?.[1]) * 1024 ** (limit?.[2] === 'Gi' ? 3 : 2);
    expect(readGatewayConfig(startEnv(r, gateway, c)).maxInflightBytes).toBeLessThanOrEqual(limitBytes / 8);
  });

  if (name === 'dev')
    it('generates its Secret from development values, the ones the docs give', () => {
      const [secret, ...more] = r.all('Secret');
      expect(more).toEqual([]);
      expect(secret!['metadata'].name).toMatch(/^ingest-secrets-[a-z0-9]{10}$/);
      expect(Object.keys(secret!['data']).sort()).toEqual(['api-key-pepper', 'cron-secret', 'database-url', 'ingest-secret', 'migrate-database-url']);
      const docs = read('docs/deploying.md');
      for (const key of ['ingest-secret', 'cron-secret']) expect(docs).toContain(secretContent(r, secret!['metadata'].name, key));
    });

  if (name === 'prod') {
    it('creates no Secret: every one it mounts is documented, name and keys, in the overlay and in docs/deploying.md', () => {
      expect(r.all('Secret')).toEqual([]);
      const docs = read('docs/deploying.md').split('\n## Kubernetes')[1] ?? '';
      const mounted = new Map<string, Set<string>>();
      for (const w of r.workloads())
        for (const v of podSpec(w)['volumes'] ?? [])
          if (v['secret']) for (const i of v['secret'].items) mounted.set(v['secret'].secretName, new Set([...(mounted.get(v['secret'].secretName) ?? []), i['key']]));
      expect([...mounted.keys()].sort()).toEqual(['ingest-kafka', 'ingest-postgres-ca', 'ingest-secrets']);
      for (const [secret, keys] of mounted) {
        expect(PROD_KUSTOMIZATION, secret).toContain(secret);
        expect(docs, secret).toContain(`\`${secret}\``);
        for (const key of keys) {
          expect(PROD_KUSTOMIZATION, `${secret} ${key}`).toMatch(new RegExp(`^#\\s+(${secret}\\s+)?${key.replace('.', '\\.')}\\s`, 'm'));
          expect(docs, `${secret} ${key}`).toContain(`\`${key}\``);
        }
      }
    });

    it('connects to PostgreSQL over TLS, verifying the server against the CA mounted where the documented URL says', () => {
      expect(PROD_DATABASE_URL).toBeDefined();
      const url = new URL(PROD_DATABASE_URL!);
      expect(url.searchParams.get('sslmode')).toBe('verify-full');
      const ca = url.searchParams.get('sslrootcert')!;
      expect(read('docs/deploying.md')).toContain(`sslmode=verify-full&sslrootcert=${ca}`);
      const readers = containers.filter(({ c }) => containerEnv(r, c)['DATABASE_URL_FILE']);
      expect(readers.map((x) => x.c['name']).sort()).toEqual(['gateway', 'migrate', 'projector']);
      for (const { owner, c, name: where } of readers) expect(secretFile(owner, c, ca), where).toMatchObject({ secret: 'ingest-postgres-ca', key: 'ca.crt' });
    });
  }
});

describe('the settings checks', () => {
  it('refuse a variable that is no setting, a secret given as a value and a file no Secret mounts', () => {
    const r = RENDERED.get('prod')!;
    const gateway = structuredClone(r.find('Deployment', 'ingest-gateway'));
    const c = container(gateway, 'gateway');
    expect(settingOf('KAFKA_BROKER')).toBeUndefined();
    expect(settingOf('DATABASE_URL_FILE')).toBe('DATABASE_URL');
    expect(settingOf('PORT_FILE')).toBeUndefined();
    expect(catalog['INGEST_SECRET' satisfies SettingName]!.secret).toBe(true);
    expect(secretFile(gateway, c, '/etc/ingest/secrets/database-url')).toMatchObject({ secret: 'ingest-secrets', key: 'database-url' });
    expect(secretFile(gateway, c, '/etc/ingest/secrets/other')).toBeUndefined();
    expect(secretFile(gateway, c, '/run/secrets/database-url')).toBeUndefined();
    const env = startEnv(r, gateway, c);
    expect(checkSettings({ ...env, KAFKA_SASL_PASSWORD_FILE: '/nowhere' }, ['gateway'], startChecks(['gateway']))).toEqual([
      'KAFKA_SASL_PASSWORD_FILE=/nowhere cannot be read (no such file)',
    ]);
  });
});
