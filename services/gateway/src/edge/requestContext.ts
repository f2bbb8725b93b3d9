import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { SpanKind, contextFromHeaders, markFailed, startSpan, withContext, withLogContext } from '@ingest/runtime';

/** A caller's request id is kept when it is a short printable token; anything else is replaced. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function chooseRequestId(header: string | string[] | undefined, newId: () => string = randomUUID): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : newId();
}

/**
 * One request id for every log line about a request: the caller's `x-request-id` when
 * sane, else a new one, echoed in the response and carried to the projector in the command's record
 * headers. With tracing on, the request's SERVER span (continuing an incoming `traceparent`) is the
 * active span for everything the request does, so the command log's producer span is its child.
 */
export function requestContext(): RequestHandler {
  return (req, res, next) => {
    const id = chooseRequestId(req.headers['x-request-id']);
    res.setHeader('x-request-id', id);
    const parent = contextFromHeaders(req.headers);
    const started = startSpan(req.method, {
      kind: SpanKind.SERVER,
      ...(parent ? { parent } : {}),
      attributes: { 'http.request.method': req.method, 'url.path': req.path, 'ingest.request_id': id },
    });
    if (started) {
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        // The route template (bounded), as the metrics label it; the raw path stays an attribute.
        const pattern = (req.route as { path?: unknown } | undefined)?.path;
        const route = typeof pattern === 'string' ? pattern : 'unmatched';
        started.span.updateName(`${req.method} ${route}`);
        started.span.setAttribute('http.route', route);
        started.span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) markFailed(started.span, new Error(`HTTP ${res.statusCode}`));
        if (!res.writableFinished) started.span.setAttribute('ingest.aborted', true);
        started.span.end();
      };
      res.once('finish', end);
      res.once('close', end);
    }
    withLogContext({ request_id: id }, () => withContext(started?.context, next));
  };
}
