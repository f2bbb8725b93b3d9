// deploy/k8s NetworkPolicies, evaluated as the API defines them (policies add up; a pod selected by a
// policy of a direction is isolated in that direction) for each pod of each rendered overlay: the
// gateway's API port open to anyone, the metrics ports to the monitoring namespace only, nothing into
// the projector's API (it has none) or the setup Job, and out only DNS, Kafka (the ports of
// KAFKA_BROKERS) and PostgreSQL (the port of the database URL).
import { describe, expect, it } from 'vitest';
import { databaseUrl, OVERLAYS, Rendered, selects, type Obj } from './k8sRender.ts';

const RENDERED = new Map(OVERLAYS.map((o) => [o, Rendered.of(o)]));

interface Pod {
  name: string;
  namespace: string;
  labels: Obj;
  ports: Obj[];
}
/** The other end of a connection: a pod of some namespace, or an address outside the cluster. */
interface Peer {
  namespace?: Obj;
  pod?: Obj;
  external?: boolean;
}
interface Port {
  port: number;
  protocol: 'TCP' | 'UDP';
}

const MONITORING: Peer = { namespace: { 'kubernetes.io/metadata.name': 'monitoring' }, pod: { 'app.kubernetes.io/name': 'prometheus' } };
const INGRESS_CONTROLLER: Peer = { namespace: { 'kubernetes.io/metadata.name': 'ingress-nginx' }, pod: { 'app.kubernetes.io/name': 'ingress-nginx' } };
const KUBE_DNS: Peer = { namespace: { 'kubernetes.io/metadata.name': 'kube-system' }, pod: { 'k8s-app': 'kube-dns' } };
const OUTSIDE: Peer = { external: true };

const policyTypes = (np: Obj): string[] => np['spec']['policyTypes'] ?? ['Ingress', ...(np['spec']['egress'] ? ['Egress'] : [])];

/** Whether one `ports` entry of a rule admits `port`; a named port is looked up on the pod the traffic goes to. */
function portMatches(rulePorts: Obj[] | undefined, port: Port, target: Pod | undefined): boolean {
  if (!rulePorts?.length) return true;
  return rulePorts.some((p) => {
    if ((p['protocol'] ?? 'TCP') !== port.protocol) return false;
    if (p['port'] === undefined) return true;
    if (typeof p['port'] === 'number') return port.port >= p['port'] && port.port <= (p['endPort'] ?? p['port']);
    return target?.ports.some((c) => c['name'] === p['port'] && c['containerPort'] === port.port && (c['protocol'] ?? 'TCP') === port.protocol) ?? false;
  });
}

function peerMatches(peers: Obj[] | undefined, peer: Peer, policyNamespace: string): boolean {
  if (!peers?.length) return true;
  return peers.some((p) => {
    // An address block: taken to hold the outside address (which the manifests do not know).
    if (p['ipBlock']) return peer.external === true;
    if (peer.external) return false;
    const nsOk = p['namespaceSelector'] ? selects(p['namespaceSelector'], peer.namespace ?? {}) : peer.namespace?.['kubernetes.io/metadata.name'] === policyNamespace;
    return nsOk && (!p['podSelector'] || selects(p['podSelector'], peer.pod ?? {}));
  });
}

/** Whether `pod` may receive (Ingress) from or send (Egress) to `peer` on `port`. */
function allowed(r: Rendered, direction: 'Ingress' | 'Egress', pod: Pod, peer: Peer, port: Port, target?: Pod): boolean {
  const policies = r
    .all('NetworkPolicy')
    .filter((np) => np['metadata'].namespace === pod.namespace && selects(np['spec']['podSelector'], pod.labels) && policyTypes(np).includes(direction));
  if (policies.length === 0) return true;
  const key = direction === 'Ingress' ? 'ingress' : 'egress';
  const peersKey = direction === 'Ingress' ? 'from' : 'to';
  return policies.some((np) =>
    (np['spec'][key] ?? []).some(
      (rule: Obj) => portMatches(rule['ports'], port, direction === 'Ingress' ? pod : target) && peerMatches(rule[peersKey], peer, np['metadata'].namespace),
    ),
  );
}

const tcp = (port: number): Port => ({ port, protocol: 'TCP' });

