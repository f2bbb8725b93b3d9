import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_CODE_HEADER } from '../errors/catalog.ts';
import { SAFE_HEADERS } from '../errors/catalog.ts';

/** Node's own answers to what its HTTP parser refuses, mapped as Node maps them; the rest is 400. */
const STATUS_BY_CODE: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * The server's 'clientError' handler: a request Node's parser refuses (bad headers, bad
 * chunking, both Content-Length and Transfer-Encoding, a header block too large, a request over
 * the request timeout) is answered in the spec's shape, `{"ok":false,"error":"bad request"}` with
 * the safe headers, instead of Node's bare text; then the connection is closed. As in Node, nothing
 * is written when the peer is gone or an answer on this connection has already begun.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
    const status = STATUS_BY_CODE[err.code ?? ''] ?? 400;
    const body = JSON.stringify({ ok: false, error: (STATUS_CODES[status] ?? 'bad request').toLowerCase() });
    const headers = {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      ...SAFE_HEADERS,
      [ERROR_CODE_HEADER]: 'bad_request',
      Connection: 'close',
    };
    const head = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n${head}\r\n${body}`);
  }
  socket.destroy();
}
