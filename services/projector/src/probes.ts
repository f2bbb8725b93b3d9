import { createServer, type Server } from 'node:http';
import { readinessProbe, registerReadinessMetric, type ReadinessChecks, type Registry } from '@ingest/runtime';

export interface ProbeServerOptions {
  registry: Registry;
  /** Readiness checks (RunningProjector.readiness): every one true means ready. */
  readiness: () => Promise<ReadinessChecks>;
  /** How long /readyz waits for the checks (default 2 s), and how long an answer is reused (default 1 s). */
  readyTimeoutMs?: number;
  readyCacheMs?: number;
}

const json = { 'content-type': 'application/json' };

/**
 * The projector has no API; this serves its probes and metrics (README "Operations"):
 * - `/healthz`: liveness only. Answered from the event loop without reading any dependency, so an
 *   outage of PostgreSQL or Kafka never has the process restarted; a wedged loop does not answer.
 * - `/readyz`: 503 (with the failing checks named) until the consumer has joined its group and
 *   PostgreSQL and the LISTEN connection are reachable, and again whenever one of them is lost.
 * - `/metrics`: Prometheus text.
 */
export function createProbeServer(opts: ProbeServerOptions): Server {
  const ready = readinessProbe(opts.readiness, {
    ...(opts.readyTimeoutMs === undefined ? {} : { timeoutMs: opts.readyTimeoutMs }),
    ...(opts.readyCacheMs === undefined ? {} : { cacheMs: opts.readyCacheMs }),
  });
  registerReadinessMetric(opts.registry, ready);
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { ...json, allow: 'GET, HEAD' }).end('{"ok":false,"error":"method not allowed"}');
      return;
    }
    if (path === '/healthz') return void res.writeHead(200, json).end('{"ok":true}');
    if (path === '/readyz') {
      void ready().then(({ ok, checks }) => {
        res.writeHead(ok ? 200 : 503, ok ? json : { ...json, 'retry-after': '5' }).end(JSON.stringify({ ok, checks }));
      });
      return;
    }
    if (path === '/metrics') {
      opts.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        () => res.writeHead(503, { ...json, 'retry-after': '5' }).end('{"ok":false,"error":"metrics unavailable"}'),
      );
      return;
    }
    res.writeHead(404, json).end('{"ok":false,"error":"not found"}');
  });
}