describe.each(OVERLAYS)('deploy/k8s/overlays/%s NetworkPolicies', (name) => {
  const r = RENDERED.get(name)!;
  const podOf = (kind: string, workload: string): Pod => {
    const w = r.find(kind, workload);
    return {
      name: workload,
      namespace: w['metadata'].namespace,
      labels: w['spec']['template']['metadata']['labels'],
      ports: w['spec']['template']['spec']['containers'].flatMap((c: Obj) => c['ports'] ?? []),
    };
  };
  const gateway = podOf('Deployment', 'ingest-gateway');
  const projector = podOf('Deployment', 'ingest-projector');
  const setup = podOf('Job', 'ingest-setup');
  const port = (pod: Pod, portName: string): number => pod.ports.find((p) => p['name'] === portName)!['containerPort'];
  const sameNamespace: Peer = { namespace: { 'kubernetes.io/metadata.name': gateway.namespace }, pod: { app: 'other' } };

  it('opens the gateway API port to anyone and its metrics port to the monitoring namespace only', () => {
    for (const peer of [INGRESS_CONTROLLER, MONITORING, sameNamespace, OUTSIDE]) expect(allowed(r, 'Ingress', gateway, peer, tcp(port(gateway, 'http'))), JSON.stringify(peer)).toBe(true);
    expect(allowed(r, 'Ingress', gateway, MONITORING, tcp(port(gateway, 'metrics')))).toBe(true);
    for (const peer of [INGRESS_CONTROLLER, sameNamespace, OUTSIDE]) expect(allowed(r, 'Ingress', gateway, peer, tcp(port(gateway, 'metrics'))), JSON.stringify(peer)).toBe(false);
    expect(allowed(r, 'Ingress', gateway, INGRESS_CONTROLLER, tcp(9229)), 'any other port').toBe(false);
  });

  it('opens nothing of the projector but its metrics port, to the monitoring namespace only', () => {
    expect(allowed(r, 'Ingress', projector, MONITORING, tcp(port(projector, 'metrics')))).toBe(true);
    for (const peer of [INGRESS_CONTROLLER, sameNamespace, OUTSIDE])
      for (const p of [port(projector, 'metrics'), 8080, 9090]) expect(allowed(r, 'Ingress', projector, peer, tcp(p)), `${p} from ${JSON.stringify(peer)}`).toBe(false);
  });

  it('opens nothing of the setup Job', () => {
    for (const peer of [INGRESS_CONTROLLER, MONITORING, sameNamespace]) for (const p of [8080, 9090, 9091]) expect(allowed(r, 'Ingress', setup, peer, tcp(p))).toBe(false);
  });

  it('lets every pod out to DNS, the Kafka brokers and PostgreSQL, and nowhere else', () => {
    const config: Record<string, string> = r.find('ConfigMap', 'ingest-config')['data'];
    const brokers = config['KAFKA_BROKERS']!.split(',').map((b) => Number(b.trim().split(':').pop()));
    const db = databaseUrl(r);
    expect(db).toBeDefined();
    const dbPort = Number(new URL(db!).port || 5432);
    expect(brokers.length).toBeGreaterThan(0);
    // dev's broker and database run in its own namespace (kafka:9092, postgres:5432); prod's outside the cluster.
    const servers: Peer = name === 'dev' ? { namespace: sameNamespace.namespace, pod: { 'app.kubernetes.io/name': 'kafka' } } : OUTSIDE;
    for (const pod of [gateway, projector, setup]) {
      expect(allowed(r, 'Egress', pod, KUBE_DNS, { port: 53, protocol: 'UDP' }), `${pod.name} DNS/UDP`).toBe(true);
      expect(allowed(r, 'Egress', pod, KUBE_DNS, tcp(53)), `${pod.name} DNS/TCP`).toBe(true);
      for (const b of brokers) expect(allowed(r, 'Egress', pod, servers, tcp(b)), `${pod.name} Kafka ${b}`).toBe(true);
      expect(allowed(r, 'Egress', pod, servers, tcp(dbPort)), `${pod.name} PostgreSQL ${dbPort}`).toBe(true);
      expect(allowed(r, 'Egress', pod, OUTSIDE, tcp(443)), `${pod.name} elsewhere`).toBe(false);
      expect(allowed(r, 'Egress', pod, MONITORING, tcp(9090)), `${pod.name} to another namespace`).toBe(false);
    }
  });

  it('names only ports that the pods it selects define', () => {
    const pods = [gateway, projector, setup];
    for (const np of r.all('NetworkPolicy'))
      for (const rule of [...(np['spec']['ingress'] ?? [])])
        for (const p of rule['ports'] ?? [])
          if (typeof p['port'] === 'string')
            for (const pod of pods.filter((x) => selects(np['spec']['podSelector'], x.labels)))
              expect(
                pod.ports.some((c) => c['name'] === p['port']),
                `${np['metadata'].name}: ${pod.name} has no port ${p['port']}`,
              ).toBe(true);
  });
});

describe('the NetworkPolicy evaluation', () => {
  it('lets everything through to a pod no policy selects, and refuses what an isolated pod is not given', () => {
    const r = RENDERED.get('prod')!;
    const open = new Rendered('none', r.objects.filter((o) => o['kind'] !== 'NetworkPolicy'));
    const stranger: Pod = { name: 'x', namespace: 'ingest', labels: { app: 'x' }, ports: [] };
    expect(allowed(open, 'Ingress', stranger, OUTSIDE, tcp(1))).toBe(true);
    expect(allowed(r, 'Ingress', stranger, OUTSIDE, tcp(1))).toBe(true);
    const isolated: Pod = { ...stranger, labels: { 'app.kubernetes.io/part-of': 'retail-ingestion' } };
    expect(allowed(r, 'Ingress', isolated, MONITORING, tcp(9090))).toBe(false);
    expect(allowed(r, 'Egress', isolated, OUTSIDE, tcp(5432))).toBe(true);
  });
});
