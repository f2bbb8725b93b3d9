import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/env.ts';
import { contextFromHeaders, inSpan, injectTraceHeaders, startSpan, startTracing, tracesExporterWanted, tracingOn } from './tracing.ts';

// Tracing is off unless the standard OTEL_* variables turn it on, and off costs nothing.
describe('tracing settings', () => {
  it('off by default, on with OTEL_TRACES_EXPORTER, off again with OTEL_SDK_DISABLED', () => {
    expect(tracesExporterWanted({})).toBeNull();
    expect(tracesExporterWanted({ OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(tracesExporterWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe('otlp');
    expect(tracesExporterWanted({ OTEL_TRACES_EXPORTER: ' Console ' })).toBe('console');
    expect(tracesExporterWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(() => tracesExporterWanted({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(ConfigError);
  });

  it('off: no span, no header, the callback just runs', async () => {
    const tracing = await startTracing({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'console' }, { serviceName: 't' });
    expect(tracing.enabled).toBe(false);
    expect(tracingOn()).toBe(false);
    expect(startSpan('x')).toBeUndefined();
    const headers: Record<string, string> = {};
    injectTraceHeaders(headers);
    expect(headers).toEqual({});
    expect(contextFromHeaders({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })).toBeUndefined();
    await expect(inSpan('x', {}, async (span) => span)).resolves.toBeUndefined();
  });
});

describe('tracing on with the standard variables', () => {
  it('OTEL_TRACES_EXPORTER=otlp sends the spans to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces, named by OTEL_SERVICE_NAME', async () => {
    const received: Array<{ path: string; body: string }> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('latin1') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as AddressInfo;
    try {
      const tracing = await startTracing(
        { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}/`, OTEL_SERVICE_NAME: 'svc-from-env' },
        { serviceName: 'default-name' },
      );
      expect(tracing.enabled).toBe(true);
      await inSpan('a-span', {}, async () => {
        const headers: Record<string, string> = {};
        injectTraceHeaders(headers);
        expect(headers['traceparent']).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      });
      await tracing.shutdown(); // flushes the batch
      expect(tracingOn()).toBe(false);
    } finally {
      server.close();
    }
    expect(received.map((r) => r.path)).toEqual(['/v1/traces']);
    expect(received[0]?.body).toContain('svc-from-env');
    expect(received[0]?.body).toContain('a-span');
  });
});
