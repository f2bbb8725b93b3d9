export { KEY_SHAPE, keyHash, mintKey } from './apiKey.ts';
export { pgKeyRows, type KeyRow, type KeyRows } from './keyRows.ts';
export {
  createKeyService,
  type CreatedKey,
  type CreateKey,
  type KeyPrincipal,
  type KeyService,
  type KeyServiceOptions,
  type ListedKey,
} from './keyService.ts';
export { isScope, SCOPES, type Scope } from './scopes.ts';
