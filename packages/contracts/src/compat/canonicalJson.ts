/**
 * The one way a published contract is written (schemas/published/): keys sorted at every level,
 * arrays kept in order, two-space indent, a final newline. Key order never changes what a JSON
 * document means, so a refactor that only reorders an object does not show as a change.
 */
export function canonicalJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
  return out;
}

/** Whether two JSON values are equal, whatever the order of their keys. */
export const sameJson = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
