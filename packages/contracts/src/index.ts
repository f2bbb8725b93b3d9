export * from './types.ts';
export { SchemaRegistry, describeFirstError, pointerToPath, SCHEMAS_DIR } from './validation.ts';
export type { SchemaName, Validator, ValidationFailure } from './validation.ts';
