// The containers of deploy/k8s as podman runs them here: command, environment (the ConfigMap by
// envFrom, each container's env), Secret volumes (files, mode and fsGroup as the kubelet writes them),
// user, read-only root, dropped capabilities, no privilege escalation, memory limit, readiness probe
// and grace period, all read from the YAML. What only a cluster (or an overlay) has comes from the
// caller (PodContext): the brokers, topic names and consumer group of the run, the listening address,
// the Secrets' values; and every port setting gets a free port (the host's network is shared).
import { chownSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO } from '../../scripts/image/proc.ts';

export type Obj = Record<string, any>;

export interface Manifests {
  dir: string;
  configMaps: Map<string, Record<string, string>>;
  /** `Kind/name` → object, for Deployments and Jobs. */
  workloads: Map<string, Obj>;
}

/** The kustomize base (deploy/k8s/base, or deploy/k8s when it is flat): what every cluster runs. */
export function readManifests(): Manifests {
  const dir = ['deploy/k8s/base', 'deploy/k8s'].find((d) => existsSync(join(REPO, d, 'kustomization.yaml')));
  if (!dir) throw new Error('no kustomize base under deploy/k8s');
  const configMaps = new Map<string, Record<string, string>>();
  const workloads = new Map<string, Obj>();
  for (const file of readdirSync(join(REPO, dir)).filter((f) => /\.ya?ml$/.test(f))) {
    for (const doc of parseAllDocuments(readFileSync(join(REPO, dir, file), 'utf8'))) {
      const o = doc.toJS() as Obj | null;
      if (o?.['kind'] === 'ConfigMap') configMaps.set(o['metadata'].name, o['data'] ?? {});
      if (o?.['kind'] === 'Deployment' || o?.['kind'] === 'Job') workloads.set(`${o['kind']}/${o['metadata'].name}`, o);
    }
  }
  return { dir, configMaps, workloads };
}

export interface RunSpec {
  /** `Kind/name/container`, for messages. */
  source: string;
  command: string[];
  env: Record<string, string>;
  /** podman run flags: user, security, mounts, limits. */
  flags: string[];
  gracePeriodSeconds: number;
  readiness?: { path: string; port: number };
  /** The ports the container listens on, as remapped (containerPort → host port). */
  ports: Map<number, number>;
}

export interface PodContext {
  manifests: Manifests;
  /** Secret name → key → value: the values a cluster would hold. */
  secrets: Record<string, Record<string, string>>;
  /** Where the Secret volumes' files are written. */
  volumesDir: string;
  /** Set on top of what the manifests give (cluster-only values). */
  overrides: Record<string, string>;
  /** A free port on this machine (the host network is shared). */
  freePort: () => Promise<number>;
}

const MEMORY_UNITS: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, K: 1e3, M: 1e6, G: 1e9, '': 1 };

function bytes(quantity: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|K|M|G|)$/.exec(quantity);
  if (!m) throw new Error(`memory quantity ${quantity} not understood`);
  return Number(m[1]) * MEMORY_UNITS[m[2]!]!;
}

function secretValue(ctx: PodContext, name: string, key: string, where: string): string {
  const value = ctx.secrets[name]?.[key];
  if (value === undefined) throw new Error(`${where}: Secret ${name} key ${key} has no value in the test`);
  return value;
}

/** The files of a Secret volume in a host directory, as the kubelet lays them out. */
function secretVolume(ctx: PodContext, pod: Obj, volume: Obj, where: string): string {
  const { secretName, items, defaultMode } = volume['secret'] as { secretName: string; items?: Obj[]; defaultMode?: number };
  const dir = join(ctx.volumesDir, `${where.replaceAll('/', '-')}-${volume['name']}`);
  mkdirSync(dir, { recursive: true });
  const keys: Array<{ key: string; path: string }> = items
    ? items.map((i) => ({ key: i['key'], path: i['path'] }))
    : Object.keys(ctx.secrets[secretName] ?? {}).map((key) => ({ key, path: key }));
  const fsGroup = pod['securityContext']?.fsGroup as number | undefined;
  for (const { key, path } of keys) {
    const file = join(dir, path);
    writeFileSync(file, secretValue(ctx, secretName, key, where));
    chmodSync(file, defaultMode ?? 0o644);
    if (fsGroup !== undefined) chownSync(file, 0, fsGroup);
  }
  chmodSync(dir, 0o755);
  return dir;
}

