export * from './types.ts';
export { SchemaRegistry, describeFirstError, pointerToPath, SCHEMAS_DIR, SCHEMA_GROUPS } from './validation.ts';
export type { SchemaName, Validator, ValidationFailure } from './validation.ts';
export {
  readSchemaFiles,
  publishedSchema,
  schemaUrl,
  bundleSchemas,
  SCHEMA_ID_BASE,
  type SchemaFile,
  type JsonObject,
} from './schemaFiles.ts';
export { buildOpenApi, PLANNED, REMOVED_METHODS, type OpenApiOptions } from './openapi.ts';
export { buildAsyncApi, type AsyncApiOptions, type TopicSpec } from './asyncapi.ts';
export { ERROR_CODE_HEADER, ERROR_CODES, type ErrorCode } from './errorCodes.ts';
