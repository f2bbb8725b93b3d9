// What a kubelet would run for one pod of a rendered workload: for each container its command and
// arguments, its environment (ConfigMaps, Secrets, literal values, the downward API), its volumes as
// files on this machine (Secret and ConfigMap items with their modes and the pod's fsGroup, emptyDirs
// as tmpfs), its user, its security settings and its memory limit. Nothing is taken from anywhere but
// the rendered objects, the Secret values the harness stands in for (an operator creates those by
// hand) and the settings a caller overrides for a cluster it stands in for (`overrides`).
//
// One deliberate difference: the pods share this machine's network (there is no pod IP). Each pod
// gets host ports of its own for the ports its containers declare, and an environment variable whose
// name ends in PORT and whose value is one of those container ports is given the host port instead;
// probes and the Service reach the pod there. Everything else is exactly what the objects say.
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Obj, Rendered } from '../deploy/k8sRender.ts';

export type SecretData = Record<string, Record<string, string>>;

export interface Mount {
  hostPath: string;
  mountPath: string;
  readOnly: boolean;
}

export interface ContainerPlan {
  name: string;
  argv: string[];
  env: Record<string, string>;
  mounts: Mount[];
  /** emptyDir volumes: a tmpfs at each path. */
  tmpfs: string[];
  user: { uid: number; gid: number; groups: number[] };
  readOnlyRoot: boolean;
  /** securityContext.capabilities, as written (ALL, NET_BIND_SERVICE, …). */
  capDrop: string[];
  capAdd: string[];
  noNewPrivileges: boolean;
  /** resources.limits.memory in bytes: the container is killed beyond it, as in a pod. */
  memoryLimitBytes?: number;
  /** Declared container port (by name and number) -> the pod's host port. */
  ports: Map<string | number, number>;
  probes: { readiness?: Obj; liveness?: Obj; startup?: Obj };
  preStop?: string[];
}

export interface PodPlan {
  name: string;
  workload: Obj;
  init: ContainerPlan[];
  containers: ContainerPlan[];
  terminationGraceSeconds: number;
}

const modeOf = (n: unknown, fallback: number): number => (typeof n === 'number' ? n : fallback);

const QUANTITY_UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

/** A Kubernetes memory quantity (`256Mi`, `1G`, `512000000`) in bytes. */
function memoryBytes(quantity: string | number): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|)$/.exec(String(quantity));
  if (!m) throw new Error(`memory quantity ${quantity} is not one the harness reads`);
  return Math.ceil(Number(m[1]) * QUANTITY_UNITS[m[2]!]!);
}

/** Writes a Secret or ConfigMap volume's items into `dir` as the kubelet does: root-owned, group fsGroup, the volume's modes. */
function writeItems(dir: string, data: Record<string, string>, source: Obj, fsGroup: number | undefined, what: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const items: Array<{ key: string; path: string; mode?: number }> =
    source['items'] ?? Object.keys(data).map((key) => ({ key, path: key }));
  for (const item of items) {
    const value = data[item.key];
    if (value === undefined) {
      if (source['optional'] === true) continue;
      throw new Error(`${what} has no key ${item.key}`);
    }
    const file = join(dir, item.path);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, value);
    // With an fsGroup the kubelet makes the files group-readable by it (and owned by root).
    const mode = modeOf(item.mode, modeOf(source['defaultMode'], 0o644));
    if (process.getuid?.() === 0) chownSync(file, 0, fsGroup ?? 0);
    chmodSync(file, fsGroup === undefined ? mode : mode | 0o040);
  }
}

function envOf(r: Rendered, c: Obj, secrets: SecretData, podName: string, what: string): Record<string, string> {
  const env: Record<string, string> = {};
  const configMap = (name: string): Record<string, string> => r.find('ConfigMap', name)['data'] ?? {};
  const secret = (name: string): Record<string, string> => {
    const s = secrets[name];
    if (!s) throw new Error(`${what} reads Secret ${name}, which the harness does not provide`);
    return s;
  };
  for (const from of c['envFrom'] ?? []) {
    const prefix = from['prefix'] ?? '';
    const data = from['configMapRef'] ? configMap(from['configMapRef'].name) : secret(from['secretRef'].name);
    for (const [k, v] of Object.entries(data)) env[`${prefix}${k}`] = v;
  }
  for (const e of c['env'] ?? []) {
    if ('value' in e) env[e['name']] = String(e['value']);
    else if (e['valueFrom']?.configMapKeyRef)
      env[e['name']] = configMap(e['valueFrom'].configMapKeyRef.name)[e['valueFrom'].configMapKeyRef.key] ?? '';
    else if (e['valueFrom']?.secretKeyRef) env[e['name']] = secret(e['valueFrom'].secretKeyRef.name)[e['valueFrom'].secretKeyRef.key] ?? '';
    else if (e['valueFrom']?.fieldRef) {
      const field = e['valueFrom'].fieldRef.fieldPath;
      env[e['name']] = field === 'metadata.name' ? podName : field.startsWith('status.') && field.endsWith('IP') ? '127.0.0.1' : '';
    } else throw new Error(`${what}: env ${e['name']} has a source the harness does not know`);
  }
  return env;
}

