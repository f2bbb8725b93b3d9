import type { Response } from 'express';
import { ERROR_CODE_HEADER, replyErrorCode } from './errorCodes.ts';

/** Sends a decider's or a stored reply as JSON, with its X-Error-Code when it is an error. */
export function sendReply(res: Response, status: number, body: Record<string, unknown>): void {
  const code = replyErrorCode(status, body);
  if (code) res.set(ERROR_CODE_HEADER, code);
  res.status(status).json(body);
}
