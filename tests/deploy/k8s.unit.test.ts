// deploy/k8s: every object valid against the Kubernetes API schemas (kubernetes-models) with no
// unknown field, and consistent with what the processes serve and read: probe paths and ports,
// shutdown deadlines, settings, secrets, labels, the image's user and entry points.
import { spawnSync } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGatewayConfig } from '@ingest/gateway';
import { checkSettings, combinedChecks, createRegistry, readCommonConfig, SETTINGS } from '@ingest/runtime';
import { startTestGateway, type TestGateway } from '@ingest/gateway/testing';
import { createProbeServer } from '@ingest/projector';
import { hasCommand, read, readYamlDocs, REPO, TOOL_CHECKS } from './support.ts';

type Obj = Record<string, any>;
interface Validatable {
  validate(): void;
}

const MODELS: Record<string, new (data: Obj) => Validatable> = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
};

const K8S = 'deploy/k8s';
const kustomization = readYamlDocs(`${K8S}/kustomization.yaml`)[0]!;
const resourceFiles: string[] = kustomization['resources'];
const objects: Array<{ file: string; obj: Obj }> = resourceFiles.flatMap((file) => readYamlDocs(`${K8S}/${file}`).map((obj) => ({ file, obj })));
const find = (kind: string, name: string): Obj => {
  const hit = objects.find((o) => o.obj['kind'] === kind && o.obj['metadata']?.name === name);
  if (!hit) throw new Error(`${kind}/${name} is not in ${K8S}`);
  return hit.obj;
};
const podSpec = (o: Obj): Obj => o['spec']['template']['spec'];
const container = (o: Obj, name: string): Obj => {
  const c = [...(podSpec(o)['containers'] ?? []), ...(podSpec(o)['initContainers'] ?? [])].find((x: Obj) => x['name'] === name);
  if (!c) throw new Error(`no container ${name}`);
  return c;
};
const allContainers = (): Array<{ owner: string; c: Obj }> =>
  objects
    .filter(({ obj }) => obj['spec']?.template?.spec)
    .flatMap(({ obj }) => [...(podSpec(obj)['containers'] ?? []), ...(podSpec(obj)['initContainers'] ?? [])].map((c: Obj) => ({ owner: `${obj['kind']}/${obj['metadata'].name}`, c })));

/** JSON pointer of a path, as ajv reports it. */
const pointer = (path: Array<string | number>): string => path.map((p) => '/' + String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('');

/**
 * kubernetes-models ignores fields the API does not define, where `kubectl apply` (strict field
 * validation) refuses them. Each field is probed: given a value of no valid type (NaN), a field
 * the schema defines makes validation fail at its own path; an unknown one does not.
 */
function unknownFields(Model: new (data: Obj) => Validatable, obj: Obj): string[] {
  const unknown: string[] = [];
  const visit = (node: unknown, path: Array<string | number>): void => {
    if (Array.isArray(node)) return node.forEach((v, i) => visit(v, [...path, i]));
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node as Obj)) {
      const at = [...path, key];
      const probe = structuredClone(obj);
      let parent: any = probe;
      for (const p of path) parent = parent[p];
      parent[key] = Number.NaN;
      let known = false;
      try {
        new Model(probe).validate();
      } catch (err) {
        const errors = ((err as { errors?: Array<{ instancePath: string }> }).errors ?? []).map((e) => e.instancePath);
        known = errors.some((p) => p === pointer(at) || p.startsWith(pointer(at) + '/'));
      }
      if (known) visit(value, at);
      else unknown.push(pointer(at));
    }
  };
  visit(obj, []);
  return unknown;
}