export interface PlanOptions {
  rendered: Rendered;
  workload: Obj;
  podName: string;
  secrets: SecretData;
  /** Where this pod's volumes are laid out. */
  dir: string;
  /** A free host port for each declared container port. */
  hostPort: () => Promise<number>;
  /** Set on every container's environment after the manifest's: what the cluster a test stands in for would give. */
  overrides?: Record<string, string>;
}

export async function planPod(o: PlanOptions): Promise<PodPlan> {
  const spec: Obj = o.workload['spec']['template']['spec'];
  const podSc: Obj = spec['securityContext'] ?? {};
  const fsGroup: number | undefined = podSc['fsGroup'];
  const volumes = new Map<string, { hostPath?: string; tmpfs?: boolean }>();
  for (const v of spec['volumes'] ?? []) {
    const dir = join(o.dir, 'volumes', v['name']);
    if (v['secret']) writeItems(dir, o.secrets[v['secret'].secretName] ?? {}, v['secret'], fsGroup, `Secret ${v['secret'].secretName}`);
    else if (v['configMap'])
      writeItems(
        dir,
        o.rendered.find('ConfigMap', v['configMap'].name)['data'] ?? {},
        v['configMap'],
        fsGroup,
        `ConfigMap ${v['configMap'].name}`,
      );
    else if (v['emptyDir']) {
      volumes.set(v['name'], { tmpfs: true });
      continue;
    } else throw new Error(`${o.podName}: volume ${v['name']} is of a kind the harness does not lay out`);
    volumes.set(v['name'], { hostPath: dir });
  }
  const plan = async (c: Obj): Promise<ContainerPlan> => {
    const what = `${o.podName}/${c['name']}`;
    const sc: Obj = { ...podSc, ...(c['securityContext'] ?? {}) };
    const ports = new Map<string | number, number>();
    for (const p of c['ports'] ?? []) {
      const host = await o.hostPort();
      ports.set(p['containerPort'], host);
      if (p['name']) ports.set(p['name'], host);
    }
    const env = { ...envOf(o.rendered, c, o.secrets, o.podName, what), ...o.overrides };
    // The one difference from a pod (see the top): its declared ports are this pod's host ports.
    for (const [k, v] of Object.entries(env)) if (/PORT$/.test(k) && ports.has(Number(v))) env[k] = String(ports.get(Number(v)));
    const mounts: Mount[] = [];
    const tmpfs: string[] = [];
    for (const m of c['volumeMounts'] ?? []) {
      const v = volumes.get(m['name']);
      if (!v) throw new Error(`${what} mounts volume ${m['name']}, which the pod does not define`);
      if (v.tmpfs) tmpfs.push(m['mountPath']);
      else mounts.push({ hostPath: v.hostPath!, mountPath: m['mountPath'], readOnly: m['readOnly'] === true });
    }
    const uid = sc['runAsUser'];
    if (typeof uid !== 'number') throw new Error(`${what}: no runAsUser (the image's user is not checked here)`);
    const memory = c['resources']?.limits?.memory;
    return {
      name: c['name'],
      argv: [...(c['command'] ?? []), ...(c['args'] ?? [])],
      env,
      mounts,
      tmpfs,
      user: { uid, gid: sc['runAsGroup'] ?? uid, groups: fsGroup === undefined ? [] : [fsGroup] },
      readOnlyRoot: sc['readOnlyRootFilesystem'] === true,
      capDrop: (sc['capabilities']?.drop ?? []).map(String),
      capAdd: (sc['capabilities']?.add ?? []).map(String),
      noNewPrivileges: sc['allowPrivilegeEscalation'] === false,
      ...(memory === undefined ? {} : { memoryLimitBytes: memoryBytes(memory) }),
      ports,
      probes: { readiness: c['readinessProbe'], liveness: c['livenessProbe'], startup: c['startupProbe'] },
      ...(c['lifecycle']?.preStop?.exec?.command ? { preStop: c['lifecycle'].preStop.exec.command as string[] } : {}),
    };
  };
  const init: ContainerPlan[] = [];
  for (const c of spec['initContainers'] ?? []) init.push(await plan(c));
  const containers: ContainerPlan[] = [];
  for (const c of spec['containers'] ?? []) containers.push(await plan(c));
  return { name: o.podName, workload: o.workload, init, containers, terminationGraceSeconds: spec['terminationGracePeriodSeconds'] ?? 30 };
}
