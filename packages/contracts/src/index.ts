export * from './types.ts';
export { SchemaRegistry, describeFirstError, pointerToPath, releasedCommandVersions, SCHEMAS_DIR, SCHEMA_GROUPS } from './validation.ts';
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
export { DATE_TIME, NUL_FREE, NUL_FREE_NOT_BLANK } from './openapiRequests.ts';
export { buildAsyncApi, type AsyncApiOptions, type TopicSpec } from './asyncapi.ts';
export {
  changedSinceRelease,
  COMMAND_PAYLOAD_FILES,
  ENVELOPE_FILE,
  releasedCommandFiles,
  releasedCommandsLock,
  releasedForm,
  releasedSchemaName,
  releasedText,
  shapeOf,
} from './releasedCommands.ts';
export { coveredFiles, lockProblems, lockText, readLock, sha256Hex, type FileLock } from './frozenFiles.ts';
export { ERROR_CODE_HEADER, ERROR_CODES, type ErrorCode } from './errorCodes.ts';
export { canonicalJson } from './compat/canonicalJson.ts';
export { checkContracts, compareContracts, type CheckResult } from './compat/check.ts';
export { baselineProblem, parseDeclarations, promoteUnreleased, releaseDigest } from './compat/changelog.ts';
export { formatReport, HOW_TO } from './compat/report.ts';
export { PUBLISHED_DIR, RELEASED_DIR, readDocSet, staleFiles, writeDocSet } from './compat/publishedDir.ts';
export { RULES, type DocSet, type Finding, type Role, type RuleId } from './compat/types.ts';
