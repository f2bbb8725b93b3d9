import type { Request, Response } from 'express';
import { sendError, type ApiError } from '../errors/catalog.ts';

/** How long a cut connection may linger after its answer before it is dropped. */
const LINGER_MS = 2_000;

/**
 * Answers a request whose body is still arriving and stops reading it (over the in-flight
 * budget, or too slow): the answer says `Connection: close`, Node closes the connection once it is
 * out, and a peer that keeps sending is dropped soon after. The route never runs (see body.ts).
 */
export function cutRequest(req: Request, res: Response, err: ApiError): void {
  // Cut already (or answered): that answer closes the connection.
  if (res.headersSent) return;
  const socket = req.socket;
  res.set('Connection', 'close');
  sendError(res, err);
  res.once('finish', () => setTimeout(() => socket.destroy(), LINGER_MS).unref());
}
