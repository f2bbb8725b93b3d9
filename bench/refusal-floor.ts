// The floor of bench/refusal-cost.ts: Node's bare http server reading each POST's body and answering
// the gateway's 429 (same status line, headers and body size), nothing else.
import { createServer } from 'node:http';
import { serveBench } from './lib/serverProcess.ts';

const body = JSON.stringify({
  ok: false,
  error: 'too many requests for shop bench-rc-0.myshop.example (over 1 lines/s; the limit is per shop); retry later',
});
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(429, {
      'x-request-id': '00000000-0000-4000-8000-000000000000',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'retry-after': '100',
      'x-error-code': 'shop_over_budget',
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const address = server.address();
await serveBench(typeof address === 'object' && address ? address.port : 0, async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
});
