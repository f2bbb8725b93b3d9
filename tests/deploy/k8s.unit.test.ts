// deploy/k8s: every overlay, rendered by `kubectl kustomize` (k8sRender.ts), is valid against the
// Kubernetes API schemas (kubernetes-models; @kubernetes-models/prometheus-operator for the PodMonitors
// and the PrometheusRule) with no unknown field, and consistent with what the processes serve: labels
// and selectors, replicas through disruptions, probe paths and ports, the metrics ports, shutdown
// deadlines, the image's user and entry points. Settings and secrets: k8s-settings.unit.test.ts;
// the NetworkPolicy: k8s-network.unit.test.ts; the prometheus-operator objects: k8s-monitoring.unit.test.ts.
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import dockerignore from '@balena/dockerignore';
import { PodMonitor, PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGatewayConfig } from '@ingest/gateway';
import { startTestGateway, type TestGateway } from '@ingest/gateway/testing';
import { createProbeServer } from '@ingest/projector';
import { createMetricsServer, createRegistry, SETTINGS } from '@ingest/runtime';
import { container, entryPoint, envValue, K8S, OVERLAYS, podSpec, portNumber, Rendered, selects, type Obj } from './k8sRender.ts';
import { read, readYamlDocs, REPO } from './support.ts';
import { SERVICE_NODE_FLAGS as YOUNG_GENERATION } from '../faults/procs.ts';

interface Validatable {
  validate(): void;
}
/** A model's constructor: it takes the object as plain data (the types of some ask for fields, e.g. `spec`). */
type Model = new (data: any) => Validatable;

const MODELS: Record<string, Model> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

// Rendered once per overlay for the whole file.
const RENDERED = new Map(OVERLAYS.map((o) => [o, Rendered.of(o)]));
const overlay = (name: string): Rendered => RENDERED.get(name)!;

/** JSON pointer of a path, as ajv reports it. */
const pointer = (path: Array<string | number>): string => path.map((p) => '/' + String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('');

/**
 * kubernetes-models ignores fields the API does not define, where `kubectl apply` (strict field
 * validation) refuses them. Each field is probed: given a value of no valid type (NaN), a field
 * the schema defines makes validation fail at its own path; an unknown one does not.
 */
function unknownFields(Model: Model, obj: Obj): string[] {
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

const modelOf = (obj: Obj) => MODELS[`${obj['apiVersion']}/${obj['kind']}`];

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

/** The replicas a Deployment runs with: its own count, or the minimum of the autoscaler that owns it. */
function replicasOf(r: Rendered, d: Obj): number {
  const hpa = r.all('HorizontalPodAutoscaler').find((h) => h['spec'].scaleTargetRef.kind === 'Deployment' && h['spec'].scaleTargetRef.name === d['metadata'].name);
  if (hpa) {
    // Both would fight: each apply would reset the count the autoscaler chose.
    expect(d['spec']['replicas'], `${d['metadata'].name} has an autoscaler and a replica count`).toBeUndefined();
    return hpa['spec'].minReplicas ?? 1;
  }
  return d['spec']['replicas'] ?? 1;
}

describe('deploy/k8s kustomizations', () => {
  it('are a base, its monitoring component and the dev and prod overlays', () => {
    expect(OVERLAYS).toEqual(['dev', 'prod']);
    expect(readYamlDocs(`${K8S}/base/monitoring/kustomization.yaml`)[0]!['kind']).toBe('Component');
    expect(readdirSync(join(REPO, K8S)).sort()).toEqual(['base', 'overlays']);
  });

  it.each(['base', 'base/monitoring', ...OVERLAYS.map((o) => `overlays/${o}`)])('%s lists every manifest of its directory, and nothing else', (dir) => {
    const k = readYamlDocs(`${K8S}/${dir}/kustomization.yaml`)[0]!;
    const local = (p: string) => !p.startsWith('..') && /\.ya?ml$/.test(p);
    const listed = [...(k['resources'] ?? []), ...(k['patches'] ?? []).map((p: Obj) => p['path']).filter(Boolean)].filter(local);
    const files = readdirSync(join(REPO, K8S, dir)).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...listed].sort()).toEqual(files.sort());
  });
});

