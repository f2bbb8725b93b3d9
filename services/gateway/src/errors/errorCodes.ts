import { ERROR_CODE_HEADER, ERROR_CODES, type ErrorCode } from '@ingest/contracts';

export { ERROR_CODE_HEADER, ERROR_CODES, type ErrorCode };

const isCode = (v: unknown): v is ErrorCode => typeof v === 'string' && Object.hasOwn(ERROR_CODES, v);

/** The code of a reply a decider or the projector made (a stored result): its error_kind, else by status. */
export function replyErrorCode(status: number, body: Record<string, unknown>): ErrorCode | null {
  if (status < 400) return null;
  if (isCode(body['error_kind'])) return body['error_kind'];
  if (status === 422) return 'invalid_payload';
  if (status === 400) return 'invalid_request';
  if (status === 503) return 'dependency_unavailable';
  return status >= 500 ? 'internal_error' : 'client_error';
}
