// One HTTP request to a gateway pod (writes.ts), on a connection of its own, its answer whatever the
// status: the checks read the status, the body and the text of a wrong answer.
import { request } from 'node:http';

export interface Answer {
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
  /** A connection error or timeout: no answer. ECONNREFUSED: the request never reached a server. */
  error: string | null;
}

export function send(
  port: number,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  timeoutMs = 60_000,
): Promise<Answer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Answer) => {
      if (!settled) resolve(a);
      settled = true;
    };
    const failed = (error: string): Answer => ({ status: null, headers: {}, text: '', body: null, error });
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { ...headers, ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e: NodeJS.ErrnoException) => done(failed(`response ${e.code ?? e.message}`)));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: any = null;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = null;
          }
          done({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed, error: null });
        });
      },
    );
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      done(failed(`timeout after ${timeoutMs} ms`));
    });
    req.on('error', (e: NodeJS.ErrnoException) => done(failed(e.code ?? e.message)));
    req.end(payload);
  });
}