describe.each(OVERLAYS)('deploy/k8s/overlays/%s', (name) => {
  const r = overlay(name);
  const gateway = r.find('Deployment', 'ingest-gateway');
  const projector = r.find('Deployment', 'ingest-projector');

  it.each(r.objects.map((obj) => [`${obj['kind']}/${obj['metadata']?.name}`, obj] as const))(
    '%s is valid against the Kubernetes API schema, with no unknown field',
    (_name, obj) => {
      const Model = modelOf(obj);
      expect(Model, `no model for ${obj['apiVersion']} ${obj['kind']}`).toBeDefined();
      expect(() => new Model!(obj).validate()).not.toThrow();
      expect(unknownFields(Model!, obj)).toEqual([]);
    },
  );

  it('runs in a namespace of its own that enforces the restricted Pod Security Standard', () => {
    const [ns, ...more] = r.all('Namespace');
    expect(more).toEqual([]);
    expect(ns!['metadata'].labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'restricted' });
    for (const o of r.objects.filter((o) => o['kind'] !== 'Namespace')) expect(o['metadata'].namespace, `${o['kind']}/${o['metadata'].name}`).toBe(ns!['metadata'].name);
  });

  it('labels every object as part of retail-ingestion, and every selector finds its pods', () => {
    for (const o of r.objects) expect(o['metadata']['labels']?.['app.kubernetes.io/part-of'], `${o['kind']}/${o['metadata'].name}`).toBe('retail-ingestion');
    const pods = r.workloads().map((w) => w['spec']['template']['metadata']['labels'] as Obj);
    for (const d of r.all('Deployment')) expect(selects(d['spec']['selector'], d['spec']['template']['metadata']['labels']), d['metadata'].name).toBe(true);
    for (const pdb of r.all('PodDisruptionBudget')) {
      const d = r.find('Deployment', pdb['metadata'].name);
      expect(selects(pdb['spec']['selector'], d['spec']['template']['metadata']['labels'])).toBe(true);
      expect(pods.filter((p) => selects(pdb['spec']['selector'], p))).toHaveLength(1);
    }
    const service = r.find('Service', 'ingest-gateway');
    expect(selects({ matchLabels: service['spec']['selector'] }, gateway['spec']['template']['metadata']['labels'])).toBe(true);
    for (const p of service['spec']['ports']) expect(portNumber(container(gateway, 'gateway'), p.targetPort), p.name).toBe(8080);
    for (const hpa of r.all('HorizontalPodAutoscaler')) expect(() => r.find(hpa['spec'].scaleTargetRef.kind, hpa['spec'].scaleTargetRef.name)).not.toThrow();
    for (const np of r.all('NetworkPolicy')) expect(pods.some((p) => selects(np['spec']['podSelector'], p)), np['metadata'].name).toBe(true);
  });

  it('keeps a replica through voluntary disruptions and rolling updates, and never blocks a node drain', () => {
    for (const d of [gateway, projector]) {
      const replicas = replicasOf(r, d);
      const pdb = r.find('PodDisruptionBudget', d['metadata'].name)['spec'];
      const available = pdb['minAvailable'] ?? replicas - pdb['maxUnavailable'];
      expect(d['spec']['strategy']['rollingUpdate']['maxUnavailable']).toBe(0);
      expect(replicas - available, `${d['metadata'].name}: a drain can evict a pod`).toBeGreaterThanOrEqual(1);
      if (name === 'prod') {
        expect(replicas, d['metadata'].name).toBeGreaterThanOrEqual(2);
        expect(available, d['metadata'].name).toBeGreaterThanOrEqual(1);
      }
    }
  });

  if (name === 'prod')
    it('scales the gateway on CPU (autoscaling/v2), from a CPU request, and not the projector', () => {
      const [hpa, ...more] = r.all('HorizontalPodAutoscaler');
      expect(more).toEqual([]);
      expect(hpa!['apiVersion']).toBe('autoscaling/v2');
      expect(hpa!['spec'].scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'ingest-gateway' });
      expect(hpa!['spec'].metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
      expect(hpa!['spec'].maxReplicas).toBeGreaterThan(hpa!['spec'].minReplicas);
      expect(container(gateway, 'gateway')['resources'].requests.cpu).toBeDefined();
    });

  describe('gateway', () => {
    const c = container(gateway, 'gateway');
    const annotations: Obj = gateway['spec']['template']['metadata']['annotations'];
    const config = readGatewayConfig({ PORT: envValue(c, 'PORT'), METRICS_PORT: envValue(c, 'METRICS_PORT') });
    let gw: TestGateway;
    // As runGateway builds it when METRICS_PORT is set: /metrics is not on the API port.
    beforeAll(async () => {
      gw = await startTestGateway({}, { metricsOnApiPort: false });
    });
    afterAll(() => gw.close());

    it('probes PORT and serves /metrics on METRICS_PORT, the port named metrics that the scrape annotation names', () => {
      expect(config.port).toBe(8080);
      expect(config.metricsPort).toBe(9090);
      expect(SETTINGS.METRICS_PORT.roles).toContain('gateway');
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(portNumber(c, c[probe].httpGet.port), probe).toBe(config.port);
      expect(portNumber(c, 'metrics')).toBe(config.metricsPort);
      expect(portNumber(c, 'http')).toBe(config.port);
      expect(annotations['prometheus.io/port']).toBe(String(config.metricsPort));
      expect(envValue(c, 'HOST')).toBe('0.0.0.0');
      // The Service carries the API only.
      expect(r.find('Service', 'ingest-gateway')['spec']['ports'].map((p: Obj) => p.targetPort)).toEqual(['http']);
      // runGateway gives /metrics its own listener when METRICS_PORT is set, and takes it off the API port.
      expect(read('services/gateway/src/runGateway.ts')).toMatch(/createMetricsServer\(/);
      expect(read('services/gateway/src/runGateway.ts')).toMatch(/metricsOnApiPort: config\.metricsPort === undefined/);
    });

    it('uses /healthz for liveness and startup and /readyz for readiness on the API port, and /metrics on the metrics listener only', async () => {
      expect(c['livenessProbe'].httpGet.path).toBe('/healthz');
      expect(c['startupProbe'].httpGet.path).toBe('/healthz');
      expect(c['readinessProbe'].httpGet.path).toBe('/readyz');
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        const res = await fetch(`${gw.url}${c[probe].httpGet.path}`);
        expect(res.status, probe).toBe(200);
        expect(await res.json()).toMatchObject({ ok: true });
      }
      expect((await fetch(`${gw.url}${annotations['prometheus.io/path']}`)).status, '/metrics on the API port').toBe(404);
      const server = createMetricsServer(gw.registry);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        expect((await fetch(`${url}${annotations['prometheus.io/path']}`)).status).toBe(200);
        expect((await fetch(`${url}/healthz`)).status).toBe(404);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });

  it('probes the projector on PROJECTOR_METRICS_PORT, where it serves /healthz, /readyz and /metrics', async () => {
    const c = container(projector, 'projector');
    const annotations: Obj = projector['spec']['template']['metadata']['annotations'];
    const main = read('services/projector/src/main.ts');
    expect(main).toMatch(/setting\(process\.env, 'PROJECTOR_METRICS_PORT'\)/);
    const port = Number(envValue(c, 'PROJECTOR_METRICS_PORT') ?? SETTINGS.PROJECTOR_METRICS_PORT.default);
    expect(port).toBe(9091);
    expect(portNumber(c, 'metrics')).toBe(port);
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) expect(portNumber(c, c[probe].httpGet.port), probe).toBe(port);
    expect(annotations['prometheus.io/port']).toBe(String(port));
    expect(c['livenessProbe'].httpGet.path).toBe('/healthz');
    expect(c['startupProbe'].httpGet.path).toBe('/healthz');
    expect(c['readinessProbe'].httpGet.path).toBe('/readyz');
    // main.ts serves probes.ts's server on that port; it answers each path (a ready projector).
    expect(main).toMatch(/createProbeServer\([^)]*\)\.listen\(port/);
    const server = createProbeServer({ registry: createRegistry(), readiness: async () => ({ consumer: true, database: true, listen: true }) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const path of ['/healthz', '/readyz', annotations['prometheus.io/path']]) expect((await fetch(`${url}${path}`)).status, path).toBe(200);
      expect((await fetch(`${url}/not-a-probe`)).status).toBe(404);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives each process the time its graceful shutdown may take', () => {
    const margin = 5;
    for (const [d, mainTs] of [
      [gateway, 'services/gateway/src/main.ts'],
      [projector, 'services/projector/src/main.ts'],
    ] as const) {
      const budget = shutdownBudgetSeconds(mainTs);
      expect(budget.steps).toBeGreaterThan(0);
      const needed = budget.seconds + preStopSleep(podSpec(d)['containers'][0]) + margin;
      expect(podSpec(d)['terminationGracePeriodSeconds'], d['metadata'].name).toBeGreaterThanOrEqual(needed);
      expect(podSpec(d)['terminationGracePeriodSeconds'], d['metadata'].name).toBeLessThanOrEqual(needed + 10);
    }
  });

  it("runs the overlay's image as its non-root user, read-only, with requests and limits", () => {
    const uid = /^USER (\d+):(\d+)$/m.exec(read('Dockerfile'));
    expect(uid?.[1]).not.toBe('0');
    for (const w of r.workloads()) {
      expect(podSpec(w)['securityContext']).toMatchObject({ runAsNonRoot: true, runAsUser: Number(uid?.[1]), runAsGroup: Number(uid?.[2]), seccompProfile: { type: 'RuntimeDefault' } });
      expect(podSpec(w)['automountServiceAccountToken']).toBe(false);
    }
    const images = new Set(r.containers().map(({ c }) => c['image']));
    expect(images.size).toBe(1);
    const [image] = images;
    expect(image).toMatch(/(^|\/)retail-ingestion:\d+\.\d+\.\d+$/);
    if (name === 'prod') expect(image, 'prod pulls from a registry').toMatch(/^[a-z0-9.-]+\.[a-z]+(:\d+)?\//);
    for (const { c, name: where } of r.containers()) {
      expect(c['securityContext'], where).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      expect(c['resources']?.requests?.memory, where).toBeDefined();
      expect(c['resources']?.limits?.memory, where).toBeDefined();
    }
  });

  it('runs each process by an entry point of the repository that the image holds', () => {
    const ig = dockerignore.default().add(read('.dockerignore').split('\n'));
    expect(r.containers().map(({ c, name: where }) => [where, c['command']])).toEqual([
      // A young generation of fixed size (docs/operations.md#memory), as the image's CMD.
      ['Deployment/ingest-gateway/gateway', ['node', ...YOUNG_GENERATION, 'services/gateway/src/main.ts']],
      ['Deployment/ingest-projector/projector', ['node', ...YOUNG_GENERATION, 'services/projector/src/main.ts']],
      ['Job/ingest-setup/migrate', ['node', 'services/operator/src/cli/migrate.ts']],
      ['Job/ingest-setup/topics', ['node', 'services/operator/src/cli/topics.ts', '--apply']],
    ]);
    for (const { c, name: where } of r.containers()) {
      const entry = entryPoint(c);
      expect(existsSync(join(REPO, entry)), `${where}: ${entry}`).toBe(true);
      expect(ig.ignores(entry), `${where}: .dockerignore leaves ${entry} out of the image`).toBe(false);
    }
    // The setup Job migrates (init container) before it applies the topic plan.
    expect(podSpec(r.find('Job', 'ingest-setup'))['initContainers'].map((c: Obj) => c['name'])).toEqual(['migrate']);
  });
});

describe('the unknown-field probe', () => {
  it('finds an unknown field and a wrong type (the checks above can fail)', () => {
    const gateway = structuredClone(overlay('prod').find('Deployment', 'ingest-gateway'));
    const c = podSpec(gateway)['containers'][0];
    c['readinesProbe'] = c['readinessProbe'];
    expect(unknownFields(Deployment, gateway)).toEqual(['/spec/template/spec/containers/0/readinesProbe']);
    c['ports'][0]['containerPort'] = '8080';
    expect(() => new Deployment(gateway).validate()).toThrow(/containerPort/);
  });

  it('finds one in a PodMonitor and a PrometheusRule too', () => {
    const monitor = structuredClone(overlay('prod').find('PodMonitor', 'ingest-gateway'));
    monitor['spec']['podMetricsEndpoints'][0]['portName'] = 'metrics';
    expect(unknownFields(PodMonitor, monitor)).toEqual(['/spec/podMetricsEndpoints/0/portName']);
    const rule = structuredClone(overlay('prod').find('PrometheusRule', 'ingest-alerts'));
    rule['spec']['groups'][0]['rules'][0]['expression'] = 'up';
    expect(unknownFields(PrometheusRule, rule)).toEqual(['/spec/groups/0/rules/0/expression']);
  });
});
