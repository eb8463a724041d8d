/** A JSON object: not null, not an array. What arguments, plans and provider payloads must be. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