/** podman flags and environment for one container of a workload. */
export async function runSpec(ctx: PodContext, workload: string, containerName: string): Promise<RunSpec> {
  const w = ctx.manifests.workloads.get(workload);
  if (!w) throw new Error(`${ctx.manifests.dir} has no ${workload}`);
  const pod = w['spec']['template']['spec'] as Obj;
  const c = [...(pod['initContainers'] ?? []), ...pod['containers']].find((x: Obj) => x['name'] === containerName) as Obj | undefined;
  if (!c) throw new Error(`${workload} has no container ${containerName}`);
  const source = `${workload}/${containerName}`;

  // Kubernetes' order: envFrom, then env (which wins), then what only the cluster has.
  const env: Record<string, string> = {};
  for (const from of c['envFrom'] ?? []) {
    const name = from['configMapRef']?.name;
    const data = ctx.manifests.configMaps.get(name);
    if (!data) throw new Error(`${source}: envFrom ${JSON.stringify(from)} is not a ConfigMap of ${ctx.manifests.dir}`);
    Object.assign(env, data);
  }
  for (const e of c['env'] ?? []) {
    const ref = e['valueFrom'];
    if (ref?.secretKeyRef) env[e['name']] = secretValue(ctx, ref.secretKeyRef.name, ref.secretKeyRef.key, source);
    else if (ref?.configMapKeyRef) env[e['name']] = ctx.manifests.configMaps.get(ref.configMapKeyRef.name)?.[ref.configMapKeyRef.key] ?? '';
    else if (ref) throw new Error(`${source}: env ${e['name']} valueFrom ${JSON.stringify(ref)} is not supported by the test`);
    else env[e['name']] = String(e['value'] ?? '');
  }
  Object.assign(env, ctx.overrides);
  // Every port setting gets a free port of this machine; the probes follow.
  const ports = new Map<number, number>();
  for (const [k, v] of Object.entries(env)) {
    if ((k === 'PORT' || k.endsWith('_PORT')) && /^\d+$/.test(v) && Number(v) > 0) {
      const port = await ctx.freePort();
      ports.set(Number(v), port);
      env[k] = String(port);
    }
  }

  const flags: string[] = [];
  const sc = { ...pod['securityContext'], ...c['securityContext'] } as Obj;
  if (sc['runAsUser'] !== undefined) flags.push(`--user=${sc['runAsUser']}:${sc['runAsGroup'] ?? sc['runAsUser']}`);
  if (sc['runAsNonRoot'] && !sc['runAsUser']) throw new Error(`${source}: runAsNonRoot without runAsUser`);
  // No writable /tmp either: a pod's read-only root has none unless it mounts one.
  if (sc['readOnlyRootFilesystem']) flags.push('--read-only', '--read-only-tmpfs=false');
  for (const cap of sc['capabilities']?.drop ?? []) flags.push(`--cap-drop=${String(cap).toLowerCase()}`);
  for (const cap of sc['capabilities']?.add ?? []) flags.push(`--cap-add=${String(cap).toLowerCase()}`);
  if (sc['allowPrivilegeEscalation'] === false) flags.push('--security-opt=no-new-privileges');
  const memory = c['resources']?.limits?.memory as string | undefined;
  if (memory) flags.push(`--memory=${bytes(memory)}`);
  for (const m of c['volumeMounts'] ?? []) {
    const volume = (pod['volumes'] ?? []).find((v: Obj) => v['name'] === m['name']) as Obj | undefined;
    if (volume?.['secret']) flags.push(`--volume=${secretVolume(ctx, pod, volume, source)}:${m['mountPath']}:ro`);
    else if (volume?.['emptyDir']) flags.push(`--tmpfs=${m['mountPath']}`);
    else throw new Error(`${source}: volume ${m['name']} is not a Secret or an emptyDir, which the test does not provide`);
  }

  const probe = c['readinessProbe']?.httpGet as Obj | undefined;
  let readiness: RunSpec['readiness'];
  if (probe) {
    const named = (c['ports'] ?? []).find((p: Obj) => p['name'] === probe['port'])?.containerPort as number | undefined;
    const containerPort = typeof probe['port'] === 'number' ? probe['port'] : named;
    const port = containerPort === undefined ? undefined : ports.get(containerPort);
    if (port === undefined) throw new Error(`${source}: readiness port ${probe['port']} is not one of its port settings`);
    readiness = { path: probe['path'], port };
  }
  return {
    source,
    command: [...(c['command'] ?? []), ...(c['args'] ?? [])],
    env,
    flags,
    gracePeriodSeconds: pod['terminationGracePeriodSeconds'] ?? 30,
    ...(readiness ? { readiness } : {}),
    ports,
  };
}
