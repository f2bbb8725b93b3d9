import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonObject } from '@ingest/contracts';
import type { HttpAnswer } from './testGateway.ts';

// An OpenAPI 3.1 document read as a client generated from it would read it (JSON Schema 2020-12):
// its operations, whether a value is one a schema of it allows, the credentials each security
// requirement asks for, and whether an answer is one it documents (status, media type, body, headers).
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const DOC_ID = 'https://contracts.test/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

export interface DocOperation {
  method: string;
  /** The path template, e.g. `/api/commands/{id}`. */
  path: string;
  op: JsonObject;
  /** `POST /api/ingest/products` */
  name: string;
}

/** The credentials a test holds, by security scheme. */
export interface Credentials {
  ingestSecret: string;
  cronSecret: string;
  cronShop: string;
  bearerAuth: string;
}

const pointer = (...parts: string[]): string => parts.map((p) => '/' + p.replace(/~/g, '~0').replace(/\//g, '~1')).join('');

export function openApiOracle(doc: JsonObject) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  addFormats(ajv);
  // RFC 4122's string form, as the gateway reads it: not ajv-formats' `urn:uuid:` form too.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const compiled = new Map<string, (v: unknown) => string | null>();

  /** The problems of `value` against the schema at `at` (a JSON pointer into the document), or null. */
  const check = (at: string, value: unknown): string | null => {
    let fn = compiled.get(at);
    if (!fn) {
      const validate = ajv.compile({ $ref: `${DOC_ID}#${at}` });
      fn = (v) => (validate(v) ? null : ajv.errorsText(validate.errors));
      compiled.set(at, fn);
    }
    return fn(value);
  };

  /** What a `$ref` of the document (`#/components/…`) points at. */
  const resolve = (ref: string): JsonObject => {
    let node: unknown = doc;
    for (const raw of ref.replace(/^#?\//, '').split('/')) node = (node as JsonObject)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === null || typeof node !== 'object') throw new Error(`no ${ref} in the document`);
    return node as JsonObject;
  };
  const deref = (v: JsonObject): JsonObject => (typeof v['$ref'] === 'string' ? deref(resolve(v['$ref'])) : v);

  const operations = (): DocOperation[] =>
    Object.entries(doc['paths'] as Record<string, JsonObject>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => METHODS.includes(m))
        .map(([method, op]) => ({ method, path, op: op as JsonObject, name: `${method.toUpperCase()} ${path}` })),
    );

  /** The operation's parameters, `$ref`s followed. */
  const parameters = (o: DocOperation): JsonObject[] => ((o.op['parameters'] as JsonObject[] | undefined) ?? []).map(deref);

  /** Where the schema of the operation's parameter `name` (in `where`) is. */
  const parameterAt = (o: DocOperation, name: string, where: string): string => {
    const list = (o.op['parameters'] as JsonObject[] | undefined) ?? [];
    const i = list.findIndex((p) => deref(p)['name'] === name && deref(p)['in'] === where);
    if (i < 0) throw new Error(`${o.name} has no ${where} parameter ${name}`);
    const p = list[i]!;
    return `${typeof p['$ref'] === 'string' ? p['$ref'].slice(1) : pointer('paths', o.path, o.method, 'parameters', String(i))}/schema`;
  };

  /** Where the JSON body schema of an operation is, or null when it takes none. */
  const bodyAt = (o: DocOperation): string | null => {
    const body = o.op['requestBody'] as JsonObject | undefined;
    return body ? pointer('paths', o.path, o.method, 'requestBody', 'content', 'application/json', 'schema') : null;
  };

  /** The headers of one security requirement of the operation (an alternative credential). */
  const credentialHeaders = (requirement: Record<string, unknown>, c: Credentials): Record<string, string> => {
    const headers: Record<string, string> = {};
    for (const scheme of Object.keys(requirement)) {
      const s = resolve(pointer('components', 'securitySchemes', scheme));
      const value = c[scheme as keyof Credentials];
      if (s['type'] === 'apiKey' && s['in'] === 'header') headers[String(s['name'])] = value;
      else if (s['type'] === 'http' && s['scheme'] === 'bearer') headers['authorization'] = `Bearer ${value}`;
      else throw new Error(`no credential for scheme ${scheme}`);
    }
    return headers;
  };

  /** Whether a request with `headers` meets one of the operation's security requirements. */
  const authorised = (o: DocOperation, headers: Record<string, string>): boolean => {
    const requirements = (o.op['security'] as Array<Record<string, unknown>> | undefined) ?? [];
    if (requirements.length === 0) return true;
    return requirements.some((r) =>
      Object.keys(r).every((scheme) => {
        const s = resolve(pointer('components', 'securitySchemes', scheme));
        const name = s['type'] === 'http' ? 'authorization' : String(s['name']).toLowerCase();
        return Object.keys(headers).some((h) => h.toLowerCase() === name);
      }),
    );
  };

  /** Why an answer is not one the operation documents (an empty list when it is). `responses` defaults to the operation's. */
  const undocumented = (o: DocOperation, a: HttpAnswer, responses = o.op['responses'] as JsonObject): string[] => {
    const key = String(a.status);
    const documented = responses[key] as JsonObject | undefined;
    if (!documented) return [`${o.name}: status ${key} is not documented (${Object.keys(responses).join(', ')})`];
    const r = deref(documented);
    const problems: string[] = [];
    for (const [name, h] of Object.entries((r['headers'] as Record<string, JsonObject> | undefined) ?? {}))
      if (deref(h)['required'] === true && !a.headers.has(name)) problems.push(`${o.name} ${key}: header ${name} is missing`);
    const content = r['content'] as Record<string, JsonObject> | undefined;
    if (!content || a.text.length === 0) return problems;
    const media = (a.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const entry = content[media];
    if (!entry) return [...problems, `${o.name} ${key}: media type ${media} is not documented (${Object.keys(content).join(', ')})`];
    const schema = entry['schema'] as JsonObject | undefined;
    if (schema && media.endsWith('json') && a.json !== undefined) {
      const bad = check(`${pointerOf(o, documented, key)}/content/${media.replace('/', '~1')}/schema`, a.json);
      if (bad) problems.push(`${o.name} ${key}: ${bad} in ${a.text.slice(0, 200)}`);
    }
    return problems;
  };
  /** Where the response object of `status` is: the component it refers to, else inline in the operation. */
  const pointerOf = (o: DocOperation, documented: JsonObject, status: string): string =>
    typeof documented['$ref'] === 'string' ? documented['$ref'].slice(1) : pointer('paths', o.path, o.method, 'responses', status);

  return { check, resolve, deref, operations, parameters, parameterAt, bodyAt, credentialHeaders, authorised, undocumented, pointer };
}

export type OpenApiOracle = ReturnType<typeof openApiOracle>;
