import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const DOC_ID = 'https://contracts.test/openapi.json';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> }>> };

/** A JSON pointer token. */
const token = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Checks answers against the gateway's own `GET /openapi.json`. The returned function
 * says why an answer is not what the document says (undocumented status, other media type, a body
 * its schema refuses), or null when it is.
 */
export async function documentedAnswers(
  gatewayUrl: string,
): Promise<(method: string, path: string, answer: { status: number; text: string; headers: Headers }) => string | null> {
  const doc = (await (await fetch(`${gatewayUrl}/openapi.json`)).json()) as Doc;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  return (method, path, answer) => {
    const documented = doc.paths[path]?.[method]?.responses[String(answer.status)];
    if (!documented) return `${answer.status} is not documented for ${method} ${path}`;
    const pointer = documented.$ref ? documented.$ref.slice(1) : `/paths/${token(path)}/${method}/responses/${answer.status}`;
    const response = documented.$ref
      ? (ajv.getSchema(`${DOC_ID}#${pointer}`)?.schema as { content?: Record<string, unknown> } | undefined)
      : documented;
    const type = (answer.headers.get('content-type') ?? '').split(';')[0]!.trim();
    if (!response?.content?.[type]) return `${method} ${path} ${answer.status}: ${type} is not a documented media type`;
    if (type !== 'application/json') return null;
    const validate = ajv.getSchema(`${DOC_ID}#${pointer}/content/${token(type)}/schema`);
    if (!validate) return `${method} ${path} ${answer.status}: no schema`;
    return validate(JSON.parse(answer.text))
      ? null
      : `${method} ${path} ${answer.status}: ${ajv.errorsText(validate.errors)} in ${answer.text.slice(0, 300)}`;
  };
}
