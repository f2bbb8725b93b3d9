// Helpers for the deploy/ checks: reading the repository's files, the metric names the code
// defines and the metrics a PromQL expression reads (the overlays of deploy/k8s: k8sRender.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { createRegistry } from '@ingest/runtime';
import { parseAllDocuments } from 'yaml';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export const read = (path: string): string => readFileSync(join(REPO, path), 'utf8');

/** Every YAML document of a file, as plain data; a syntax error fails the caller. */
export function readYamlDocs(path: string): Array<Record<string, any>> {
  return parseAllDocuments(read(path)).map((doc) => {
    if (doc.errors.length) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS() as Record<string, any>;
  });
}

/** Repository-relative paths of the files under `dir` (node_modules and generated code skipped). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name === 'node_modules') continue;
      const path = join(abs, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out.push(relative(REPO, path));
    }
  };
  walk(join(REPO, dir));
  return out.sort();
}

/**
 * Names (and lower-case types) of the metrics the services and packages register: every `new Counter|Gauge|Histogram|Summary({ name: '…' })`
 * in their non-test sources.
 */
export function registeredMetricNames(): Map<string, string> {
  const names = new Map<string, string>();
  const files = [...listFiles('services'), ...listFiles('packages')].filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  for (const file of files) {
    for (const m of read(file).matchAll(/new\s+(Counter|Gauge|Histogram|Summary)\s*\(\s*\{\s*name:\s*'([a-zA-Z_:][a-zA-Z0-9_:]*)'/g)) {
      names.set(m[2]!, m[1]!.toLowerCase());
    }
  }
  return names;
}

/** prom-client's default process_* / nodejs_* metrics, as the registries of the services create them. */
export function defaultMetricNames(): Map<string, string> {
  const registry = createRegistry({ defaultMetrics: true });
  const names = new Map(registry.getMetricsAsArray().map((m) => [m.name, String(m.type)]));
  registry.clear();
  return names;
}

/** Metrics the alert rules read that no process of ours exports, and who does. */
export const EXTERNAL_METRICS: Record<string, string> = {
  up: 'Prometheus itself, per scrape target',
  kube_deployment_status_replicas_available: 'kube-state-metrics',
  kube_pod_status_ready: 'kube-state-metrics',
};

/** The series name a referenced name belongs to: a histogram's _bucket/_sum/_count are its own. */
export function metricFamily(name: string, known: Map<string, string>): string | undefined {
  if (known.has(name)) return name;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  const base = m?.[1];
  if (base === undefined) return undefined;
  const type = known.get(base);
  if (type === 'histogram') return base;
  if (type === 'summary' && m?.[2] !== 'bucket') return base;
  return undefined;
}

/** Parses PromQL with Prometheus' own grammar; returns the metric names it selects and any syntax errors. */
export function promqlMetrics(expr: string): { metrics: string[]; errors: string[] } {
  const metrics: string[] = [];
  const errors: string[] = [];
  parser.parse(expr).iterate({
    enter: (n) => {
      if (n.type.isError) errors.push(`syntax error at ${n.from}: ${JSON.stringify(expr.slice(Math.max(0, n.from - 20), n.from + 20))}`);
      if (n.name !== 'VectorSelector') return;
      const id = n.node.getChild('Identifier');
      if (id) metrics.push(expr.slice(id.from, id.to));
      else errors.push(`a selector without a metric name at ${n.from} (name metrics explicitly)`);
    },
  });
  return { metrics, errors };
}

/** Grafana's interval variables, replaced by a duration so that the expression is plain PromQL. */
export const withGrafanaIntervals = (expr: string): string => expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '1m');