/** The settings the Configuration table of docs/operations.md documents (generated from the settings catalog). */
const documentedSettings = (): Set<string> => {
  const section = read('docs/operations.md').split('\n## Configuration')[1]?.split('\n## ')[0] ?? '';
  return new Set([...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)`(?: \(`_FILE`\))? \|/gm)].map((m) => m[1]!));
};

/** Steps and per-step deadline of a process's graceful shutdown, read from its main.ts and runtime's onShutdown. */
function shutdownBudgetSeconds(mainTs: string): { steps: number; seconds: number } {
  const call = /onShutdown\(log, \[([\s\S]*?)\]\);/.exec(read(mainTs))?.[1];
  if (call === undefined) throw new Error(`${mainTs}: no onShutdown(log, [...]) call`);
  const steps = [...call.matchAll(/\[\s*'[\w-]+',/g)].length;
  const deadlineMs = Number(/timeoutMs = (\d+)\)/.exec(read('packages/runtime/src/process/shutdown.ts'))?.[1]);
  expect(deadlineMs).toBeGreaterThan(0);
  return { steps, seconds: (steps * deadlineMs) / 1000 };
}

const preStopSleep = (c: Obj): number => {
  const cmd: string[] | undefined = c['lifecycle']?.preStop?.exec?.command;
  return cmd?.[0] === 'sleep' ? Number(cmd[1]) : Number(c['lifecycle']?.preStop?.sleep?.seconds ?? 0);
};

const portNumber = (c: Obj, port: string | number): number =>
  typeof port === 'number' ? port : (c['ports'] ?? []).find((p: Obj) => p['name'] === port)?.containerPort;

const envValue = (c: Obj, name: string): string | undefined => (c['env'] ?? []).find((e: Obj) => e['name'] === name)?.value;

describe('deploy/k8s', () => {
  it('lists every manifest of the directory in its kustomization, and nothing else', () => {
    const files = readdirSync(join(REPO, K8S)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...resourceFiles].sort()).toEqual(files.sort());
  });

  it.each(objects.map(({ file, obj }) => [`${file}: ${obj['kind']}/${obj['metadata']?.name}`, obj] as const))(
    '%s is valid against the Kubernetes API schema, with no unknown field',
    (_name, obj) => {
      const [group, version] = String(obj['apiVersion']).includes('/') ? String(obj['apiVersion']).split('/') : ['', obj['apiVersion']];
      const Model = MODELS[`${group ? `${group}/` : ''}${version}/${obj['kind']}`];
      expect(Model, `no model for ${obj['apiVersion']} ${obj['kind']}`).toBeDefined();
      expect(() => new Model!(obj).validate()).not.toThrow();
      expect(unknownFields(Model!, obj)).toEqual([]);
    },
  );

  it('finds an unknown field and a wrong type (the checks above can fail)', () => {
    const gateway = structuredClone(find('Deployment', 'ingest-gateway'));
    const c = podSpec(gateway)['containers'][0];
    c['readinesProbe'] = c['readinessProbe'];
    expect(unknownFields(Deployment, gateway)).toEqual(['/spec/template/spec/containers/0/readinesProbe']);
    c['ports'][0]['containerPort'] = '8080';
    expect(() => new Deployment(gateway).validate()).toThrow(/containerPort/);
  });

  // Needs kubectl, which the project does not install: `npm run check:deploy` runs it (and fails without it).
  if (TOOL_CHECKS)
    it('renders with kubectl kustomize', () => {
      expect(hasCommand('kubectl', ['version', '--client']), 'kubectl is not installed').toBe(true);
      const r = spawnSync('kubectl', ['kustomize', join(REPO, K8S)], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.match(/image: retail-ingestion:/g)?.length).toBe(allContainers().length);
    });

  it('selects its own pods: Deployment, Service and PodDisruptionBudget selectors match the pod labels', () => {
    for (const name of ['ingest-gateway', 'ingest-projector']) {
      const labels = find('Deployment', name)['spec']['template']['metadata']['labels'];
      expect(labels).toMatchObject(find('Deployment', name)['spec']['selector']['matchLabels']);
      expect(labels).toMatchObject(find('PodDisruptionBudget', name)['spec']['selector']['matchLabels']);
      expect(labels['app.kubernetes.io/part-of']).toBe('retail-ingestion');
    }
    const service = find('Service', 'ingest-gateway');
    const gateway = find('Deployment', 'ingest-gateway');
    expect(gateway['spec']['template']['metadata']['labels']).toMatchObject(service['spec']['selector']);
    for (const p of service['spec']['ports']) expect(portNumber(container(gateway, 'gateway'), p.targetPort)).toBeGreaterThan(0);
    for (const { obj } of objects) expect(obj['metadata']['labels']?.['app.kubernetes.io/part-of'], obj['metadata'].name).toBe('retail-ingestion');
  });

  it('keeps a replica through voluntary disruptions and rolling updates', () => {
    for (const name of ['ingest-gateway', 'ingest-projector']) {
      const d = find('Deployment', name);
      const pdb = find('PodDisruptionBudget', name)['spec'];
      expect(d['spec']['replicas']).toBeGreaterThanOrEqual(2);
      expect(pdb['minAvailable'] ?? d['spec']['replicas'] - pdb['maxUnavailable']).toBeGreaterThanOrEqual(1);
      expect(d['spec']['strategy']['rollingUpdate']['maxUnavailable']).toBe(0);
    }
  });

  describe('gateway probes', () => {
    let gw: TestGateway;
    beforeAll(async () => {
      gw = await startTestGateway();
    });
    afterAll(() => gw.close());

    const c = container(find('Deployment', 'ingest-gateway'), 'gateway');

    it('probe the port the gateway listens on (PORT) and the metrics annotation names it', () => {
      const port = readGatewayConfig({ PORT: envValue(c, 'PORT') }).port;
      expect(port).toBe(8080);
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(portNumber(c, c[probe].httpGet.port), probe).toBe(port);
      expect(find('Deployment', 'ingest-gateway')['spec']['template']['metadata']['annotations']['prometheus.io/port']).toBe(String(port));
      expect(envValue(c, 'HOST')).toBe('0.0.0.0');
    });

    it('use /healthz for liveness and startup and /readyz for readiness, paths the gateway serves', async () => {
      expect(c['livenessProbe'].httpGet.path).toBe('/healthz');
      expect(c['startupProbe'].httpGet.path).toBe('/healthz');
      expect(c['readinessProbe'].httpGet.path).toBe('/readyz');
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const res = await fetch(`${gw.url}${c[probe].httpGet.path}`);
        expect(res.status, probe).toBe(200);
        expect(await res.json()).toMatchObject({ ok: true });
      }
      const metrics = await fetch(`${gw.url}${find('Deployment', 'ingest-gateway')['spec']['template']['metadata']['annotations']['prometheus.io/path']}`);
      expect(metrics.status).toBe(200);
      expect((await fetch(`${gw.url}/not-a-probe`)).status).toBe(404);
    });
  });

  describe('projector probes', () => {
    const d = find('Deployment', 'ingest-projector');
    const c = container(d, 'projector');
    const main = read('services/projector/src/main.ts');

    it('probe PROJECTOR_METRICS_PORT, where the projector serves /healthz, /readyz and /metrics', async () => {
      expect(main).toMatch(/setting\(process\.env, 'PROJECTOR_METRICS_PORT'\)/);
      const defaultPort = SETTINGS.PROJECTOR_METRICS_PORT.default;
      expect(defaultPort).toBe('9091');
      const port = Number(envValue(c, 'PROJECTOR_METRICS_PORT') ?? defaultPort);
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(portNumber(c, c[probe].httpGet.port), probe).toBe(port);
      expect(d['spec']['template']['metadata']['annotations']['prometheus.io/port']).toBe(String(port));
      expect(c['livenessProbe'].httpGet.path).toBe('/healthz');
      expect(c['startupProbe'].httpGet.path).toBe('/healthz');
      expect(c['readinessProbe'].httpGet.path).toBe('/readyz');
      // main.ts serves probes.ts's server on that port; it answers each path (a ready projector).
      expect(main).toMatch(/createProbeServer\([^)]*\)\.listen\(port/);
      const server = createProbeServer({ registry: createRegistry(), readiness: async () => ({ consumer: true, database: true, listen: true }) });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        for (const path of ['/healthz', '/readyz', d['spec']['template']['metadata']['annotations']['prometheus.io/path']]) {
          expect((await fetch(`${url}${path}`)).status, `the projector answers ${path}`).toBe(200);
        }
        expect((await fetch(`${url}/not-a-probe`)).status).toBe(404);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  it('gives each process the time its graceful shutdown may take', () => {
    const margin = 5;
    for (const [name, mainTs] of [
      ['ingest-gateway', 'services/gateway/src/main.ts'],
      ['ingest-projector', 'services/projector/src/main.ts'],
    ] as const) {
      const d = find('Deployment', name);
      const budget = shutdownBudgetSeconds(mainTs);
      expect(budget.steps).toBeGreaterThan(0);
      const needed = budget.seconds + preStopSleep(podSpec(d)['containers'][0]) + margin;
      expect(podSpec(d)['terminationGracePeriodSeconds'], name).toBeGreaterThanOrEqual(needed);
      expect(podSpec(d)['terminationGracePeriodSeconds'], name).toBeLessThanOrEqual(needed + 10);
    }
  });

  it('reads secrets from the Secret only, and each process only the ones it uses', () => {
    const secretEnv = (c: Obj) =>
      Object.fromEntries((c['env'] ?? []).filter((e: Obj) => e['valueFrom']?.secretKeyRef).map((e: Obj) => [e['name'], e['valueFrom'].secretKeyRef]));
    const gateway = secretEnv(container(find('Deployment', 'ingest-gateway'), 'gateway'));
    expect(Object.keys(gateway).sort()).toEqual(['CRON_SECRET', 'DATABASE_URL', 'INGEST_SECRET']);
    expect(Object.keys(secretEnv(container(find('Deployment', 'ingest-projector'), 'projector')))).toEqual(['DATABASE_URL']);
    expect(secretEnv(container(find('Job', 'ingest-setup'), 'migrate'))['DATABASE_URL']).toMatchObject({ key: 'migrate-database-url' });
    for (const { owner, c } of allContainers()) {
      for (const ref of Object.values(secretEnv(c))) expect(ref, owner).toMatchObject({ name: 'ingest-secrets' });
      const plain = (c['env'] ?? []).filter((e: Obj) => 'value' in e).map((e: Obj) => e['name']);
      expect(plain, owner).not.toContain('DATABASE_URL');
      expect(plain.filter((n: string) => /SECRET/.test(n)), owner).toEqual([]);
    }
    const config = find('ConfigMap', 'ingest-config')['data'];
    expect(Object.keys(config).filter((k) => /SECRET|PASSWORD|DATABASE_URL/.test(k))).toEqual([]);
    expect(objects.some(({ obj }) => obj['kind'] === 'Secret')).toBe(false);
  });

  it('sets only settings docs/operations.md documents, with values the processes accept', () => {
    const documented = documentedSettings();
    expect(documented.size).toBeGreaterThan(20);
    const config: Record<string, string> = find('ConfigMap', 'ingest-config')['data'];
    for (const key of Object.keys(config)) expect(documented, `ConfigMap key ${key}`).toContain(key);
    expect(config).not.toHaveProperty('FAILPOINTS');
    for (const { owner, c } of allContainers()) {
      for (const e of c['env'] ?? []) expect(documented, `${owner}: ${e.name}`).toContain(e.name);
      expect(c['envFrom'], owner).toEqual([{ configMapRef: { name: 'ingest-config' } }]);
    }
    const gatewayEnv = { ...config, ...Object.fromEntries(container(find('Deployment', 'ingest-gateway'), 'gateway')['env'].map((e: Obj) => [e.name, e.value ?? (e.name === 'DATABASE_URL' ? 'postgres://secret@db/ingest' : 'secret')])) };
    expect(() => readCommonConfig(gatewayEnv)).not.toThrow();
    expect(checkSettings(gatewayEnv, ['gateway'], combinedChecks(['gateway']))).toEqual([]);
    const projectorEnv = { ...config, ...Object.fromEntries(container(find('Deployment', 'ingest-projector'), 'projector')['env'].map((e: Obj) => [e.name, e.value ?? 'postgres://secret@db/ingest'])) };
    expect(checkSettings(projectorEnv, ['projector'], combinedChecks(['projector']))).toEqual([]);
    // Admitted bodies take several times their size once parsed: admission stays well under the memory limit.
    const limit = /^(\d+)(Mi|Gi)$/.exec(container(find('Deployment', 'ingest-gateway'), 'gateway')['resources'].limits.memory);
    const limitBytes = Number(limit?.[1]) * 1024 ** (limit?.[2] === 'Gi' ? 3 : 2);
    expect(readGatewayConfig(gatewayEnv).maxInflightBytes).toBeLessThanOrEqual(limitBytes / 8);
    expect(readCommonConfig(config).kafkaPartitions).toBe(6);
  });

  it('runs the image as its non-root user, read-only, and the processes by entry points the image holds', () => {
    const uid = /^USER (\d+):(\d+)$/m.exec(read('Dockerfile'));
    expect(uid?.[1]).not.toBe('0');
    for (const { obj } of objects.filter(({ obj }) => obj['spec']?.template?.spec)) {
      const sc = podSpec(obj)['securityContext'];
      expect(sc).toMatchObject({ runAsNonRoot: true, runAsUser: Number(uid?.[1]), runAsGroup: Number(uid?.[2]) });
      expect(podSpec(obj)['automountServiceAccountToken']).toBe(false);
    }
    for (const { owner, c } of allContainers()) {
      expect(c['image'], owner).toBe(kustomization['images'][0].name);
      expect(c['securityContext'], owner).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(c['resources']?.requests?.memory, owner).toBeDefined();
      expect(c['resources']?.limits?.memory, owner).toBeDefined();
      const [node, entry] = c['command'];
      expect(node, owner).toBe('node');
      if (!entry.startsWith('--')) expect(existsSync(join(REPO, entry)), `${owner}: ${entry}`).toBe(true);
    }
    expect(container(find('Deployment', 'ingest-gateway'), 'gateway')['command']).toEqual(['node', 'services/gateway/src/main.ts']);
    expect(container(find('Deployment', 'ingest-projector'), 'projector')['command']).toEqual(['node', 'services/projector/src/main.ts']);
    expect(container(find('Job', 'ingest-setup'), 'migrate')['command']).toEqual(['node', 'scripts/migrate.ts']);
  });

  it('creates the topics with names the root package resolves in the image', async () => {
    const [, inputType, evalFlag, script] = container(find('Job', 'ingest-setup'), 'topics')['command'];
    expect([inputType, evalFlag]).toEqual(['--input-type=module', '--eval']);
    const rootDeps = Object.keys((JSON.parse(read('package.json')) as { dependencies: Record<string, string> }).dependencies);
    const imports = [...String(script).matchAll(/import \{ ([^}]+) \} from '([^']+)';/g)];
    expect(imports.length).toBe(2);
    for (const [, names, from] of imports) {
      expect(rootDeps, `${from} resolves from /app (the eval's directory)`).toContain(from);
      const mod = (await import(from!)) as Record<string, unknown>;
      for (const name of names!.split(',').map((s) => s.trim())) expect(typeof mod[name], `${from} exports ${name}`).toBe('function');
    }
  });
});
