import { Counter, Histogram, type Registry } from '@ingest/runtime';

export function gatewayMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['method', 'route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
      registers: [registry],
    }),
    shed: new Counter({
      name: 'http_requests_shed_total',
      help: 'Requests of a shop over its budget answered 429 on their raw body before the app (also in http_requests_total)',
      registers: [registry],
    }),
    produce: new Histogram({
      name: 'kafka_produce_seconds',
      help: 'Time to append a command to Kafka (acks=all)',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    }),
    replyWait: new Histogram({
      name: 'reply_wait_seconds',
      help: 'Time from append to projector result, by outcome (replied, async)',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof gatewayMetrics>;

/** One answered request in http_requests_total and http_request_duration_seconds (`started`: performance.now() at its arrival). */
export function countRequest(metrics: GatewayMetrics, method: string, route: string, status: number, started: number): void {
  metrics.requests.inc({ method, route, status: String(status) });
  metrics.latency.observe({ method, route }, (performance.now() - started) / 1000);
}
