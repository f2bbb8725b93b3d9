import { createServer } from 'node:http';
import { createLogger, envInt, onShutdown, readCommonConfig } from '@ingest/runtime';
import { runProjector } from './service.ts';

const log = createLogger({ name: 'projector', level: readCommonConfig(process.env).logLevel });
try {
  const projector = await runProjector(process.env, log);
  // The projector has no API; it serves its metrics and liveness for scrapers and probes.
  const port = envInt(process.env, 'PROJECTOR_METRICS_PORT', 9091, 0);
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      void projector.registry.metrics().then((text) => res.writeHead(200, { 'content-type': projector.registry.contentType }).end(text));
      return;
    }
    // Liveness only: the process runs. Readiness: joined its group, reaches PostgreSQL (issue 11).
    if (req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (req.url === '/readyz') {
      void projector.readiness().then((checks) => {
        const ok = Object.values(checks).every(Boolean);
        res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ ok, checks }));
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false,"error":"not found"}');
  }).listen(port, () => log.info({ port }, 'projector metrics on /metrics'));
  onShutdown(log, [
    ['metrics', () => new Promise<void>((r) => server.close(() => r()))],
    ['projector', () => projector.stop()],
  ]);
} catch (err) {
  log.fatal({ err }, 'projector failed to start');
  process.exit(1);
}
