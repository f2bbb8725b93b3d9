// A lean HTTP/1.1 client for a load generator that shares the machine with the server under test
// (bench B7's noisy shop): each request is one pre-encoded buffer (request line, headers and body)
// written on a keep-alive socket, and each answer is read for its status, Retry-After and length only.
// node:http's client machinery took about as much CPU per request as the gateway took to refuse it
// (B7 on two cores: 0.13-0.17 of a core, taken from the server), none of which a real retailer's
// client would take from our machine. Like node:http's Agent: a new connection only when every open
// one is busy, at most `maxSockets`, requests queued beyond; no pipelining.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  retryAfter: string | null;
}

/** A POST as bytes, ready to write: `body` with the headers a JSON write of the API needs. */
export function encodePost(port: number, path: string, headers: Record<string, string>, body: Buffer): Buffer {
  const head =
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${body.length}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

interface Conn {
  socket: Socket;
  /** The answer being read (null while idle). */
  current: { resolve(a: RawAnswer): void; reject(e: Error): void } | null;
  buf: Buffer;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export class RawHttpClient {
  private readonly idle: Conn[] = [];
  private readonly all = new Set<Conn>();
  private readonly queue: Array<{ bytes: Buffer; resolve(a: RawAnswer): void; reject(e: Error): void }> = [];

  private readonly port: number;
  private readonly maxSockets: number;

  constructor(port: number, maxSockets: number) {
    this.port = port;
    this.maxSockets = maxSockets;
  }

  send(bytes: Buffer): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const conn = this.idle.pop() ?? (this.all.size < this.maxSockets ? this.open() : null);
      if (conn) this.start(conn, bytes, resolve, reject);
      else this.queue.push({ bytes, resolve, reject });
    });
  }

  close(): void {
    for (const c of this.all) c.socket.destroy();
  }

  private open(): Conn {
    const socket = connect({ host: '127.0.0.1', port: this.port, noDelay: true });
    const conn: Conn = { socket, current: null, buf: Buffer.alloc(0) };
    this.all.add(conn);
    socket.on('data', (chunk: Buffer) => this.read(conn, chunk));
    const gone = (err?: Error) => {
      this.all.delete(conn);
      const i = this.idle.indexOf(conn);
      if (i >= 0) this.idle.splice(i, 1);
      conn.current?.reject(err ?? new Error('connection closed'));
      conn.current = null;
      this.next();
    };
    socket.on('error', gone);
    socket.on('close', () => gone());
    return conn;
  }

  private start(conn: Conn, bytes: Buffer, resolve: (a: RawAnswer) => void, reject: (e: Error) => void): void {
    conn.current = { resolve, reject };
    conn.socket.write(bytes);
  }

  private read(conn: Conn, chunk: Buffer): void {
    conn.buf = conn.buf.length ? Buffer.concat([conn.buf, chunk]) : chunk;
    const end = conn.buf.indexOf(HEADER_END);
    if (end < 0) return;
    const head = conn.buf.subarray(0, end).toString('latin1');
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    if (conn.buf.length < end + 4 + length) return;
    conn.buf = conn.buf.subarray(end + 4 + length);
    const answer: RawAnswer = {
      status: Number(head.slice(9, 12)),
      retryAfter: /\r\nretry-after:\s*([^\r]*)/i.exec(head)?.[1] ?? null,
    };
    const current = conn.current;
    conn.current = null;
    if (/\r\nconnection:\s*close/i.test(head)) conn.socket.destroy();
    else this.idle.push(conn);
    current?.resolve(answer);
    this.next();
  }

  private next(): void {
    while (this.queue.length) {
      const conn = this.idle.pop() ?? (this.all.size < this.maxSockets ? this.open() : null);
      if (!conn) return;
      const q = this.queue.shift()!;
      this.start(conn, q.bytes, q.resolve, q.reject);
    }
  }
}
