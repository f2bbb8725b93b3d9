import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

/**
 * A listener that serves only `GET /metrics` (Prometheus text) and 404 for everything else: the
 * gateway's metrics on a port of their own (METRICS_PORT), so that the public API port carries no
 * operational data and a NetworkPolicy can open the metrics port to the monitoring namespace alone.
 */
export function createMetricsServer(registry: Registry): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false,"error":"not found"}');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return void res
        .writeHead(405, { 'content-type': 'application/json', allow: 'GET, HEAD' })
        .end('{"ok":false,"error":"method not allowed"}');
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () =>
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '5' }).end('{"ok":false,"error":"metrics unavailable"}'),
    );
  });
}
