// The overlays of deploy/k8s as `kubectl kustomize` renders them (what `kubectl apply -k` sends), for
// the checks of tests/deploy. kubectl is required: without it the checks fail with how to install it,
// they never skip.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { read, REPO } from './support.ts';

export type Obj = Record<string, any>;

export const K8S = 'deploy/k8s';
/** The overlays, one directory each under deploy/k8s/overlays. */
export const OVERLAYS: string[] = readdirSync(join(REPO, K8S, 'overlays'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

/** KUBECTL overrides the binary (a kubectl outside PATH). */
const KUBECTL = process.env['KUBECTL'] || 'kubectl';
const INSTALL =
  'tests/deploy render deploy/k8s/overlays/* with `kubectl kustomize` (kubectl 1.27 or later, kustomize v5). ' +
  'Install kubectl (https://kubernetes.io/docs/tasks/tools/#kubectl), e.g. on Linux x86-64: ' +
  'curl -LO https://dl.k8s.io/release/v1.32.4/bin/linux/amd64/kubectl && sudo install -m 0755 kubectl /usr/local/bin/kubectl, ' +
  'or point KUBECTL at one.';

let checked = false;
/** Fails, saying how to install it, unless a kubectl with kustomize v5 or later runs. */
function checkKubectl(): void {
  if (checked) return;
  const r = spawnSync(KUBECTL, ['version', '--client', '-o', 'json'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`${KUBECTL} does not run (${r.error?.message ?? r.stderr.trim()}). ${INSTALL}`);
  const kustomize = String((JSON.parse(r.stdout) as { kustomizeVersion?: string }).kustomizeVersion ?? '');
  const major = Number(/^v?(\d+)\./.exec(kustomize)?.[1]);
  if (!(major >= 5)) throw new Error(`${KUBECTL} bundles kustomize ${kustomize || '(none)'}; components and labels need v5. ${INSTALL}`);
  checked = true;
}

/** Every object an overlay renders to, as plain data: one of deploy/k8s/overlays by name, or any kustomization by absolute path. */
export function renderOverlay(overlay: string): Obj[] {
  checkKubectl();
  const dir = isAbsolute(overlay) ? overlay : join(REPO, K8S, 'overlays', overlay);
  const r = spawnSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout).map((doc) => {
    if (doc.errors.length) throw new Error(`${overlay}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as Obj;
  });
}

/** One overlay's objects, with the look-ups the checks use. */
export class Rendered {
  readonly overlay: string;
  readonly objects: Obj[];

  constructor(overlay: string, objects: Obj[]) {
    this.overlay = overlay;
    this.objects = objects;
  }

  static of(overlay: string): Rendered {
    return new Rendered(overlay, renderOverlay(overlay));
  }

  all(kind: string): Obj[] {
    return this.objects.filter((o) => o['kind'] === kind);
  }

  find(kind: string, name: string): Obj {
    const hit = this.objects.find((o) => o['kind'] === kind && o['metadata']?.name === name);
    if (!hit) throw new Error(`${kind}/${name} is not in overlay ${this.overlay}`);
    return hit;
  }

  /** The Secret a reference names: kustomize appends a content hash to a generated Secret's name. */
  secret(name: string): Obj | undefined {
    return this.all('Secret').find((s) => s['metadata'].name === name);
  }

  /** The objects that run pods: Deployments and Jobs. */
  workloads(): Obj[] {
    return this.objects.filter((o) => o['spec']?.template?.spec);
  }

  /** Every container and init container, with the workload that runs it. */
  containers(): Array<{ owner: Obj; c: Obj; name: string }> {
    return this.workloads().flatMap((owner) =>
      [...(podSpec(owner)['initContainers'] ?? []), ...(podSpec(owner)['containers'] ?? [])].map((c: Obj) => ({
        owner,
        c,
        name: `${owner['kind']}/${owner['metadata'].name}/${c['name']}`,
      })),
    );
  }
}

export const podSpec = (o: Obj): Obj => o['spec']['template']['spec'];

export function container(o: Obj, name: string): Obj {
  const c = [...(podSpec(o)['containers'] ?? []), ...(podSpec(o)['initContainers'] ?? [])].find((x: Obj) => x['name'] === name);
  if (!c) throw new Error(`${o['kind']}/${o['metadata'].name} has no container ${name}`);
  return c;
}

export const envValue = (c: Obj, name: string): string | undefined => (c['env'] ?? []).find((e: Obj) => e['name'] === name)?.value;

export const portNumber = (c: Obj, port: string | number): number | undefined =>
  typeof port === 'number' ? port : (c['ports'] ?? []).find((p: Obj) => p['name'] === port)?.containerPort;

/** Whether a label selector's matchLabels all hold in `labels`. */
export const selects = (selector: Obj | undefined, labels: Obj): boolean =>
  Object.entries(selector?.['matchLabels'] ?? {}).every(([k, v]) => labels[k] === v);

/** The environment a container starts with: its ConfigMaps (envFrom), then its own `env` values. */
export function containerEnv(r: Rendered, c: Obj): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c['envFrom'] ?? []) Object.assign(env, r.find('ConfigMap', from['configMapRef'].name)['data']);
  for (const e of c['env'] ?? []) if ('value' in e) env[e['name']] = e['value'];
  return env;
}

export interface SecretFile {
  secret: string;
  key: string;
  mount: Obj;
  volume: Obj;
}

/** The Secret key a container reads at `path`, when a Secret volume listing that key is mounted there. */
export function secretFile(owner: Obj, c: Obj, path: string): SecretFile | undefined {
  const mount = (c['volumeMounts'] ?? []).find((m: Obj) => path.startsWith(`${m['mountPath']}/`));
  if (!mount) return undefined;
  const volume = (podSpec(owner)['volumes'] ?? []).find((v: Obj) => v['name'] === mount['name']);
  const item = volume?.secret?.items?.find((i: Obj) => i['path'] === path.slice(mount['mountPath'].length + 1));
  return item ? { secret: volume.secret.secretName, key: item['key'], mount, volume } : undefined;
}

/** The repository file a container runs: its command's `.ts` argument (Node's flags come before it). */
export const entryPoint = (c: Obj): string => (c['command'] as string[]).find((a) => a.endsWith('.ts')) ?? '';

/** The roles an entry point checks its settings for (its `settingsAtStart({ roles: [...] })`). */
export function entryRoles(entry: string): string[] {
  const roles = /settingsAtStart\(\{\s*roles: \[([^\]]*)\]/.exec(read(entry))?.[1];
  if (roles === undefined) throw new Error(`${entry}: no settingsAtStart({ roles: [...] })`);
  return [...roles.matchAll(/'([a-z]+)'/g)].map((m) => m[1]!);
}

/**
 * The services' database URL in an overlay: its generated Secret's, or the form its kustomization
 * documents for a Secret created outside (the `database-url … postgres://…` line of its comment).
 */
export function databaseUrl(r: Rendered): string | undefined {
  const data = r.all('Secret').find((s) => s['data']?.['database-url'])?.['data']['database-url'];
  if (data) return Buffer.from(String(data), 'base64').toString('utf8');
  return /database-url\s+.*?(postgres:\/\/\S+)/.exec(read(`${K8S}/overlays/${r.overlay}/kustomization.yaml`))?.[1];
}
