import type { JsonObject } from './schemaFiles.ts';
import { NUL_FREE_NOT_BLANK } from './openapiRequests.ts';

/** What buildOpenApi shares with the operator API's paths: its references into the bundled components. */
export interface OperatorDocTools {
  /** A schemas/ file as a component reference. */
  s: (file: string) => JsonObject;
  /** A `http/responses.json` def as a component reference. */
  r: (key: string) => JsonObject;
  exampleOf: (key: string) => unknown;
  json: (schema: JsonObject, example?: unknown) => JsonObject;
  response: (name: string) => JsonObject;
}

export const OPERATOR_TAG = 'Operator';
export const OPERATOR_TAG_DESCRIPTION =
  'The commands that need an operator, and the retry and skip of a parked command (docs/operations.md#parked-commands): the platform credential, or a per-shop key with the `admin` scope for its own shop (D28).';

const SECURITY = [{ ingestSecret: [] }, { bearerAuth: ['admin'] }];
const COMMAND_ID = {
  name: 'command_id',
  in: 'path',
  required: true,
  description: 'A parked command (an open one: not yet retried or skipped).',
  schema: { type: 'string', format: 'uuid' },
  example: '0194f3a2-5c1e-7d4b-9a6f-2b8c4d6e8f01',
};

/** The operator API (docs/api.md "Operator API"): its three operations, by path. */
export function operatorPaths(t: OperatorDocTools): Record<string, JsonObject> {
  const query = (name: string, description: string, schema: JsonObject, example: unknown): JsonObject => ({
    name,
    in: 'query',
    required: false,
    description,
    schema,
    example,
  });
  const outcome = {
    description:
      'The action ended: what it applied, the command that failed again (it stays parked; the action stopped there), and what stays parked for the shop. Recorded as an operator action, with its actor and reason, and published on the audit topic.',
    content: t.json(t.r('operatorAction'), t.exampleOf('operatorAction')),
  };
  const bodyErrors = {
    '400': t.response('BadRequest'),
    '401': t.response('Unauthorized'),
    '403': t.response('Forbidden'),
    '404': t.response('NotFound'),
    '408': t.response('BodyTimeout'),
    '413': t.response('TooLarge'),
    '415': t.response('UnsupportedEncoding'),
    '503': t.response('Unavailable'),
  };
  const action = (operationId: string, summary: string, description: string, body: JsonObject): JsonObject => ({
    post: {
      tags: [OPERATOR_TAG],
      operationId,
      summary,
      description,
      security: SECURITY,
      parameters: [COMMAND_ID],
      requestBody: body,
      responses: { '200': outcome, ...bodyErrors },
    },
  });

  return {
    '/api/admin/commands': {
      get: {
        tags: [OPERATOR_TAG],
        operationId: 'listOperatorCommands',
        summary: 'Commands that need an operator: parked, failed or pending',
        description:
          '`parked`: open parked commands, by shop and then log position (the order a retry applies them; `waiting_behind` null marks the head of a shop). `failed`: stored answers with status >= 400, newest first. `pending`: accepted commands with no answer that are not parked, newest first. Paged by keyset: pass `next_cursor` as `cursor` with the same `status` and `shop`. A query parameter not listed here, or one given twice, is 400.',
        security: SECURITY,
        parameters: [
          query(
            'shop',
            'Only this shop (at most 255 characters, not blank).',
            { type: 'string', minLength: 1, maxLength: 255, pattern: NUL_FREE_NOT_BLANK },
            'demo.myshop.example',
          ),
          query('status', 'Which commands (default `parked`).', { enum: ['parked', 'failed', 'pending'], default: 'parked' }, 'parked'),
          query('limit', 'Commands per page.', { type: 'integer', minimum: 1, maximum: 500, default: 50 }, 50),
          query(
            'cursor',
            "The previous page's `next_cursor` (opaque; one of another status or shop is 400).",
            { type: 'string', minLength: 1, maxLength: 2048, pattern: '^[A-Za-z0-9_-]+$' },
            'eyJ2IjoxfQ',
          ),
        ],
        responses: {
          '200': { description: 'One page of commands.', content: t.json(t.r('operatorCommands'), t.exampleOf('operatorCommands')) },
          '400': t.response('BadRequest'),
          '401': t.response('Unauthorized'),
          '403': t.response('Forbidden'),
          '503': t.response('Unavailable'),
        },
      },
    },
    '/api/admin/parked/{command_id}/retry': action(
      'retryParkedCommand',
      "Apply the shop's parked commands in log order",
      "The command named and every open parked command of its shop are applied in log order (D2), from the shop's first one, each in its own transaction, until none is left or one fails again. The body is optional.",
      {
        required: false,
        content: t.json(t.s('http/admin-parked-retry.request.json'), { reason: 'the constraint was fixed in release 1.4.2' }),
      },
    ),
    '/api/admin/parked/{command_id}/skip': action(
      'skipParkedCommand',
      'Never apply a parked command; resume its shop',
      "The command is never applied: its caller's answer becomes 422 `skipped`. When it was the head of its shop's queue, the commands parked behind it are then applied in log order as a retry would, unless `hold` keeps them parked. A `reason` is required.",
      {
        required: true,
        content: t.json(t.s('http/admin-parked-skip.request.json'), {
          reason: 'snapshot_date 0000-01-01 cannot be stored; the client resent it fixed',
        }),
      },
    ),
  };
}
