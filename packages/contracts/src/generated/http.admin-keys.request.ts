// Generated from schemas/http/admin-keys.request.json by scripts/gen-types.ts. Do not edit.

/**
 * POST /api/admin/keys (D28): mints a key for one shop. Platform credential only.
 */
export interface CreateApiKeyRequest {
  /**
   * The shop the key stands for, exactly as the requests name it
   */
  shop: string;
  /**
   * What the key may do (D28)
   *
   * @minItems 1
   */
  scopes: [
    'products:write' | 'inventory:write' | 'orders:write' | 'registry:write' | 'commands:read' | 'admin',
    ...('products:write' | 'inventory:write' | 'orders:write' | 'registry:write' | 'commands:read' | 'admin')[]
  ];
  /**
   * Days until the key stops working; omitted: it does not expire
   */
  expires_in_days?: number;
  /**
   * Free text for the operators (who holds the key, what for)
   */
  note?: string;
}
